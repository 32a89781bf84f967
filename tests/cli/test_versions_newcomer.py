"""A bot author's daily loop, as a newcomer does it from the README: write a bot, play a
tournament, change the bot, run the tournament again, test the new version against the old
one with ``arena sprt``, and rate everything: one entry per version, with its label."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import arena_command

ROOT = Path(__file__).resolve().parents[2]

BOT = """import escoba_kit as kit


def choose(game, request, rng):
    return request.legal[{pick}]


if __name__ == "__main__":
    kit.run(choose, name="mybot {version}")
"""


def read(*args: str) -> str:
    """A command that only reads results (no bot runs): its output."""
    result = arena_command(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command that plays, as a newcomer runs it."""
    return arena_command(*args, cwd=cwd)


@pytest.mark.slow
def test_a_bots_versions_from_a_tournament_an_edit_and_an_sprt_are_two_entries(tmp_path: Path):
    (tmp_path / "mybot").mkdir()
    shutil.copy(ROOT / "bots" / "kit" / "escoba_kit.py", tmp_path / "mybot")
    (tmp_path / "mybot" / "bot.py").write_text(BOT.format(pick=0, version="1.0"))
    shutil.copy(ROOT / "bots" / "greedy_bot.py", tmp_path / "greedy.py")
    (tmp_path / "kit").mkdir()
    shutil.copy(ROOT / "bots" / "kit" / "escoba_kit.py", tmp_path / "kit")
    (tmp_path / "t.yaml").write_text("name: mine\nseed: 3\nrules: {target: 5}\nconcurrency: 2\nbots:\n"
                                     "  - {name: mybot, cmd: python3 bot.py, cwd: mybot}\n"
                                     "  - {name: greedy, cmd: $PYTHON greedy.py}\n")
    first = arena("run", "t.yaml", "--no-progress", "--no-report", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    # Keep v1 to test against, then edit the bot: v2.
    shutil.copy(tmp_path / "mybot" / "bot.py", tmp_path / "mybot" / "bot_v1.py")
    (tmp_path / "mybot" / "bot.py").write_text(BOT.format(pick=-1, version="2.0"))
    again = arena("run", "t.yaml", "--no-progress", "--no-report", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert [line for line in again.stderr.splitlines() if "new version" in line] == [
        line for line in again.stderr.splitlines() if line.startswith("mybot has a new version (program file bot.py ")]
    results = tmp_path / "results"
    table = json.loads(read("table", str(results / "mine"), "--format", "json"))
    assert sorted(r["name"] for r in table) == ["greedy", "mybot@2.0"]
    # The versions head to head, each run by another command than the tournament's.
    sprt = arena("sprt", "$PYTHON mybot/bot.py", "python3 ./mybot/bot_v1.py", "--elo0", "0", "--elo1", "50",
                 "--max-pairs", "2", "-j", "2", "--no-progress", "--no-report", cwd=tmp_path)
    assert sprt.returncode == 0, sprt.stderr
    assert "A bot: bot@2.0, identity" in sprt.stdout and "B bot_v1: bot_v1@1.0, identity" in sprt.stdout
    rows = {r["name"]: r for r in json.loads(read("rate", str(results), "--format", "json"))}
    assert sorted(rows) == ["greedy", "mybot@1.0", "mybot@2.0"]  # one pool, no "not comparable" group
    assert {rows[v]["version"] for v in ("mybot@1.0", "mybot@2.0")} == {"1.0", "2.0"}
    assert rows["mybot@1.0"]["tournaments"] == rows["mybot@2.0"]["tournaments"] == 2
    assert {r["group"] for r in rows.values()} == {1}
    text = read("rate", str(results))
    assert "mybot@1.0" in text and "mybot@2.0" in text
    # The versions side by side across everything: where they met head to head (the SPRT), and
    # where they played the same deals against greedy (the tournament's two schedules).
    sprt_folder = results / "sprt-bot-vs-bot_v1"
    lines = read("compare", str(results), "mybot@2.0", "bot_v1").splitlines()
    assert lines[0].split()[:3] == ["bot", "version", "identity"] and lines[2].split()[:2] == ["mybot@2.0", "2.0"]
    assert lines[3].split()[:2] == ["mybot@1.0", "1.0"]
    met = next(line for line in lines if " met on " in line)
    assert met.startswith("mybot@2.0 and mybot@1.0 met on 2 duplicate deals; ")
    sweeps = [line for line in lines if line.startswith("  deal ") and " won both seats" in line]
    assert len(sweeps) == int(met.split("; ")[1].split()[0])
    assert all(re.match(rf"  deal \d+ of {re.escape(str(sprt_folder))}: mybot@[12]\.0 won both seats$", line)
               for line in sweeps)
    apart = next(line for line in lines if " against the same opponents " in line)
    assert apart.startswith("mybot@2.0 and mybot@1.0 played 1 deal against the same opponents from the same seats")
    replays = [line.split()[:4] for line in lines if line.startswith("    arena replay ")]
    assert replays and all(words[2] in (str(sprt_folder), str(results / "mine")) for words in replays)
