"""Exports of a results store for other tools, and reading the exported records back.

Derived from the store like the tables (one source of truth): ``games_csv`` and
``games_jsonl`` give one line per match, which ``arena rate`` reads as it stands (the same
sides and finishing order as the ratings of ``arena table``) and a spreadsheet opens;
``records_jsonl`` gives every game record, one per line, which ``arena verify`` and
``arena replay`` read back through ``iter_record_lines`` and ``find_record``.

The exports are generators of text lines (without their line ends), so a store of any size
is written as it is read; the CLI decides where they go.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.core.outcome import EndReason
from arena.core.rules import Seating
from arena.errors import ArenaError, InputError
from arena.lines import LineTooLongError, capped_lines_numbered
from arena.tournament.standings import hands_played, match_places, seating_of, side_members
from arena.tournament.store import MAX_ROW_BYTES, MatchRow, ResultStore, StoreError

# A game record, in a file of its own or a line of records.jsonl, is at most what the store
# holds in a row (a match to 21 points is about 100 KB, one that reaches the largest hand limit
# a few MB): a longer one is refused having read no more than this.
MAX_RECORD_BYTES = MAX_ROW_BYTES

GAMES_CSV_KEYS = (
    "side_a",
    "side_b",
    "score_a",
    "id",
    "seed",
    "points_a",
    "points_b",
    "reason",
    "hands",
    "forfeited_by",
    "failures",
    "results_id",
)
"""The columns of ``--games csv``: the three that ``arena rate`` reads, then the match's id,
deal seed, points, how it ended, hands played to their end, the bots whose failure lost it,
every failure (``bot:reason``, substituted ones too), space-separated, and the id of the
stored matches (store.py ``results_id``; empty for a store written before it was, and not
run since): with ``id``, what ``arena rate`` tells the same match by, wherever it meets it."""

GAMES_JSONL_KEYS = ("sides", "places", "id", "seed", "labels", "points", "reason", "hands", "forfeited_by", "failures",
                    "results_id")
"""The keys of each ``--games jsonl`` line, in order; ``arena rate`` reads ``sides`` and
``places``, and ``results_id`` with ``id`` to count a match once (null: none recorded)."""

RECORD_SUFFIXES = (".jsonl", ".ndjson")


class ExportError(ArenaError):
    """The export asked for does not fit the results (a CSV of matches with three sides)."""


@dataclass(frozen=True)
class Results:
    """What the exports are made of: the store's rows and the table shape."""

    rows: tuple[MatchRow, ...]
    seating: Seating
    results_id: str | None = None  # the store's (store.py), None where it recorded none

    @classmethod
    def of(cls, store: ResultStore) -> Results:
        game = store.meta().get("game")
        if not isinstance(game, dict):
            raise StoreError(f"{store.folder}: the store has no tournament description")
        from arena.tournament.standings import versioned_rows

        # Every version of a changed bot, under its label: what arena rate then joins to it.
        rows = versioned_rows(store, [bot["name"] for bot in game["bots"]]).rows
        return cls(tuple(rows), seating_of(game), store.results_id)


def _score_a(places: Sequence[int]) -> str:
    return "1" if places[0] < places[1] else "0" if places[0] > places[1] else "0.5"


def _forfeited_by(row: MatchRow) -> list[str]:
    if row.reason is not EndReason.FORFEIT:
        return []
    return list(dict.fromkeys(row.seats[seat] for seat, term in enumerate(row.terminations) if term.is_failure))


def _csv_line(cells: Sequence[object]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(cells)
    return buf.getvalue()


def games_csv(results: Results, source: str = "the results") -> Iterator[str]:
    """One CSV line per match after the header ``GAMES_CSV_KEYS``: ``side_a,side_b,score_a``
    (team members joined by ``+``) as ``arena rate`` reads them, then the columns for people.

    Only two sides per match: raises ``ExportError`` for more (``games_jsonl`` holds them)."""
    sides = results.seating.sides
    if sides != 2:
        raise ExportError(
            f"{source}: its matches have {sides} sides and a CSV of results holds two; use --games jsonl"
        )
    yield _csv_line(GAMES_CSV_KEYS)
    for row in results.rows:
        members = side_members(row, results.seating)
        places = match_places(row, results.seating)
        yield _csv_line(
            [
                "+".join(members[0]),
                "+".join(members[1]),
                _score_a(places),
                row.id,
                row.seed,
                row.scores[0],
                row.scores[1],
                row.reason.value,
                hands_played(row),
                " ".join(_forfeited_by(row)),
                " ".join(f"{row.seats[seat]}:{reason.value}" for seat, reason in row.failures),
                results.results_id or "",
            ]
        )


def games_jsonl(results: Results) -> Iterator[str]:
    """One JSON object per match (keys ``GAMES_JSONL_KEYS``), any number of sides: ``sides``
    (each a list of its distinct bots) and ``places`` (1 is first; a side that forfeited
    finishes behind the others) as ``arena rate`` reads them, then the match's id, seed, side
    labels, points, how it ended, hands played to their end, its failures, and the store's
    ``results_id``."""
    for row in results.rows:
        members = side_members(row, results.seating)
        data: dict[str, Any] = {
            "sides": [list(m) for m in members],
            "places": list(match_places(row, results.seating)),
            "id": row.id,
            "seed": row.seed,
            "labels": list(row.sides),
            "points": list(row.scores),
            "reason": row.reason.value,
            "hands": hands_played(row),
            "forfeited_by": _forfeited_by(row),
            "failures": [{"seat": seat, "bot": row.seats[seat], "reason": reason.value} for seat, reason in row.failures],
            "results_id": results.results_id,
        }
        yield json.dumps(data, separators=(",", ":"))


def records_jsonl(store: ResultStore) -> Iterator[str]:
    """Every game record of the store, one per line, in schedule order:
    ``{"id": MATCH_ID, "record": {...}}``, the record as the store holds it."""
    from arena.tournament.audit import scheduled_rows

    for row in scheduled_rows(store):
        yield json.dumps({"id": row.id, "record": store.record(row.id)}, separators=(",", ":"))


# --- reading records back ------------------------------------------------------------------------


def is_record_lines(path: Path) -> bool:
    """A file that holds records one per line (by its name: ``.jsonl`` or ``.ndjson``)."""
    return path.suffix.lower() in RECORD_SUFFIXES


@dataclass(frozen=True)
class RecordLine:
    """One record of a JSON-lines file: its match id (the line number for a bare record, ``line
    N`` for a line that holds none), the record's JSON, or why the line could not be read."""

    id: str
    line: int
    record: Any = None
    error: str | None = None


def iter_record_lines(path: Path) -> Iterator[RecordLine]:
    """The records of a JSON-lines file, line by line: lines of ``records_jsonl``
    (``{"id": ..., "record": {...}}``) or bare records (then the id is the line number).
    Blank lines are skipped; a line that is not one of these is a ``RecordLine`` with an error,
    so that one bad line does not hide the others. An unreadable file raises ``InputError``."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below, also when abandoned)
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with handle:
        try:
            for number, raw in capped_lines_numbered(handle, MAX_RECORD_BYTES, str(path)):
                if isinstance(raw, LineTooLongError):
                    yield RecordLine(f"line {number}", number, error=f"longer than {MAX_RECORD_BYTES // 2**20} MB, "
                                     "the cap of a record")
                elif raw.strip():
                    yield _record_line(raw, number)
        except OSError as exc:
            raise InputError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _record_line(raw: bytes, number: int) -> RecordLine:
    where = f"line {number}"  # what names a line that holds no record
    try:
        data = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError:
        return RecordLine(where, number, error="not UTF-8 text")
    except (ValueError, RecursionError) as exc:
        return RecordLine(where, number, error=f"not JSON ({exc.__class__.__name__})")
    if isinstance(data, dict) and set(data) == {"id", "record"}:
        match_id = data["id"]
        if not isinstance(match_id, str) or not match_id:
            return RecordLine(where, number, error="id must be a match id (text)")
        return RecordLine(match_id, number, data["record"])
    if isinstance(data, dict) and "schema_version" in data:
        return RecordLine(str(number), number, data)
    return RecordLine(where, number, error='expected {"id": ..., "record": {...}} or a game record')


def find_record(path: Path, match_id: str | None) -> tuple[Any, str]:
    """The record of ``match_id`` in a JSON-lines file, and a label naming it; without an id,
    the file's only record. Raises ``InputError`` naming some ids when there is no such one."""
    ids: list[str] = []
    first: RecordLine | None = None
    unreadable = 0
    for line in iter_record_lines(path):
        if line.error is not None:
            unreadable += 1
            continue
        if match_id is not None and line.id == match_id:
            return line.record, f"{path} match {line.id}"
        first = first or line
        ids.append(line.id)
    if match_id is None and first is not None and len(ids) == 1:
        return first.record, str(path)
    shown = ", ".join(ids[:6]) + (", ..." if len(ids) > 6 else "")
    plural = "s" if unreadable != 1 else ""
    bad = f"; {unreadable} line{plural} not records (arena verify {path} names them)" if unreadable else ""
    if match_id is None and ids:
        raise InputError(f"{path} holds {len(ids)} records: give the id of one (arena replay {path} ID; ids: {shown}){bad}")
    held = f"its ids: {shown}" if ids else "it holds no record"
    where = f"no record {match_id!r}" if match_id is not None else "no record"
    raise InputError(f"{path}: {where} ({held}{bad})")
