"""``arena compare RESULTS A B``: two bots of a results folder (two versions of one, most
often) side by side, and the duplicate deals where one won from both seats against the other."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

import arena.cli.console as console
from arena.printable import printable


def _number(value: float | None, digits: int, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def compare_cmd(
    results: Annotated[Path, typer.Argument(help="A results folder (a tournament's, or an SPRT's).")],
    a: Annotated[str, typer.Argument(metavar="A", help="A bot: its label as arena table --versions all shows it "
                                                       "(mybot@2.0), or a name with one version there.")],
    b: Annotated[str, typer.Argument(metavar="B", help="The other bot, as A.")],
) -> None:
    """Show two bots of a results folder side by side (rating, points and escobas per hand,
    failures, CPU time per move), and the duplicate deals where one won from both seats
    against the other, with the command that replays each match."""
    from arena.render.tables import TableFormat, render_table
    from arena.render.text import counted
    from arena.tournament.compare import compare
    from arena.tournament.store import ResultStore

    with ResultStore.open_existing(str(results)) as store:
        result = compare(store, a, b)
    rows = []
    for s in (result.a, result.b):
        rows.append([s.label, s.version or "-", _number(s.elo, 0, sign=True), _number(s.ci95, 0), s.matches,
                     _number(s.points_per_hand, 2), _number(s.escobas_per_hand, 3), s.failures,
                     _number(s.cpu_ms_per_move, 1)])
    headers = ["bot", "version", "elo", "ci95", "matches", "pts/hand", "esc/hand", "failures", "cpu ms/move"]
    for line in render_table(headers, rows, TableFormat.PLAIN).splitlines():
        console.echo(printable(line))
    console.echo("")
    names = f"{result.a.label} and {result.b.label}"
    if not result.deals_met:
        console.echo(printable(f"{names} did not meet on a duplicate deal here (versions of one tournament each "
                               "meet the field on the same deals: compare their rows above)"))
        return
    console.echo(printable(f"{names} met on {counted(result.deals_met, 'duplicate deal')}; "
                           f"{len(result.sweeps)} won from both seats by one of them:"))
    folder = shlex.quote(str(results))
    for sweep in result.sweeps:
        replays = "; ".join(f"arena replay {folder} {match_id}" for match_id in sweep.ids)
        console.echo(printable(f"  deal {sweep.deal}: {sweep.winner} won both seats ({replays})"))


__all__ = ["compare_cmd"]
