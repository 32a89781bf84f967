"""The results store: one durable row per match, nothing twice, resume refused for a changed file."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.core.outcome import EndReason
from arena.harness.protocol import Termination
from arena.render.standings import format_crosstable, format_standings
from arena.tournament.config import parse_config
from arena.tournament.schedule import build_schedule
from arena.tournament.standings import compute_standings
from arena.tournament.store import (
    SCHEMA_VERSION,
    DuplicateMatchError,
    ForeignFolderError,
    MatchRow,
    ResultStore,
    ResumeMismatchError,
    StoreError,
    StoreWriteError,
)

TEXT = "name: t\nseed: 3\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n  - {name: c, cmd: x}\n"


def row_for(spec, winner, failures=()):
    scores = (21, 9) if winner == 0 else (9, 21) if winner == 1 else (15, 15)
    return MatchRow(
        id=spec.id, index=spec.index, pairing=spec.pairing, deal=spec.deal, rotation=spec.rotation,
        seed=spec.seed, sides=spec.sides, seats=spec.seats, winner=winner, scores=scores,
        reason=EndReason.TARGET if winner is not None else EndReason.MAX_HANDS, terminations=(Termination.OK, Termination.OK),
        escobas=(2, 1), hands=4, failures=failures, duration=0.25,
    )


def open_store(folder: Path, text: str = TEXT) -> ResultStore:
    c = parse_config(text)
    return ResultStore.open_for_run(str(folder), c.fingerprint, c.game_dict(), c.to_dict())


def test_rows_round_trip_and_are_written_once(tmp_path: Path):
    c = parse_config(TEXT)
    spec = build_schedule(c)[0]
    row = row_for(spec, 0, failures=((1, Termination.TIMEOUT),))
    with open_store(tmp_path) as store:
        assert store.completed_ids() == set()
        store.add(row, {"moves": ["7o"], "seed": spec.seed})
        with pytest.raises(DuplicateMatchError):
            store.add(row, {"moves": []})
        assert store.count() == 1
    with ResultStore.open_existing(str(tmp_path)) as store:
        assert store.results() == [row]
        assert store.record(spec.id) == {"moves": ["7o"], "seed": spec.seed}
        meta = store.meta()
        assert meta["schema_version"] == SCHEMA_VERSION
        assert meta["fingerprint"] == c.fingerprint
        assert meta["game"] == c.game_dict()
        with pytest.raises(StoreError, match="no match"):
            store.record("nope")


def test_a_folder_named_with_uri_characters_is_read_where_it_is(tmp_path: Path):
    # Read as URI syntax, "#" and "?" cut the path short: the reader opened (and created) an
    # empty database named by what came before them, and "%41" named another folder.
    folder = tmp_path / "a#b?c%41"
    spec = build_schedule(parse_config(TEXT))[0]
    with open_store(folder) as store:
        store.add(row_for(spec, 0), {"moves": []})
    with ResultStore.open_existing(str(folder)) as store:
        assert store.count() == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a#b?c%41"]


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="needs root to become nobody")
def test_a_store_in_a_folder_its_reader_cannot_write_is_read_as_it_is():
    # SQLite reads a WAL store by writing its -shm beside it: another user's results folder
    # (or read-only media) was "damaged" to every reader. Closed cleanly, it has no -wal, and
    # is read as it is.
    top = Path(tempfile.mkdtemp(prefix="store-ro-"))
    try:
        os.chmod(top, 0o755)
        folder = top / "t"
        spec = build_schedule(parse_config(TEXT))[0]
        with open_store(folder) as store:
            store.add(row_for(spec, 0), {"moves": []})
        os.chmod(folder, 0o755)
        before = sorted(p.name for p in folder.iterdir())
        code = ("from arena.tournament.store import ResultStore\n"
                f"with ResultStore.open_existing({str(folder)!r}) as store:\n"
                "    print(store.count(), store.results()[0].winner)\n")
        # nobody, who may read everything (this Python and its packages, wherever they are) but
        # write only what anyone may.
        done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                               "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", sys.executable, "-c",
                               code], capture_output=True, text=True, timeout=120, cwd=top)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", "0"]
        assert sorted(p.name for p in folder.iterdir()) == before
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_the_database_is_wal_and_the_id_is_a_primary_key(tmp_path: Path):
    with open_store(tmp_path):
        pass
    conn = sqlite3.connect(tmp_path / "results.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    info = conn.execute("PRAGMA table_info(matches)").fetchall()
    assert [r[1] for r in info if r[5]] == ["id"]
    conn.close()


def test_reopening_the_same_tournament_resumes(tmp_path: Path):
    c = parse_config(TEXT)
    specs = build_schedule(c)
    with open_store(tmp_path) as store:
        store.add(row_for(specs[0], 1), {})
    # Concurrency and output do not change the games: same store.
    with open_store(tmp_path, TEXT + "concurrency: 5\n") as store:
        assert store.completed_ids() == {specs[0].id}


def test_a_changed_tournament_is_refused_with_what_changed(tmp_path: Path):
    with open_store(tmp_path) as store:
        store.add(row_for(build_schedule(parse_config(TEXT))[0], 0), {"moves": []})
    with pytest.raises(ResumeMismatchError) as info:
        open_store(tmp_path, TEXT.replace("seed: 3", "seed: 4") + "rules: {target: 15}\n")
    assert info.value.changed == ["rules.target", "seed"]
    assert "changed: rules.target, seed" in str(info.value)
    assert "--output" in str(info.value)


def test_a_store_that_never_held_a_match_is_begun_again_for_the_file_as_it_is_now(tmp_path: Path):
    # A run refused before its first match (a bot's source at a revision that is not there)
    # made the store: the corrected file must not be refused as "a different version".
    with open_store(tmp_path):
        pass
    changed = TEXT.replace("seed: 3", "seed: 4")
    with open_store(tmp_path, changed) as store:
        assert store.meta()["fingerprint"] == parse_config(changed).fingerprint
        store.add(row_for(build_schedule(parse_config(changed))[0], 0), {"moves": []})
    with pytest.raises(ResumeMismatchError):  # once a match is stored, a change is refused
        open_store(tmp_path)


def test_discard_removes_only_a_folder_the_run_made_and_stored_nothing_in(tmp_path: Path):
    # A run stopped before its first match leaves nothing behind; results, or a folder that was
    # there before (the user's), stay.
    store = open_store(tmp_path / "new")
    (tmp_path / "new" / "logs").mkdir()
    (tmp_path / "new" / "logs" / "a.stderr.log").write_text("sh: 1: x: not found\n")
    assert store.discard() and not (tmp_path / "new").exists()
    store = open_store(tmp_path / "played")
    store.add(row_for(build_schedule(parse_config(TEXT))[0], 0), {"moves": []})
    assert not store.discard() and store_count(tmp_path / "played") == 1
    (tmp_path / "mine").mkdir()
    assert not open_store(tmp_path / "mine").discard() and store_count(tmp_path / "mine") == 0


def store_count(folder: Path) -> int:
    with ResultStore.open_existing(str(folder)) as store:
        return store.count()


def test_open_existing_refuses_what_is_not_a_store(tmp_path: Path):
    with pytest.raises(StoreError, match="no results here"):
        ResultStore.open_existing(str(tmp_path))
    (tmp_path / "results.sqlite").write_bytes(b"this is not sqlite at all, not even close" * 10)
    with pytest.raises(StoreError):
        ResultStore.open_existing(str(tmp_path))


def test_a_folder_holding_other_files_is_not_made_a_results_folder(tmp_path: Path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.html").write_text("my own page")
    (mine / "notes.txt").write_text("my notes")
    with pytest.raises(ForeignFolderError) as info:
        open_store(mine)
    assert "holds other files (notes.txt, report.html) and no results store" in str(info.value)
    assert info.value.exit_code == 2
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt", "report.html"]  # nothing written
    # New, empty, and the arena's own folders (a store, or the lock a run makes first) are used.
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "new" / "deeper", tmp_path / "empty"):
        with open_store(folder):
            pass
        (folder / "standings.txt").write_text("a table")
        with open_store(folder):  # a resume
            pass
    started = tmp_path / "started"
    started.mkdir()
    (started / "run.lock").write_text("")
    (started / "logs").mkdir()
    with open_store(started):
        pass


def test_standings_are_derived_from_the_rows(tmp_path: Path):
    c = parse_config(TEXT.replace("seed: 3", "seed: 3\nmatches_per_pairing: 4"))
    specs = build_schedule(c)
    # a beats everyone in seat 0 and draws from seat 1; b beats c always.
    rows = []
    for spec in specs:
        if "a" in spec.seats:
            winner = spec.seats.index("a") if spec.rotation == 0 else None
        else:
            winner = spec.seats.index("b")
        rows.append(row_for(spec, winner, failures=((0, Termination.TIMEOUT),) if spec.seats[0] == "c" else ()))
    standings = compute_standings(rows, c.seating, ["a", "b", "c"])
    names = [s.name for s in standings.bots]
    assert names == ["a", "b", "c"]
    a, b, cc = standings.bots
    assert (a.matches, a.wins, a.draws, a.losses) == (8, 4, 4, 0)
    assert (b.wins, b.draws, b.losses) == (4, 2, 2)
    assert cc.failures == (("timeout", 4),)
    assert a.points_per_hand == pytest.approx(a.points_for / a.hands)
    assert a.escobas_per_hand is not None
    assert standings.crosstable.cell("a", "b") == (3.0, 4)
    assert standings.crosstable.cell("b", "a") == (1.0, 4)
    text = format_standings(standings, "plain")
    assert "a" in text and "4-4-0" in text
    assert format_crosstable(standings, "csv").splitlines()[:2] == ["name,opponent,points,games", "a,b,3.0,4"]
    import json

    data = json.loads(format_standings(standings, "json"))
    assert {"name", "elo", "ci95", "matches", "wins", "losses"} <= set(data[0])


def test_multi_side_matches_become_pairwise_results():
    from arena.core.rules import Seating
    from arena.tournament.standings import pair_results

    row = MatchRow(id="0.0", index=0, pairing=0, deal=0, rotation=0, seed=1, sides=("a", "b", "c"),
                   seats=("a", "b", "c"), winner=2, scores=(30, 10, 21), reason=EndReason.FORFEIT,
                   terminations=(Termination.TIMEOUT, Termination.OK, Termination.OK), escobas=(0, 0, 0), hands=3)
    pairs = pair_results(row, Seating.alone(3))
    # c won; a forfeited, so it loses to b despite its points.
    assert [(p.side_a, p.side_b, p.score_a) for p in pairs] == [
        (("a",), ("b",), 0.0), (("a",), ("c",), 0.0), (("b",), ("c",), 0.0)]


def test_one_writer_per_folder(tmp_path: Path):
    with open_store(tmp_path):
        with pytest.raises(StoreError, match="in use by another arena run"):
            open_store(tmp_path)
        # Readers are welcome while it runs.
        with ResultStore.open_existing(str(tmp_path)) as reader:
            assert reader.count() == 0
    with open_store(tmp_path):
        pass


# --- streaming reads and bot identities (issues 12, 14) ----------------------------------------------


def test_the_rows_are_a_sequence_read_as_it_is_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from arena.tournament import store as store_module

    monkeypatch.setattr(store_module, "_FETCH", 2)  # several batches for a handful of rows
    c = parse_config(TEXT)
    specs = build_schedule(c)
    rows = [row_for(spec, i % 2) for i, spec in enumerate(specs)]
    with open_store(tmp_path) as store:
        for row in reversed(rows):  # written out of order, read in schedule order
            store.add(row, {})
        stored = store.results()
        assert len(stored) == len(rows) == 6
        assert list(stored) == rows and stored == rows
        assert stored[0] == rows[0] and stored[-1] == rows[-1] and stored[1:3] == rows[1:3]
        with pytest.raises(IndexError):
            stored[6]
        assert list(store.stored_keys()) == [(r.index, r.id, r.seed, r.seats) for r in rows]
        # The standings read the same rows through it.
        assert format_standings(compute_standings(stored, c.seating, "abc"), "plain") == format_standings(
            compute_standings(rows, c.seating, "abc"), "plain")


def _identity(name: str, sha: str = "1" * 64, ready: str | None = None):
    from arena.tournament.identity import BotIdentity

    return BotIdentity(name=name, cmd="python3 bot.py", files=(("bot.py", sha),), ready_name=ready)


def test_identities_are_stored_in_the_meta_and_read_back(tmp_path: Path):
    with open_store(tmp_path) as store:
        assert store.identities() is None  # nothing recorded yet
        identities = {"a": _identity("a", ready="Bot A"), "b": _identity("b", "2" * 64)}
        store.set_identities(identities)
        assert store.identities() == identities
    with ResultStore.open_existing(str(tmp_path)) as store:
        assert store.identities() == identities
        assert store.meta()["identities"]["a"] == {
            "name": "a", "cmd": "python3 bot.py", "files": {"bot.py": "1" * 64}, "inputs_sha256": None,
            "commit": None, "ready_name": "Bot A", "env": {}, "built": False, "identity": identities["a"].key,
        }


def test_a_draft_reads_the_file_holds_what_a_run_would_record_in_memory_and_writes_nothing(tmp_path: Path):
    c = parse_config(TEXT)
    spec = build_schedule(c)[0]
    with open_store(tmp_path) as store:
        store.add(row_for(spec, 0), {})
        store.set_identities({"a": _identity("a")})
    (tmp_path / "results.sqlite").chmod(0o444)  # read-only to the draft: a write would fail
    on_disk = (tmp_path / "results.sqlite").read_bytes()
    changed = {"a": _identity("a", "2" * 64), "b": _identity("b")}
    with ResultStore.open_for_run(str(tmp_path), c.fingerprint, c.game_dict(), c.to_dict(), draft=True) as draft:
        draft.set_identities(changed)
        draft.add_generation({"a": "a~2"}, changed, {"field": [[0, ["a"]]]})
        draft.mark_unsealed("why")
        assert draft.identities() == changed and draft.generations() == ({"a": "a~2"},)
        assert draft.meta()["field"] == [[0, ["a"]]] and draft.count() == 1
        for write in (lambda: draft.add(row_for(build_schedule(c)[1], 1), {}), lambda: draft.drop_matches([spec.id])):
            with pytest.raises(StoreWriteError, match="open for a dry run, which writes nothing"):
                write()
    assert (tmp_path / "results.sqlite").read_bytes() == on_disk
    with ResultStore.open_existing(str(tmp_path)) as store:
        assert store.identities() == {"a": _identity("a")} and store.generations() == () and store.count() == 1
    with pytest.raises(ResumeMismatchError):  # refused as a run is, for a changed file
        other = parse_config(TEXT.replace("seed: 3", "seed: 4"))
        ResultStore.open_for_run(str(tmp_path), other.fingerprint, other.game_dict(), other.to_dict(), draft=True)


@pytest.mark.parametrize("value", ['[1]', '{"a": {"name": "b", "cmd": "x"}}', '{"a": {"name": "a", "cmd": 3}}',
                                   '{"a": {"name": "a", "cmd": "x", "files": {"f": 5}}}',
                                   '{"a": {"name": "a", "cmd": "x", "commit": 7}}'])
def test_a_hand_edited_identities_meta_is_a_damaged_store(tmp_path: Path, value: str):
    from arena.tournament.store import StoreDamagedError

    with open_store(tmp_path):
        pass
    conn = sqlite3.connect(tmp_path / "results.sqlite")
    conn.execute("INSERT INTO meta(key, value) VALUES ('identities', ?)", (value,))
    conn.commit()
    conn.close()
    with ResultStore.open_existing(str(tmp_path)) as store, pytest.raises(StoreDamagedError, match="identities"):
        store.identities()


def test_a_store_written_before_identities_opens_and_has_none(tmp_path: Path):
    import shutil

    shutil.copytree(Path(__file__).parents[1] / "golden" / "store", tmp_path / "golden")
    with ResultStore.open_existing(str(tmp_path / "golden")) as store:
        assert store.identities() is None
        assert len(store.results()) == 12 == len(list(store.stored_keys()))


def test_a_store_names_its_matches_by_an_id_of_its_own_which_an_older_one_gets_when_run(tmp_path: Path):
    with open_store(tmp_path / "a") as store:
        first = store.results_id
    with open_store(tmp_path / "b") as store:
        other = store.results_id
    # Two folders of one file are two sets of matches (the same match ids, other games).
    assert first and other and first != other and len(first) == 32
    with open_store(tmp_path / "a") as store:
        assert store.results_id == first  # kept on resume
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    with ResultStore.open_existing(str(tmp_path / "copy")) as store:
        assert store.results_id == first  # a copy holds the same matches
    # A store of an earlier arena: none until a run opens it.
    with sqlite3.connect(tmp_path / "a" / "results.sqlite") as conn:
        conn.execute("DELETE FROM meta WHERE key = 'results_id'")
    with ResultStore.open_existing(str(tmp_path / "a")) as store:
        assert store.results_id is None
    with open_store(tmp_path / "a") as store:
        made = store.results_id
    with ResultStore.open_existing(str(tmp_path / "a")) as store:
        assert made and made != first and store.results_id == made
