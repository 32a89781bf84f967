"""``arena rate``: fit Elo ratings to a file of match results and print the ranked table."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import arena.cli.console as console
from arena.cli.options import ByNameOption, FormatOption, MixOption, PriorOption, check_prior
from arena.errors import InputError
from arena.printable import printable
from arena.rating.inputs import CSV_HEADER as CSV_HEADER
from arena.rating.inputs import Deduplicated, duplicates_note, read_keyed_results
from arena.rating.inputs import ResultsCsvError as ResultsCsvError
from arena.rating.inputs import parse_results_csv as parse_results_csv
from arena.rating.table import BotRating, ConvergenceError, RatingError, RatingTable, fit_ratings
from arena.render.standings import RATING_KEYS, ci95_cell, date_text, elo_cell, iso, note_lines, place_keys, rating_rows
from arena.render.tables import TableFormat, render_json, render_table
from arena.tournament.standings import plain_number

if TYPE_CHECKING:  # the league's code is loaded by the commands that pool results, not by --help
    from arena.league.pools import League, LeagueRow, Pool, PoolHistory, PoolRatings


def format_ratings(table: RatingTable, fmt: TableFormat) -> str:
    """The rating table as text in ``fmt`` (pure; the caller prints it).

    The headers (text tables) and keys (CSV, JSON) of the ratings columns are those of
    ``arena table`` (``arena/tournament/standings.py``): ``rank``, ``bot``/``name``, ``elo``,
    ``ci95``, ``los_next``, ``matches``. CSV and JSON hold plain numbers (``elo`` and ``ci95``
    in Elo points, ``los_next`` a probability) and an empty cell or ``null`` where there is no
    number; never ``-0``."""
    width = max((len(r.places) for r in table.ratings), default=0)
    if fmt is TableFormat.JSON:
        return render_json([_json_row(r, width) for r in table.ratings])
    if fmt is TableFormat.CSV:
        headers = [*_CSV_KEYS[:10], *place_keys(width), *_CSV_KEYS[10:]]
        return render_table(headers, [_csv_row(r, width) for r in table.ratings], fmt)
    headers, align, rows = rating_rows(table.ratings, several_groups=len(table.groups) > 1)
    text = render_table(headers, rows, fmt, colalign=align)
    if table.notes:
        text += "\n\n" + "\n".join(note_lines(table.notes, fmt))
    return text


_CSV_KEYS = (*RATING_KEYS[:5], "group", "matches", "wins", "draws", "losses", "status", "note")


def _rating_numbers(r: BotRating) -> dict[str, object]:
    """The columns every machine-readable rating row starts with, rounded as they are written."""
    return {
        "rank": r.rank,
        "name": r.name,
        "elo": plain_number(r.elo, 2),
        "ci95": plain_number(r.ci95, 2),
        "los_next": plain_number(r.los_next, 4),
    }


def _json_row(r: BotRating, width: int) -> dict[str, object]:
    """One rating as ``--format json`` writes it (``places`` when ``width``)."""
    return {
        **_rating_numbers(r),
        "group": r.group,
        "matches": r.matches,
        "wins": r.wins,
        "draws": r.draws,
        "losses": r.losses,
        **({"places": list(r.places) + [0] * (width - len(r.places))} if width else {}),
        "status": r.status.value,
        "note": r.note,
    }


def _csv_row(r: BotRating, width: int) -> list[object]:
    """One rating as a CSV row of ``_CSV_KEYS``, with ``width`` place columns after ``losses``."""
    places = list(r.places) + [0] * (width - len(r.places)) if width else []
    return [
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
        *places,
        r.status.value,
        r.note,
    ]


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


# --------------------------------------------------------------------------- leagues


def _league_json_row(row: LeagueRow, pool: int, width: int) -> dict[str, object]:
    data = _json_row(row.rating, width)
    status, note = data.pop("status"), data.pop("note")
    data.update(
        tournaments=row.tournaments,
        last_played=iso(row.last_played),
        bot=row.entry.name,
        version=row.entry.version,
        identity=row.entry.key,
        pool=pool,
        status=status,
        note=note,
    )
    return data


LEAGUE_KEYS = ("tournaments", "last_played", "bot", "version", "identity", "pool")
"""The columns a league's rating list adds (CSV, JSON) after the record, before status and note."""


def _shown_names(names: Sequence[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def pools_line(league: League) -> str:
    """What the command found, when it is more than one kind of game."""
    parts = [f"pool {p.number}: {p.describe()} ({_shown_names(tournament_labels(p), 4)})" for p in league.pools]
    return f"{len(league.pools)} kinds of game, each rated on its own (--mix pools them): " + "; ".join(parts)


def tournament_labels(pool: Pool) -> list[str]:
    return list(dict.fromkeys(t.label for t in pool.tournaments))


def _pool_heading(pool: Pool, count: int) -> str:
    matches = pool.matches
    what = (
        f"{pool.describe()} · {len(tournament_labels(pool))} tournament{'s' if len(pool.tournaments) != 1 else ''}, "
        f"{matches} match{'es' if matches != 1 else ''}"
    )
    return f"Pool {pool.number} of {count}: {what}" if count > 1 else what


def _tournament_table(league: League, pool: Pool, fmt: TableFormat) -> str:
    rows: list[list[object]] = []
    for k, t in enumerate(pool.tournaments, start=1):
        labels = list(dict.fromkeys(league.names(t)(name) for name in t.bots))
        date = date_text(t.date, time=True) + (" (file time)" if t.dated_by_file else "")
        rows.append([k, date, t.label, t.matches, _shown_names(labels)])
    headers = ["#", "date", "tournament", "matches", "bots"]
    return render_table(headers, rows, fmt, colalign=["right", "left", "left", "right", "left"])


def format_league(rated: Sequence[PoolRatings], league: League, fmt: TableFormat) -> str:
    """The rating list of every pool (pure; the caller prints it). CSV and JSON: one row per
    entry and pool, the columns of ``format_ratings`` with ``LEAGUE_KEYS`` before ``status``;
    the notes are left out (``league_notes`` gives them)."""
    width = max((len(r.rating.places) for pr in rated for r in pr.rows), default=0)
    if fmt is TableFormat.JSON:
        return render_json([_league_json_row(r, pr.pool.number, width) for pr in rated for r in pr.rows])
    if fmt is TableFormat.CSV:
        headers = [*_CSV_KEYS[:10], *place_keys(width), *LEAGUE_KEYS, *_CSV_KEYS[10:]]
        csv_rows: list[list[object]] = []
        for pr in rated:
            for r in pr.rows:
                data = _league_json_row(r, pr.pool.number, width)
                places = data.pop("places", [])
                cells = [data[k] for k in (*_CSV_KEYS[:10], *LEAGUE_KEYS, *_CSV_KEYS[10:])]
                csv_rows.append([*cells[:10], *(places if isinstance(places, list) else []), *cells[10:]])
        return render_table(headers, csv_rows, fmt)
    out: list[str] = []
    if len(league.pools) > 1:
        out.append(pools_line(league))
    for pr in rated:
        extra: list[tuple[str, Sequence[object]]] = [
            ("tournaments", [r.tournaments for r in pr.rows]),
            ("last_played", [date_text(r.last_played) for r in pr.rows]),
        ]
        heads, align, table = rating_rows([r.rating for r in pr.rows], several_groups=len(pr.table.groups) > 1, extra=extra)
        section = _pool_heading(pr.pool, len(league.pools)) + "\n\n" + render_table(heads, table, fmt, colalign=align)
        if pr.notes:
            section += "\n\n" + "\n".join(note_lines(pr.notes, fmt))
        section += "\n\nTournaments (date order):\n" + _tournament_table(league, pr.pool, fmt)
        out.append(section)
    if league.notes:
        out.append("\n".join(note_lines(league.notes, fmt)))
    return "\n\n".join(out)


def league_notes(rated: Sequence[PoolRatings] | Sequence[PoolHistory], league: League) -> list[str]:
    """The notes of a league's output, for stderr beside CSV and JSON."""
    out = [pools_line(league)] if len(league.pools) > 1 else []
    for item in rated:
        from arena.league.pools import PoolRatings

        pool_notes = item.notes if isinstance(item, PoolRatings) else item.steps[-1].ratings.notes
        prefix = f"pool {item.pool.number}: " if len(league.pools) > 1 else ""
        out += [prefix + note for note in pool_notes]
    return [*out, *league.notes]


HISTORY_KEYS = (
    "pool", "step", "tournament", "date", "rank", "name", "elo", "ci95", "los_next", "matches", "tournaments", "status",
)
"""The columns of ``--history --format csv``: one row per entry rated after each tournament."""


def _history_rating(row: LeagueRow) -> dict[str, object]:
    r = row.rating
    return {
        **_rating_numbers(r),
        "matches": r.matches,
        "tournaments": row.tournaments,
        "status": r.status.value,
    }


def format_history(histories: Sequence[PoolHistory], league: League, fmt: TableFormat) -> str:
    """The ratings after each tournament, in date order (pure). JSON: a list of steps, each
    ``{pool, game, step, tournament, name, date, ratings: [...]}``; CSV: ``HISTORY_KEYS``, one
    row per entry and step; text: per pool a table of entries by step."""
    if fmt is TableFormat.JSON:
        steps = [
            {
                "pool": h.pool.number,
                "game": h.pool.describe(),
                "step": step.number,
                "tournament": step.tournament.label,
                "name": step.tournament.name,
                "date": iso(step.tournament.date),
                "ratings": [_history_rating(row) for row in step.ratings.rows],
            }
            for h in histories
            for step in h.steps
        ]
        return json.dumps(steps, indent=2)
    if fmt is TableFormat.CSV:
        rows: list[list[object]] = []
        for h in histories:
            for step in h.steps:
                where = [h.pool.number, step.number, step.tournament.label, iso(step.tournament.date)]
                for row in step.ratings.rows:
                    data = _history_rating(row)
                    rows.append([*where, *(data[k] for k in HISTORY_KEYS[4:])])
        return render_table(HISTORY_KEYS, rows, fmt)
    out: list[str] = []
    if len(league.pools) > 1:
        out.append(pools_line(league))
    for h in histories:
        final = h.steps[-1].ratings.rows
        headers = ["bot", *(f"{step.number} {step.tournament.short}" for step in h.steps)]
        cells: list[list[object]] = []
        for row in final:
            label = row.rating.name
            line: list[object] = [label]
            for step in h.steps:
                found = next((r.rating for r in step.ratings.rows if r.rating.name == label), None)
                if found is None:
                    line.append("")
                else:
                    ci = ci95_cell(found.ci95, found.status.value)
                    line.append(elo_cell(found.elo, found.status.value) + ("" if ci == "-" else f" {ci}"))
            cells.append(line)
        table = render_table(headers, cells, fmt, colalign=["left", *(["right"] * len(h.steps))])
        legend = [
            f"{step.number} = {step.tournament.label} ({date_text(step.tournament.date, time=True)})" for step in h.steps
        ]
        section = _pool_heading(h.pool, len(league.pools)) + "\n\nRatings after each tournament:\n" + table
        section += "\n\n" + "\n".join(legend)
        out.append(section)
    notes = [note for h in histories for note in h.pool.notes] + list(league.notes)
    if notes:
        out.append("\n".join(note_lines(notes, fmt)))
    return "\n\n".join(out)


LEAGUE_PAGE = "league.html"


def write_league_report(inputs: Sequence[Path], html: Path | None, *, prior: float | None, by_name: bool, mix: bool) -> None:
    """``arena report`` on a league: writes its page (default: FOLDER/league.html for one
    folder of results folders)."""
    from arena.render.league_report import league_page
    from arena.safe_files import make_folder, write_text

    if html is None:
        if len(inputs) != 1:
            raise InputError(f"several results given: name the league page to write (--html {LEAGUE_PAGE})")
        make_folder(inputs[0])  # the default page goes in the folder: not through a link to it
    out = html if html is not None else inputs[0] / LEAGUE_PAGE
    try:
        page = league_page(inputs, out, prior=check_prior(prior), by_name=by_name, mix=mix, title=_league_title(inputs))
    except (ResultsCsvError, ConvergenceError):
        raise
    except RatingError as exc:
        raise InputError(str(exc)) from None
    write_text(out, page)
    console.echo(f"wrote {out}")


def _league_title(inputs: Sequence[Path]) -> str:
    if len(inputs) == 1:
        return inputs[0].resolve().name or "League"
    return "League"


def rate(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="Results: tournament results folders, folders of them (results/), CSVs with header "
            "side_a,side_b,score_a (teams: a+b), or JSON lines (.jsonl), one match per line: "
            '{"sides": [["a"], ["b"], ["c"]], "scores": [21, 15, 9]}. Several are fitted jointly, '
            "one pool per kind of game.",
            metavar="RESULTS...",
        ),
    ],
    fmt: FormatOption = TableFormat.PLAIN,
    anchor: Annotated[
        str | None,
        typer.Option(
            help="Pin bot NAME at ELO (NAME alone pins it at 0); otherwise each group has mean 0. "
            "In a league NAME is an entry (name, or name@version when it has several)."
        ),
    ] = None,
    prior: PriorOption = None,
    history: Annotated[
        bool,
        typer.Option("--history", help="Print each bot's rating and interval after each tournament, in date order."),
    ] = False,
    by_name: ByNameOption = False,
    mix: MixOption = False,
) -> None:
    """Fit Bradley-Terry ratings (Elo scale) to all results jointly and print the ranked table.

    Results folders (and folders of them) make a league: bots are matched across tournaments
    by their recorded identity, each kind of game is rated on its own, and the table says in
    how many tournaments each bot played and when it last did (docs/RATINGS.md, Leagues). A
    match given twice (a results folder and its export, a copy of it) is counted once."""
    anchor_name, anchor_elo = (None, 0.0)
    if anchor is not None:
        try:
            anchor_name, anchor_elo = _parse_anchor(anchor)
        except typer.BadParameter as exc:
            raise InputError(f"--anchor: {exc}") from None
    prior = check_prior(prior)
    if len(inputs) == 1 and not inputs[0].is_dir() and not (history or by_name or mix):
        _rate_file(inputs[0], fmt, anchor_name, anchor_elo, prior)
        return
    from arena.league.pools import Anchor, league_history, open_league, rate_league

    league = open_league(inputs, by_name=by_name, mix=mix)
    pinned = Anchor(anchor_name, anchor_elo) if anchor_name is not None else None
    try:
        if history:
            histories = league_history(league, prior=prior, anchor=pinned)
            out, notes = format_history(histories, league, fmt), league_notes(histories, league)
        else:
            rated = rate_league(league, prior=prior, anchor=pinned)
            out, notes = format_league(rated, league, fmt), league_notes(rated, league)
    except (ResultsCsvError, ConvergenceError):
        raise
    except RatingError as exc:
        raise InputError(str(exc)) from None
    console.echo(out)
    if fmt in (TableFormat.CSV, TableFormat.JSON):
        for note in notes:
            console.echo(f"note: {printable(note)}", err=True)


def _rate_file(file: Path, fmt: TableFormat, anchor_name: str | None, anchor_elo: float, prior: float) -> None:
    """One results file: the table of its fit (no tournaments, no dates)."""
    source = str(file)
    # Streamed: the file is read (and each line checked) as the fit consumes it; a match its
    # lines give twice (two exports in one) is counted once.
    results = Deduplicated(read_keyed_results(file))
    try:
        table = fit_ratings(results, anchor=anchor_name, anchor_elo=anchor_elo, prior=prior)
    except (ResultsCsvError, ConvergenceError):
        raise  # the file's fault (exit 2) or the arena's (exit 3): the edge says so
    except RatingError as exc:
        raise InputError(f"{source}: {exc}") from None
    if results.dropped:
        note = duplicates_note(source, results.dropped, results.read, ["its earlier lines"])
        table = replace(table, notes=(*table.notes, note))
    out = format_ratings(table, fmt)
    if fmt in (TableFormat.CSV, TableFormat.JSON):
        console.echo(out)
        # Keep the machine-readable output clean; the caveats go to stderr.
        for note in table.notes:
            console.echo(f"note: {printable(note)}", err=True)
    else:
        console.echo(out)
