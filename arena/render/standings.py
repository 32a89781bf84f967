"""Standings, crosstable and rating tables as text, CSV and JSON: the presentation of
``arena.tournament.standings`` (and of a league's rating list), shared by ``arena table``,
``arena rate``, the end of ``arena run`` and the pages.

Pure: returns strings, never prints.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from arena.printable import printable
from arena.rating.table import BotRating
from arena.render.tables import TableFormat, render_json, render_table
from arena.tournament.standings import FAILURE_REASONS, BotStanding, Standings, plain_number

WHATS = ("standings", "crosstable")


# --- the ratings columns, shared with ``arena rate`` ---------------------------------------------
#
# One set of headers for the text tables and one set of keys for CSV and JSON, in both commands.

RATING_HEADERS = ("rank", "bot", "elo", "ci95", "los_next", "matches")
RATING_KEYS = ("rank", "name", "elo", "ci95", "los_next", "matches")
_ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th")


def signed(value: float, digits: int = 0) -> str:
    """``+72``, ``-35``; ``0`` when it rounds to zero (never ``-0`` or ``+0``)."""
    text = f"{value:+.{digits}f}"
    return f"{0:.{digits}f}" if float(text) == 0 else text


def elo_cell(elo: float | None, status: str) -> str:
    """The rating as a text table shows it; ``+inf``/``-inf``/``unbounded`` only without a prior."""
    if status == "unbounded_above":
        return "+inf"
    if status == "unbounded_below":
        return "-inf"
    if status == "separated":
        return "unbounded"
    return "-" if elo is None else signed(elo)


def ci95_cell(ci95: float | None, status: str) -> str:
    """``±142``; ``?`` for a rated bot without an interval (team-mates never apart), else ``-``."""
    if status not in ("rated", "not_identified"):
        return "-"
    return "?" if ci95 is None else f"±{ci95:.0f}"


def los_cell(los: float | None) -> str:
    if los is None:
        return "-"
    if los > 0.999:
        return ">99.9%"
    if los < 0.001:
        return "<0.1%"
    return f"{100 * los:.1f}%"


def places_header(width: int) -> str:
    return "-".join(_ORDINALS[:width])


def record_header(two_sided: bool, places: int) -> str:
    """The header of the record column: ``w-d-l``, the finishing places (``1st-2nd-3rd``) of
    matches with more sides, or both (``w-d-l, places 1st-2nd-3rd``) when the data mix them."""
    if not places:
        return "w-d-l"
    if not two_sided:
        return places_header(places)
    return f"w-d-l, places {places_header(places)}"


def place_keys(width: int) -> list[str]:
    """The CSV columns of a list of finishing-place counts: ``place_1``, ``place_2``, ..."""
    return [f"place_{k}" for k in range(1, width + 1)]


# --- text forms -----------------------------------------------------------------------

# Every column of the text standings: (header, whether the default table shows it, the cell).
# The default fits 100 columns with bot names of a dozen characters; ``wide`` adds the rest
# (CSV and JSON always hold every number).
_COLUMNS: tuple[tuple[str, bool, Callable[[BotStanding], object]], ...] = (
    ("rank", True, lambda s: s.rank),
    ("bot", True, lambda s: s.name),
    ("elo", True, lambda s: elo_cell(s.elo, s.status)),
    ("ci95", True, lambda s: ci95_cell(s.ci95, s.status)),
    ("los_next", True, lambda s: los_cell(s.los_next)),
    ("matches", True, lambda s: s.matches),
    ("w-d-l", True, lambda s: s.record),
    ("forfeits", False, lambda s: s.forfeits),
    ("opp_forfeits", False, lambda s: s.opponent_forfeits),
    ("pts_for", False, lambda s: s.points_for),
    ("pts_against", False, lambda s: s.points_against),
    ("hands", False, lambda s: s.hands),
    ("pts/hand", True, lambda s: _fmt(s.points_per_hand, "{:.2f}")),
    ("escobas/hand", True, lambda s: _fmt(s.escobas_per_hand, "{:.3f}")),
    ("cpu/wall", True, lambda s: _fmt(s.cpu_per_wall, "{:.2f}")),
    ("failures", True, lambda s: ", ".join(f"{reason} {n}" for reason, n in s.failures) or "-"),
)
# The default table's shorter headers; its failures name the commonest reason only (the run's
# failure summary, ``--wide`` and the report name them all).
_SHORT = {"escobas/hand": "esc/hand"}

STANDINGS_HEADERS = tuple(header for header, _, _ in _COLUMNS)


def standings_headers(standings: Standings, *, wide: bool = True) -> tuple[str, ...]:
    """The standings table's headers: ``w-d-l`` becomes ``1st-2nd-3rd`` (the counts of each
    finishing place) when matches have three or more sides; without ``wide``, the default
    table's columns."""
    headers = []
    for header, default, _ in _COLUMNS:
        if not (wide or default):
            continue
        if header == "w-d-l" and standings.sides > 2:
            # The default says "places": its cells are the counts of 1st, 2nd... in that order.
            header = places_header(standings.sides) if wide else "places"
        headers.append(header if wide else _SHORT.get(header, header))
    return tuple(headers)


def standings_rows(standings: Standings, *, wide: bool = True) -> list[list[Any]]:
    columns = [(header, cell) for header, default, cell in _COLUMNS if wide or default]
    rows = []
    for s in standings.bots:
        row = [cell(s) for _, cell in columns]
        if not wide and len(s.failures) > 1:
            reason, n = max(s.failures, key=lambda failure: failure[1])
            row[-1] = f"{reason} {n} +{len(s.failures) - 1}"
        rows.append(row)
    return rows


def standings_keys(standings: Standings) -> list[str]:
    """The CSV columns of the standings: the JSON keys, with ``places`` spread over
    ``place_1``.. and ``failures`` over ``failures_<reason>`` for every failure reason."""
    record = place_keys(standings.sides) if standings.sides > 2 else ["wins", "draws", "losses"]
    return [
        *RATING_KEYS[:5],
        "group",
        "matches",
        *record,
        "forfeits",
        "opponent_forfeits",
        "points_for",
        "points_against",
        "hands",
        "points_per_hand",
        "escobas",
        "escobas_per_hand",
        *(f"failures_{reason}" for reason in FAILURE_REASONS),
        "cpu_s",
        "cpu_per_wall",
        "status",
        "note",
        "version",
        "identity",
    ]


def _csv_record(standing: BotStanding) -> dict[str, Any]:
    data = standing.to_dict()
    places = data.pop("places", None)
    if places is not None:
        data.update(zip(place_keys(len(places)), places, strict=True))
    failures = data.pop("failures")
    data.update({f"failures_{reason}": failures.get(reason, 0) for reason in FAILURE_REASONS})
    return data


def crosstable_rows(standings: Standings) -> tuple[list[str], list[list[str]]]:
    names = standings.crosstable.names
    headers = ["", *names, "score"]
    rows = []
    for a in names:
        cells = []
        total_points, total_games = 0.0, 0
        for b in names:
            cell = standings.crosstable.cell(a, b)
            if a == b or cell is None:
                cells.append("-" if a == b else "")
            else:
                points, games = cell
                total_points += points
                total_games += games
                cells.append(f"{_half(points)}/{games}")
        rows.append([a, *cells, f"{_half(total_points)}/{total_games}"])
    return headers, rows


CROSSTABLE_KEYS = ("name", "opponent", "points", "games")


def crosstable_records(standings: Standings) -> list[dict[str, Any]]:
    """The crosstable as one object per cell (``name`` against ``opponent``), in the table's
    order; a pair that never met has no object."""
    table = standings.crosstable
    out = []
    for a in table.names:
        for b in table.names:
            cell = table.cell(a, b)
            if a != b and cell is not None:
                out.append({"name": a, "opponent": b, "points": plain_number(cell[0], 1), "games": cell[1]})
    return out


def crosstable_note(standings: Standings) -> str:
    """What a crosstable cell is."""
    if standings.crosstable.by_bot:
        return (
            "partners rotate, so rows and columns are bots: a cell is the row bot's score in its matches "
            "against a side that included the column bot (a win 1, a draw 1/2), as points/games; "
            "score adds the row's cells, so a match counts once per opposing bot"
        )
    if standings.sides > 2:
        return (
            "a cell counts each match once for every two sides in it: 1 when the row finished ahead of the "
            "column, 1/2 when level, 0 behind, as points/games; score adds the row's cells"
        )
    return "a cell is the row's score against the column (a win 1, a draw 1/2), as points/games; score adds the row's cells"


def standings_notes(standings: Standings) -> list[str]:
    """The notes under the standings: the fit's, then each bot's."""
    return [*standings.notes, *(f"{s.name}: {s.note}" for s in standings.bots if s.note)]


def format_standings(standings: Standings, fmt: str, *, wide: bool = False) -> str:
    """The standings in ``fmt``: a text table with its notes (plain, github), of the default
    columns or, ``wide``, of every column; CSV with one header row and plain numbers
    (``standings_keys``); JSON, a list of objects (``to_dict``). The notes are left out of CSV
    and JSON (``standings_notes`` gives them)."""
    form = TableFormat(fmt)
    if form is TableFormat.JSON:
        return render_json([s.to_dict() for s in standings.bots])
    if form is TableFormat.CSV:
        keys = standings_keys(standings)
        return render_table(keys, [[_csv_record(s)[k] for k in keys] for s in standings.bots], form)
    headers = list(standings_headers(standings, wide=wide))
    # As ``arena rate`` shows the same columns: numbers right, names and texts left.
    align = ["left" if h in ("bot", "failures") else "right" for h in headers]
    return _format_table(headers, standings_rows(standings, wide=wide), form, standings_notes(standings), align)


def format_crosstable(standings: Standings, fmt: str) -> str:
    """The crosstable in ``fmt``: a matrix of ``points/games`` with a note saying what a cell is
    (plain, github); one row or object per cell with ``CROSSTABLE_KEYS`` (CSV, JSON)."""
    form = TableFormat(fmt)
    if form is TableFormat.JSON:
        return render_json(crosstable_records(standings))
    if form is TableFormat.CSV:
        records = crosstable_records(standings)
        return render_table(CROSSTABLE_KEYS, [[r[k] for k in CROSSTABLE_KEYS] for r in records], form)
    headers, rows = crosstable_rows(standings)
    return _format_table(headers, rows, form, [crosstable_note(standings)])


def _format_table(
    headers: list[str], rows: list[list[Any]], fmt: TableFormat, notes: Sequence[str] = (), align: Sequence[str] | None = None
) -> str:
    text = render_table(headers, rows, fmt, colalign=align)
    if notes:
        text += "\n\n" + "\n".join(note_lines(notes, fmt))
    return text


NOTE_WIDTH = 100


def note_lines(notes: Sequence[str], fmt: TableFormat = TableFormat.PLAIN) -> list[str]:
    """``Note: ...`` lines under a table; in plain text each note wrapped to ``NOTE_WIDTH``
    columns, like the table above it (markdown reflows lines itself)."""
    lines = []
    for note in notes:
        text = f"Note: {printable(note)}"
        if fmt is TableFormat.PLAIN:
            lines += textwrap.wrap(text, NOTE_WIDTH, subsequent_indent="  ", break_on_hyphens=False,
                                   break_long_words=False)
        else:
            lines.append(text)
    return lines


def _fmt(value: float | None, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def _half(points: float) -> str:
    return f"{points:g}"


# --- a league's rating list (``arena rate``, the league page) ------------------------------------

def rating_rows(
    ratings: Sequence[BotRating], *, several_groups: bool, extra: Sequence[tuple[str, Sequence[object]]] = ()
) -> tuple[list[str], list[str], list[list[object]]]:
    """Headers, alignment and cells of a rating table as text (``arena rate``, the league
    page); ``extra`` columns (a header and a cell per rating) go after the record."""
    width = max((len(r.places) for r in ratings), default=0)
    two_sided = any(r.wins + r.draws + r.losses for r in ratings)
    headers = [*RATING_HEADERS, record_header(two_sided, width if any(any(r.places) for r in ratings) else 0)]
    headers += [header for header, _ in extra]
    align = ["right", "left", "right", "right", "right", "right", "right", *(["right"] * len(extra))]
    if several_groups:
        headers.append("group")
        align.append("right")
    headers.append("notes")
    align.append("left")
    rows: list[list[object]] = []
    for i, r in enumerate(ratings):
        cells: list[object] = [
            r.rank,
            r.name,
            elo_cell(r.elo, r.status.value),
            ci95_cell(r.ci95, r.status.value),
            los_cell(r.los_next),
            r.matches,
            r.record,
            *(column[i] for _, column in extra),
        ]
        if several_groups:
            cells.append(r.group)
        cells.append(r.note)
        rows.append(cells)
    return headers, align, rows



def date_text(when: datetime | None, *, time: bool = False) -> str:
    """``2026-11-30`` (or ``2026-11-30 14:05 UTC``); ``-`` when unknown."""
    if when is None:
        return "-"
    when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC") if time else when.strftime("%Y-%m-%d")


def iso(when: datetime | None) -> str | None:
    """The machine-readable form: ISO 8601 in UTC, to the second."""
    return None if when is None else when.astimezone(UTC).isoformat(timespec="seconds")
