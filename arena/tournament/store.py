"""The results of a tournament: one SQLite file per results folder.

Each finished match is one row written in a transaction (WAL, synchronous=FULL; matches
that finish together share one, ``add_many``), so a match is either durably there or not
there at all, whenever the process dies. The match id is the primary key: nothing can be
written twice.

A row holds the match's game record, which is the source of truth (``arena verify`` replays
it through the rules core), its place in the schedule (id, pairing, deal, rotation, seed,
seats), and a summary derived from the record when the row is written (winner, scores,
reason, terminations, escobas, hands, failures), stored so that tables need not parse every
record; where the summary and the record disagree, the record is right and verify refuses
the row. Standings, ratings and tables are derived from the rows every time, never stored.

The meta table holds the tournament's description (``game``, ``config``, ``fingerprint``)
and, since identities were recorded, ``identities``: each bot's ``BotIdentity.to_dict()`` by
name (identity.py), so a resume can tell a rebuilt bot from the one that played. Stores
written before that have no ``identities`` key and still open. Once a bot changed in the
folder, ``versions`` lists its generations of versions (versions.py), and ``identities`` is
keyed by entrant (``mybot``, ``mybot~2``). ``results_id`` names the stored matches wherever they
go: made with the store (or when a run first opens one written before it was), kept by a
copy of the folder and written into its exports (export.py), so that ``arena rate`` counts a
match once however many of them it is given (arena/league/pools.py).

Reading is streamed: ``results()`` is a sequence that reads rows as it is walked, and
``stored_keys()`` gives the schedule keys of the stored matches without their summaries, so
neither a resume nor the tables hold every row of a long tournament at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
import weakref
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from arena.core.outcome import EndReason
from arena.errors import ArenaError, ExitCode, WriteError
from arena.harness.protocol import Termination
from arena.match import jsontext
from arena.safe_files import make_folder, open_lock_file, refuse_links
from arena.tournament.folder_names import STORE_FILE as STORE_FILE  # its owner is below the modules that need it
from arena.tournament.identity import BotIdentity
from arena.tournament.schedule import plain_fields

if TYPE_CHECKING:
    from arena.tournament.config import TournamentConfig

SCHEMA_VERSION = 1
IDENTITIES_KEY = "identities"
# Set once a bot changed in this folder (versions.py): per generation, bot name -> the entrant
# name its newest version plays under.
VERSIONS_KEY = "versions"
LAST_MATCH_KEY = "last_match_at"
# Set when a run played matches with unsealed bots (arena.harness.seal): its value says why.
UNSEALED_KEY = "unsealed"
RESULTS_ID_KEY = "results_id"
_ROW_COLUMNS = (
    "id, idx, pairing, deal, rotation, seed, sides, seats, winner, scores, reason,"
    " terminations, escobas, hands, failures, duration"
)
# A store written before the usage column reads as having none in every row.
_ROW_COLUMNS_WITHOUT_USAGE = _ROW_COLUMNS + ", NULL"
_ROW_COLUMNS += ", usage"
_FETCH = 512  # rows read at a time while a sequence of rows is walked
# The cap of a stored row (its record with the rest), and so of any value in it: SQLite refuses
# to read a longer one before loading it (SQLITE_LIMIT_LENGTH), so a forged store cannot make a
# read take its size in memory. The arena's own records are a few hundred KB at most.
MAX_ROW_BYTES = 16 * 1024 * 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    idx INTEGER NOT NULL,
    pairing INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    sides TEXT NOT NULL,
    seats TEXT NOT NULL,
    winner INTEGER,
    scores TEXT NOT NULL,
    reason TEXT NOT NULL,
    terminations TEXT NOT NULL,
    escobas TEXT NOT NULL,
    hands INTEGER NOT NULL,
    failures TEXT NOT NULL,
    duration REAL NOT NULL,
    record TEXT NOT NULL,
    usage TEXT
);
"""
# Added after the first stores were written: a store opened to resume gains it (NULL in its
# earlier rows); one opened to read keeps it missing.
_ADD_USAGE = "ALTER TABLE matches ADD COLUMN usage TEXT"


def hidden_paths(config: TournamentConfig) -> tuple[str, ...]:
    """What no bot of ``config``, nor its build, may see: its secrets, and every results folder
    beside its own."""
    return config.secrets + stores_beside(config.output)


def hidden_by_bot(config: TournamentConfig) -> dict[str, tuple[str, ...]]:
    """What each bot may not see: ``hidden_paths``, and the folders the other bots may write
    (where a bot could keep notes another one would read), but for those it may write too."""
    from arena.harness.resources import ResourceLimits
    from arena.harness.seal import within

    common = hidden_paths(config)
    writable = {bot.name: ResourceLimits.from_dict(dict(bot.limits)).writable_folders(bot.resolved_cwd)
                for bot in config.bots}
    out: dict[str, tuple[str, ...]] = {}
    for name, own in writable.items():
        others = [folder for other, folders in writable.items() if other != name for folder in folders
                  if not any(within(folder, mine) or within(mine, folder) for mine in own)]
        out[name] = common + tuple(dict.fromkeys(others))
    return out


def hidden_from(config: TournamentConfig, name: str) -> tuple[str, ...]:
    """What the bot ``name`` may not see (``hidden_by_bot``)."""
    return hidden_by_bot(config)[name]


def stores_beside(folder: str) -> tuple[str, ...]:
    """The other results folders next to ``folder`` (those holding a store): an older run of the
    same tournament (a new ``--output`` after a bot changed) holds the records of the very
    deals this one plays, so no bot may read them either."""
    parent = os.path.dirname(os.path.abspath(folder))
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return ()
    own = os.path.abspath(folder)
    return tuple(path for name in names
                 if (path := os.path.join(parent, name)) != own and os.path.isfile(os.path.join(path, STORE_FILE)))


class StoreError(ArenaError):
    """The results folder cannot be used (missing, foreign, corrupt, or from another tournament)."""


class StoreDamagedError(StoreError):
    """The store's file is damaged: unreadable pages, a missing table, a row that is not what
    this arena wrote."""


class StoreWriteError(StoreError):
    """A finished match could not be written (a full disk, a failing disk); nothing stored
    before it is lost, and the match is played again on resume."""

    exit_code = ExitCode.FAULT


class ResumeMismatchError(StoreError):
    """The tournament file changed since the results were started, in a way that changes the games."""

    def __init__(self, folder: str, changed: list[str], restore: str = "restore the file") -> None:
        self.folder = folder
        self.changed = changed
        keys = ", ".join(changed) if changed else "(unknown)"
        super().__init__(
            f"{folder} holds results of a different version of this tournament "
            f"(changed: {keys}); {restore}, or pick a new output folder (--output DIR)"
        )


class PairLimitLoweredError(ResumeMismatchError):
    """A sequential test resumed with a lower ``max_pairs`` than it was stored with: it may
    have played more pairs than the lower limit allows, and its numbers would not be those of
    one test with that limit."""

    def __init__(self, folder: str, stored: int | None) -> None:
        self.folder = folder
        self.changed = ["sprt.max_pairs"]
        if stored is None:
            what, way = "without a pair limit (max_pairs)", "give none (no --max-pairs, no sprt.max_pairs in a file)"
        else:
            what, way = (f"of up to {stored} pairs (max_pairs)",
                         f"give {stored} or more (--max-pairs, or sprt.max_pairs in a file)")
        StoreError.__init__(self, f"{folder} holds a sequential test {what}: a limit can be raised, not lowered; "
                                  f"{way}, or a new output folder (--output DIR)")


class ForeignFolderError(StoreError):
    """The results folder already holds someone else's files: a run would scatter its tables,
    logs and report among them, and replace any that share their names."""

    def __init__(self, folder: str, names: list[str]) -> None:
        shown = ", ".join(sorted(names)[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        super().__init__(
            f"{folder} is not a results folder: it holds other files ({shown}) and no results store; "
            "give a new or empty folder (--output DIR, or the tournament file's output)"
        )


class DuplicateMatchError(StoreError):
    """A match id was written twice: a bug upstream, refused so results stay exact."""

    exit_code = ExitCode.FAULT


@dataclass(frozen=True)
class MatchRow:
    """One finished match, as plain values: what every table and rating is derived from."""

    id: str
    index: int
    pairing: int
    deal: int
    rotation: int
    seed: int
    sides: tuple[str, ...]  # side label per side index
    seats: tuple[str, ...]  # bot name per seat
    winner: int | None  # side index, None for a draw
    scores: tuple[int, ...]  # points per side
    reason: EndReason  # how the match ended
    terminations: tuple[Termination, ...]  # per seat: OK or the bot's failure
    escobas: tuple[int, ...]  # per side
    hands: int
    failures: tuple[tuple[int, Termination], ...] = ()  # (seat, failure) for every bot failure, substituted or not
    duration: float = 0.0  # seconds; informative only, never compared
    # (seat, cpu_ms, wall_ms) for each seat whose bot's usage the record holds (its ``usage``):
    # a measurement like the duration, informative only, never compared nor verified.
    usage: tuple[tuple[int, float, float], ...] = ()

    def outcome(self) -> tuple[Any, ...]:
        """Everything about the game itself (not how long it took): what must repeat exactly."""
        return (
            self.id,
            self.seed,
            self.sides,
            self.seats,
            self.winner,
            self.scores,
            self.reason,
            self.terminations,
            self.escobas,
            self.hands,
            self.failures,
        )

    def to_dict(self) -> dict[str, Any]:
        return plain_fields(self)


LOCK_FILE = "run.lock"

_T = TypeVar("_T")


def _lock_folder(folder: str) -> int:
    """One writer per results folder. The kernel drops the lock when the process dies,
    however it dies, so a kill -9 never leaves a stale lock behind. The lock file is shared by
    every run that takes it: a link in its place (or as the folder) is refused, never followed
    nor replaced (``arena/safe_files.py``)."""
    import fcntl

    path = os.path.join(folder, LOCK_FILE)
    try:
        fd = open_lock_file(folder, LOCK_FILE)
    except OSError as exc:
        raise StoreWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        except OSError:
            holder = "?"
        os.close(fd)
        raise StoreError(f"{folder} is in use by another arena run (pid {holder}); wait for it or stop it") from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
    except OSError:
        pass  # the pid is only shown to a second run; the lock itself is held
    return fd


def _refuse_foreign(folder: str) -> None:
    """A folder is the arena's when it is new, empty or holds only ``logs/``, or holds a store or
    a run's lock (the first file a run makes)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return  # unreadable: opening the store says why
    if STORE_FILE in names or LOCK_FILE in names:
        return
    foreign = [name for name in names if name != "logs"]  # bots' build logs are written first
    if foreign:
        raise ForeignFolderError(folder, foreign)


def store_path(folder: str) -> str:
    return os.path.join(folder, STORE_FILE)


def _damaged(path: str, why: object) -> StoreDamagedError:
    return StoreDamagedError(
        f"{path}: the results store is damaged ({why}); restore it from a copy, "
        "or play the tournament afresh in a new folder (--output DIR)"
    )


class ResultStore:
    """Opened by the runner (read-write, one writer) or by the table command (read-only).

    Every failure of the file itself surfaces as a ``StoreError``: ``StoreDamagedError`` for a
    file that cannot be read as what this arena wrote, ``StoreWriteError`` for a write that
    did not happen (disk full); never as an sqlite3 or JSON exception."""

    def __init__(self, conn: sqlite3.Connection, folder: str, lock: int | None = None) -> None:
        self._conn = conn
        self.folder = folder
        self._lock = lock
        self._sequences: list[weakref.ref[StoredRows]] = []
        self._columns = _ROW_COLUMNS
        # The bots whose command the file spells anew, all else unchanged (config.respelled_bots):
        # opened for a run, which compares their identities and then records the new spelling.
        self.respelled: tuple[str, ...] = ()
        # A sequential test's pair limit, raised (stored, new; None: no limit): opened for a
        # run, which records it with the file's description once the bots are checked.
        self.raised_limit: tuple[int | None, int | None] | None = None
        # A draft (``open_for_run(draft=True)``, what ``arena run --dry-run`` opens): the meta a
        # run would write is held here, as JSON text, and read back over the file's; the file is
        # opened read-only, so the run's own steps show what it would do and change nothing.
        self._draft: dict[str, str] | None = None
        # Whether this run made the folder (``open_for_run``), so that ``discard`` may remove it.
        self._made_folder = False

    @property
    def path(self) -> str:
        return store_path(self.folder)

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DataError as exc:
            if "too big" not in str(exc):
                raise _damaged(self.path, exc) from None
            raise _damaged(self.path, f"a stored row longer than {MAX_ROW_BYTES // 2**20} MB, the cap of a row "
                                      "(docs/TOURNAMENTS.md)") from None
        except sqlite3.DatabaseError as exc:
            if "readonly" in str(exc).lower():
                # SQLite writes beside a WAL store it reads (its -shm): a folder this user
                # cannot write, whose store has a WAL (a run in it now, or one killed).
                raise StoreError(f"{self.path}: cannot be read from here: reading it writes beside it, and its "
                                 f"folder is not writable by this user; read a copy of the folder") from None
            raise _damaged(self.path, exc) from None

    # -- opening ----------------------------------------------------------------------

    @classmethod
    def open_for_run(cls, folder: str, fingerprint: str, game_dict: Mapping[str, Any], config: Mapping[str, Any],
                     *, draft: bool = False) -> ResultStore:
        """Create the store, or reopen it to resume; refuse one from a changed tournament, and
        a folder that holds other files but no store. A ``draft`` is the existing store opened
        read-only, checked as a resume checks it, whose meta writes stay in memory."""
        if draft:
            store = cls.open_existing(folder)
            store._draft = {}
            try:
                return store._check_fingerprint(store.meta(), fingerprint, game_dict)
            except BaseException:
                store.close()
                raise
        made = not os.path.lexists(folder)
        try:
            make_folder(folder)  # a link as the results folder is refused
        except WriteError as exc:
            raise StoreWriteError(str(exc)) from None
        _refuse_foreign(folder)
        lock = _lock_folder(folder)
        try:
            conn = _connect(store_path(folder))
        except BaseException:
            os.close(lock)
            raise
        store = cls(conn, folder, lock)
        store._made_folder = made
        try:
            with store._reading():
                return store._init_or_check(fingerprint, game_dict, config)
        except BaseException:
            store.close()
            raise

    def _tables(self) -> set[str]:
        return {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _has_usage(self) -> bool:
        return any(column[1] == "usage" for column in self._conn.execute("PRAGMA table_info(matches)"))

    def _init_or_check(self, fingerprint: str, game_dict: Mapping[str, Any], config: Mapping[str, Any]) -> ResultStore:
        # One explicit transaction for the tables and the meta rows: killed half-way,
        # the store is either empty or complete (Python's sqlite3 would autocommit DDL).
        conn = self._conn
        conn.isolation_level = None
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            conn.isolation_level = "DEFERRED"
            if _is_write_failure(exc):
                raise StoreWriteError(f"cannot write {self.path}: {exc}") from None
            raise
        try:
            tables = self._tables()
            if "meta" in tables and "matches" not in tables:
                # Recreating it would silently replay every match of a store that held results.
                raise _damaged(self.path, "its matches table is missing")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            if not self._has_usage():
                conn.execute(_ADD_USAGE)
            meta = self.meta()
            if meta and meta.get("fingerprint") != fingerprint and not self._played():
                # Nothing was ever played here (a run refused before its first match: a bot's
                # source or build failed): the file as it is now is the tournament.
                conn.execute("DELETE FROM meta")
                meta = {}
            if not meta:
                conn.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    [
                        ("schema_version", json.dumps(SCHEMA_VERSION)),
                        ("fingerprint", json.dumps(fingerprint)),
                        ("game", json.dumps(dict(game_dict), sort_keys=True)),
                        ("config", json.dumps(dict(config), sort_keys=True)),
                        (RESULTS_ID_KEY, json.dumps(_new_results_id())),
                    ],
                )
            elif RESULTS_ID_KEY not in meta:
                # Written before the id was: its matches get one from now on.
                conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (RESULTS_ID_KEY, json.dumps(_new_results_id())))
            conn.execute("COMMIT")
        except BaseException:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the transaction is already gone (the error that brought us here ended it)
            raise
        finally:
            conn.isolation_level = "DEFERRED"
        if not meta:
            return self
        self._check_meta(meta)
        return self._check_fingerprint(meta, fingerprint, game_dict)

    def _played(self) -> bool:
        return self._conn.execute("SELECT 1 FROM matches LIMIT 1").fetchone() is not None

    def _check_fingerprint(self, meta: Mapping[str, Any], fingerprint: str, game_dict: Mapping[str, Any]) -> ResultStore:
        if meta.get("fingerprint") != fingerprint and (self._draft is None or self._played()):
            from arena.tournament.config import (
                diff_game_dicts,
                fingerprint_of,
                is_raised,
                pair_limit_change,
                respelled_bots,
                stored_game_dict,
                with_pair_limit,
            )

            stored = stored_game_dict(meta.get("game") or {})
            if fingerprint_of(stored) != fingerprint:
                # A sequential test's schedule numbers its deals from 0 whatever its pair limit,
                # so the pairs stored under one limit are the first pairs of the test under a
                # higher one, and it goes on from them (sprt_run.py).
                limits = pair_limit_change(stored, game_dict)
                rest = with_pair_limit(stored, limits[1]) if limits is not None else stored
                respelled = () if fingerprint_of(rest) == fingerprint else respelled_bots(rest, game_dict)
                if respelled is None:
                    raise ResumeMismatchError(self.folder, diff_game_dicts(stored, game_dict))
                if limits is not None:
                    if not is_raised(limits):
                        raise PairLimitLoweredError(self.folder, limits[0])
                    self.raised_limit = limits
                self.respelled = respelled
        return self

    @classmethod
    def open_existing(cls, folder: str) -> ResultStore:
        path = store_path(folder)
        if not os.path.isfile(path):
            raise StoreError(f"{folder}: no results here (expected {STORE_FILE}; run a tournament first)")
        conn = _connect(path, readonly=True)
        store = cls(conn, folder)
        try:
            with store._reading():
                meta = store.meta()
                if not meta:
                    raise StoreError(f"{path}: not a tournament results store (no meta)")
                store._check_meta(meta)
                if "matches" not in store._tables():
                    raise _damaged(path, "its matches table is missing")
                if not store._has_usage():
                    store._columns = _ROW_COLUMNS_WITHOUT_USAGE
        except BaseException:
            conn.close()
            raise
        return store

    def _check_meta(self, meta: Mapping[str, Any]) -> None:
        version = meta.get("schema_version")
        if version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {version!r}, this arena reads {SCHEMA_VERSION}")
        if not isinstance(meta.get("fingerprint"), str):
            raise _damaged(self.path, "its meta table has no fingerprint")
        for key in ("game", "config"):
            if not isinstance(meta.get(key), dict):
                raise _damaged(self.path, f"its meta table has no {key} object")
        # What the tables are computed from besides the rows: the table shape and the bots.
        game = meta["game"]
        bots = game.get("bots")
        if not isinstance(bots, list) or not all(isinstance(b, dict) and isinstance(b.get("name"), str) for b in bots):
            raise _damaged(self.path, "meta 'game': expected a list of bots, each with a name")
        for key in ("players", *(("team_size",) if game.get("mode") == "pairs" else ())):
            value = game.get(key)
            if not isinstance(value, int) or isinstance(value, bool):
                raise _damaged(self.path, f"meta 'game': {key}: expected an integer, got {_short(value)}")

    def close(self) -> None:
        try:
            for ref in self._sequences:
                rows = ref()
                if rows is not None:
                    rows._keep()
        except StoreError:
            pass  # a damaged store: the sequence stays empty, the error was or will be seen by its reader
        finally:
            self._sequences = []
        self._conn.close()
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def discard(self) -> bool:
        """Close the store, and remove its folder if this run made it and stored no match there
        (a run stopped before its first match: its bot's command cannot start), so that nothing
        is left that looks like results; whether it was removed. A folder that was there before
        is the user's, kept: the next run's file replaces the empty store's (``_init_or_check``)."""
        lock, self._lock = self._lock, None
        try:
            gone = self._made_folder and lock is not None and not self._played()
            self.close()
            if gone:
                # Under the run's lock to the end: no other run can have taken the folder meanwhile.
                import shutil

                shutil.rmtree(self.folder, ignore_errors=True)
        finally:
            if lock is not None:
                os.close(lock)
        return not os.path.lexists(self.folder)

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ----------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        """The meta table's values; empty when there is no meta table (a new or foreign file)."""
        with self._reading():
            try:
                rows = self._conn.execute("SELECT key, value FROM meta").fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):
                    return {}
                raise
        out: dict[str, Any] = {}
        for key, value in rows:
            where = f"meta {_short(key)}"

            def error(why: str, where: str = where) -> StoreDamagedError:
                return _damaged(self.path, f"{where}: {why}")

            out[str(key)] = _json(value, error)
        for key, value in (self._draft or {}).items():
            out[key] = json.loads(value)
        return out

    @property
    def fingerprint(self) -> str:
        return str(self.meta()["fingerprint"])

    @property
    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = self.meta()["config"]
        return config

    def completed_ids(self) -> set[str]:
        with self._reading():
            return {str(row[0]) for row in self._conn.execute("SELECT id FROM matches")}

    def count(self) -> int:
        with self._reading():
            return int(self._conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def results(self) -> StoredRows:
        """Every stored match in schedule order, read as it is walked (see ``StoredRows``)."""
        rows = StoredRows(self)
        self._sequences = [ref for ref in self._sequences if ref() is not None]
        self._sequences.append(weakref.ref(rows))
        return rows

    def iter_rows(self) -> Iterator[MatchRow]:
        """The stored matches in schedule order, a few hundred rows in memory at a time."""
        with self._reading():
            cursor = self._conn.execute(f"SELECT {self._columns} FROM matches ORDER BY idx")
            while batch := cursor.fetchmany(_FETCH):
                for r in batch:
                    yield self._row(r)

    def stored_keys(self) -> Generator[tuple[int, str, int, tuple[str, ...]], None, None]:
        """(index, id, seed, seats) of every stored match, in schedule order: what a resume
        checks against the schedule, without reading the summaries."""
        with self._reading():
            cursor = self._conn.execute("SELECT idx, id, seed, seats FROM matches ORDER BY idx")
            while batch := cursor.fetchmany(_FETCH * 4):
                for idx, match_id, seed, seats in batch:
                    try:
                        yield (
                            _check("idx", idx, int, "an integer"),
                            _check("id", match_id, str, "a string"),
                            _check("seed", seed, int, "an integer"),
                            _list_of("seats", seats, str, "strings"),
                        )
                    except _BadColumn as exc:
                        raise _damaged(self.path, f"match {_short(match_id)}, {exc}") from None

    def last_index(self) -> int:
        """The schedule place of the last stored match; -1 with none."""
        with self._reading():
            found = self._conn.execute("SELECT MAX(idx) FROM matches").fetchone()[0]
        if found is None:
            return -1
        return _check("idx", found, int, "an integer")

    def identities(self) -> dict[str, BotIdentity] | None:
        """The bots' identities as last recorded, by name; None for a store written before
        identities were recorded."""
        data = self.meta().get(IDENTITIES_KEY)
        if data is None:
            return None
        return _read_identities(data, lambda why: _damaged(self.path, f"meta {IDENTITIES_KEY!r}: {why}"))

    def generations(self) -> tuple[dict[str, str], ...]:
        """The folder's generations of versions (versions.py), oldest first; () when every
        bot is the one that played first."""
        data = self.meta().get(VERSIONS_KEY)
        if data is None:
            return ()
        if not isinstance(data, list) or not all(
                isinstance(g, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in g.items()) for g in data):
            raise _damaged(self.path, f"meta {VERSIONS_KEY!r}: expected a list of objects of bot name -> entrant name")
        return tuple(dict(g) for g in data)

    @property
    def results_id(self) -> str | None:
        """The id of the stored matches (``RESULTS_ID_KEY``); None for a store written before
        it was, and not run since."""
        value = self.meta().get(RESULTS_ID_KEY)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise _damaged(self.path, f"meta {RESULTS_ID_KEY!r}: expected an id (text), got {_short(value)}")
        return value

    def last_match_at(self) -> datetime | None:
        """When the last match was stored (UTC); None for a store written before that was
        recorded, or with no match yet."""
        value = self.meta().get(LAST_MATCH_KEY)
        if value is None:
            return None
        try:
            when = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            when = None
        if when is None or when.tzinfo is None:
            raise _damaged(self.path, f"meta {LAST_MATCH_KEY!r}: expected a UTC time (ISO 8601), got {_short(value)}")
        return when

    def _row_at(self, position: int) -> MatchRow:
        with self._reading():
            found = self._conn.execute(
                f"SELECT {self._columns} FROM matches ORDER BY idx LIMIT 1 OFFSET ?", (position,)
            ).fetchone()
        if found is None:
            raise IndexError(position)
        return self._row(found)

    def record(self, match_id: str) -> dict[str, Any]:
        return self.record_and_digest(match_id)[0]

    def record_and_digest(self, match_id: str) -> tuple[dict[str, Any], str]:
        """A match's record, and the digest of it as stored that ``record_digests`` gives."""
        with self._reading():
            found = self._conn.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
        if found is None:
            raise StoreError(f"{self.folder}: no match {match_id!r}")
        # orjson (jsontext.loads): the record's reader refuses an integer beyond 64 bits, as orjson's
        # float or as json's integer.
        record = _json(found[0], lambda why: _damaged(self.path, f"match {match_id!r}, column record: {why}"),
                       jsontext.loads)
        if not isinstance(record, dict):
            raise _damaged(self.path, f"match {match_id!r}, column record: expected a JSON object")
        return record, _record_digest(found[0])

    def record_digests(self) -> Iterator[tuple[str, str]]:
        """(match id, a digest of its record as stored) of every stored match: whether a
        record is the one something was made from, without reading it as JSON."""
        with self._reading():
            cursor = self._conn.execute("SELECT id, record FROM matches")
            while batch := cursor.fetchmany(_FETCH):
                for match_id, text in batch:
                    yield str(match_id), _record_digest(text)

    def _row(self, r: tuple[Any, ...]) -> MatchRow:
        match_id = r[0]

        def bad(why: str) -> StoreDamagedError:
            return _damaged(self.path, f"match {_short(match_id)}, {why}")

        try:
            return _parse_row(r)
        except _BadColumn as exc:
            raise bad(str(exc)) from None

    # -- writing ----------------------------------------------------------------------

    def set_identities(self, identities: Mapping[str, BotIdentity]) -> None:
        """Record the bots' identities (replacing those recorded before), in one transaction."""
        value = json.dumps({name: identity.to_dict() for name, identity in identities.items()}, sort_keys=True)
        self._write_meta([(IDENTITIES_KEY, value)], "the bots' identities to")

    def add_generation(self, generation: Mapping[str, str], identities: Mapping[str, BotIdentity],
                       extra: Mapping[str, Any] | None = None) -> None:
        """Record a new generation of versions and the identities with it (and the ``extra``
        meta keys: a ladder's field, that the new versions join), in one transaction."""
        value = json.dumps([*self.generations(), dict(generation)], sort_keys=True)
        ident = json.dumps({name: identity.to_dict() for name, identity in identities.items()}, sort_keys=True)
        self._write_meta([(VERSIONS_KEY, value), (IDENTITIES_KEY, ident),
                          *((key, json.dumps(more, sort_keys=True)) for key, more in (extra or {}).items())],
                         "the bots' versions to")

    def drop_matches(self, ids: Sequence[str]) -> None:
        """Delete these matches, in one transaction (``arena run --drop-old``)."""
        self._refuse_in_draft("delete matches from")
        try:
            with self._conn:
                self._conn.executemany("DELETE FROM matches WHERE id = ?", [(i,) for i in ids])
        except sqlite3.DatabaseError as exc:
            if _is_write_failure(exc):
                raise StoreWriteError(f"cannot delete matches from {self.path}: {exc}") from None
            raise _damaged(self.path, exc) from None

    def redescribe(self, fingerprint: str, game_dict: Mapping[str, Any], config: Mapping[str, Any],
                   extra: Mapping[str, Any]) -> None:
        """Replace the tournament's description (and set the ``extra`` meta keys) in one
        transaction: a ladder that bots joined (adaptive.py) goes on under its new file."""
        items = [("fingerprint", json.dumps(fingerprint)), ("game", json.dumps(dict(game_dict), sort_keys=True)),
                 ("config", json.dumps(dict(config), sort_keys=True)),
                 *((key, json.dumps(value, sort_keys=True)) for key, value in extra.items())]
        self._write_meta(items, "to")

    def mark_unsealed(self, why: str) -> None:
        """Record that this run plays with unsealed bots (the first reason given is kept): the
        tables and the report say so for as long as the folder holds those matches."""
        if UNSEALED_KEY not in self.meta():
            self._write_meta([(UNSEALED_KEY, json.dumps(why))], "to")

    def _write_meta(self, items: Sequence[tuple[str, str]], what: str) -> None:
        """Set these meta keys (values as JSON text) in one transaction; in a draft, in memory."""
        if self._draft is not None:
            self._draft.update(items)
            return
        try:
            with self._conn:
                self._conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", items)
        except sqlite3.DatabaseError as exc:
            if _is_write_failure(exc):
                raise StoreWriteError(f"cannot write {what} {self.path}: {exc}") from None
            raise _damaged(self.path, exc) from None

    def _refuse_in_draft(self, what: str) -> None:
        if self._draft is not None:
            raise StoreWriteError(f"cannot {what} {self.path}: it is open for a dry run, which writes nothing")

    def add(self, row: MatchRow, record: Mapping[str, Any] | str) -> None:
        """Write one finished match durably, in one transaction; refuse a second copy.

        ``record`` is the game record, as a dict or already as JSON text."""
        self.add_many([(row, record)])

    def add_many(self, matches: Sequence[tuple[MatchRow, Mapping[str, Any] | str]]) -> None:
        """Write finished matches durably, all in one transaction (one wait for the disk
        however many they are): after a crash either all of them are stored or none is.
        Refuses a second copy of any (and then stores none of them)."""
        if not matches:
            return
        self._refuse_in_draft("write matches to")
        row = matches[0][0]
        try:
            with self._conn:
                for row, record in matches:
                    self._conn.execute(
                        "INSERT INTO matches(id, idx, pairing, deal, rotation, seed, sides, seats, winner,"
                        " scores, reason, terminations, escobas, hands, failures, duration, record, usage)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            row.id,
                            row.index,
                            row.pairing,
                            row.deal,
                            row.rotation,
                            row.seed,
                            json.dumps(list(row.sides)),
                            json.dumps(list(row.seats)),
                            row.winner,
                            json.dumps(list(row.scores)),
                            row.reason.value,
                            json.dumps([t.value for t in row.terminations]),
                            json.dumps(list(row.escobas)),
                            row.hands,
                            json.dumps([[seat, t.value] for seat, t in row.failures]),
                            row.duration,
                            record if isinstance(record, str) else jsontext.ascii_dumps(record),
                            json.dumps([list(u) for u in row.usage]) if row.usage else None,
                        ),
                    )
                # In the same transaction: the date is that of the last match durably stored.
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    (LAST_MATCH_KEY, json.dumps(datetime.now(UTC).isoformat(timespec="seconds"))),
                )
        except sqlite3.IntegrityError:
            raise DuplicateMatchError(f"match {row.id!r} is already in {self.path}") from None
        except sqlite3.DatabaseError as exc:
            if _is_write_failure(exc):
                raise StoreWriteError(f"cannot write match {row.id!r} to {self.path}: {exc}") from None
            raise _damaged(self.path, exc) from None


class StoredRows(Sequence[MatchRow]):
    """The rows of a store as a sequence read on demand: walking it streams the rows in
    schedule order (never all of them in memory), ``len`` counts them, an index reads one.
    If one is still referenced when its store closes, it reads its rows into memory then,
    so it stays valid (``with store: rows = store.results()`` and use them after)."""

    def __init__(self, store: ResultStore) -> None:
        self._store: ResultStore | None = store
        self._rows: list[MatchRow] | None = None

    def _keep(self) -> None:
        """Called by the store as it closes."""
        if self._store is not None and self._rows is None:
            self._rows = list(self._store.iter_rows())
        self._store = None

    def __len__(self) -> int:
        if self._store is None:
            return len(self._rows or ())
        return self._store.count()

    def __iter__(self) -> Iterator[MatchRow]:
        if self._store is None:
            return iter(self._rows or ())
        return self._store.iter_rows()

    @overload
    def __getitem__(self, index: int) -> MatchRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[MatchRow]: ...

    def __getitem__(self, index: int | slice) -> MatchRow | list[MatchRow]:
        if isinstance(index, slice) or self._store is None:
            return list(self)[index]
        position = index + len(self) if index < 0 else index
        if position < 0:
            raise IndexError(index)
        return self._store._row_at(position)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredRows):
            other = list(other)
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return f"StoredRows({len(self)} rows)"


def _read_identities(data: object, error: Callable[[str], Exception]) -> dict[str, BotIdentity]:
    """The meta's identities, every field checked (a hand-edited meta is a damaged store)."""
    if not isinstance(data, dict):
        raise error(f"expected an object of bot identities, got {_short(data)}")
    out: dict[str, BotIdentity] = {}
    for name, item in data.items():
        where = f"bot {name!r}"
        if not isinstance(item, dict) or item.get("name") != name:
            raise error(f"{where}: expected an identity object naming the bot")
        cmd = item.get("cmd")
        if not (isinstance(cmd, str) or isinstance(cmd, list) and cmd and all(isinstance(p, str) for p in cmd)):
            raise error(f"{where}: cmd: expected a command, got {_short(cmd)}")
        files = item.get("files", {})
        if not isinstance(files, dict) or not all(isinstance(v, (str, type(None))) for v in files.values()):
            raise error(f"{where}: files: expected an object of path -> sha256 or null")
        for key in ("inputs_sha256", "commit", "ready_name"):
            if not isinstance(item.get(key), (str, type(None))):
                raise error(f"{where}: {key}: expected text or null, got {_short(item.get(key))}")
        out[name] = BotIdentity.from_dict(item)
    return out


def _new_results_id() -> str:
    # Random, not derived from the tournament: two folders of one file (a test run again
    # elsewhere after its bot changed) hold different matches under the same match ids.
    return uuid.uuid4().hex


def _is_write_failure(exc: sqlite3.Error) -> bool:
    """Full or failing disk, read-only file: the place is at fault, not the store's content."""
    text = str(exc).lower()
    return any(word in text for word in ("full", "disk i/o", "readonly", "read-only", "locked", "busy"))


# SQLite opens these by name. It follows a link as the store itself and puts its -wal and -shm
# (written even by a reader) beside the link's target, out of the results folder; a linked -wal
# or -shm it fails on with a message blaming the store. So each is checked first, and named. A
# second name (a hard link) of the store would be written too: a run refuses that, reading
# leaves it be (a backup made of hard links).
_SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def _connect(path: str, readonly: bool = False) -> sqlite3.Connection:
    folder, name = os.path.split(path)
    refuse_links(folder or ".", [name + suffix for suffix in _SQLITE_SUFFIXES], one_name=not readonly)
    try:
        return _connect_raw(path, readonly)
    except sqlite3.DatabaseError as exc:
        if not readonly and _is_write_failure(exc):
            raise StoreWriteError(f"cannot write {path}: {exc}") from None
        raise _damaged(path, exc) from None


def _read_only_uri(path: str) -> str:
    """The URI that opens the store read-only (a path's ``#``, ``?`` and ``%`` escaped: read as
    URI syntax they opened, and created, another file), still able to see a live run's WAL.
    SQLite reads a WAL store by writing its ``-shm`` beside it: in a folder this user cannot
    write (another user's, read-only media) whose store was closed cleanly (no ``-wal``, so
    nothing the WAL could add) the file is read as it is, without it."""
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    if not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK) and not os.path.exists(path + "-wal"):
        uri += "&immutable=1"
    return uri


def _connect_raw(path: str, readonly: bool) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(_read_only_uri(path), uri=True, timeout=30.0)
    else:
        conn = sqlite3.connect(path, timeout=30.0)
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_ROW_BYTES)
    return conn


# --- reading a row back: every column checked, so what comes out is what this arena wrote ----------


class _BadColumn(Exception):
    """One column of a stored row is not what this arena writes (private: becomes StoreDamagedError)."""


def _record_digest(text: object) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else repr(text).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _json(text: object, error: Callable[[str], Exception], loads: Callable[[str], Any] = json.loads) -> Any:
    if not isinstance(text, str):
        raise error(f"expected JSON text, got {_short(text)}")
    try:
        return loads(text)
    except (ValueError, RecursionError) as exc:
        raise error(f"not valid JSON ({exc.__class__.__name__})") from None


def _col_json(name: str, text: object) -> Any:
    def error(why: str) -> _BadColumn:
        return _BadColumn(f"column {name}: {why}")

    return _json(text, error)


def _check(name: str, value: object, kind: type[_T], what: str) -> _T:
    # bool is an int to Python, never to this store.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _BadColumn(f"column {name}: expected {what}, got {_short(value)}")
    return value


def _list_of(name: str, text: object, kind: type[_T], what: str) -> tuple[_T, ...]:
    items = _check(name, _col_json(name, text), list, f"a JSON list of {what}")
    return tuple(_check(name, item, kind, f"a list of {what}") for item in items)


_REASONS = {m.value: m for m in EndReason}


def _reason(value: object) -> EndReason:
    member = _REASONS.get(value) if isinstance(value, str) else None
    if member is None:
        raise _BadColumn(f"column reason: expected one of {', '.join(_REASONS)}, got {_short(value)}")
    return member


_TERMINATIONS = {m.value: m for m in Termination}


def _termination(column: str, value: str) -> Termination:
    member = _TERMINATIONS.get(value)
    if member is None:
        raise _BadColumn(f"column {column}: expected one of {', '.join(_TERMINATIONS)}, got {_short(value)}")
    return member


def _parse_row(r: tuple[Any, ...]) -> MatchRow:
    integer = "an integer"
    sides = _list_of("sides", r[6], str, "strings")
    seats = _list_of("seats", r[7], str, "strings")
    winner = r[8] if r[8] is None else _check("winner", r[8], int, "an integer or null")
    scores = _list_of("scores", r[9], int, "integers")
    terminations = tuple(_termination("terminations", t) for t in _list_of("terminations", r[11], str, "strings"))
    escobas = _list_of("escobas", r[12], int, "integers")
    failures: list[tuple[int, Termination]] = []
    for item in _check("failures", _col_json("failures", r[14]), list, "a JSON list of [seat, reason] pairs"):
        pair = _check("failures", item, list, "a list of [seat, reason] pairs")
        if len(pair) != 2:
            raise _BadColumn(f"column failures: expected [seat, reason] pairs, got {_short(pair)}")
        seat = _check("failures", pair[0], int, "a seat number")
        if not 0 <= seat < len(seats):
            raise _BadColumn(f"column failures: seat {seat} is not one of the {len(seats)} seats")
        failures.append((seat, _termination("failures", _check("failures", pair[1], str, "a reason"))))
    if not (len(scores) == len(escobas) == len(sides)):
        raise _BadColumn(f"{len(sides)} sides but {len(scores)} scores and {len(escobas)} escoba counts")
    if len(terminations) != len(seats):
        raise _BadColumn(f"{len(seats)} seats but {len(terminations)} terminations")
    if winner is not None and not 0 <= winner < len(sides):
        raise _BadColumn(f"column winner: side {winner} is not one of the {len(sides)} sides")
    duration = r[15]
    if isinstance(duration, bool) or not isinstance(duration, (int, float)):
        raise _BadColumn(f"column duration: expected a number of seconds, got {_short(duration)}")
    usage: list[tuple[int, float, float]] = []
    if r[16] is not None:
        for item in _check("usage", _col_json("usage", r[16]), list, "a JSON list of [seat, cpu_ms, wall_ms]"):
            entry = _check("usage", item, list, "a list of [seat, cpu_ms, wall_ms]")
            if len(entry) != 3 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in entry):
                raise _BadColumn(f"column usage: expected [seat, cpu_ms, wall_ms], got {_short(entry)}")
            seat = _check("usage", entry[0], int, "a seat number")
            if not 0 <= seat < len(seats):
                raise _BadColumn(f"column usage: seat {seat} is not one of the {len(seats)} seats")
            usage.append((seat, float(entry[1]), float(entry[2])))
    return MatchRow(
        id=_check("id", r[0], str, "a string"),
        index=_check("idx", r[1], int, integer),
        pairing=_check("pairing", r[2], int, integer),
        deal=_check("deal", r[3], int, integer),
        rotation=_check("rotation", r[4], int, integer),
        seed=_check("seed", r[5], int, integer),
        sides=sides,
        seats=seats,
        winner=winner,
        scores=scores,
        reason=_reason(r[10]),
        terminations=terminations,
        escobas=escobas,
        hands=_check("hands", r[13], int, integer),
        failures=tuple(failures),
        duration=float(duration),
        usage=tuple(usage),
    )
