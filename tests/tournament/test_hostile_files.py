"""Hostile tournament files: each is refused with one short ConfigError line, nothing else.

The cost of each (time, memory) is measured by benchmarks/hostile_files.py, not here: a
loaded machine must not fail a test. What is asserted here is the outcome, and the bounds
that make the cost small: how much a file may hold, how deep, how many values once aliases
are expanded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hostile_yaml import HEAD, TWO_BOTS, generated

from arena.tournament import yamldoc
from arena.tournament.config import MAX_BOTS, ConfigError, load_config, parse_config
from arena.tournament.yamldoc import MAX_DEPTH, MAX_FILE_BYTES, MAX_TEXT_CHARS, MAX_VALUES

BAD_FILES = sorted((Path(__file__).parents[1] / "data" / "bad_tournaments").glob("*.yaml"))
GENERATED = generated()
# What an error may add to the file's name: where, which key, what is expected, and a
# short excerpt of what was found.
MESSAGE_CHARS = 420


def _refused(path: Path | str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


def _assert_one_short_line(err: ConfigError, file: str) -> None:
    text = str(err)
    assert text.startswith(file)
    assert len(text.splitlines()) == 1 and "\r" not in text, text[:500]
    assert len(text) - len(file) <= MESSAGE_CHARS, text[:500]


@pytest.mark.slow
@pytest.mark.parametrize("name, content, expect", GENERATED, ids=[g[0] for g in GENERATED])
def test_each_generated_hostile_file_gets_one_short_config_error(tmp_path: Path, name: str, content: bytes, expect: str):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(content)
    err = _refused(path)
    _assert_one_short_line(err, str(path))
    assert expect in str(err)


@pytest.mark.parametrize("path", BAD_FILES, ids=[p.stem for p in BAD_FILES])
def test_every_bad_file_is_a_short_config_error_from_the_library(path: Path):
    _assert_one_short_line(_refused(path), str(path))


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="the pure-Python parser is the only one here; the other tests use it")
@pytest.mark.parametrize("path", BAD_FILES, ids=[p.stem for p in BAD_FILES])
def test_without_libyaml_the_same_files_get_the_same_errors(monkeypatch: pytest.MonkeyPatch, path: Path):
    with_libyaml = _refused(path)
    monkeypatch.setattr(yamldoc, "_LOADER", yaml.SafeLoader)
    without = _refused(path)
    assert without.line == with_libyaml.line
    if "invalid YAML" in with_libyaml.message:
        # the two parsers word their own syntax errors differently
        assert "invalid YAML" in without.message
    else:
        # (libyaml refuses 1,000 levels of nesting itself, before the path is known)
        assert without.message == with_libyaml.message
        assert without.key == with_libyaml.key or with_libyaml.key is None


def test_a_folder_and_an_endless_device_are_refused(tmp_path: Path):
    assert "a folder, not a tournament file" in str(_refused(tmp_path))
    if Path("/dev/zero").exists():
        assert f"larger than {MAX_FILE_BYTES:,} bytes" in str(_refused("/dev/zero"))


def test_a_file_of_exactly_the_size_limit_is_read(tmp_path: Path):
    path = tmp_path / "t.yaml"
    text = HEAD + TWO_BOTS + "#"
    path.write_text(text + "x" * (MAX_FILE_BYTES - len(text)) + "\n")
    assert "larger than" in str(_refused(path))
    path.write_text(text + "x" * (MAX_FILE_BYTES - len(text) - 1) + "\n")
    assert load_config(path).name == "t"


def test_a_byte_order_mark_is_dropped_and_lines_still_count(tmp_path: Path):
    path = tmp_path / "t.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + TWO_BOTS).encode())
    assert [b.name for b in load_config(path).bots] == ["a", "b"]
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + TWO_BOTS + "format: x\n").encode())
    err = _refused(path)
    assert (err.line, err.key) == (6, "format")


def _counted(values: int) -> str:
    """A file of exactly ``values`` values: an unknown key holding a list (the walker
    refuses the key, so reaching that refusal shows the value count passed)."""
    return "extra: [" + ", ".join(["x"] * (values - 3)) + "]\n"


def test_the_value_limit_is_exact():
    with pytest.raises(ConfigError, match="key 'extra': unknown key"):
        parse_config(_counted(MAX_VALUES))
    with pytest.raises(ConfigError, match=f"more than {MAX_VALUES:,} values") as info:
        parse_config(_counted(MAX_VALUES + 1))
    assert info.value.key == f"extra[{MAX_VALUES - 3}]"


def test_aliases_count_as_what_they_repeat():
    # a: 1 list + 100 values; each alias repeats those 101 values.
    hundred = ", ".join(["x"] * 100)
    aliases = (MAX_VALUES - 2 - 101) // 101
    text = f"extra: [[&a [{hundred}]" + ", *a" * aliases + "]]\n"
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config(text)
    with pytest.raises(ConfigError, match="once aliases are expanded"):
        parse_config(text.replace("]]", ", *a]]"))


def test_the_depth_limit_is_exact_and_counts_aliases():
    def nested(levels: int) -> str:
        return "extra: " + "[" * (levels - 1) + "]" * (levels - 1) + "\n"

    with pytest.raises(ConfigError, match="unknown key"):
        parse_config(nested(MAX_DEPTH))
    with pytest.raises(ConfigError, match=f"nested more than {MAX_DEPTH} levels") as info:
        parse_config(nested(MAX_DEPTH + 1))
    assert info.value.line == 1
    # Flat text, deep once expanded: an alias sits as deep as what it repeats.
    chain = "extra:\n  - &c0 [x]\n" + "".join(f"  - &c{i} [*c{i - 1}]\n" for i in range(1, MAX_DEPTH))
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config(chain[: chain.index(f"  - &c{MAX_DEPTH - 2} ")])
    with pytest.raises(ConfigError, match=f"nested more than {MAX_DEPTH} levels") as info:
        parse_config(chain)
    assert info.value.key == f"extra[{MAX_DEPTH - 2}][0]"


def test_one_value_may_be_long_but_not_endless():
    good = HEAD + f"output: {'o' * MAX_TEXT_CHARS}\n" + TWO_BOTS
    assert parse_config(good).output.endswith("o" * 100)
    err = pytest.raises(ConfigError, parse_config, good.replace("output: ", "output: o")).value
    assert (err.line, err.key) == (3, "output")
    assert f"a value of {MAX_TEXT_CHARS + 1:,} characters; at most {MAX_TEXT_CHARS:,}" in str(err)


def test_bots_are_capped_before_any_is_checked():
    bots = "".join(f"  - {{name: b{i}, cmd: x}}\n" for i in range(MAX_BOTS + 1))
    with pytest.raises(ConfigError, match=f"at most {MAX_BOTS:,} bots, got {MAX_BOTS + 1:,}"):
        parse_config(HEAD + "format: gauntlet\nchallenger: b0\nbots:\n" + bots)
    # one fewer is a valid gauntlet (1,000 pairings of 2 matches)
    config = parse_config(HEAD + "format: gauntlet\nchallenger: b0\nbots:\n" + bots[: bots.rindex("  - ")])
    assert len(config.bots) == MAX_BOTS


def test_a_nul_character_is_refused_where_it_is():
    err = pytest.raises(ConfigError, parse_config, HEAD + 'bots:\n  - {name: a, cmd: "x\\0y"}\n').value
    assert (err.line, err.key) == (4, "bots[0].cmd") and "NUL" in str(err)


def test_values_in_errors_are_excerpts():
    long_name = "é" * 5000
    err = pytest.raises(ConfigError, parse_config, f"name: '{long_name}'\nseed: 1\n").value
    assert "(5,000 characters)" in str(err) and "é" * 38 not in str(err)
    assert len(str(err)) < 200
    many = "".join(f"  - {{name: bot{i}, cmd: x}}\n" for i in range(200))
    err = pytest.raises(ConfigError, parse_config, HEAD + "format: gauntlet\nchallenger: nobody\nbots:\n" + many).value
    assert "bot0, bot1," in str(err) and "(200 in all)" in str(err) and "bot150" not in str(err)


def _shape(node, seen=None):
    """A node tree as plain data: tag, line, and the children (an alias's node once)."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return ("alias", node.start_mark.line)
    seen.add(id(node))
    value = node.value
    if isinstance(value, list):
        value = [tuple(_shape(n, seen) for n in item) if isinstance(item, tuple) else _shape(item, seen) for item in value]
    return (node.tag, node.start_mark.line, node.end_mark.line, value)


@pytest.mark.parametrize("loader", [yaml.SafeLoader, *([yaml.CSafeLoader] if yaml.__with_libyaml__ else [])])
def test_the_bounded_composer_builds_the_tree_yaml_compose_builds(monkeypatch: pytest.MonkeyPatch, loader):
    monkeypatch.setattr(yamldoc, "_LOADER", loader)
    examples = sorted((Path(__file__).parents[2] / "tournaments").glob("*.yaml"))
    texts = [p.read_text() for p in examples] + [
        "a: &x {k: [1, 2.5, yes, ~, '7', 2026-01-01]}\nb: {<<: *x, j: *x}\nc: !!str 12\n? d\n: |\n  text\n",
        "- &s scalar\n- *s\n- [*s, {*s : *s}]\n",
        "",
        "# only a comment\n",
    ]
    for text in texts:
        ours = yamldoc._Composer(yamldoc.Doc("f")).compose(text)
        theirs = yaml.compose(text, Loader=loader)
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert _shape(ours) == _shape(theirs), text
