"""A report written again to the same place makes only the replays it has not made yet (the
data folder's index), and never keeps one whose record, row, tournament or arena changed; the
report's worker processes end with their pool whatever stop-signal handlers the command set."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

import pytest
from replay_helpers import make_store

import arena.cli.replay as cli_replay
import arena.render.report as report_module


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return Path(make_store(tmp_path / "t", bots=("ana", "luis", "marta"), matches=2))


def _write(results: Path, out: Path) -> cli_replay.WrittenReport:
    said: list[str] = []
    written = cli_replay.write_report(results, out, say=said.append)
    written_line = said[0]
    assert written_line.startswith("report: writing "), said
    return written


def _data(out: Path) -> dict[str, bytes]:
    folder = out.parent / f"{out.stem}_replays" / "data"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _set_record(results: Path, match_id: str, record: dict) -> None:
    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        conn.execute("UPDATE matches SET record = ? WHERE id = ?", (json.dumps(record), match_id))
    conn.close()


def _first(results: Path) -> tuple[str, dict]:
    conn = sqlite3.connect(results / "results.sqlite")
    match_id, text = conn.execute("SELECT id, record FROM matches ORDER BY idx LIMIT 1").fetchone()
    conn.close()
    return match_id, json.loads(text)


def test_a_second_report_to_the_same_place_keeps_every_replay_and_says_so(results: Path, tmp_path: Path):
    out = tmp_path / "r" / "report.html"
    first = _write(results, out)
    before = _data(out)
    assert first.kept == 0 and first.pages == len(before) == 6
    said: list[str] = []
    again = cli_replay.write_report(results, out, say=said.append)
    assert again.kept == again.pages == 6 and again.refusals == ()
    assert said[0] == "report: writing 0 replay pages (6 unchanged) and report.html..."
    assert _data(out) == before
    # Elsewhere, nothing is there to keep: all are made, the same bytes.
    other = _write(results, tmp_path / "o" / "report.html")
    assert other.kept == 0 and _data(tmp_path / "o" / "report.html") == before


def test_the_report_page_does_not_show_the_tournaments_master_seed(tmp_path: Path):
    # A report is shared; the master seed gives every deal, those still to be played included.
    seed = 8_675_309_1234
    results = Path(make_store(tmp_path / "s", bots=("ana", "luis"), matches=2, seed=seed))
    out = tmp_path / "r" / "report.html"
    _write(results, out)
    assert str(seed) not in out.read_text()


def test_a_replay_edited_by_hand_or_missing_is_made_again(results: Path, tmp_path: Path):
    out = tmp_path / "r" / "report.html"
    _write(results, out)
    before = _data(out)
    folder = out.parent / "report_replays" / "data"
    names = sorted(before)
    (folder / names[0]).write_text("escobaReplayData({});\n")
    (folder / names[1]).unlink()
    (folder / names[2]).unlink()
    (folder / names[2]).symlink_to(folder / names[3])  # a link planted under a data file's name
    again = _write(results, out)
    assert again.kept == 3 and _data(out) == before
    assert not (folder / names[2]).is_symlink()


def test_a_changed_record_is_checked_again_and_refused(results: Path, tmp_path: Path):
    out = tmp_path / "r" / "report.html"
    _write(results, out)
    match_id, record = _first(results)
    moves = record["moves"]
    moves[0]["move"], moves[1]["move"] = moves[1]["move"], moves[0]["move"]  # no longer the game played
    _set_record(results, match_id, record)
    again = _write(results, out)
    assert again.kept == 5
    assert len(again.refusals) == 1 and again.refusals[0].startswith(f"refused {match_id}:")


def test_a_new_arena_or_a_damaged_index_makes_every_replay_again(results: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    out = tmp_path / "r" / "report.html"
    _write(results, out)
    before = _data(out)
    monkeypatch.setattr(report_module, "build_fingerprint", lambda: "another build")
    assert _write(results, out).kept == 0
    assert _write(results, out).kept == 6  # the index now says what this build made
    (out.parent / "report_replays" / ".data-index.json").write_text("{not json")
    assert _write(results, out).kept == 0 and _data(out) == before


def test_the_build_fingerprint_covers_the_arenas_code():
    report_module.build_fingerprint.cache_clear()
    assert report_module.build_fingerprint() == report_module.build_fingerprint()
    assert len(report_module.build_fingerprint()) == 32


def _dispositions(match_id: str) -> tuple[str, str]:
    return (str(signal.getsignal(signal.SIGTERM)), str(signal.getsignal(signal.SIGINT)))


def test_report_workers_end_with_their_pool_under_the_commands_stop_handlers(results: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    """The command turns the first stop signal into an exception and ignores the next; a forked
    worker that kept those handlers could swallow the pool's terminate (SIGTERM) while it ran a
    match, then wait on the pool's queue for ever, and the command with it (seen: 2 hangs in 14
    reports of 480 matches). A worker takes the default SIGTERM and leaves Ctrl-C to the command."""
    from arena.cli.edge import stop_signals_as_interrupts

    monkeypatch.setattr(report_module, "worker_check", _dispositions)
    with stop_signals_as_interrupts(), cli_replay._checking_pool(results, 1000) as pool:
        assert pool is not None  # a pool (this test needs two cores)
        answers = set(pool.check(["a", "b", "c", "d"]))
    assert answers == {(str(signal.SIG_DFL), str(signal.SIG_IGN))}
