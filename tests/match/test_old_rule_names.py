"""A results folder from before last_play_escoba became last_round_escoba (RULES.md rule 5).

tests/golden/store-last-play-escoba was written by the arena of the commit before the rename,
with last_play_escoba false, and one of its records holds an escoba made in a hand's last
round. Its records keep their old rules dict; they must verify, replay, rate and report as
refereed then: the old option never changed a game, so it reads as last_round_escoba true
(Rules.from_record), whatever its value.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Rules
from arena.match.replay import ReplayMismatch, verify
from arena.tournament.store import ResultStore

GOLDEN = Path(__file__).parents[1] / "golden"
ROOT = Path(__file__).parents[2]
LATE_SWEEP = "00000.1"  # the record whose match swept the table in a hand's last round


def _arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture()
def old_store(tmp_path: Path) -> Path:
    folder = tmp_path / "old"
    shutil.copytree(GOLDEN / "store-last-play-escoba", folder)  # a copy: opening a store writes beside it
    return folder


def _records(folder: Path) -> dict[str, dict]:
    with ResultStore.open_existing(str(folder)) as store:
        return {row.id: store.record(row.id) for row in store.iter_rows()}


def test_the_old_folder_is_what_it_claims(old_store):
    records = _records(old_store)
    assert len(records) == 4
    for record in records.values():
        assert record["rules"]["last_play_escoba"] is False and "last_round_escoba" not in record["rules"]
    events, last_round, late = records[LATE_SWEEP]["events"], False, 0
    for event in events:
        if event["type"] == "deal":
            last_round = event["stock"] == 0
        late += event["type"] == "escoba" and last_round
    assert late == 1


def test_an_old_record_replays_as_refereed_and_not_under_the_new_false(old_store):
    record = _records(old_store)[LATE_SWEEP]
    assert Rules.from_record(record["rules"]) == Rules(target=11)
    verify(record)
    # Read as a file's old name is (the same value), its last-round escoba would be refused.
    renamed = {k: v for k, v in record["rules"].items() if k != "last_play_escoba"}
    with pytest.raises(ReplayMismatch):
        verify({**record, "rules": {**renamed, "last_round_escoba": False}})


def _in_process(*args: str) -> Result:
    """The command's exit code and output, from the app in this process (no arena to start): for
    the commands that only read the folder and print."""
    return CliRunner().invoke(app, list(args))


def test_an_old_folder_verifies_replays_rates_and_reports(old_store, tmp_path: Path):
    done = _in_process("verify", str(old_store))
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "all 4 records replay" in done.stdout
    done = _in_process("replay", str(old_store), LATE_SWEEP, "--html", str(tmp_path / "replay.html"))
    assert done.exit_code == 0 and "verified" in done.stdout, done.stdout + done.stderr
    table = _in_process("table", str(old_store), "--format", "json")
    got = {r["name"]: [r["matches"], r["wins"], r["draws"], r["losses"], r["points_for"], r["points_against"]]
           for r in json.loads(table.stdout)}
    assert got == json.loads((GOLDEN / "store-last-play-escoba-standings.json").read_text())
    rated = _in_process("rate", str(old_store), "--format", "json")
    assert rated.exit_code == 0 and {"greedy", "hash"} <= set(rated.stdout.replace('"', " ").split()), rated.stderr
    report = _in_process("report", str(old_store), "--html", str(tmp_path / "report.html"))
    assert report.exit_code == 0, report.stderr
    assert (tmp_path / "report.html").is_file()


def test_an_old_folder_resumes_only_under_the_games_it_holds(old_store, tmp_path: Path):
    # Its file says last_play_escoba: false, which now means last_round_escoba false: other games.
    done = _arena("run", "tests/golden/tournament-last-play-escoba.yaml", "--output", str(old_store),
                  "--no-progress", "--no-report")
    assert done.returncode == 2 and "rules.last_round_escoba" in done.stderr, done.stderr
    # The same file with the option left out asks for the games the folder holds.
    # Two folders deep, as in tests/golden, for the bots' cwd (../..) to stay as the folder holds it.
    same = tmp_path / "a" / "b" / "same.yaml"
    same.parent.mkdir(parents=True)
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    same.write_text((GOLDEN / "tournament-last-play-escoba.yaml").read_text().replace("  last_play_escoba: false\n", ""))
    done = _arena("run", str(same), "--output", str(old_store), "--no-progress", "--no-report")
    assert done.returncode == 0 and "resuming: 4 of 4" in done.stderr, done.stderr


@pytest.mark.parametrize("option, value, shown", [
    ("last_round_escoba", "last_card", "last_card"), ("last_play_escoba", "false", "false"),
])
def test_a_tournament_file_takes_the_option_and_its_old_name(tmp_path: Path, option, value, shown):
    from arena.tournament.config import load_config
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\nrules:\n  {option}: {value}\nbots:\n  - {{name: a, cmd: python3 a.py}}\n"
                    "  - {name: b, cmd: python3 b.py}\n")
    config = load_config(path, check_commands=False)
    assert config.game_dict()["rules"]["last_round_escoba"] == {"false": False}.get(shown, shown)
    assert "last_play_escoba" not in config.game_dict()["rules"]


@pytest.mark.parametrize("option", ["last_round_escoba", "last_play_escoba"])
def test_a_bad_value_is_one_clear_line_naming_the_key_written(tmp_path: Path, option):
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\nrules:\n  {option}: sometimes\nbots:\n  - {{name: a, cmd: python3 a.py}}\n"
                    "  - {name: b, cmd: python3 b.py}\n")
    done = _arena("validate", str(path))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"rules.{option}" in done.stderr and "expected true, false or last_card, got 'sometimes'" in done.stderr
