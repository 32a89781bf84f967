"""``arena run`` as a person and a script see it: failures printed as they happen with a
hint, a failure summary, --strict and the file's failure limit, the progress modes, the
report page, builds before the first match, and results never credited to a changed bot.

Real processes throughout: the bots are real programs, and where the behaviour is about
output and exit codes the arena is run as a command."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from arena.harness.protocol import Termination
from arena.tournament import runner as tr
from arena.tournament.config import ConfigError, load_config, parse_config
from arena.tournament.store import ResultStore, StoreError
from tests.cli_helpers import arena_command, arena_process

pytestmark = pytest.mark.slow  # runs the arena as a command over real tournaments

ROOT = Path(__file__).resolve().parents[2]
POLICYBOT = ROOT / "tests" / "data" / "tournament_bots"
NEWCOMER = ROOT / "tests" / "data" / "newcomer"
FIRSTMOVE_C = ROOT / "bots" / "c" / "firstmove.c"


# Every command in this process (tests/cli_helpers.py); ``read`` names those that only read results.
arena = read = arena_command


def tournament(folder: Path, bots: str, extra: str = "", name: str = "t") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 5\nrules: {{target: 5}}\noutput: {folder / 'out'}\nconcurrency: 2\n"
                    f"{extra}\nbots:\n{bots}")
    return path


def policy(name: str, env: str = "") -> str:
    return f'  - {{name: {name}, cmd: "$PYTHON policybot.py {name}", cwd: "{POLICYBOT}"{env}}}\n'


def newbot(name: str, mode: str, extra: str = "") -> str:
    return f'  - {{name: {name}, cmd: "$PYTHON newbot.py {mode}", cwd: "{NEWCOMER}"{extra}}}\n'


def stored(folder: Path) -> int:
    with ResultStore.open_existing(str(folder)) as store:
        return store.count()


def _stored_as_won(store: ResultStore, config, specs) -> None:
    """The bots' identities as their files are now, and each of ``specs`` stored as a match its
    first side won 5-0 (no bot runs): results a resume then finds."""
    from arena.core.outcome import EndReason
    from arena.tournament.identity import identify_bot
    from arena.tournament.store import MatchRow

    store.set_identities({bot.name: identify_bot(bot) for bot in config.bots})
    for spec in specs:
        store.add(MatchRow(spec.id, spec.index, spec.pairing, spec.deal, spec.rotation, spec.seed, spec.sides, spec.seats,
                           0, (5, 0), EndReason.TARGET, (Termination.OK,) * len(spec.seats), (0, 0), 1), {})


# --- failures: loud and explained ------------------------------------------------------------------


def test_a_newcomers_failing_bots_are_shown_as_they_fail_with_a_hint_and_summed_up(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + newbot("debugbot", "debug")
                      + newbot("sleepy", "sleepy", ", startup_ms: 300, env: {NEWBOT_SLEEP_MS: 3000}"))
    done = arena("run", str(path), "--no-report")
    assert done.returncode == 0, done.stderr  # failures are results, not errors, unless asked (below)
    err = done.stderr
    debug_line = re.search(r"failure: debugbot in match \S+ \(seat \d\): no_handshake: not JSON .*'DEBUG got hello'", err)
    assert debug_line, err
    assert "hint: stdout is for protocol lines only: print debug output to stderr" in err
    assert re.search(r"failure: sleepy in match \S+ \(seat \d\): no_handshake: no ready within 300 ms", err), err
    assert "hint: it did not answer hello within startup_ms: if it is slow to start, raise startup_ms" in err
    # The summary: per bot, the counts, the first detail, the log, and the plain call-out.
    summary = err[err.index("bot failures:"):]
    assert summary.startswith("bot failures: 2 of 3 bots failed, in 6 of 6 matches")
    assert "  debugbot: failed in 4 of 4 matches (no_handshake 4)" in summary
    assert "  sleepy: failed in 4 of 4 matches (no_handshake 4)" in summary
    assert f"stderr log: {tmp_path / 'out' / 'logs' / 'debugbot.stderr.log'}" in summary
    assert "debugbot FAILED EVERY ONE OF ITS 4 MATCHES" in summary and "sleepy FAILED EVERY ONE OF ITS 4 MATCHES" in summary
    assert "arena check-bot" in summary and "greedy" not in summary.split("\n")[1]
    # The bar's place, off a terminal: a status line with the rate, the leader and the failures.
    assert re.search(r"t: 6/6 matches, [\d.]+/min, leader: greedy \(.*\), failures: 6 matches", err), err

    # --strict: the same results (nothing left to play) now end the run with code 1, the summary
    # rebuilt from the store (the first detail read back from the stored records).
    strict = arena("run", str(path), "--no-report", "--strict")
    assert strict.returncode == 1, strict.stderr
    assert strict.stderr.rstrip().splitlines()[-1] == "error: --strict: 6 of 6 matches had a bot failure (see the summary above)"
    assert "'DEBUG got hello'" in strict.stderr and "resuming: 6 of 6" in strict.stderr
    assert "rank" in strict.stdout  # the tables are still printed and written

    # The file's limit does the same, and allows what it says.
    path.write_text(path.read_text().replace("concurrency: 2\n", "concurrency: 2\nfailures: {max_failed_matches: 6}\n"))
    assert arena("run", str(path), "--no-report").returncode == 0
    path.write_text(path.read_text().replace("max_failed_matches: 6", "max_failed_matches: 5"))
    limited = arena("run", str(path), "--no-report")
    assert limited.returncode == 1
    assert "error: failures.max_failed_matches is 5: 6 of 6 matches had a bot failure" in limited.stderr


@pytest.mark.parametrize("value, why", [("-1", "expected a whole number of matches >= 0"),
                                        ("lots", "expected a whole number of matches >= 0"),
                                        ("true", "expected a whole number of matches >= 0")])
def test_the_failure_limit_is_checked_in_the_file(value: str, why: str):
    text = "name: t\nseed: 1\nfailures:\n  max_failed_matches: {}\nbots:\n  - {{name: a, cmd: x}}\n  - {{name: b, cmd: x}}\n"
    with pytest.raises(ConfigError) as caught:
        parse_config(text.format(value))
    assert caught.value.key == "failures.max_failed_matches" and why in caught.value.message and caught.value.line == 4


def test_the_failure_limit_never_changes_the_games():
    base = "name: t\nseed: 1\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n"
    limited = parse_config(base + "failures: {policy: loss, max_failed_matches: 3}\n")
    assert limited.max_failed_matches == 3 and parse_config(base).max_failed_matches is None
    assert limited.fingerprint == parse_config(base).fingerprint


# --- progress modes and the report page ---------------------------------------------------------------


def test_jsonl_progress_is_one_object_per_match_on_stdout_and_everything_else_on_stderr(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + policy("first") + newbot("debugbot", "debug"))
    done = arena("run", str(path), "--progress", "jsonl", "--no-report")
    assert done.returncode == 0, done.stderr
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(objects) == 6 == stored(tmp_path / "out")
    assert sorted(o["done"] for o in objects) == [1, 2, 3, 4, 5, 6] and {o["total"] for o in objects} == {6}
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        rows = {row.id: row for row in store.results()}
    for o in objects:
        row = rows[o["id"]]
        assert (tuple(o["seats"]), tuple(o["sides"]), tuple(o["scores"]), o["winner"], o["reason"]) == (
            row.seats, row.sides, row.scores, row.winner, row.reason)
        assert [(f["seat"], f["reason"]) for f in o["failures"]] == [(seat, t.value) for seat, t in row.failures]
        assert all(f["bot"] == "debugbot" and "DEBUG got hello" in f["detail"] for f in o["failures"])
    assert "rank" in done.stderr and "failure: debugbot" in done.stderr and "bot failures:" in done.stderr
    # --quiet silences the person's lines, not the script's.
    shutil.rmtree(tmp_path / "out")
    quiet = arena("run", str(path), "--progress", "jsonl", "--quiet", "--no-report")
    assert quiet.returncode == 0 and len([json.loads(line) for line in quiet.stdout.splitlines()]) == 6
    assert "failure: debugbot" not in quiet.stderr and "rank" in quiet.stderr and "bot failures:" in quiet.stderr


def test_verbose_prints_a_line_per_match_and_quiet_only_the_tables(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + policy("first"))
    verbose = arena("run", str(path), "-v", "--no-progress", "--no-report")
    assert verbose.returncode == 0, verbose.stderr
    lines = [line for line in verbose.stderr.splitlines() if re.match(r"^\d{5}\.\d  ", line)]
    assert len(lines) == 2 and all(re.search(r"(greedy|first) vs (greedy|first)  \d+-\d+  ", line) for line in lines)
    shutil.rmtree(tmp_path / "out")
    quiet = arena("run", str(path), "--quiet", "--no-report")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout.lstrip().startswith("rank") and "greedy" in quiet.stdout and "score" in quiet.stdout


def test_the_run_writes_the_report_page_and_says_where(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + policy("first"))
    done = arena("run", str(path), "--no-progress")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    page = out / "report.html"
    assert f"report: {page}" in done.stderr
    html = page.read_text()
    assert "t: tournament report" in html and "Standings" in html
    replays = sorted(p.stem for p in (out / "report_replays" / "data").iterdir())
    assert len(replays) == 2 and all(f'href="report_replays/replay.html#{name}"' in html for name in replays)
    # The same page arena report writes.
    again = read("report", str(out), "--html", str(tmp_path / "other.html"))
    assert again.returncode == 0
    assert (tmp_path / "other.html").read_text().replace("other_replays", "report_replays") == html
    shutil.rmtree(out)
    skipped = arena("run", str(path), "--no-progress", "--no-report")
    assert not (out / "report.html").exists() and "report:" not in skipped.stderr


def test_writing_the_report_says_what_it_does_how_to_skip_it_and_how_far_it_is(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from arena.cli import replay
    from arena.cli.app import app

    monkeypatch.setattr(replay, "REPORT_PROGRESS_EVERY_S", 0.0)  # every page says so
    path = tournament(tmp_path, policy("greedy") + policy("first"), "matches_per_pairing: 4")
    done = CliRunner().invoke(app, ["run", str(path), "--no-progress"])
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    start = lines.index("report: writing 4 replay pages and report.html (--no-report skips it)...")
    assert lines[start + 1:start + 4] == [f"report: {n}/4 replay pages" for n in (1, 2, 3)]
    assert lines[start + 4].startswith("results: ")
    again = CliRunner().invoke(app, ["report", str(tmp_path / "out")])
    assert again.exit_code == 0 and "report: writing 0 replay pages (4 unchanged) and report.html..." in again.stderr


@pytest.mark.parametrize("shape", ["alone", "three", "gauntlet"])
def test_the_last_status_line_names_the_leader_of_the_final_table(tmp_path: Path, shape: str):
    extra = {"alone": "matches_per_pairing: 4", "three": "players: 3\nmatches_per_pairing: 3",
             "gauntlet": "format: gauntlet\nchallenger: first\nmatches_per_pairing: 4"}[shape]
    path = tournament(tmp_path, policy("greedy") + policy("first") + policy("random"), extra)
    done = arena("run", str(path), "--no-report")  # no terminal: the bar is status lines
    assert done.returncode == 0, done.stderr
    status = [line for line in done.stderr.splitlines() if ", leader: " in line]
    rows = json.loads((tmp_path / "out" / "standings.json").read_text())
    top = rows[0]
    assert status and status[-1].split("leader: ")[1].startswith(f"{top['name']} ({top['elo']:+.0f}), "), status


# --- builds before the first match ------------------------------------------------------------------


def c_tournament(tmp_path: Path, build: str = "cc -O2 -o bot.bin bot.c") -> Path:
    (tmp_path / "bot").mkdir(exist_ok=True)
    shutil.copy(FIRSTMOVE_C, tmp_path / "bot" / "bot.c")
    return tournament(tmp_path, f"  - {{name: cbot, cmd: ./bot.bin, cwd: bot, build: '{build}'}}\n" + policy("greedy"))


def test_run_builds_first_then_plays_the_built_bot_and_a_rebuilt_bot_is_refused(tmp_path: Path):
    path = c_tournament(tmp_path)
    validate = read("validate", str(path))
    assert validate.returncode == 0 and "builds: 1 to run, 0 cached" in validate.stdout
    assert "cbot: build: cc -O2 -o bot.bin bot.c (no earlier build is recorded)" in validate.stdout
    dry = arena("run", str(path), "--dry-run")
    assert dry.returncode == 0 and "cbot: build: cc -O2" in dry.stdout and "nothing played yet" in dry.stdout
    assert not (tmp_path / "bot" / "bot.bin").exists() and not (tmp_path / "out").exists()  # nothing built or written
    done = arena("run", str(path), "--no-progress", "--no-report")
    assert done.returncode == 0, done.stderr
    assert re.search(r"build: cbot: built in [\d.]+ s \(no earlier build is recorded\); log ", done.stderr), done.stderr
    assert done.stderr.index("build: cbot") < done.stderr.index("results:")
    assert stored(tmp_path / "out") == 2
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        identity = store.identities()["cbot"]
        assert all(row.failures == () for row in store.results())
    assert identity.cmd == "./bot.bin" and dict(identity.files)["./bot.bin"] and identity.inputs_sha256
    assert identity.ready_name == "firstmove.c"  # from its handshake, carried back from the worker
    cached = arena("run", str(path), "--dry-run")
    assert "builds: 0 to run, 1 cached" in cached.stdout and "1 of" not in cached.stdout

    # The source changes, the run rebuilds it, and the stored results are not credited to it:
    # the rebuilt bot is a new version, playing its own matches.
    with open(tmp_path / "bot" / "bot.c", "a") as fh:
        fh.write("/* a change */\n")
    joined = arena("run", str(path), "--no-progress", "--no-report")
    assert joined.returncode == 0, joined.stderr
    [line] = [x for x in joined.stderr.splitlines() if "has a new version" in x]
    assert line.startswith("cbot has a new version (build inputs changed") and "are kept" in line
    assert stored(tmp_path / "out") == 4


def test_a_failing_build_stops_the_run_before_any_match(tmp_path: Path):
    path = c_tournament(tmp_path, build="echo compiling; exit 3")
    done = arena("run", str(path), "--no-progress")
    assert done.returncode == 2
    log = tmp_path / "out" / "logs" / "cbot.build.log"
    assert done.stderr.strip().splitlines()[-1] == f"error: bot 'cbot': build failed with exit code 3; log {log}"
    assert "compiling" in log.read_text() and stored(tmp_path / "out") == 0


# --- identities -----------------------------------------------------------------------------------


def test_a_changed_python_bot_joins_its_tournament_as_a_new_version_on_the_same_deals(tmp_path: Path):
    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "mybot.py")
    path = tournament(tmp_path, '  - {name: mybot, cmd: "$PYTHON mybot.py hash"}\n' + policy("greedy") + policy("random"))
    assert arena("run", str(path), "--no-progress", "--no-report").returncode == 0
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        before = {row.id: row for row in store.results()}
    assert len(before) == 6
    with open(tmp_path / "mybot.py", "a") as fh:
        fh.write("# tuned\n")
    dry = arena("run", str(path), "--dry-run")
    assert dry.returncode == 0 and "mybot has a new version (program file mybot.py changed" in dry.stdout
    joined = arena("run", str(path), "--no-progress", "--no-report")
    assert joined.returncode == 0, joined.stderr
    [line] = [x for x in joined.stderr.splitlines() if "new version" in x]
    assert re.fullmatch(r"mybot has a new version \(program file mybot.py changed \(sha256 [0-9a-f]{12}\.\. -> "
                        r"[0-9a-f]{12}\.\.\)\): the results of mybot@[0-9a-f]{7} are kept, and the new version plays "
                        r"its own schedule against the field, on the same deals", line), line
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        after = {row.id: row for row in store.results()}
        identities = store.identities()
    assert {i: after[i] for i in before} == before  # every old result kept as it was
    new = {i: r for i, r in after.items() if i not in before}
    # Only its own matches: the new version against each other bot, on the deals the old one met it on.
    assert sorted(new) == sorted(f"{r.id}~1" for r in before.values() if "mybot" in r.seats)
    for match_id, row in new.items():
        old = before[match_id.removesuffix("~1")]
        assert row.seed == old.seed and row.seats == tuple("mybot~2" if s == "mybot" else s for s in old.seats)
    assert identities["mybot"].key != identities["mybot~2"].key
    current = json.loads(read("table", str(tmp_path / "out"), "--format", "json").stdout)
    label = identities["mybot~2"].label
    assert sorted(r["name"] for r in current) == sorted(["greedy", "random", label])
    assert {r["name"]: r["matches"] for r in current} == {"greedy": 4, "random": 4, label: 4}
    every = json.loads(read("table", str(tmp_path / "out"), "--format", "json", "--versions", "all").stdout)
    assert {r["name"]: (r["version"], r["identity"]) for r in every if r["name"].startswith("mybot@")} == {
        identities[e].label: (identities[e].version, identities[e].key) for e in ("mybot", "mybot~2")}
    assert read("verify", str(tmp_path / "out")).returncode == 0
    # A replay and the report show each version by its label, never the store's mybot~2.
    old_label = identities["mybot"].label
    from typer.testing import CliRunner

    from arena.cli.app import app

    [new_id] = [i for i in new if new[i].seats[0] == "mybot~2"][:1]
    shown = CliRunner().invoke(app, ["replay", str(tmp_path / "out"), new_id])
    assert shown.exit_code == 0 and label in shown.stdout and "mybot~2" not in shown.stdout, shown.output
    from arena.render.report import TournamentReport

    report = TournamentReport(tmp_path / "out", replays_dir="r")
    scripts = "".join(script for _file, script in report.replay_files())
    assert "mybot~2" not in scripts and label in scripts and old_label in scripts
    assert {side for m in report.matches for side in m["sides"] if side.startswith("mybot")} == {label, old_label}
    # So does arena analyze, whose --bot takes the label the table shows.
    analysed = CliRunner().invoke(app, ["analyze", str(tmp_path / "out"), new_id, "--playouts", "2", "--format", "json"])
    assert analysed.exit_code == 0, analysed.output
    assert sorted(b["bot"] for b in json.loads(analysed.stdout)) == sorted(
        label if s == "mybot~2" else s for s in new[new_id].seats)
    one = CliRunner().invoke(app, ["analyze", str(tmp_path / "out"), "--bot", old_label, "--playouts", "2",
                                   "--format", "json"])
    assert one.exit_code == 0, one.output
    assert [b["bot"] for b in json.loads(one.stdout)] == [old_label]
    again = arena("run", str(path), "--no-progress", "--no-report")
    assert again.returncode == 0 and "new version" not in again.stderr and stored(tmp_path / "out") == 10
    dropped = arena("run", str(path), "--no-progress", "--no-report", "--drop-old")
    assert dropped.returncode == 0 and "--drop-old: 4 matches of earlier versions deleted" in dropped.stderr
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        assert all("mybot" not in row.seats for row in store.results()) and store.count() == 6
    # The old version's results are gone, and so is it from the tables, with the note about versions.
    left = read("table", str(tmp_path / "out"), "--versions", "all", "--format", "json")
    assert sorted(r["name"] for r in json.loads(left.stdout)) == sorted(["greedy", "random", label])
    assert "current versions only" not in read("table", str(tmp_path / "out")).stdout


def test_a_change_of_a_module_a_bot_declares_in_inputs_makes_a_new_version(tmp_path: Path):
    # policybot.py run through a script that imports it: a change of the module is a change of the bot.
    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "policybot.py")
    (tmp_path / "mybot.py").write_text("import runpy, sys\nsys.argv[0] = 'policybot.py'\n"
                                       "runpy.run_path('policybot.py', run_name='__main__')\n")
    entry = '  - {name: mybot, cmd: "$PYTHON mybot.py greedy", inputs: [policybot.py]}\n'
    path = tournament(tmp_path, entry + policy("random"))
    first = arena("run", str(path), "--no-progress", "--no-report")
    assert first.returncode == 0 and stored(tmp_path / "out") == 2, first.stderr
    with open(tmp_path / "policybot.py", "a") as fh:
        fh.write("# tuned\n")
    joined = arena("run", str(path), "--no-progress", "--no-report")
    assert joined.returncode == 0, joined.stderr
    assert re.search(r"mybot has a new version \(inputs changed \(sha256 [0-9a-f]{12}\.\. -> [0-9a-f]{12}\.\.\)\)",
                     joined.stderr), joined.stderr
    assert stored(tmp_path / "out") == 4
    # Without inputs: the module's change goes unseen, the tournament is complete as it was.
    other = tmp_path / "plain"
    other.mkdir()
    for name in ("policybot.py", "mybot.py"):
        shutil.copy(tmp_path / name, other / name)
    plain = tournament(other, entry.replace(", inputs: [policybot.py]", "") + policy("random"))
    assert arena("run", str(plain), "--no-progress", "--no-report").returncode == 0
    with open(other / "policybot.py", "a") as fh:
        fh.write("# tuned again\n")
    again = arena("run", str(plain), "--no-progress", "--no-report")
    assert again.returncode == 0 and "new version" not in again.stderr and stored(other / "out") == 2


def test_a_changed_bot_is_still_refused_where_versions_cannot_play_apart(tmp_path: Path):
    from arena.tournament.schedule import iter_schedule

    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "mybot.py")
    path = tournament(tmp_path, '  - {name: mybot, cmd: "$PYTHON mybot.py hash"}\n' + policy("greedy")
                      + policy("random") + "  - {name: fourth, cmd: \"$PYTHON mybot.py greedy\"}\n",
                      extra="mode: pairs\nplayers: 4\nteams: [{name: red, members: [mybot, greedy]}, "
                            "{name: blue, members: [random, fourth]}]\n")
    config = load_config(path)
    with tr.open_store(config) as store:
        _stored_as_won(store, config, [next(iter_schedule(config))])
        with open(tmp_path / "mybot.py", "a") as fh:
            fh.write("# tuned\n")
        with pytest.raises(tr.BotChangedError, match="bot 'mybot' changed since its results were stored: program file") \
                as caught:
            tr.check_identities(store, tr.identify_bots(config), config)
    assert str(caught.value).endswith(
        "a fixed team is the members the file names, so a new version of one cannot join the team that played: to "
        "keep both, give the new version its own name and team in the file and use a new folder (--output DIR); to "
        f"start afresh, delete {config.output}")


def test_a_changed_bot_of_rotating_teams_joins_as_a_new_version_with_its_own_matches(tmp_path: Path):
    from arena.tournament.schedule import iter_schedule

    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "mybot.py")
    path = tournament(tmp_path, '  - {name: mybot, cmd: "$PYTHON mybot.py hash"}\n' + policy("greedy")
                      + policy("random") + policy("first") + policy("hash"),
                      extra="mode: pairs\nplayers: 4\nteams: rotating\nmatches_per_pairing: 2\n")
    config = load_config(path)
    with tr.open_store(config) as store:
        _stored_as_won(store, config, iter_schedule(config))
        with open(tmp_path / "mybot.py", "a") as fh:
            fh.write("# tuned\n")
        checked = tr.check_identities(store, tr.identify_bots(config), config)
        assert [line.split(" (")[0] for line in checked.new_versions] == ["mybot has a new version"]
        plan = tr.plan_run(config, store)
        pending = list(plan.pending)
        # Its own matches: every match it sat in, on the same deal and seats, and none without it.
        played = [spec for spec in iter_schedule(config) if "mybot" in spec.seats]
        assert 0 < len(played) < len(list(iter_schedule(config)))
        assert [(s.seed, s.seats) for s in pending] == [
            (s.seed, tuple("mybot~2" if seat == "mybot" else seat for seat in s.seats)) for s in played]
        assert all("mybot" not in side.split("+") for s in pending for side in s.sides)
        assert sum("mybot~2" in side.split("+") for s in pending for side in s.sides) == len(pending)


def test_a_store_without_identities_still_resumes_and_then_records_them(tmp_path: Path):
    shutil.copytree(ROOT / "tests" / "golden" / "store", tmp_path / "golden")
    done = arena("run", "tests/golden/tournament.yaml", "--output", str(tmp_path / "golden"), "--no-progress", "--no-report")
    assert done.returncode == 0, done.stderr
    assert "note: the bots' identities were not recorded with the 12 matches in" in done.stderr
    assert "resuming: 12 of 12" in done.stderr
    with ResultStore.open_existing(str(tmp_path / "golden")) as store:
        assert set(store.identities()) == {"hash", "greedy", "crashy"} and store.count() == 12
    again = arena("run", "tests/golden/tournament.yaml", "--output", str(tmp_path / "golden"), "--no-progress", "--no-report")
    assert again.returncode == 0 and "not recorded" not in again.stderr
    table = read("table", str(tmp_path / "golden"), "--format", "json")
    expected = json.loads((ROOT / "tests" / "golden" / "store-standings.json").read_text())
    got = {r["name"]: [r["matches"], r["wins"], r["draws"], r["losses"], r["points_for"], r["points_against"]]
           for r in json.loads(table.stdout)}
    assert got == expected


def _named_bot(tmp_path: Path) -> tuple[Path, Path, str]:
    """A bot that gives in each ready the name in a file beside it, read again at every match:
    its program (a copy of newbot.py in a folder of its own, given to it writable, as a sealed
    bot sees only its own folders), the name file, and the tournament file's entry."""
    (tmp_path / "bot").mkdir()
    program = tmp_path / "bot" / "newbot.py"
    shutil.copy(NEWCOMER / "newbot.py", program)
    name_file = tmp_path / "bot" / "name.txt"
    name_file.write_text("Named v1")
    entry = (f'  - {{name: named, cmd: "$PYTHON newbot.py named", cwd: "{tmp_path / "bot"}", env: {{NEWBOT_NAME_FILE: '
             f'"{name_file}"}}, limits: {{writable: ["{tmp_path / "bot"}"]}}}}\n')
    return program, name_file, entry


def _rename(name_file: Path, name: str) -> None:
    # Replaced whole, never truncated then written: a handshake reading it meanwhile must see
    # one name or the other, not an empty file.
    fresh = name_file.with_suffix(".new")
    fresh.write_text(name)
    os.replace(fresh, name_file)


def test_a_bot_that_changes_its_ready_name_with_its_program_unchanged_does_not_stop_the_run(tmp_path: Path):
    # The ready name is the bot's own word: one that says another name at will (here from a
    # file its identity does not hold) must not stop a run; its program is the one recorded,
    # so its results stand, under its first name, and the run says so once.
    _, name_file, entry = _named_bot(tmp_path)
    path = tournament(tmp_path, entry + policy("greedy"), extra="matches_per_pairing: 6")
    seen: list[str] = []

    def rename_after_the_first(row, done):
        seen.append(row.id)
        _rename(name_file, f"Named v{len(seen) + 1}")

    assert tr.run_tournament(load_config(path), concurrency=1, on_match=rename_after_the_first)["played"] == 6
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        assert store.identities()["named"].ready_name == "Named v1"
    # On the command line, a bot that names itself anew at every match: one note, exit 0.
    shifty = tournament(tmp_path, newbot("shifty", "shifty") + policy("greedy"), extra="matches_per_pairing: 4",
                        name="shifty")
    run = arena("run", str(shifty), "--no-progress", "--no-report", "--output", str(tmp_path / "shifty"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert stored(tmp_path / "shifty") == 4
    notes = [line for line in run.stderr.splitlines() if line.startswith("note: shifty: its ready name changed")]
    assert len(notes) == 1 and "its program unchanged" in notes[0] and "its results stand" in notes[0], run.stderr


def test_another_program_answering_under_a_bots_name_mid_run_stops_the_run(tmp_path: Path):
    # The program itself replaced mid-run (its file changed, which its identity holds), and the
    # new one answers with another name: the run stops before that match is stored.
    program, name_file, entry = _named_bot(tmp_path)
    path = tournament(tmp_path, entry + policy("greedy"), extra="matches_per_pairing: 6")
    config = load_config(path)
    seen: list[str] = []

    def swap_after_the_first(row, done):
        seen.append(row.id)
        if len(seen) == 1:
            program.write_text(program.read_text() + "\n# another program\n")
            _rename(name_file, "Named v2")  # the next handshake gives another name

    with pytest.raises(tr.BotChangedError) as caught:
        tr.run_tournament(config, concurrency=1, on_match=swap_after_the_first)
    error = caught.value
    assert error.bot == "named" and error.exit_code == 2
    assert "its ready name changed ('Named v1' -> 'Named v2')" in str(error) and "another program" in str(error), str(error)
    assert "program file newbot.py changed" in str(error), str(error)
    # The worker may have begun the next match (with the old name) before the file changed;
    # the first match the other program answered is refused and not stored.
    # How many: a worker plays one match and holds the next, and under load the parent reports
    # (and swaps the file) a match or two behind it; 3 were stored in one CI run. Whatever the
    # timing, the run stops before its 6 matches, storing only what the first program answered.
    assert 1 <= len(seen) < 6 and stored(tmp_path / "out") == len(seen), (seen, stored(tmp_path / "out"))


# --- memory: what a run holds ------------------------------------------------------------------


def test_planning_a_resume_reads_no_stored_row_and_holds_no_schedule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tournament(tmp_path, policy("greedy") + policy("first") + policy("hash"), extra="matches_per_pairing: 2")
    config = load_config(path)
    with tr.open_store(config) as store:
        first = next(iter(tr.plan_run(config, store).pending))
        from arena.tournament.worker import worker_plan

        plan = worker_plan(config, python=sys.executable, logs_dir=str(tmp_path / "logs"))
        state = plan.open_state(plan.job, "w0")
        try:
            completed = plan.complete(first, state, "w0")
        finally:
            plan.close_state(state)
        store.add(completed.row, completed.record_json)

        def no_rows(*args, **kwargs):
            raise AssertionError("plan_run read the stored rows")

        monkeypatch.setattr(ResultStore, "iter_rows", no_rows)
        monkeypatch.setattr(ResultStore, "results", no_rows)
        run_plan = tr.plan_run(config, store)
        assert (run_plan.total, run_plan.done, run_plan.to_play) == (6, 1, 5)
        assert isinstance(run_plan.stored, bytes) and len(run_plan.stored) == 6
        pending = run_plan.pending
        assert iter(pending) is pending  # a generator: made as it is walked
        assert [spec.id for spec in pending] == [s.id for s in tr.build_schedule(config) if s.id != first.id]


def test_a_stored_match_that_is_not_the_schedules_is_refused(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + policy("first"))
    config = load_config(path)
    with tr.open_store(config) as store:
        pass
    conn = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    conn.execute("INSERT INTO matches VALUES ('00000.0', 0, 0, 0, 0, 123, '[\"greedy\", \"first\"]', "
                 "'[\"greedy\", \"first\"]', 0, '[5, 0]', 'target', '[\"ok\", \"ok\"]', '[0, 0]', 1, '[]', 0.1, '{}', NULL)")
    conn.commit()
    conn.close()
    with tr.open_store(config) as store, pytest.raises(StoreError, match="stored match '00000.0' is not in this schedule"):
        tr.plan_run(config, store)


def test_the_local_executor_takes_specs_only_as_workers_free_up(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + policy("first") + policy("hash"), extra="matches_per_pairing: 4")
    config = load_config(path)
    pulled: list[str] = []

    def specs():
        for spec in tr.build_schedule(config):
            pulled.append(spec.id)
            yield spec

    executor = tr.make_executor(config, 2)
    seen_at_first = None
    finished = []
    with executor:
        for completed in executor.run_stream(specs()):
            if seen_at_first is None:
                seen_at_first = len(pulled)
            finished.append(completed.spec.id)
    # Two workers, each holding its match and the next (executors._HELD): at most four specs
    # taken before the first results, and as many again as the results that come back in the
    # first batch free (each worker's next match goes out before the batch is handed on);
    # never the whole schedule of twelve.
    from arena.tournament.executors import _HELD

    assert seen_at_first is not None and seen_at_first <= 2 * 2 * _HELD < 12
    assert sorted(finished) == sorted(pulled) and len(finished) == 12


# --- a fresh clone, the README's commands only ---------------------------------------------------


def test_the_example_tournaments_run_from_a_fresh_clone_with_the_readme_commands(tmp_path: Path):
    from tests.tournament.test_build import tracked_copy

    clone = tracked_copy(tmp_path / "clone")
    assert not list(clone.glob("bots/**/*.bin"))
    files = sorted(p.name for p in (clone / "tournaments").glob("*.yaml"))
    assert files == sorted(p.name for p in (ROOT / "tournaments").glob("*.yaml"))
    dries = {}
    for name in files:
        dry = dries[name] = arena_process("run", f"tournaments/{name}", "--dry-run", cwd=clone)
        assert dry.returncode == 0, (name, dry.stderr)
        assert "nothing played yet" in dry.stdout
    big = dries["big.yaml"]
    assert "builds: 2 to run, 0 cached" in big.stdout
    assert "c-firstmove: build: cc -O2 -o bots/c/firstmove.bin bots/c/firstmove.c" in big.stdout
    assert "java-greedy: build: javac" in big.stdout
    assert not list(clone.glob("bots/**/*.bin")) and not (clone / "results").exists()  # nothing built or written
    # A real, short run of a file whose C bot builds itself.
    (clone / "tournaments" / "cbot.yaml").write_text(
        "name: cbot\nseed: 3\nrules: {target: 5}\nconcurrency: 2\nbots:\n"
        "  - {name: c-firstmove, cmd: ./bots/c/firstmove.bin, cwd: ..,\n"
        "     build: cc -O2 -o bots/c/firstmove.bin bots/c/firstmove.c}\n"
        "  - {name: random, cmd: $PYTHON bots/random_bot.py, cwd: ..}\n")
    done = arena_process("run", "tournaments/cbot.yaml", cwd=clone)
    assert done.returncode == 0, done.stderr
    assert "build: c-firstmove: built in" in done.stderr and (clone / "bots" / "c" / "firstmove.bin").is_file()
    assert stored(clone / "results" / "cbot") == 2 and (clone / "results" / "cbot" / "report.html").is_file()
    assert "failure:" not in done.stderr and "bot failures" not in done.stderr


def test_a_long_tournament_gets_no_report_page_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    import arena.cli.tournament as ct
    from arena.cli import app

    monkeypatch.setattr(ct, "REPORT_MAX_MATCHES", 1)
    path = tournament(tmp_path, policy("greedy") + policy("first"))
    done = CliRunner().invoke(app, ["run", str(path), "--no-progress"])
    assert done.exit_code == 0, done.output
    assert "no report page for 2 matches (over 1; --report writes it)" in done.stderr
    assert not (tmp_path / "out" / "report.html").exists()
    asked = CliRunner().invoke(app, ["run", str(path), "--no-progress", "--report"])
    assert asked.exit_code == 0 and (tmp_path / "out" / "report.html").is_file()


def test_the_run_header_counts_in_words_that_agree_with_their_numbers(tmp_path: Path):
    path = tournament(tmp_path, policy("greedy") + policy("first"), "matches_per_pairing: 2")
    done = arena("validate", str(path))
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("t: "))
    assert "t: 2 bots, " in header and "2 matches per pairing (duplicate deals); 2 matches on 1 deal; " in header


def test_a_ctrl_c_while_the_report_is_written_stops_cleanly_with_every_match_stored(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from arena.cli import replay
    from arena.cli.app import app

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(replay, "write_report", interrupted)
    path = tournament(tmp_path, policy("greedy") + policy("first"))
    done = CliRunner().invoke(app, ["run", str(path), "--no-progress"])
    assert done.exit_code == 130, done.output
    assert "interrupted: 2 of 2 matches are safely stored" in done.stderr and f"resume with: arena run {path}" in done.stderr
    assert stored(tmp_path / "out") == 2 and (tmp_path / "out" / "standings.json").is_file()


def test_a_command_spelled_anew_for_the_same_program_resumes_as_that_bot(tmp_path: Path):
    from arena.tournament.schedule import iter_schedule
    from arena.tournament.store import ResumeMismatchError

    (tmp_path / "mybot").mkdir()
    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "mybot" / "bot.py")
    first = '  - {name: mybot, cmd: "python3 bot.py hash", cwd: mybot}\n'
    path = tournament(tmp_path, first + policy("greedy"))
    config = load_config(path)
    specs = list(iter_schedule(config))
    with tr.open_store(config) as store:
        _stored_as_won(store, config, specs[:1])
    # The same file through $PYTHON and an absolute path, no cwd: the same program.
    respelled = f'  - {{name: mybot, cmd: "$PYTHON {tmp_path}/mybot/bot.py hash"}}\n'
    path.write_text(path.read_text().replace(first, respelled))
    again = load_config(path)
    assert again.fingerprint != config.fingerprint
    with tr.open_store(again) as store:
        checked = tr.check_identities(store, tr.identify_bots(again), again)
        assert checked.new_versions == () and len(checked.respelled) == 1
        assert checked.respelled[0].startswith("mybot: the file spells its command anew (cmd 'python3 bot.py hash' -> ")
        assert store.fingerprint == again.fingerprint and store.count() == 1
        plan = tr.plan_run(again, store)
        assert plan.done == 1 and [s.id for s in plan.pending] == [s.id for s in specs[1:]]
    # Without recorded identities the arena cannot tell: the file's change is refused, as before.
    conn = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'identities'")
    conn.close()
    with tr.open_store(config) as store, pytest.raises(ResumeMismatchError, match="bots.mybot.cmd"):
        tr.check_identities(store, tr.identify_bots(config), config)


def test_inputs_named_anew_for_the_same_files_say_so_not_that_the_command_changed(tmp_path: Path):
    from arena.tournament.schedule import iter_schedule

    (tmp_path / "mybot" / "lib").mkdir(parents=True)
    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "mybot" / "bot.py")
    (tmp_path / "mybot" / "lib" / "brain.py").write_text("DEPTH = 2\n")
    first = '  - {name: mybot, cmd: "python3 bot.py hash", cwd: mybot, inputs: ["lib/*.py"]}\n'
    path = tournament(tmp_path, first + policy("greedy"))
    config = load_config(path)
    spec = next(iter_schedule(config))
    with tr.open_store(config) as store:
        _stored_as_won(store, config, [spec])
    # Another pattern for the same file: the same program, the command as it was.
    path.write_text(path.read_text().replace('"lib/*.py"', '"lib/brain.py"'))
    again = load_config(path)
    with tr.open_store(again) as store:
        checked = tr.check_identities(store, tr.identify_bots(again), again)
    assert checked.new_versions == ()
    assert checked.respelled == ("mybot: the file names its inputs anew (inputs ['lib/*.py'] -> ['lib/brain.py']) for "
                                 "the same program (its identity): its results stand",)


# --- a command that cannot start -------------------------------------------------------------------


@pytest.mark.parametrize("cmd, extra", [("nosuchprog_x1 | cat", ""), ("sh -c 'nosuchprog_x1 --fast'", ""),
                                        ("nosuchprog_x1 | cat", "format: swiss\nrounds: 2")])
def test_a_shell_command_whose_program_is_missing_stops_the_run_and_the_fixed_file_resumes(tmp_path: Path, cmd: str,
                                                                                           extra: str):
    # Through a shell the program is found missing only when it runs: the shell's "not found" at
    # the bot's first handshake stops the run (one line, exit 2), never a table of forfeits; the
    # matches without it are kept, and with the file fixed the run goes on (a swiss too, whose
    # file may not change once it has results: the bot played none).
    bots = policy("greedy") + policy("first") + (policy("last") if extra else "")
    path = tournament(tmp_path, bots + f'  - {{name: ghost, cmd: "{cmd}"}}\n', extra=extra)
    run = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    [line] = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: bot 'ghost': its command {cmd!r} cannot start: ") and "nosuchprog_x1" in line, line
    assert "not found" in line and "no_handshake" not in run.stderr and "forfeit" not in run.stdout + run.stderr
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        assert all("ghost" not in row.seats for row in store.results())
    path.write_text(path.read_text().replace(cmd, f"$PYTHON policybot.py last\", cwd: \"{POLICYBOT}"))
    again = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "no_handshake" not in again.stderr and stored(tmp_path / "out") == (8 if extra else 6)
    # What never played is no version of its own: ghost is the bot the file now describes.
    assert "new version" not in again.stderr and "note: ghost: changed before it played a match here (command " \
        "changed (" in again.stderr and "it plays as it is now, no version of its own" in again.stderr, again.stderr
    table = json.loads(read("table", str(tmp_path / "out"), "--format", "json").stdout)
    assert sorted(row["name"] for row in table) == ["first", "ghost", "greedy"] + (["last"] if extra else [])


def test_a_bot_that_started_before_cannot_stop_the_run_by_saying_its_shell_found_no_program(tmp_path: Path):
    # A hostile bot run through a shell plays its first match, then at every later start prints
    # what its shell prints of a missing program and exits 127, naming a program its command
    # runs and that is indeed missing (the shell then says so too). It started once, so the
    # "not found" is the bot's failure, recorded with each match: the run is not stopped.
    (tmp_path / "bot").mkdir()
    (tmp_path / "state").mkdir()
    liar = tmp_path / "bot" / "liar.sh"
    liar.write_text('#!/bin/sh\nif [ -e "$STATE/played" ]; then read hello; echo "/bin/sh: 1: nosuch_x1: not found" >&2; '
                    'exit 127; fi\n: > "$STATE/played"\nexec "$PY" policybot.py greedy\n')
    liar.chmod(0o755)
    shutil.copy(POLICYBOT / "policybot.py", tmp_path / "bot")
    given = (f'  - {{name: liar, cmd: "./liar.sh || nosuch_x1", cwd: "{tmp_path / "bot"}", env: {{STATE: "{tmp_path / "state"}", '
             f'PY: "{sys.executable}"}}, limits: {{writable: ["{tmp_path / "state"}"]}}}}\n')
    path = tournament(tmp_path, given + policy("first"), extra="matches_per_pairing: 4")
    result = tr.run_tournament(load_config(path), concurrency=1)
    assert result["played"] == 4
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        rows = sorted(store.results(), key=lambda row: row.index)
    # Its first process plays on (a worker keeps a bot's process for its next deal); every
    # process started after it lies, and each lie is that match's no_handshake.
    failures = [[(row.seats[seat], why) for seat, why in row.failures] for row in rows]
    assert failures[0] == [] and any(failures[1:]), failures
    assert all(found == [("liar", Termination.NO_HANDSHAKE)] for found in failures if found), failures


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_script_that_is_missing_stops_the_run_and_one_that_says_so_of_itself_does_not(tmp_path: Path):
    # node's "Cannot find module" for the script its command gives it, missing indeed, stops the
    # run as a shell's "not found" does; a script there that prints the same of itself (a hostile
    # bot, which never played) is its own no_handshake, and the run goes on.
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "liar.js").write_text(
        f"console.error(\"Error: Cannot find module '{tmp_path / 'bot' / 'liar.js'}'\"); process.exit(1)\n")
    path = tournament(tmp_path, policy("greedy") + policy("first")
                      + f'  - {{name: ghost, cmd: "node nosuch_x1.js | cat", cwd: "{tmp_path / "bot"}"}}\n')
    run = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    [line] = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert line == (f"error: bot 'ghost': its command 'node nosuch_x1.js | cat' cannot start: Error: Cannot find module "
                    f"'{tmp_path / 'bot' / 'nosuch_x1.js'}'"), line
    path.write_text(path.read_text().replace("nosuch_x1.js", "liar.js"))
    tr.run_tournament(load_config(path), concurrency=1)
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        failures = [[(row.seats[seat], why) for seat, why in row.failures] for row in store.results()]
    assert sorted(map(tuple, failures)) == [()] * 2 + [(("ghost", Termination.NO_HANDSHAKE),)] * 4, failures


def test_a_command_that_cannot_start_before_anything_is_stored_says_run_it_again_not_resume(tmp_path: Path):
    # Its first match was the first one played: nothing is stored, so no "results so far".
    done = arena("sprt", "nosuchprog_x1 | cat", "$PYTHON policybot.py first", "--elo0", "0", "--elo1", "10",
                 "--output", str(tmp_path / "sprt"), cwd=POLICYBOT)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-2].startswith("error: bot 'nosuchprog_x1': its command 'nosuchprog_x1 | cat' cannot start"), lines
    assert lines[-1] == "fix the command and run it again", lines
    # Nothing is stored: no folder is left behind (a fixed command names another folder, where
    # an empty one would stay, listing the bots that never played).
    assert not (tmp_path / "sprt").exists()


def test_a_run_that_stores_nothing_as_a_command_cannot_start_leaves_no_folder_but_one_that_was_there(tmp_path: Path):
    # arena run does as arena sprt: the folder it made for the results, holding none, is gone;
    # a folder that was there before is the user's, kept, and the fixed file's run uses it.
    path = tournament(tmp_path, policy("greedy") + '  - {name: ghost, cmd: "nosuchprog_x1 | cat"}\n')
    run = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith(f"fix its cmd in {path.name}, then run it again: "), run.stderr
    assert not (tmp_path / "out").exists()
    (tmp_path / "out").mkdir()
    again = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert again.returncode == 2 and (tmp_path / "out").is_dir(), again.stderr
    path.write_text(path.read_text().replace("nosuchprog_x1 | cat", f"$PYTHON policybot.py last\", cwd: \"{POLICYBOT}"))
    fixed = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert stored(tmp_path / "out") == 2 and "ghost" in read("table", str(tmp_path / "out")).stdout


@pytest.mark.parametrize("command", [["play", "nosuchprog_x1 | cat", "$PYTHON policybot.py first"],
                                     ["check-bot", "nosuchprog_x1 | cat"]])
def test_play_and_check_bot_stop_on_a_shell_command_whose_program_is_missing_as_run_does(tmp_path: Path, command):
    done = arena(*command, cwd=POLICYBOT)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert ("error: bot 'nosuchprog_x1': its command 'nosuchprog_x1 | cat' cannot start: " in done.stderr
            and "not found" in done.stderr), done.stderr
    assert "result:" not in done.stdout and "forfeit" not in done.stdout and "hand 1" not in done.stdout
