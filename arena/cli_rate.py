"""``arena rate``: fit Elo ratings to a CSV of match results and print the ranked table."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.errors import ArenaError, InputError
from arena.printable import printable
from arena.ratings import (
    ConvergenceError,
    PairResult,
    RatingError,
    RatingTable,
    ResultInputError,
    Status,
    fit_ratings,
)
from arena.tables_format import TableFormat, render_json, render_table

CSV_HEADER = ("side_a", "side_b", "score_a")
_SCORES = {"1": 1.0, "1.0": 1.0, "0.5": 0.5, ".5": 0.5, "0": 0.0, "0.0": 0.0}


class ResultsCsvError(ArenaError, ValueError):
    """A results CSV does not follow the expected format."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source = source
        self.line = line
        self.message = message


def parse_results_csv(text: str, source: str = "<csv>") -> tuple[tuple[PairResult, ...], tuple[int, ...]]:
    """Parse ``side_a,side_b,score_a`` rows; returns the results and each one's line number.

    Team members are joined by ``+``; ``score_a`` is 1, 0.5 or 0. Blank lines are ignored.
    """
    expected_header = ",".join(CSV_HEADER)
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")))
    header_seen = False
    results: list[PairResult] = []
    lines: list[int] = []
    for row in _rows(reader, source):
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if not header_seen:
            got = tuple(cell.strip() for cell in row)
            if got != CSV_HEADER:
                raise ResultsCsvError(source, line, f"expected the header '{expected_header}', got '{','.join(got)}'")
            header_seen = True
            continue
        if len(row) != 3:
            raise ResultsCsvError(
                source, line, f"expected 3 columns ({expected_header}), got {len(row)}: '{','.join(row)}'"
            )
        sides = []
        for label, cell in zip(CSV_HEADER[:2], row[:2], strict=False):
            members = tuple(part.strip() for part in cell.split("+"))
            if not any(members):
                raise ResultsCsvError(source, line, f"{label} is empty; expected a bot name or names joined by '+'")
            if not all(members):
                raise ResultsCsvError(
                    source, line, f"{label} '{cell.strip()}' has an empty name; expected names joined by '+'"
                )
            sides.append(members)
        score = _SCORES.get(row[2].strip())
        if score is None:
            raise ResultsCsvError(source, line, f"score_a must be 1, 0.5 or 0, got '{row[2].strip()}'")
        results.append(PairResult(sides[0], sides[1], score))
        lines.append(line)
    if not header_seen:
        raise ResultsCsvError(source, 1, f"empty file; expected the header '{expected_header}' and result rows")
    if not results:
        raise ResultsCsvError(
            source, reader.line_num + 1, f"no results after the header; expected rows of {expected_header}"
        )
    return tuple(results), tuple(lines)


def _rows(reader: Any, source: str) -> Iterator[list[str]]:
    """The reader's rows; a row the csv module refuses (a field longer than its limit of
    131,072 characters, say) is a ``ResultsCsvError`` at its line, not a traceback."""
    while True:
        start = reader.line_num + 1  # where the row begins: a quoted field may span lines
        try:
            row: list[str] = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            why = str(exc)
            if "field larger than field limit" in why:
                why = f"a field longer than {csv.field_size_limit()} characters; expected a bot name"
            raise ResultsCsvError(source, start, f"not a results row: {why}") from None
        yield row


def _fmt_elo(row_elo: float | None, status: Status) -> str:
    if status is Status.UNBOUNDED_ABOVE:
        return "+inf"
    if status is Status.UNBOUNDED_BELOW:
        return "-inf"
    if status is Status.SEPARATED:
        return "unbounded"
    if row_elo is None:
        return ""
    return f"{row_elo:.0f}"


def _fmt_los(los: float | None) -> str:
    if los is None:
        return ""
    if los > 0.999:
        return ">99.9%"
    if los < 0.001:
        return "<0.1%"
    return f"{100 * los:.1f}%"


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits)


def format_ratings(table: RatingTable, fmt: TableFormat) -> str:
    """The rating table as text in ``fmt`` (pure; the caller prints it)."""
    if fmt is TableFormat.JSON:
        return render_json(
            [
                {
                    "rank": r.rank,
                    "name": r.name,
                    "elo": _round(r.elo, 2),
                    "ci95": _round(r.ci95, 2),
                    "los_next": _round(r.los_next, 4),
                    "matches": r.matches,
                    "wins": r.wins,
                    "draws": r.draws,
                    "losses": r.losses,
                    "group": r.group,
                    "status": r.status.value,
                    "note": r.note,
                }
                for r in table.ratings
            ]
        )
    if fmt is TableFormat.CSV:
        headers = ["rank", "name", "elo", "ci95", "los_next", "matches", "wins", "draws", "losses", "group", "status", "note"]
        csv_rows: list[list[object]] = [
            [
                r.rank,
                r.name,
                _round(r.elo, 1),
                _round(r.ci95, 1),
                _round(r.los_next, 4),
                r.matches,
                r.wins,
                r.draws,
                r.losses,
                r.group,
                r.status.value,
                r.note,
            ]
            for r in table.ratings
        ]
        return render_table(headers, csv_rows, fmt)
    several_groups = len(table.groups) > 1
    headers = ["rank", "name", "elo", "±ci95", "LOS next", "matches", "W-D-L"]
    align = ["right", "left", "right", "right", "right", "right", "right"]
    if several_groups:
        headers.append("group")
        align.append("right")
    headers.append("notes")
    align.append("left")
    rows: list[list[object]] = []
    for r in table.ratings:
        ci = "" if r.status not in (Status.RATED, Status.NOT_IDENTIFIED) else "?" if r.ci95 is None else f"±{r.ci95:.0f}"
        cells: list[object] = [
            r.rank,
            r.name,
            _fmt_elo(r.elo, r.status),
            ci,
            _fmt_los(r.los_next),
            r.matches,
            f"{r.wins}-{r.draws}-{r.losses}",
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
        help="Weak Gaussian prior worth STRENGTH virtual draws per bot (e.g. 2); off by default. "
        "Makes perfect records finite.",
        metavar="STRENGTH",
    ),
]


def check_prior(prior: float | None) -> None:
    """Refuse a prior that is not a positive, finite number of virtual draws."""
    if prior is not None and not (prior > 0 and math.isfinite(prior)):
        raise InputError(f"--prior: expected a positive number of virtual draws, got {prior:g}")


def rate(
    file: Annotated[Path, typer.Argument(help="CSV of results with header side_a,side_b,score_a (teams: a+b).")],
    fmt: FormatOption = TableFormat.PLAIN,
    anchor: Annotated[
        str | None,
        typer.Option(help="Pin bot NAME at ELO (NAME alone pins it at 0); otherwise each group has mean 0."),
    ] = None,
    prior: PriorOption = None,
) -> None:
    """Fit Bradley-Terry ratings (Elo scale) to all results jointly and print the ranked table."""
    source = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{source}: not UTF-8 text; expected a CSV with header side_a,side_b,score_a") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror or exc}") from None
    anchor_name, anchor_elo = (None, 0.0)
    if anchor is not None:
        try:
            anchor_name, anchor_elo = _parse_anchor(anchor)
        except typer.BadParameter as exc:
            raise InputError(f"--anchor: {exc}") from None
    check_prior(prior)
    results, lines = parse_results_csv(text, source)
    try:
        table = fit_ratings(results, anchor=anchor_name, anchor_elo=anchor_elo, prior=prior)
    except ResultInputError as exc:
        raise InputError(f"{source}:{lines[exc.index]}: {exc.reason}") from None
    except ConvergenceError:
        raise  # not the file's fault: the arena's (exit code 3)
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
