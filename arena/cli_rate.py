"""``arena rate``: fit Elo ratings to a file of match results and print the ranked table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from arena.errors import InputError
from arena.printable import printable
from arena.ratings import DEFAULT_PRIOR, ConvergenceError, RatingError, RatingTable, fit_ratings
from arena.ratings import check_prior as ratings_prior
from arena.results_input import CSV_HEADER as CSV_HEADER
from arena.results_input import ResultsCsvError as ResultsCsvError
from arena.results_input import parse_results_csv as parse_results_csv
from arena.results_input import read_results
from arena.tables_format import TableFormat, render_json, render_table
from arena.tournament.standings import (
    RATING_HEADERS,
    RATING_KEYS,
    ci95_cell,
    elo_cell,
    los_cell,
    place_keys,
    plain_number,
    record_header,
)


def format_ratings(table: RatingTable, fmt: TableFormat) -> str:
    """The rating table as text in ``fmt`` (pure; the caller prints it).

    The headers (text tables) and keys (CSV, JSON) of the ratings columns are those of
    ``arena table`` (``arena/tournament/standings.py``): ``rank``, ``bot``/``name``, ``elo``,
    ``ci95``, ``los_next``, ``matches``. CSV and JSON hold plain numbers (``elo`` and ``ci95``
    in Elo points, ``los_next`` a probability) and an empty cell or ``null`` where there is no
    number; never ``-0``."""
    width = max((len(r.places) for r in table.ratings), default=0)
    if fmt is TableFormat.JSON:
        return render_json(
            [
                {
                    "rank": r.rank,
                    "name": r.name,
                    "elo": plain_number(r.elo, 2),
                    "ci95": plain_number(r.ci95, 2),
                    "los_next": plain_number(r.los_next, 4),
                    "group": r.group,
                    "matches": r.matches,
                    "wins": r.wins,
                    "draws": r.draws,
                    "losses": r.losses,
                    **({"places": list(r.places)} if width else {}),
                    "status": r.status.value,
                    "note": r.note,
                }
                for r in table.ratings
            ]
        )
    if fmt is TableFormat.CSV:
        headers = [*RATING_KEYS[:5], "group", "matches", "wins", "draws", "losses", *place_keys(width), "status", "note"]
        csv_rows: list[list[object]] = [
            [
                r.rank,
                r.name,
                plain_number(r.elo, 2),
                plain_number(r.ci95, 2),
                plain_number(r.los_next, 4),
                r.group,
                r.matches,
                r.wins,
                r.draws,
                r.losses,
                *r.places,
                r.status.value,
                r.note,
            ]
            for r in table.ratings
        ]
        return render_table(headers, csv_rows, fmt)
    several_groups = len(table.groups) > 1
    two_sided = any(r.wins + r.draws + r.losses for r in table.ratings)
    headers = [*RATING_HEADERS, record_header(two_sided, width if any(any(r.places) for r in table.ratings) else 0)]
    align = ["right", "left", "right", "right", "right", "right", "right"]
    if several_groups:
        headers.append("group")
        align.append("right")
    headers.append("notes")
    align.append("left")
    rows: list[list[object]] = []
    for r in table.ratings:
        cells: list[object] = [
            r.rank,
            r.name,
            elo_cell(r.elo, r.status.value),
            ci95_cell(r.ci95, r.status.value),
            los_cell(r.los_next),
            r.matches,
            r.record,
        ]
        if several_groups:
            cells.append(r.group)
        cells.append(r.note)
        rows.append(cells)
    text = render_table(headers, rows, fmt, colalign=align)
    if table.notes:
        text += "\n\n" + "\n".join(f"Note: {printable(note)}" for note in table.notes)
    return text


def _parse_anchor(value: str) -> tuple[str, float]:
    name, sep, elo_text = value.rpartition("=")
    if not sep:
        return value.strip(), 0.0
    try:
        elo = float(elo_text)
    except ValueError:
        raise typer.BadParameter(f"expected NAME or NAME=ELO, got {value!r}") from None
    if not math.isfinite(elo) or not name.strip():
        raise typer.BadParameter(f"expected NAME or NAME=ELO with a finite ELO, got {value!r}")
    return name.strip(), elo


# Options shared with `arena table`, which shows the same ratings.
FormatOption = Annotated[
    TableFormat, typer.Option("--format", help="Output format: plain, github (markdown), csv or json.")
]
PriorOption = Annotated[
    float | None,
    typer.Option(
        help=f"Weak prior worth STRENGTH virtual draws per bot against the field's average (default "
        f"{DEFAULT_PRIOR:g}): every rating finite, a perfect record gets a wide interval. 0: the pure "
        "maximum-likelihood fit, which explains unbounded ratings instead (docs/RATINGS.md).",
        metavar="STRENGTH",
    ),
]


def check_prior(prior: float | None) -> float:
    """The prior to fit with (``None``: the default); a negative or non-finite one is refused."""
    try:
        return ratings_prior(prior)
    except RatingError:
        raise InputError(f"--prior: expected a number of virtual draws >= 0, got {prior:g}") from None


def rate(
    file: Annotated[
        Path,
        typer.Argument(
            help="Results: a CSV with header side_a,side_b,score_a (teams: a+b), or JSON lines (.jsonl), "
            'one match per line: {"sides": [["a"], ["b"], ["c"]], "scores": [21, 15, 9]}.'
        ),
    ],
    fmt: FormatOption = TableFormat.PLAIN,
    anchor: Annotated[
        str | None,
        typer.Option(help="Pin bot NAME at ELO (NAME alone pins it at 0); otherwise each group has mean 0."),
    ] = None,
    prior: PriorOption = None,
) -> None:
    """Fit Bradley-Terry ratings (Elo scale) to all results jointly and print the ranked table."""
    source = str(file)
    anchor_name, anchor_elo = (None, 0.0)
    if anchor is not None:
        try:
            anchor_name, anchor_elo = _parse_anchor(anchor)
        except typer.BadParameter as exc:
            raise InputError(f"--anchor: {exc}") from None
    prior = check_prior(prior)
    try:
        # Streamed: the file is read (and each line checked) as the fit consumes it.
        table = fit_ratings(read_results(file), anchor=anchor_name, anchor_elo=anchor_elo, prior=prior)
    except (ResultsCsvError, ConvergenceError):
        raise  # the file's fault (exit 2) or the arena's (exit 3): the edge says so
    except RatingError as exc:
        raise InputError(f"{source}: {exc}") from None
    out = format_ratings(table, fmt)
    if fmt in (TableFormat.CSV, TableFormat.JSON):
        typer.echo(out)
        # Keep the machine-readable output clean; the caveats go to stderr.
        for note in table.notes:
            typer.echo(f"note: {printable(note)}", err=True)
    else:
        typer.echo(out)
