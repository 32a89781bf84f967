"""Tournament files: validation with file:line:key errors, defaults, and the resume fingerprint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Rules
from arena.tournament.config import ConfigError, diff_game_dicts, load_config, parse_config

BAD = Path(__file__).parents[1] / "data" / "bad_tournaments"
BAD_FILES = sorted(BAD.glob("*.yaml"))

runner = CliRunner()

GOOD = """\
name: t
seed: 5
bots:
  - {name: a, cmd: "python3 a.py"}
  - {name: b, cmd: [python3, b.py]}
  - {name: c, cmd: "$PYTHON c.py", cwd: sub, env: {LEVEL: 3}, move_ms: 500}
"""


def _expected(path: Path) -> str:
    # Bytes: some files are not UTF-8 on purpose, one starts with a byte order mark.
    first = path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace").splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name} lacks its '# expect:' line"
    return first.removeprefix("# expect: ")


def test_the_corpus_is_big_enough():
    assert len(BAD_FILES) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("path", BAD_FILES, ids=[p.stem for p in BAD_FILES])
def test_each_malformed_file_gets_one_line_naming_the_problem_and_exit_2(path: Path):
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert lines[0].startswith(f"error: {path}:"), lines[0]
    assert _expected(path) in lines[0]
    assert result.stdout == ""


@pytest.mark.parametrize("path", BAD_FILES[:5], ids=[p.stem for p in BAD_FILES[:5]])
def test_run_and_dry_run_refuse_the_same_files(path: Path):
    for args in (["run", str(path), "--dry-run"], ["run", str(path)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert _expected(path) in result.stderr


def test_error_carries_file_line_and_key():
    with pytest.raises(ConfigError) as info:
        parse_config("name: t\nseed: 1\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: 7}\n", file="f.yaml")
    err = info.value
    assert (err.file, err.line, err.key) == ("f.yaml", 5, "bots[1].cmd")
    assert str(err).startswith("f.yaml:5: key 'bots[1].cmd': expected")


def test_missing_file_is_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "nope.yaml")
    result = runner.invoke(app, ["validate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_a_results_folder_that_is_a_file_is_bad_input_named_by_its_key(tmp_path: Path):
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\noutput: {taken}\nbots:\n  - {{name: a, cmd: x}}\n  - {{name: b, cmd: x}}\n")
    for command in (["validate", str(path)], ["run", str(path)]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output  # bad input, not "the arena could not finish" (3)
        assert result.stderr.strip() == (f"error: {path}:3: key 'output': expected a folder path (the results folder), "
                                         f"but it is a file: {taken}")
    path.write_text(path.read_text().replace(f"output: {taken}\n", ""))
    result = runner.invoke(app, ["run", str(path), "--output", str(taken)])
    assert result.exit_code == 2 and result.stderr.startswith("error: --output: expected a folder path"), result.output
    assert taken.read_text() == "not a folder"


def test_defaults_and_resolution(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    for script in ("a.py", "b.py", "sub/c.py"):
        (tmp_path / script).write_text("")
    path = tmp_path / "t.yaml"
    path.write_text(GOOD)
    config = load_config(path, cpu_count=3, cwd=str(tmp_path / "here"))
    assert config.rules == Rules()
    assert (config.mode, config.players, config.team_size, config.sides) == ("single", 2, 1, 2)
    assert config.format == "round_robin" and config.duplicate is True
    assert config.matches_per_pairing == 2  # one deal, played from both seats
    assert config.failures.policy == "loss"
    assert config.concurrency == 3
    assert config.output == str(tmp_path / "here" / "results" / "t")
    a, b, c = config.bots
    assert a.cmd == "python3 a.py" and b.cmd == ("python3", "b.py")
    assert a.resolved_cwd == str(tmp_path)
    assert c.resolved_cwd == str(tmp_path / "sub")
    assert c.env == (("LEVEL", "3"),)
    assert c.move_ms == 500 and c.startup_ms is None
    assert c.resolved_cmd("/opt/py thon") == "'/opt/py thon' c.py"
    assert b.resolved_cmd("/x") == ("python3", "b.py")


def test_rules_and_yaml_merge_keys():
    text = """\
name: t
seed: 1
rules: {target: 15, sevens: primera}
defaults: &d {cmd: x, move_ms: 100}
bots:
  - {<<: *d, name: a}
  - {<<: *d, name: b}
"""
    # 'defaults' is not a key of the format: anchors must live in an allowed place.
    with pytest.raises(ConfigError, match="key 'defaults': unknown key"):
        parse_config(text)
    text = text.replace("defaults: &d {cmd: x, move_ms: 100}\n", "").replace(
        "  - {<<: *d, name: a}", "  - &d {name: a, cmd: x, move_ms: 100}"
    )
    config = parse_config(text)
    assert config.rules.target == 15 and config.rules.sevens == "primera"
    assert [b.move_ms for b in config.bots] == [100, 100]


def test_pairs_modes():
    four = "\n".join(f"  - {{name: {n}, cmd: x}}" for n in "abcd")
    base = f"name: t\nseed: 1\nmode: pairs\nbots:\n{four}\n"
    clones = parse_config(base)
    assert (clones.players, clones.team_size, clones.team_mode) == (4, 2, "clones")
    rotating = parse_config(base + "teams: rotating\n")
    assert rotating.team_mode == "rotating"
    fixed = parse_config(base + "teams:\n  - {name: red, members: [a, b]}\n  - {name: blue, members: [c, d]}\n")
    assert fixed.team_mode == "fixed" and [t.members for t in fixed.teams] == [("a", "b"), ("c", "d")]
    six = parse_config(base + "players: 6\nteam_size: 3\n")
    assert (six.players, six.team_size, six.sides) == (6, 3, 2)


def test_fingerprint_covers_the_games_not_the_machinery():
    config = parse_config(GOOD.replace(", cwd: sub", ""), cpu_count=1)
    same = parse_config(GOOD.replace(", cwd: sub", "") + "concurrency: 7\noutput: elsewhere\npin_workers: false\n",
                        cpu_count=1)
    assert same.fingerprint == config.fingerprint
    assert config.pin_workers and not same.pin_workers
    for change in ("seed: 5", "rules: {target: 15}\nseed: 5", "seed: 5\nduplicate: false"):
        other = parse_config(GOOD.replace(", cwd: sub", "").replace("seed: 5", change))
        assert other.fingerprint != config.fingerprint or change == "seed: 5"
    moved = parse_config(GOOD.replace(", cwd: sub", "").replace("b.py", "b2.py"))
    assert moved.fingerprint != config.fingerprint
    assert diff_game_dicts(config.game_dict(), moved.game_dict()) == ["bots"]
    retarget = parse_config(GOOD.replace(", cwd: sub", "") + "rules: {target: 30}\n")
    assert diff_game_dicts(config.game_dict(), retarget.game_dict()) == ["rules.target"]


def test_the_example_tournaments_are_valid():
    root = Path(__file__).parents[2] / "tournaments"
    files = sorted(root.glob("*.yaml"))
    assert files, "tournaments/ holds the example files"
    for path in files:
        result = runner.invoke(app, ["validate", "--quiet", str(path)])
        assert result.exit_code == 0, (path, result.output)
    assert os.path.isfile(root / "demo.yaml")


@pytest.mark.parametrize("cmd, why", [
    ("no-such-program --fast", "'no-such-program' is not on the PATH"),
    ("./missing-bot", "missing-bot is not an executable file"),
    ("python3 bots/missing.py", "bots/missing.py does not"),
])
def test_a_bot_command_that_cannot_start_is_refused_naming_the_key(tmp_path: Path, cmd, why):
    path = tmp_path / "t.yaml"
    (tmp_path / "ok.py").write_text("")
    path.write_text(f"name: t\nseed: 1\nbots:\n  - {{name: a, cmd: python3 ok.py}}\n  - {{name: b, cmd: {cmd}}}\n")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith(f"error: {path}:5: key 'bots[1].cmd': expected") and why in line
    # A cluster's workers run the bots: the check is theirs.
    path.write_text(path.read_text() + "cluster: tcp://127.0.0.1:8786\n")
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0


_TWO = "bots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n"


@pytest.mark.parametrize("text, line, key, says", [
    ("? [a, b]\n: 1\nname: t\n", 1, None, "expected a text key, got a list (allowed: name, seed"),
    ("name: t\n? {a: 1}\n: 1\n", 2, None, "expected a text key, got a mapping"),
    ("~: 1\nname: t\n", 1, None, "expected a text key, got nothing"),
    ("name: t\nseed: 1\nrules: {15: target}\n" + _TWO, 3, "rules", "expected a text key, got '15'"),
    ("name: t\nseed: 1\nbots:\n  - {name: a, cmd: x, ? [k] : v}\n", 4, "bots[0]", "expected a text key, got a list"),
    ("name: t\nseed: 1\nbots:\n  - {name: a, cmd: x, env: {? [A] : 1}}\n", 4, "bots[0].env",
     "expected a variable name (letters, digits, '_'), got a list"),
    ("name: t\nseed: 1\nbots:\n  - {name: a, cmd: x, pass_env: HOME}\n", 4, "bots[0].pass_env",
     "expected a list of variable names (letters, digits, '_') of the arena's environment, got 'HOME'"),
    ("name: t\nseed: 1\nbots:\n  - {name: a, cmd: x, pass_env: [A, B-C]}\n", 4, "bots[0].pass_env[1]",
     "expected a variable name (letters, digits, '_'), got 'B-C'"),
    ("name: t\nseed: 1\nbots:\n  - {name: a, cmd: x}\n  - {name: 7, cmd: x}\n", 5, "bots[1].name", "got '7'"),
    ("name: t\nseed: 1\nbots:\n  - {name: a, cmd: [x, [y]]}\n", 4, "bots[0].cmd[1]", "expected a non-empty string, got a list"),
    ("name: t\nseed: 1.0\n", 2, "seed", "expected an integer from 0 to 9223372036854775807, got '1.0'"),
    ("name: t\nseed: true\n", 2, "seed", "got 'true'"),
    # YAML 1.1 would read these as 83, 16 and 1000.
    ("name: t\nseed: 0123\n", 2, "seed", "in decimal digits (no leading zero, '+', '_' or base prefix), got '0123'"),
    ("name: t\nseed: 1\nmatches_per_pairing: 0x10\n" + _TWO, 3, "matches_per_pairing", "in decimal digits"),
    ("name: t\nseed: 1_000\n", 2, "seed", "got '1_000'"),
    ("name: t\nseed: 2026-02-30\n", 2, "seed", "got '2026-02-30'"),
    ("name: t\nseed: " + "9" * 120 + "\n", 2, "seed", "(120 characters)"),
    ("name: t\nseed: 1\nplayers: 3.0\n" + _TWO, 3, "players", "expected 2, 3 or 4"),
    ("name: t\nseed: 1\nmatches_per_pairing: yes\n" + _TWO, 3, "matches_per_pairing", "got 'yes'"),
    ("name: t\nseed: 1\nduplicate: 1\n" + _TWO, 3, "duplicate", "expected true or false, got '1'"),
    ("name: t\nseed: 1\npin_workers: some\n" + _TWO, 3, "pin_workers", "expected true or false, got 'some'"),
    ("name: t\nseed: 1\nrules: {target: 1e3}\n" + _TWO, 3, "rules.target", "expected an integer from 1 to 1000, got '1e3'"),
    ("name: t\nseed: 1\nrules: {target: {a: 1}}\n" + _TWO, 3, "rules.target", "got a mapping"),
    ("name: t\nseed: 1\nrules: {sevens: " + "x" * 500 + "}\n" + _TWO, 3, "rules.sevens", "(500 characters)"),
    ("name: t\nseed: 1\nmode: pairs\nteams: 3\n" + _TWO, 4, "teams", "got '3'"),
    ("name: !!python/object:os.system t\n", 1, "name", "the tag !!python/object:os.system is not allowed"),
    ("name: t\nseed: !!int 1\n", 2, "seed", "the tag !!int is not allowed"),
    ("name: t\nseed: 1\nbots: !custom\n  - {name: a, cmd: x}\n", 3, "bots", "the tag !custom is not allowed"),
    ("name: t\n---\nname: u\n", 2, None, "a second YAML document"),
    ("name: t\nseed: 1\nbots: &b [*b]\n", 3, "bots[0]", "an alias inside the value it names"),
])
def test_every_key_and_value_type_is_checked_where_it_is(text: str, line: int, key: str | None, says: str):
    with pytest.raises(ConfigError) as info:
        parse_config(text, file="f.yaml")
    err = info.value
    assert (err.file, err.line, err.key) == ("f.yaml", line, key), str(err)
    assert says in err.message


def test_anchors_aliases_and_merges_keep_working_for_real_files():
    # The shared settings sit in the first bot (anchors must live inside allowed keys);
    # every other bot merges them and adds its own keys.
    bots = "".join(f"  - {{<<: *d, name: b{i}}}\n" for i in range(200))
    text = "name: t\nseed: 1\nbots:\n  - &d {name: a, cmd: [python3, bot.py], move_ms: 500, env: {LEVEL: 2}}\n" + bots
    config = parse_config(text)
    assert [b.name for b in config.bots] == ["a", *(f"b{i}" for i in range(200))]
    assert {(b.cmd, b.move_ms, b.env) for b in config.bots} == {(("python3", "bot.py"), 500, (("LEVEL", "2"),))}
    # Own keys win over merged ones.
    config = parse_config(text.replace("{<<: *d, name: b0}", "{<<: *d, name: b0, move_ms: 9}"))
    assert [b.move_ms for b in config.bots[:3]] == [500, 9, 500]


def test_the_file_of_tournaments_md_every_key_shown_is_a_file_the_arena_accepts():
    docs = Path(__file__).resolve().parents[2] / "docs" / "TOURNAMENTS.md"
    example = docs.read_text().split("## The file\n", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    tournaments = docs.parents[1] / "tournaments"  # where such a file sits (its bots' cwd: ..)
    config = parse_config(example, file="t.yaml", base_dir=str(tournaments), check_commands=True)
    assert [bot.name for bot in config.bots] == ["greedy", "random", "c-firstmove", "greedy-v1"]
    assert config.failures.policy.value == "loss"
