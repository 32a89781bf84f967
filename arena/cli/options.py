"""The options several commands share, as typer's annotated types, and their checks: light to
import, so that a command's module can name them without loading what the commands that use
them run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.errors import InputError
from arena.rating.table import DEFAULT_PRIOR, RatingError
from arena.rating.table import check_prior as ratings_prior
from arena.render.tables import TableFormat

# Options shared by `arena rate`, `arena table` and `arena report`, which show the same ratings.
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
ByNameOption = Annotated[
    bool, typer.Option("--by-name", help="Merge every version of a name into one entry (default: one entry per "
                                         "program, wherever it played).")
]
MixOption = Annotated[
    bool, typer.Option("--mix", help="Pool every kind of game (player counts, teams, rule options) in one fit.")
]


def check_prior(prior: float | None) -> float:
    """The prior to fit with (``None``: the default); a negative or non-finite one is refused."""
    try:
        return ratings_prior(prior)
    except RatingError:
        raise InputError(f"--prior: expected a number of virtual draws >= 0, got {prior:g}") from None


__all__ = ["ByNameOption", "FormatOption", "MixOption", "PriorOption", "check_prior"]


def check_output(path: Path, option: str) -> None:
    """Refuse an output file that is a results folder's store or its journal: written whole, it
    would replace every match stored (tab completion offers results.sqlite beside the folder)."""
    from arena.tournament.folder_names import STORE_FILE

    journals = (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm", f"{STORE_FILE}-journal")
    if path.name in journals and (path.parent / STORE_FILE).is_file():
        raise InputError(f"{option} {path}: that is the results store of {path.parent}, which it would "
                         "replace; give another file")
