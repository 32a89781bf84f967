"""Every bundled bot as a real process: ``arena check-bot`` passes, and full matches through
the referee (1v1, 3 players, pairs, variant rules) end with no failure."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, BotSpec, Limits
from arena.harness.protocol import Termination
from arena.match.referee import play_match

pytestmark = pytest.mark.slow  # runs every bundled bot in every language

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
LIMITS = Limits(startup_ms=10000, move_ms=1000, grace_ms=300, kill_grace_ms=200)

runner = CliRunner()


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed")
    return path


@pytest.fixture(scope="module")
def commands(tmp_path_factory) -> dict[str, str]:
    """Bot name -> command line. The C bot is built into a temporary folder."""
    cc = need("cc")
    node = need("node")
    out = tmp_path_factory.mktemp("cbot") / "greedy.bin"
    subprocess.run([cc, "-O2", "-o", str(out), str(ROOT / "bots" / "c" / "greedy.c")], check=True)
    bots = ROOT / "bots"
    return {
        "random.py": f"{PY} {bots / 'random_bot.py'}",
        "greedy.py": f"{PY} {bots / 'greedy_bot.py'}",
        # A small budget keeps the suite fast; the search is the same.
        "expert.py": f"{PY} {bots / 'expert_bot.py'} --ms 15 --playouts 40",
        "greedy.js": f"{node} {bots / 'js' / 'bot.js'}",
        "greedy.c": str(out),
    }


@pytest.mark.parametrize("name", ["random.py", "greedy.py", "expert.py",
                                  "greedy.js", "greedy.c"])
def test_check_bot_passes(commands, name):
    result = runner.invoke(app, ["check-bot", commands[name], "--move-ms", "1000"])
    assert result.exit_code == 0, result.output
    assert "result: PASS" in result.stdout


def play(commands, names, rules, seating, seed):
    bots = [BotProcess(BotSpec.from_command(commands[n], name=f"{n}#{i}", limits=LIMITS))
            for i, n in enumerate(names)]
    try:
        return play_match(bots, rules, seating, seed=seed)
    finally:
        for b in bots:
            b.close()


@pytest.mark.parametrize("other", ["greedy.js", "greedy.c", "expert.py"])
def test_full_1v1_matches_against_the_python_bots(commands, other):
    for seed, names in ((1, [other, "greedy.py"]), (2, ["random.py", other])):
        record = play(commands, names, Rules(target=15), Seating.alone(2), seed)
        assert record.result.reason == "target", record.failures
        assert [o.termination for o in record.outcomes] == [Termination.OK] * 2, record.failures
        assert not record.failures


def test_pairs_with_every_language_and_variant_rules(commands):
    rules = Rules(target=11, renuncio=True, initial_table="subset15", single_capture_priority=True)
    record = play(commands, ["greedy.js", "expert.py", "greedy.c", "random.py"], rules, Seating.pairs(4), 5)
    assert record.result.reason == "target" and not record.failures, record.failures
    assert any(m.move.startswith("renuncio") or m.move == "pass" for m in record.moves)


def test_three_players_with_forced_capture(commands):
    rules = Rules(target=11, forced_capture=True, escoba_en_mano=True)
    record = play(commands, ["greedy.c", "random.py", "greedy.js"], rules, Seating.alone(3), 9)
    assert record.result.reason == "target" and not record.failures, record.failures


def test_strength_script_plays_bot_processes_through_the_referee(commands, capsys, benchmark_script):
    strength = benchmark_script("strength")
    code = strength.main([f"cmd:{commands['greedy.js']}", f"cmd:{commands['greedy.c']}", "--deals", "3",
                          "--matches", "1", "--move-ms", "1000"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "over 3 duplicate deals (6 hands)" in out and "over 2 matches" in out and "bot failures: 0" in out
