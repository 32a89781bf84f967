"""Resource limits as values and as YAML keys: defaults, validation, a tournament-level
``limits:`` that each bot's own ``limits:`` overrides, and what the worker hands the harness."""

from __future__ import annotations

import pytest

from arena.harness.containment import default_clock
from arena.harness.protocol import Clock
from arena.harness.resources import ResourceLimitError, ResourceLimits, Usage
from arena.tournament.config import ConfigError, parse_config
from arena.tournament.worker import bot_spec

BASE = """\
name: t
seed: 5
bots:
  - {name: a, cmd: "python3 a.py"}
  - {name: b, cmd: "python3 b.py"}
"""


def test_defaults_are_on_and_documented_values():
    limits = ResourceLimits()
    assert limits.to_dict() == {"memory_mb": 1024, "processes": 512, "open_files": 1024, "file_size_mb": 1024,
                                "cpus": 1, "network": None, "writable": []}
    assert limits.memory_bytes == 1 << 30


def test_values_are_checked():
    assert ResourceLimits.from_dict({"memory_mb": 0}).memory_mb == 0  # 0: no limit
    for bad in ({"memory_mb": 8}, {"memory_mb": -1}, {"processes": "many"}, {"open_files": True},
                {"network": "off"}, {"cpus": 2000}, {"cpus": 1.5},
                {"cpu": 2}):
        with pytest.raises(ResourceLimitError):
            ResourceLimits.from_dict(bad)


def test_usage_per_wall_time_and_record_form():
    usage = Usage(cpu_s=3.0, user_s=2.5, system_s=0.5, wall_s=1.5, peak_memory_bytes=200 << 20, source="cgroup")
    assert usage.cpu_per_wall == 2.0  # more than one CPU at a time: visible
    assert usage.to_dict() == {"cpu_ms": 3000.0, "user_ms": 2500.0, "system_ms": 500.0, "wall_ms": 1500.0,
                               "peak_memory_mb": 200.0, "source": "cgroup"}
    assert Usage().cpu_per_wall == 0.0


def test_a_bots_limits_override_the_tournaments():
    text = BASE.replace("bots:\n", "limits: {memory_mb: 256, network: false}\nbots:\n").replace(
        '{name: b, cmd: "python3 b.py"}', '{name: b, cmd: "python3 b.py", limits: {memory_mb: 2048, open_files: 64}}')
    config = parse_config(text)
    a, b = config.bots
    assert dict(a.limits) == {"memory_mb": 256, "network": False}
    assert dict(b.limits) == {"memory_mb": 2048, "network": False, "open_files": 64}
    spec_a, spec_b = bot_spec(a, "python3"), bot_spec(b, "python3")
    assert spec_a.resources == ResourceLimits(memory_mb=256, network=False)
    assert spec_b.resources == ResourceLimits(memory_mb=2048, network=False, open_files=64)


def test_without_limits_the_defaults_apply_and_the_fingerprint_is_unchanged():
    config = parse_config(BASE)
    assert all(b.limits == () for b in config.bots)
    assert bot_spec(config.bots[0], "python3").resources == ResourceLimits()
    assert all("limits" not in b for b in config.game_dict()["bots"])
    limited = parse_config(BASE.replace("bots:\n", "limits: {processes: 64}\nbots:\n"))
    assert limited.fingerprint != config.fingerprint  # a limit changes how matches may end


@pytest.mark.parametrize("snippet,line,key,expected", [
    ("limits: {memory_mb: 8}\n", 3, "limits.memory_mb", "expected 0 (no limit) or a whole number from 16"),
    ("limits: {memory: 100}\n", 3, "limits.memory", "unknown key (allowed: memory_mb, processes"),
    ("limits: {network: maybe}\n", 3, "limits.network", "expected true or false, got 'maybe'"),
    ("limits: [1, 2]\n", 3, "limits", "expected a mapping"),
    ("limits: {open_files: [1]}\n", 3, "limits.open_files", "got a list"),
])
def test_bad_limits_are_refused_with_file_line_and_key(snippet, line, key, expected):
    with pytest.raises(ConfigError) as info:
        parse_config(BASE.replace("bots:\n", snippet + "bots:\n"), file="t.yaml")
    message = str(info.value)
    assert message.startswith(f"t.yaml:{line}: key '{key}': "), message
    assert expected in message


def test_bad_bot_limits_name_the_bot():
    text = BASE.replace('{name: b, cmd: "python3 b.py"}', '{name: b, cmd: "python3 b.py", limits: {file_size_mb: 0.5}}')
    with pytest.raises(ConfigError) as info:
        parse_config(text, file="t.yaml")
    assert "key 'bots[1].limits.file_size_mb'" in str(info.value)


def test_a_files_clock_and_cpus_reach_the_harness_and_a_bots_own_win():
    text = BASE.replace("bots:\n", "clock: wall\nlimits: {cpus: 2}\nbots:\n").replace(
        '{name: b, cmd: "python3 b.py"}', '{name: b, cmd: "python3 b.py", clock: cpu, limits: {cpus: 1}}')
    config = parse_config(text)
    spec_a, spec_b = (bot_spec(bot, "python3") for bot in config.bots)
    assert (spec_a.limits.clock, spec_a.resources.cpus) == (Clock.WALL, 2)
    assert (spec_b.limits.clock, spec_b.resources.cpus) == (Clock.CPU, 1)
    assert config.game_dict()["bots"][0]["clock"] == "wall"


def test_without_a_clock_the_machine_chooses_and_the_fingerprint_is_unchanged():
    config = parse_config(BASE)
    assert all("clock" not in b for b in config.game_dict()["bots"])
    assert bot_spec(config.bots[0], "python3").limits.clock is default_clock()
    assert parse_config(BASE.replace("bots:\n", "clock: cpu\nbots:\n")).fingerprint != config.fingerprint
    with pytest.raises(ConfigError, match="key 'clock': expected one of cpu, wall"):
        parse_config(BASE.replace("bots:\n", "clock: sundial\nbots:\n"))
