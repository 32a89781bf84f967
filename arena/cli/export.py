"""``arena export``: a results folder's matches or game records, as files for other tools."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

import arena.cli.console as console
from arena.errors import InputError


class GamesFormat(str, Enum):
    """``--games``: one row per match."""

    CSV = "csv"
    JSONL = "jsonl"


class RecordsFormat(str, Enum):
    """``--records``: every game record."""

    JSONL = "jsonl"


def export(
    results: Annotated[Path, typer.Argument(help="A tournament's results folder (results/<name>).")],
    games: Annotated[
        GamesFormat | None,
        typer.Option(
            "--games",
            help="One row per match, ready for arena rate and spreadsheets: csv (side_a,side_b,score_a, then the "
            "match id, seed, points, reason, hands, failures; two sides per match) or jsonl (any number of sides).",
        ),
    ] = None,
    records: Annotated[
        RecordsFormat | None,
        typer.Option(
            "--records",
            help='Every game record, one per line ({"id": ..., "record": {...}}), which arena verify and '
            "arena replay FILE.jsonl ID read.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout (replaced whole).")
    ] = None,
) -> None:
    """Export a results folder's matches (--games) or game records (--records) for other tools."""
    from arena.cli.options import check_output
    from arena.tournament.export import Results, games_csv, games_jsonl, records_jsonl
    from arena.tournament.store import ResultStore

    if (games is None) == (records is None):
        raise InputError("give one of --games csv|jsonl or --records jsonl (one export per output)")
    if output is not None:
        check_output(output, "--output")
    with ResultStore.open_existing(str(results)) as store:
        lines: Iterable[str]
        if records is not None:
            lines = records_jsonl(store)
        elif games is GamesFormat.CSV:
            lines = games_csv(Results.of(store), str(results))
        else:
            lines = games_jsonl(Results.of(store))
        if output is None:
            console.data(lines)
        else:
            _write_file(output, lines)
    if output is not None:
        console.echo(f"wrote {output}", err=True)


def _write_file(path: Path, lines: Iterable[str]) -> None:
    """Written in a new file beside the target and renamed over it: a failed export leaves no
    half file, and nothing planted beside it is written through."""
    from arena.safe_files import write_lines

    write_lines(path, lines)


__all__ = ["export"]
