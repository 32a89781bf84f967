"""The results of a tournament: one SQLite file per results folder.

Each finished match is one row written in one transaction (WAL, synchronous=FULL), so a
match is either durably there or not there at all, whenever the process dies. The match
id is the primary key: nothing can be written twice.

A row holds the match's game record, which is the source of truth (``arena verify`` replays
it through the rules core), its place in the schedule (id, pairing, deal, rotation, seed,
seats), and a summary derived from the record when the row is written (winner, scores,
reason, terminations, escobas, hands, failures), stored so that tables need not parse every
record; where the summary and the record disagree, the record is right and verify refuses
the row. Standings, ratings and tables are derived from the rows every time, never stored.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError
from arena.tournament.schedule import plain_fields

SCHEMA_VERSION = 1
STORE_FILE = "results.sqlite"

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
    record TEXT NOT NULL
);
"""


class StoreError(ArenaError):
    """The results folder cannot be used (missing, foreign, corrupt, or from another tournament)."""


class ResumeMismatchError(StoreError):
    """The tournament file changed since the results were started, in a way that changes the games."""

    def __init__(self, folder: str, changed: list[str]) -> None:
        self.folder = folder
        self.changed = changed
        keys = ", ".join(changed) if changed else "(unknown)"
        super().__init__(
            f"{folder} holds results of a different version of this tournament "
            f"(changed: {keys}); restore the file, or pick a new output folder (--output DIR)"
        )


class DuplicateMatchError(StoreError):
    """A match id was written twice: a bug upstream, refused so results stay exact."""


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
    reason: str  # how the match ended: an EndReason value, "target", "max_hands" or "forfeit"
    terminations: tuple[str, ...]  # per seat: "ok" or the bot's failure reason
    escobas: tuple[int, ...]  # per side
    hands: int
    failures: tuple[tuple[int, str], ...] = ()  # (seat, reason) for every bot failure, substituted or not
    duration: float = 0.0  # seconds; informative only, never compared

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


def _lock_folder(folder: str) -> int:
    """One writer per results folder. The kernel drops the lock when the process dies,
    however it dies, so a kill -9 never leaves a stale lock behind."""
    import fcntl

    path = os.path.join(folder, LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        except OSError:
            holder = "?"
        os.close(fd)
        raise StoreError(f"{folder} is in use by another arena run (pid {holder}); wait for it or stop it") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def store_path(folder: str) -> str:
    return os.path.join(folder, STORE_FILE)


class ResultStore:
    """Opened by the runner (read-write, one writer) or by the table command (read-only)."""

    def __init__(self, conn: sqlite3.Connection, folder: str, lock: int | None = None) -> None:
        self._conn = conn
        self.folder = folder
        self._lock = lock

    # -- opening ----------------------------------------------------------------------

    @classmethod
    def open_for_run(cls, folder: str, fingerprint: str, game_dict: Mapping[str, Any], config: Mapping[str, Any]) -> ResultStore:
        """Create the store, or reopen it to resume; refuse one from a changed tournament."""
        os.makedirs(folder, exist_ok=True)
        lock = _lock_folder(folder)
        try:
            conn = _connect(store_path(folder))
        except BaseException:
            os.close(lock)
            raise
        store = cls(conn, folder, lock)
        try:
            return store._init_or_check(fingerprint, game_dict, config)
        except sqlite3.DatabaseError as exc:
            store.close()
            raise StoreError(f"{store_path(folder)}: unreadable results store ({exc})") from None
        except BaseException:
            store.close()
            raise

    def _init_or_check(self, fingerprint: str, game_dict: Mapping[str, Any], config: Mapping[str, Any]) -> ResultStore:
        # One explicit transaction for the tables and the meta rows: killed half-way,
        # the store is either empty or complete (Python's sqlite3 would autocommit DDL).
        conn = self._conn
        conn.isolation_level = None
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            meta = self.meta()
            if not meta:
                conn.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    [
                        ("schema_version", json.dumps(SCHEMA_VERSION)),
                        ("fingerprint", json.dumps(fingerprint)),
                        ("game", json.dumps(dict(game_dict), sort_keys=True)),
                        ("config", json.dumps(dict(config), sort_keys=True)),
                    ],
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            conn.isolation_level = ""
        if not meta:
            return self
        self._check_schema(meta)
        if meta.get("fingerprint") != fingerprint:
            from arena.tournament.config import diff_game_dicts

            raise ResumeMismatchError(self.folder, diff_game_dicts(meta.get("game") or {}, game_dict))
        return self

    @classmethod
    def open_existing(cls, folder: str) -> ResultStore:
        path = store_path(folder)
        if not os.path.isfile(path):
            raise StoreError(f"{folder}: no results here (expected {STORE_FILE}; run a tournament first)")
        conn = _connect(path, readonly=True)
        store = cls(conn, folder)
        try:
            meta = store.meta()
            if not meta:
                raise StoreError(f"{path}: not a tournament results store (no meta)")
            store._check_schema(meta)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: unreadable results store ({exc})") from None
        except BaseException:
            conn.close()
            raise
        return store

    def _check_schema(self, meta: Mapping[str, Any]) -> None:
        version = meta.get("schema_version")
        if version != SCHEMA_VERSION:
            raise StoreError(f"{store_path(self.folder)}: schema version {version!r}, this arena reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self._conn.close()
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ----------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        try:
            rows = self._conn.execute("SELECT key, value FROM meta").fetchall()
        except sqlite3.OperationalError:
            return {}
        return {key: json.loads(value) for key, value in rows}

    @property
    def fingerprint(self) -> str:
        return self.meta()["fingerprint"]

    @property
    def config(self) -> dict[str, Any]:
        return self.meta()["config"]

    def completed_ids(self) -> set[str]:
        return {row[0] for row in self._conn.execute("SELECT id FROM matches")}

    def count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]

    def results(self) -> list[MatchRow]:
        cursor = self._conn.execute(
            "SELECT id, idx, pairing, deal, rotation, seed, sides, seats, winner, scores, reason,"
            " terminations, escobas, hands, failures, duration FROM matches ORDER BY idx"
        )
        return [_row(r) for r in cursor]

    def record(self, match_id: str) -> dict[str, Any]:
        found = self._conn.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
        if found is None:
            raise StoreError(f"{self.folder}: no match {match_id!r}")
        return json.loads(found[0])

    # -- writing ----------------------------------------------------------------------

    def add(self, row: MatchRow, record: Mapping[str, Any] | str) -> None:
        """Write one finished match durably, in one transaction; refuse a second copy.

        ``record`` is the game record, as a dict or already as JSON text."""
        try:
            with self._conn:
                self._conn.execute(
                    "INSERT INTO matches(id, idx, pairing, deal, rotation, seed, sides, seats, winner,"
                    " scores, reason, terminations, escobas, hands, failures, duration, record)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        row.reason,
                        json.dumps(list(row.terminations)),
                        json.dumps(list(row.escobas)),
                        row.hands,
                        json.dumps([list(f) for f in row.failures]),
                        row.duration,
                        record if isinstance(record, str) else json.dumps(record, separators=(",", ":")),
                    ),
                )
        except sqlite3.IntegrityError:
            raise DuplicateMatchError(f"match {row.id!r} is already in {store_path(self.folder)}") from None


def _connect(path: str, readonly: bool = False) -> sqlite3.Connection:
    try:
        return _connect_raw(path, readonly)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: unreadable results store ({exc})") from None


def _connect_raw(path: str, readonly: bool) -> sqlite3.Connection:
    if readonly:
        # Read-only but still able to see a live run's WAL.
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    else:
        conn = sqlite3.connect(path, timeout=30.0)
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def _row(r: tuple[Any, ...]) -> MatchRow:
    return MatchRow(
        id=r[0],
        index=r[1],
        pairing=r[2],
        deal=r[3],
        rotation=r[4],
        seed=int(r[5]),
        sides=tuple(json.loads(r[6])),
        seats=tuple(json.loads(r[7])),
        winner=r[8],
        scores=tuple(json.loads(r[9])),
        reason=r[10],
        terminations=tuple(json.loads(r[11])),
        escobas=tuple(json.loads(r[12])),
        hands=r[13],
        failures=tuple((int(seat), str(reason)) for seat, reason in json.loads(r[14])),
        duration=r[15],
    )
