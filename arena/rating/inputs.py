"""Match results from files, for the rating fit: the two-sided CSV and the JSON-lines format.

Both are read line by line (a file of a million results never sits in memory as text), and
every result is checked as it is read, so a bad line stops the read with a one-line error
that names the file and the line.

CSV (two sides per match)::

    side_a,side_b,score_a
    greedy,random,1
    alice+bob,carol+dave,0.5

Further named columns after ``score_a`` (a match id, a date: what ``arena export --games
csv`` writes) are ignored, as other keys are in JSON lines, but for three: ``results_id`` and
``id``, which ``arena export`` writes to name a match wherever it goes (``MatchKey``), so that
a match met twice (a results folder and its export, two copies) is counted once
(``MatchLedger``, ``read_keyed_results``); and without ``results_id``, ``id`` and ``seed``
(``MatchPlace``, in ``read_keyed_results`` too), by which a league still finds an older export's
matches in their results folder.

JSON lines (any number of sides; teams as lists of names)::

    {"sides": [["a"], ["b"], ["c"]], "scores": [21, 15, 9]}
    {"sides": [["a", "b"], ["c", "d"], ["e", "f"]], "places": [2, 1, 3]}

A match holds what a game of Escoba can (``GAME_TABLES``): at most 4 sides, 3 bots a side and 6
bots in all; a line is at most ``MAX_LINE_BYTES`` long (docs/RATINGS.md). Both caps bound
the memory of a fit by the input's size: the fit keeps a constant amount per match (at most 6
entrants, so at most 15 pairs), and a file of N bytes holds at most N / 20 matches, however
its lines are built; without them one line of 600 sides is 180,000 pairs (3.4 GB).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from arena.core.rules import Seating
from arena.errors import ArenaError
from arena.lines import LineTooLongError, capped_lines, quote
from arena.rating.table import MatchResult, PairResult, ResultInputError, check_result, places_problem

CSV_HEADER = ("side_a", "side_b", "score_a")
IDENTITY_KEYS = ("results_id", "id")
"""The columns (keys) that name a match across inputs: the id of the results folder's stored
matches and the match's id there, as ``arena export --games`` writes them."""
PLACE_KEYS = ("id", "seed")
"""The columns (keys) that still name a match when ``results_id`` is missing (``MatchPlace``)."""
JSONL_SUFFIXES = (".jsonl", ".ndjson")
_SCORES = {"1": 1.0, "1.0": 1.0, "0.5": 0.5, ".5": 0.5, "0": 0.0, "0.0": 0.0}
_EXPECTED_HEADER = ",".join(CSV_HEADER)
# Every table the rules allow (arena.core.rules.Seating): what one match can hold.
GAME_TABLES = (Seating.alone(2), Seating.alone(3), Seating.alone(4), Seating.pairs(4), Seating.pairs(6, 2),
               Seating.pairs(6, 3))
MAX_SIDES = max(len(table.teams) for table in GAME_TABLES)
MAX_SIDE_BOTS = max(len(team) for table in GAME_TABLES for team in table.teams)
MAX_MATCH_BOTS = max(table.players for table in GAME_TABLES)
# A line of a results file: 6 names and their scores fit in far less, even with long names.
MAX_LINE_BYTES = 64 * 1024
_TABLES_TEXT = "2, 3 or 4 sides of one bot, 2 pairs, 3 pairs or 2 teams of 3"


class ResultsFileError(ArenaError, ValueError):
    """A results file cannot be read or does not follow its format; ``line`` is 1-based
    (``None`` when the problem is the file itself)."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}" if line is not None else f"{source}: {message}")
        self.source = source
        self.line = line
        self.message = message


ResultsCsvError = ResultsFileError
"""The name ``arena rate`` has used for CSV errors."""


MatchKey = tuple[str, str]
"""A match's identity wherever it goes: (``results_id``, match ``id``)."""


MatchPlace = tuple[str, str]
"""A match's ``id`` and deal ``seed`` as its results folder stored it, without the folder's
``results_id``: what an export of an earlier arena (or one whose ``results_id`` was dropped)
still names a match by."""


KeyedResult = tuple[int, MatchKey | None, PairResult | MatchResult, MatchPlace | None]
"""One result of a file, with its line, its identity (None: the line carries none) and, for a
line without identity that gives them, its ``MatchPlace``; a plain tuple, as a file of a
million results makes a million of them."""


def _place(match_id: object, seed: object) -> MatchPlace | None:
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = str(seed)
    if isinstance(match_id, str) and isinstance(seed, str) and match_id.strip() and seed.strip():
        return match_id.strip(), seed.strip()
    return None


def _key(results_id: object, match_id: object) -> MatchKey | None:
    if isinstance(results_id, str) and isinstance(match_id, str) and results_id and match_id:
        return results_id, match_id
    return None


def _checked(result: PairResult | MatchResult, source: str, line: int) -> None:
    try:
        check_result(0, result)
    except ResultInputError as exc:
        raise ResultsFileError(source, line, exc.reason) from None


# --------------------------------------------------------------------------- CSV


class _CsvResults:
    """The results of CSV lines, parsed lazily; ``line`` is the last line read."""

    def __init__(self, lines: Iterable[str], source: str) -> None:
        self._reader = csv.reader(lines)
        self._source = source

    @property
    def line(self) -> int:
        return self._reader.line_num

    def __iter__(self) -> Iterator[PairResult]:
        for _line, _key, result, _place in self.placed():
            yield cast(PairResult, result)  # a CSV's results are all two-sided

    def placed(self) -> Iterator[KeyedResult]:
        """The results with their lines and identities (``IDENTITY_KEYS`` columns, when the
        header names both), and for a line without identity its ``MatchPlace`` (``id`` and
        ``seed`` columns, when the header names both)."""
        source = self._source
        reader = self._reader
        rows = _guarded_rows(reader, source)
        for row in rows:
            if any(cell.strip() for cell in row):
                got = tuple(cell.strip() for cell in row)
                if got[:3] != CSV_HEADER or not all(got[3:]):
                    message = f"expected the header '{_EXPECTED_HEADER}', got {quote(','.join(got))}"
                    raise ResultsFileError(source, self.line, message)
                break
        else:
            raise ResultsFileError(source, 1, f"empty file; expected the header '{_EXPECTED_HEADER}' and result rows")
        count = 0
        scores = _SCORES
        width = len(got)
        named = got[3:]
        columns = [3 + named.index(key) for key in IDENTITY_KEYS if key in named]
        keyed = len(columns) == len(IDENTITY_KEYS)
        at = [3 + named.index(key) for key in PLACE_KEYS if key in named]
        placed = len(at) == len(PLACE_KEYS)
        for row in rows:
            key = _key(row[columns[0]].strip(), row[columns[1]].strip()) if keyed and len(row) == width else None
            place = _place(row[at[0]], row[at[1]]) if key is None and placed and len(row) == width else None
            if len(row) == width:
                # The common row, "one bot each side" with a plain score, checked in line.
                a, b, text = row[0], row[1], row[2]
                score = scores.get(text)
                if score is not None and "+" not in a and "+" not in b:
                    x, y = a.strip(), b.strip()
                    if x and y and x != y:
                        count += 1
                        yield reader.line_num, key, PairResult((x,), (y,), score), place
                        continue
            if not any(cell.strip() for cell in row):
                continue
            result = _csv_row(row, source, self.line, width)
            _checked(result, source, self.line)
            count += 1
            yield reader.line_num, key, result, place
        if not count:
            raise ResultsFileError(
                source, self.line + 1, f"no results after the header; expected rows of {_EXPECTED_HEADER}"
            )


def _guarded_rows(reader: Any, source: str) -> Iterator[list[str]]:
    """The reader's rows; a row the csv module refuses (a field longer than its limit of
    131,072 characters, say) is a ``ResultsFileError`` at the line it starts on."""
    while True:
        start = reader.line_num + 1  # a quoted field may span lines
        try:
            row: list[str] = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            why = str(exc)
            if "field larger than field limit" in why:
                why = f"a field longer than {csv.field_size_limit()} characters; expected a bot name"
            raise ResultsFileError(source, start, f"not a results row: {why}") from None
        yield row


def iter_results_csv(lines: Iterable[str], source: str = "<csv>") -> Iterator[PairResult]:
    """Parse ``side_a,side_b,score_a`` rows lazily.

    Team members are joined by ``+``; ``score_a`` is 1, 0.5 or 0. Blank lines are ignored, and
    so are further columns named in the header after ``score_a``.
    Raises :class:`ResultsFileError` at the first bad line.
    """
    return iter(_CsvResults(lines, source))


def _csv_row(row: list[str], source: str, line: int, width: int = 3) -> PairResult:
    if len(row) != width:
        columns = _EXPECTED_HEADER if width == 3 else f"{_EXPECTED_HEADER} and {width - 3} more, as the header"
        raise ResultsFileError(source, line, f"expected {width} columns ({columns}), got {len(row)}: {quote(','.join(row))}")
    sides = []
    for label, cell in zip(CSV_HEADER[:2], row[:2], strict=False):
        members = tuple(part.strip() for part in cell.split("+"))
        if not any(members):
            raise ResultsFileError(source, line, f"{label} is empty; expected a bot name or names joined by '+'")
        if not all(members):
            raise ResultsFileError(source, line, f"{label} {quote(cell.strip())} has an empty name; expected names joined by '+'")
        if len(members) > MAX_SIDE_BOTS:
            raise ResultsFileError(source, line, f"{label} has {len(members)} bots; a side of Escoba has at most "
                                   f"{MAX_SIDE_BOTS} ({_TABLES_TEXT})")
        sides.append(members)
    score = _SCORES.get(row[2].strip())
    if score is None:
        raise ResultsFileError(source, line, f"score_a must be 1, 0.5 or 0, got {quote(row[2].strip())}")
    return PairResult(sides[0], sides[1], score)


def parse_results_csv(text: str, source: str = "<csv>") -> tuple[tuple[PairResult, ...], tuple[int, ...]]:
    """Parse a whole CSV text; returns the results and each one's line number."""
    parsed = _CsvResults(io.StringIO(text.removeprefix("\ufeff")), source)
    results: list[PairResult] = []
    lines: list[int] = []
    for result in parsed:
        results.append(result)
        lines.append(parsed.line)
    return tuple(results), tuple(lines)


# --------------------------------------------------------------------------- JSON lines


def iter_results_jsonl(lines: Iterable[str], source: str = "<jsonl>") -> Iterator[MatchResult]:
    """Parse one match per line: ``{"sides": [[...], ...], "scores": [...]}`` (higher score
    is better, equal scores tie) or ``"places"`` instead of ``"scores"`` (1 is first). A side
    is a list of bot names (a single name may be given as a string). Other keys are ignored;
    blank lines too. Raises :class:`ResultsFileError` at the first bad line."""
    for _line, _key, result, _place in _placed_jsonl(lines, source):
        yield cast(MatchResult, result)  # a JSON line's result always is one


def _placed_jsonl(lines: Iterable[str], source: str) -> Iterator[KeyedResult]:
    """``iter_results_jsonl`` with each line's number and identity (``IDENTITY_KEYS``), and
    the ``MatchPlace`` of a line without identity (``PLACE_KEYS``)."""
    count = 0
    last = 0
    for number, text in enumerate(lines, start=1):
        last = number
        if not text.strip():
            continue
        result, key, place = _jsonl_line(text, source, number)
        _checked(result, source, number)
        count += 1
        yield number, key, result, place
    if not count:
        example = '{"sides": [["a"], ["b"]], "scores": [21, 15]}'
        raise ResultsFileError(source, max(last, 1), f"no results; expected one JSON object per line, e.g. {example}")


def _jsonl_line(text: str, source: str, line: int) -> tuple[MatchResult, MatchKey | None, MatchPlace | None]:
    try:
        obj: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(source, line, f"not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise ResultsFileError(source, line, 'expected a JSON object with "sides" and "scores" (or "places")')
    sides = obj.get("sides")
    if not isinstance(sides, list) or len(sides) < 2:
        raise ResultsFileError(source, line, '"sides" must be a list of at least two sides, e.g. [["a"], ["b"]]')
    if len(sides) > MAX_SIDES:
        raise ResultsFileError(source, line, f'{len(sides)} sides; a game of Escoba has 2 to {MAX_SIDES} ({_TABLES_TEXT})')
    norm: list[tuple[str, ...]] = []
    for k, side in enumerate(sides, start=1):
        if isinstance(side, str):
            side = [side]
        if not isinstance(side, list) or not side or not all(isinstance(name, str) for name in side):
            raise ResultsFileError(source, line, f"side {k} must be a non-empty list of bot names, got "
                                   f"{quote(json.dumps(side))}")
        if len(side) > MAX_SIDE_BOTS:
            raise ResultsFileError(source, line, f"side {k} has {len(side)} bots; a side of Escoba has at most "
                                   f"{MAX_SIDE_BOTS} ({_TABLES_TEXT})")
        norm.append(tuple(name.strip() for name in side))
    entrants = sum(map(len, norm))
    if entrants > MAX_MATCH_BOTS:
        raise ResultsFileError(source, line, f"{entrants} bots in one match; a game of Escoba has at most "
                               f"{MAX_MATCH_BOTS} ({_TABLES_TEXT})")
    has_scores, has_places = "scores" in obj, "places" in obj
    if has_scores == has_places:
        raise ResultsFileError(source, line, 'expected exactly one of "scores" (higher is better) or "places" (1 is first)')
    key = "scores" if has_scores else "places"
    values = obj[key]
    if not isinstance(values, list) or len(values) != len(norm):
        raise ResultsFileError(source, line, f'"{key}" must be a list of {len(norm)} numbers, one per side')
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ResultsFileError(source, line, f'"{key}" must hold numbers, got {quote(json.dumps(value))}')
    identity = _key(*(obj.get(name) for name in IDENTITY_KEYS))
    place = _place(*(obj.get(name) for name in PLACE_KEYS)) if identity is None else None
    if has_scores:
        return MatchResult.from_scores(norm, values), identity, place
    problem = places_problem(values)
    if problem is not None:
        raise ResultsFileError(source, line, f'"places" {problem}')
    return MatchResult(tuple(norm), tuple(values)), identity, place


# --------------------------------------------------------------------------- files


def is_jsonl(path: str | Path) -> bool:
    return Path(path).suffix.lower() in JSONL_SUFFIXES


def read_results(path: str | Path) -> Iterator[PairResult | MatchResult]:
    """Stream the results of a file: JSON lines for ``.jsonl``/``.ndjson``, else the CSV.

    The file is opened on the first ``next()``; every problem (unreadable file, not UTF-8,
    a bad line) raises :class:`ResultsFileError`.
    """
    for _line, _key, result, _place in read_keyed_results(path):
        yield result


def read_keyed_results(path: str | Path) -> Iterator[KeyedResult]:
    """``read_results`` with each result's line, identity and place (``KeyedResult``)."""
    source = str(path)
    jsonl = is_jsonl(path)
    kind = "JSON lines (one match per line)" if jsonl else f"a CSV with header {_EXPECTED_HEADER}"
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below, also when abandoned)
    except OSError as exc:
        raise ResultsFileError(source, None, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        lines = _decoded(capped_lines(handle, MAX_LINE_BYTES, source), source, kind)
        try:
            yield from _placed_jsonl(lines, source) if jsonl else _CsvResults(lines, source).placed()
        except OSError as exc:
            raise ResultsFileError(source, None, f"cannot read: {exc.strerror or exc}") from None
        except LineTooLongError as exc:
            raise ResultsFileError(source, exc.line, f"a line longer than {MAX_LINE_BYTES:,} bytes; expected {kind}, "
                                   "a match a line") from None


def _decoded(handle: Iterable[bytes], source: str, kind: str) -> Iterator[str]:
    """UTF-8 lines of a binary file (a byte-order mark dropped), decoded one by one so that
    a bad byte is reported on its own line."""
    for number, raw in enumerate(handle, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ResultsFileError(source, number, f"not UTF-8 text; expected {kind}") from None
        yield text.removeprefix("\ufeff") if number == 1 else text


# --------------------------------------------------------------------------- one match, counted once


class MatchLedger:
    """Which input first held each match of a known identity (``MatchKey``), so that a match
    met again (in a copy of a results folder, in its export, twice in one file) is counted
    once. Inputs are numbered by whoever reads them; only matches with an identity are
    entered, a set of ids per results folder."""

    def __init__(self) -> None:
        self._holders: dict[str, dict[str, int]] = {}

    def claim(self, key: MatchKey, holder: int) -> int | None:
        """Enter ``key`` as held by input ``holder``, unless an input already holds it: then
        that input's number (``holder`` itself for a line repeated in one file), and the
        match is a duplicate."""
        ids = self._holders.setdefault(key[0], {})
        first = ids.get(key[1])
        if first is None:
            ids[key[1]] = holder
        return first

    def holds(self, results_id: str) -> bool:
        """Whether any match of that results folder was entered."""
        return results_id in self._holders


class Deduplicated:
    """One file's results, each match of a known identity once (at its first line), as
    ``arena rate`` fits a file on its own: ``read`` counts the results, ``dropped`` those left
    out, once they have been iterated."""

    def __init__(self, results: Iterable[KeyedResult]) -> None:
        self._results = results
        self.read = 0
        self.dropped = 0

    def __iter__(self) -> Iterator[PairResult | MatchResult]:
        ledger = MatchLedger()
        for _line, key, result, _place in self._results:
            self.read += 1
            if key is not None and ledger.claim(key, 0) is not None:
                self.dropped += 1
                continue
            yield result


def few(names: Sequence[str], limit: int = 3) -> str:
    """The first ``limit`` of ``names`` for a note, and how many more there are."""
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def duplicates_note(label: str, dropped: int, total: int, where: Sequence[str]) -> str:
    """The note on an input's matches that another input (``where``: their labels, or "its
    earlier lines") holds too, and that are counted from there."""
    shown = few(where)
    if dropped == total:
        some = "its one match is" if total == 1 else f"its {total} matches are all"
    else:
        some = f"{dropped} of its {total} matches {'is' if dropped == 1 else 'are'}"
    left = "; left out" if dropped == total else ""
    return f"{label}: {some} in {shown} too (the same results_id and id): counted once, from there{left}"
