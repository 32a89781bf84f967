"""The guard: golden files that every later version must reproduce or replay unchanged.

A change to the deal generator, the rules core, the referee or the record format that alters
a recorded game fails here, whatever else the suite says. A results folder written by an
earlier version (tests/golden/store) must stay verifiable and give the same standings.
Regenerate (tests/golden/make_golden.py) only for a change meant to alter games, with a
schema version bump that says why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from golden_cases import RECORD_CASES, play_case, rng_samples

from arena.match.record import GameRecord
from arena.match.replay import verify

GOLDEN = Path(__file__).parents[1] / "golden"
ROOT = Path(__file__).parents[2]
_TIME_KEYS = ("ms", "t_ms")


def _without_times(data: dict) -> dict:
    out = dict(data)
    out.pop("duration_ms", None)
    for key in ("moves", "events"):
        out[key] = [{k: v for k, v in item.items() if k not in _TIME_KEYS} for item in data[key]]
    return out


def _golden_record(name: str) -> dict:
    return json.loads((GOLDEN / "records" / f"{name}.json").read_text())


def test_the_deal_generator_and_seed_derivation_are_pinned():
    assert rng_samples() == json.loads((GOLDEN / "rng.json").read_text())


def test_there_is_a_golden_record_for_every_case():
    stored = sorted(p.stem for p in (GOLDEN / "records").glob("*.json"))
    assert stored == sorted(case.name for case in RECORD_CASES)


@pytest.mark.parametrize("case", RECORD_CASES, ids=lambda c: c.name)
def test_golden_record_replays_to_its_recorded_result(case):
    data = _golden_record(case.name)
    record = GameRecord.from_dict(data)
    assert verify(data) == record.result
    # The file is what the referee wrote: reading it and writing it again loses nothing.
    assert record.to_dict() == data


@pytest.mark.parametrize("case", RECORD_CASES, ids=lambda c: c.name)
def test_the_same_match_played_again_gives_the_golden_record(case):
    played = play_case(case).to_dict()
    assert _without_times(played) == _without_times(_golden_record(case.name))


def _arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture()
def golden_store(tmp_path: Path) -> Path:
    # A copy: opening a WAL database creates files beside it, which must not land in git.
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN / "store", folder)
    return folder


def test_a_results_folder_from_an_earlier_version_still_verifies(golden_store):
    done = _arena("verify", str(golden_store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 records" in done.stdout


def test_a_results_folder_from_an_earlier_version_gives_the_same_standings(golden_store):
    done = _arena("table", str(golden_store), "--format", "json")
    assert done.returncode == 0, done.stderr
    standings = json.loads(done.stdout)
    if isinstance(standings, dict):  # tolerate a wrapper object around the rows
        standings = standings.get("standings", standings)
    got = {row["name"]: (row["matches"], row["wins"], row["draws"], row["losses"], row["points_for"],
                        row["points_against"]) for row in standings}
    expected = json.loads((GOLDEN / "store-standings.json").read_text())
    assert got == {bot: tuple(v) for bot, v in expected.items()}
