"""``arena replay``, ``arena verify`` and ``arena report`` through the CLI, on records of a real
tournament (bot processes, the results store) and on record files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from replay_helpers import change_one_card, play, record_dict
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Seating
from arena.tournament.store import ResultStore

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    """A tiny round robin played for real: 3 bot processes, 6 matches."""
    folder = tmp_path_factory.mktemp("tournament")
    bots = "\n".join(f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}"}}' for p in ("first", "greedy", "hash"))
    path = folder / "tiny.yaml"
    path.write_text(f"name: tiny\nseed: 77\noutput: {folder / 'out'}\nconcurrency: 2\nmatches_per_pairing: 2\nbots:\n{bots}\n")
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    return folder / "out"


def _tampered_copy(src: Path, dst: Path) -> tuple[str, int, dict]:
    """Copy a results store and change one card of one move of its second match."""
    dst.mkdir()
    with sqlite3.connect(src / "results.sqlite") as a, sqlite3.connect(dst / "results.sqlite") as b:
        a.backup(b)
    with sqlite3.connect(dst / "results.sqlite") as conn:
        match_id, text = conn.execute("SELECT id, record FROM matches ORDER BY idx LIMIT 1 OFFSET 1").fetchone()
        record = json.loads(text)
        index = change_one_card(record, capture=True)
        conn.execute("UPDATE matches SET record = ? WHERE id = ?", (json.dumps(record), match_id))
    return match_id, index, record["moves"][index]


@pytest.mark.slow
def test_every_record_of_a_tournament_verifies(tournament: Path):
    result = cli.invoke(app, ["verify", str(tournament), "-v"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("ok ") == 6
    assert "all 6 records replay to their recorded results" in result.stdout


def test_verify_refuses_a_tournament_record_with_one_changed_card(tournament: Path, tmp_path: Path):
    match_id, index, move = _tampered_copy(tournament, tmp_path / "bad")
    result = cli.invoke(app, ["verify", str(tmp_path / "bad")])
    assert result.exit_code == 1
    refused = [line for line in result.stdout.splitlines() if line.startswith("refused")]
    assert len(refused) == 1
    assert refused[0].startswith(f"refused {match_id}: record does not replay: move {index + 1} of ")
    assert f"(seat {move['seat']} plays {move['move']!r})" in refused[0]
    assert "1 of 6 records refused" in result.stderr


def test_verify_checks_the_store_summary_against_the_record(tournament: Path, tmp_path: Path):
    bad = tmp_path / "bad"
    bad.mkdir()
    with sqlite3.connect(tournament / "results.sqlite") as a, sqlite3.connect(bad / "results.sqlite") as b:
        a.backup(b)
    with sqlite3.connect(bad / "results.sqlite") as conn:
        conn.execute("UPDATE matches SET hands = hands + 1 WHERE idx = 0")
    result = cli.invoke(app, ["verify", str(bad)])
    assert result.exit_code == 1
    assert "summary row does not match its record: hands" in result.stdout


def test_replay_from_a_results_folder_and_id_prints_plain_text(tournament: Path):
    with ResultStore.open_existing(str(tournament)) as store:
        row = store.results()[0]
    result = cli.invoke(app, ["replay", str(tournament), row.id])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b" not in out  # not a terminal: no colour codes
    assert out.startswith("Escoba replay | seed")
    assert row.winner is not None
    won = [row.scores[row.winner], *(s for i, s in enumerate(row.scores) if i != row.winner)]
    assert f"Result: {row.sides[row.winner]} wins {'-'.join(map(str, won))}" in out  # the winner's score first
    assert "== Hand 1" in out and "Hand 1 scored" in out and "most cards" in out
    missing = cli.invoke(app, ["replay", str(tournament), "nope"])
    assert missing.exit_code == 2 and "no match 'nope'" in missing.stderr and row.id in missing.stderr
    no_id = cli.invoke(app, ["replay", str(tournament)])
    assert no_id.exit_code == 2 and "give the id of a match" in no_id.stderr


def test_report_writes_a_page_and_a_replay_for_every_match(tournament: Path, tmp_path: Path):
    out = tmp_path / "site" / "tiny.html"
    result = cli.invoke(app, ["report", str(tournament), "--html", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    replays = sorted((tmp_path / "site" / "tiny_replays" / "data").glob("*.js"))
    assert len(replays) == 6 and (tmp_path / "site" / "tiny_replays" / "replay.html").is_file()
    for file in replays:
        assert f'href="tiny_replays/replay.html#{file.stem}"' in page
    for word in ("Standings", "Crosstable", "Ratings", "greedy", "<svg class=\"plot\""):
        assert word in page


def test_report_marks_a_refused_record_and_fails(tournament: Path, tmp_path: Path):
    match_id, index, _ = _tampered_copy(tournament, tmp_path / "bad")
    result = cli.invoke(app, ["report", str(tmp_path / "bad")])
    assert result.exit_code == 1
    page = (tmp_path / "bad" / "report.html").read_text()
    assert f"move {index + 1} of" in page and "refused" in page
    assert len(list((tmp_path / "bad" / "report_replays" / "data").glob("*.js"))) == 5
    assert f"refused {match_id}" in result.stderr


def test_replay_and_verify_record_files(tmp_path: Path):
    record = play(Seating.pairs(4), {"target": 11}, 8)
    good = tmp_path / "records" / "good.json"
    good.parent.mkdir()
    good.write_text(json.dumps(record.to_dict()))
    result = cli.invoke(app, ["replay", str(good), "--seat", "1"])
    assert result.exit_code == 0, result.output
    assert "Seen by seat 1 (bot1)" in result.stdout
    assert "seat 0 (bot0)  [" not in result.stdout  # the other hands are not shown
    assert "seat 1 (bot1)  [" in result.stdout
    html = tmp_path / "page.html"
    result = cli.invoke(app, ["replay", str(good), "--html", str(html), "--suits", "french"])
    assert result.exit_code == 0 and html.is_file() and "wrote" in result.stdout

    data = record_dict(record)
    index = change_one_card(data, capture=False)
    (tmp_path / "records" / "bad.json").write_text(json.dumps(data))
    result = cli.invoke(app, ["replay", str(tmp_path / "records" / "bad.json")])
    assert result.exit_code == 1
    assert f"move {index + 1} of" in result.stderr and "Traceback" not in result.output
    result = cli.invoke(app, ["verify", str(tmp_path / "records")])
    assert result.exit_code == 1 and result.stdout.startswith("refused bad:")
    assert cli.invoke(app, ["verify", str(good)]).exit_code == 0
    assert cli.invoke(app, ["replay", str(good), "some-id"]).exit_code == 2
    # --auto takes an optional delay; off a terminal the whole match is printed at once.
    auto = cli.invoke(app, ["replay", str(good), "--auto", "0.5"])
    assert auto.exit_code == 0 and "Result:" in auto.stdout
    assert cli.invoke(app, ["replay", str(good), "--auto"]).exit_code == 0
    assert cli.invoke(app, ["replay", str(good), "--delay", "0.2", "--auto"]).exit_code == 0
    stray = cli.invoke(app, ["replay", str(good), "0.5"])
    assert stray.exit_code == 2 and "after --auto" in stray.stderr
    assert cli.invoke(app, ["replay", str(good), "--auto", "1", "--delay", "2"]).exit_code == 2
    assert cli.invoke(app, ["replay", str(good), "--seat", "4"]).exit_code == 2
    assert cli.invoke(app, ["replay", str(good), "--suits", "tarot"]).exit_code == 2
    assert cli.invoke(app, ["replay", str(tmp_path / "absent.json")]).exit_code == 2
    (tmp_path / "junk.json").write_text("{not json")
    junk = cli.invoke(app, ["replay", str(tmp_path / "junk.json")])
    assert junk.exit_code == 2 and "not a JSON game record" in junk.stderr
    assert cli.invoke(app, ["report", str(tmp_path / "records")]).exit_code == 2
    assert cli.invoke(app, ["verify", str(tmp_path / "empty-nothing")]).exit_code == 2
