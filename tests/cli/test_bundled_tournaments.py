"""Every tournament file the repository ships runs, from a fresh clone, through ``arena run``
with every bundled bot and no bot failure: each file as it is (its bots, builds, rules options,
format, failure policy), made short (one hand per match, one deal per pairing), and one more
file that seats every bundled bot, so that no bot of bots/ can rot unplayed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.tournament.test_build import tracked_copy

pytestmark = pytest.mark.slow  # builds the C and Java bots and runs seven short tournaments

ROOT = Path(__file__).resolve().parents[2]


def _short(doc: dict[str, Any], output: Path) -> dict[str, Any]:
    """The same tournament, a few matches long."""
    doc = dict(doc)
    doc["rules"] = {**(doc.get("rules") or {}), "max_hands": 1}
    doc["output"] = str(output)
    doc["concurrency"] = 2
    # The expert thinks up to its budget per move: a few ms here (the last --ms given wins).
    doc["bots"] = [{**bot, "cmd": bot["cmd"] + " --ms 5"} if "expert_bot.py" in bot["cmd"] else bot
                   for bot in doc["bots"]]
    if doc.get("format") == "double_round_robin":
        doc["format"] = "round_robin"
    if doc.get("format") == "sprt":
        doc["sprt"] = {**doc["sprt"], "max_pairs": 1}
    else:
        doc["matches_per_pairing"] = 2 if doc.get("duplicate", True) else 1
    if doc.get("format") == "ladder":
        # A few pairings, not its 40 matches: every bot still plays (the pairings chosen ahead
        # of the results spread over the field), and the last two are chosen from results.
        doc["max_matches"] = doc["matches_per_pairing"] * ((doc.get("window") or 0) + 2)
    return doc


def _every_bot(root: Path) -> dict[str, Any]:
    """A gauntlet of greedy against every other bundled bot (the Java and C bots built here)."""
    bots = [
        {"name": "greedy", "cmd": "$PYTHON bots/greedy_bot.py"},
        {"name": "random", "cmd": "$PYTHON bots/random_bot.py"},
        {"name": "expert", "cmd": "$PYTHON bots/expert_bot.py --playouts 50"},
        {"name": "perl-random", "cmd": "perl bots/perl/random.pl"},
        {"name": "js-greedy", "cmd": "node bots/js/bot.js"},
        {"name": "c-firstmove", "cmd": "./bots/c/firstmove.bin", "build": "cc -O2 -o bots/c/firstmove.bin bots/c/firstmove.c"},
        {"name": "c-greedy", "cmd": "./bots/c/greedy.bin", "build": "cc -O2 -o bots/c/greedy.bin bots/c/greedy.c"},
        {"name": "java-greedy", "cmd": "java -jar bots/java/escoba.jar",
         "build": "javac -d bots/java/classes bots/java/EscobaBot.java && jar --create --file bots/java/escoba.jar "
                  "--main-class EscobaBot -C bots/java/classes ."},
    ]
    return {"name": "every-bot", "seed": 9, "format": "gauntlet", "challenger": "greedy",
            "bots": [{**bot, "cwd": ".."} for bot in bots]}


def test_every_bundled_tournament_and_bot_runs_short_with_no_failure(tmp_path: Path):
    clone = tracked_copy(tmp_path / "clone")
    files = sorted((clone / "tournaments").rglob("*.yaml"))
    assert {f.relative_to(clone).as_posix() for f in files} >= {"tournaments/demo.yaml", "tournaments/big.yaml",
                                                                "tournaments/league/spring.yaml"}
    (clone / "tournaments" / "every-bot.yaml").write_text(yaml.safe_dump(_every_bot(clone)))
    files.append(clone / "tournaments" / "every-bot.yaml")
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CACHE_DIR"}
    seen: set[str] = set()
    for path in files:
        doc = yaml.safe_load(path.read_text())
        out = tmp_path / "results" / path.stem
        short = path.with_name(f"short-{path.name}")  # beside it: the bots' cwd stays right
        short.write_text(yaml.safe_dump(_short(doc, out)))
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(short), "--progress", "none", "--no-report"],
                              cwd=clone, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, (path.name, done.stderr[-3000:])
        assert "failure:" not in done.stderr and "bot failures" not in done.stderr, (path.name, done.stderr[-3000:])
        rows = json.loads((out / "standings.json").read_text())
        assert {row["name"] for row in rows} == {bot["name"] for bot in doc["bots"]}, path.name
        assert all(row["failures"] == {} and row["matches"] > 0 for row in rows), (path.name, rows)
        seen |= {bot["cmd"] for bot in doc["bots"]}
    # Every bot program in bots/ (a C source by its binary, the Java source by its folder's jar).
    bundled = [f"bots/{f.relative_to(clone / 'bots').with_suffix('.bin').as_posix()}" if f.suffix == ".c"
               else "bots/java/" if f.suffix == ".java" else f.relative_to(clone).as_posix()
               for f in (clone / "bots").rglob("*") if f.suffix in (".c", ".java", ".pl", ".js")
               or f.name.endswith("_bot.py")]
    assert len(bundled) >= 8
    assert [p for p in bundled if not any(p in cmd for cmd in seen)] == [], seen
