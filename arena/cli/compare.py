"""``arena compare RESULTS... A B``: two programs of a league (two versions of one bot, most
often) side by side, the duplicate deals where one won from both seats against the other, and
the deals they played against the same opponents where their results differ."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

import arena.cli.console as console
from arena.cli.options import FormatOption, PriorOption, check_prior
from arena.errors import InputError
from arena.printable import printable
from arena.render.tables import TableFormat, render_table
from arena.tournament.standings import plain_number

if TYPE_CHECKING:
    from arena.league.compare import CompareSide, Comparison, DealMatch

_T = TypeVar("_T")
RESULT_WORDS = {1.0: "won", 0.5: "drew", 0.0: "lost"}


def _number(value: float | None, digits: int, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def replay_command(folder: str, match_id: str) -> str:
    return f"arena replay {shlex.quote(folder)} {shlex.quote(match_id)}"


def replay_page(folder: str, match_id: str) -> str | None:
    """The report's replay page of a match, where ``arena report`` (or ``arena run``) wrote
    the folder's report in its default place and that match's replay with it."""
    from arena.render.report import DATA_DIR, VIEWER, replay_file_name

    replays = Path(folder) / "report_replays"
    name = replay_file_name(match_id)
    if (replays / DATA_DIR / name).is_file() and (replays / VIEWER).is_file():
        return f"{replays / VIEWER}#{name.removesuffix('.js')}"
    return None


def _match_json(m: DealMatch) -> dict[str, Any]:
    return {"folder": m.folder, "id": m.id, "deal": m.deal, "result": RESULT_WORDS[m.score],
            "replay": replay_command(m.folder, m.id), "page": replay_page(m.folder, m.id)}


def _side_json(s: CompareSide) -> dict[str, Any]:
    return {
        "name": s.label,
        "bot": s.name,
        "version": s.version,
        "identity": s.identity,
        "pool": s.pool,
        "elo": plain_number(s.elo, 2),
        "ci95": plain_number(s.ci95, 2),
        "matches": s.matches,
        "tournaments": list(s.tournaments),
        "points_per_hand": plain_number(s.points_per_hand, 3),
        "escobas_per_hand": plain_number(s.escobas_per_hand, 3),
        "failures": s.failures,
        "cpu_ms_per_move": plain_number(s.cpu_ms_per_move, 3),
    }


def comparison_json(c: Comparison) -> str:
    """The comparison as ``--format json`` writes it (docs/TOURNAMENTS.md, "Comparing two versions")."""
    def match(folder: str, match_id: str) -> dict[str, Any]:
        return {"folder": folder, "id": match_id, "replay": replay_command(folder, match_id),
                "page": replay_page(folder, match_id)}

    data = {
        "a": _side_json(c.a),
        "b": _side_json(c.b),
        "met": {
            "deals": c.deals_met,
            "sweeps": [{"folder": s.folder, "deal": s.deal, "winner": s.winner,
                        "matches": [match(s.folder, i) for i in s.ids]} for s in c.sweeps],
        },
        "apart": {
            "deals": c.deals_shared,
            "flips": [{"opponents": list(f.opponents),
                       "better": c.a.label if f.a_points > f.b_points else c.b.label,
                       "a": {"points": f.a_points, "matches": [_match_json(m) for m in f.a]},
                       "b": {"points": f.b_points, "matches": [_match_json(m) for m in f.b]}} for f in c.flips],
        },
        "notes": list(c.notes),
    }
    return json.dumps(data, indent=2)


def _results(matches: tuple[DealMatch, ...]) -> str:
    return ", ".join(RESULT_WORDS[m.score] for m in matches)


def _match_lines(m: DealMatch | tuple[str, str]) -> str:
    folder, match_id = (m.folder, m.id) if not isinstance(m, tuple) else m
    page = replay_page(folder, match_id)
    return f"    {replay_command(folder, match_id)}" + (f"   {page}" if page else "")


def comparison_lines(c: Comparison, fmt: TableFormat, limit: int) -> list[str]:
    """The comparison as text: the two sides' table, then the deals, at most ``limit`` of each
    kind (0: all)."""
    from arena.render.text import counted

    rows = []
    for s in (c.a, c.b):
        rows.append([s.label, s.version or "-", (s.identity or "-")[:12], _number(s.elo, 0, sign=True),
                     _number(s.ci95, 0), s.matches, len(s.tournaments), _number(s.points_per_hand, 2),
                     _number(s.escobas_per_hand, 3), s.failures, _number(s.cpu_ms_per_move, 1)])
    headers = ["bot", "version", "identity", "elo", "ci95", "matches", "tournaments", "pts/hand", "esc/hand",
               "failures", "cpu ms/move"]
    out = render_table(headers, rows, fmt).splitlines()
    out += [f"note: {note}" for note in c.notes]
    names = f"{c.a.label} and {c.b.label}"

    def shown(items: Sequence[_T]) -> Sequence[_T]:
        return items[:limit] if limit else items

    def more(total: int) -> list[str]:
        left = total - limit if limit else 0
        return [f"  ... and {left} more (--deals 0 lists every one)"] if left > 0 else []

    out.append("")
    if c.deals_met:
        out.append(f"{names} met on {counted(c.deals_met, 'duplicate deal')}; "
                   f"{len(c.sweeps)} won from both seats by one of them:")
        for sweep in shown(c.sweeps):
            out.append(f"  deal {sweep.deal} of {sweep.folder}: {sweep.winner} won both seats")
            out += [_match_lines((sweep.folder, match_id)) for match_id in sweep.ids]
        out += more(len(c.sweeps))
    else:
        out.append(f"{names} did not meet on a duplicate deal (an SPRT of one against the other, or a tournament "
                   "holding both, would)")
    out.append("")
    if c.deals_shared:
        a_better = sum(f.a_points > f.b_points for f in c.flips)
        played = f"{names} played {counted(c.deals_shared, 'deal')} against the same opponents from the same seats; "
        out.append(played + (f"the results differ on {len(c.flips)} ({c.a.label} better on {a_better}, "
                             f"{c.b.label} on {len(c.flips) - a_better}):" if c.flips else
                             "the results are the same on every one"))
        for flip in shown(c.flips):
            first = flip.a[0]
            out.append(f"  deal {first.deal} of {first.folder} against {' and '.join(flip.opponents)}: "
                       f"{c.a.label} {_results(flip.a)}; {c.b.label} {_results(flip.b)}")
            out += [_match_lines(m) for m in (*flip.a, *flip.b)]
        out += more(len(c.flips))
    else:
        out.append(f"{names} played no deal against the same opponents from the same seats")
    return out


def compare_cmd(
    inputs: Annotated[list[Path], typer.Argument(
        metavar="RESULTS...", help="Results as arena rate takes them: tournament and SPRT folders, folders of them, "
                                   "exports.", show_default=False)],
    a: Annotated[str, typer.Argument(metavar="A", help="A program: its label as arena rate shows it (mybot@2.0), a "
                                                       "bot name with one version there, or a name a folder uses "
                                                       "(bot_v1).", show_default=False)],
    b: Annotated[str, typer.Argument(metavar="B", help="The other program, as A.", show_default=False)],
    fmt: FormatOption = TableFormat.PLAIN,
    deals: Annotated[int, typer.Option("--deals", min=0, help="List at most this many deals of each kind (0: all).")] = 10,
    prior: PriorOption = None,
) -> None:
    """Show two programs side by side (rating, points and escobas per hand, failures, CPU time
    per move) wherever they played, the duplicate deals where one won from both seats against
    the other, and the deals both played against the same opponents where their results
    differ, each match with the command (and report page) that replays it."""
    from arena.league.compare import compare
    from arena.rating.table import ConvergenceError, RatingError

    try:
        result = compare(inputs, a, b, prior=check_prior(prior))
    except ConvergenceError:
        raise
    except RatingError as exc:
        raise InputError(str(exc)) from None
    if fmt is TableFormat.JSON:
        console.echo(comparison_json(result))
        return
    if fmt is TableFormat.CSV:
        raise InputError("--format: compare writes plain, github or json (csv has no place for its deals)")
    for line in comparison_lines(result, fmt, deals):
        console.echo(printable(line))


__all__ = ["comparison_json", "comparison_lines", "compare_cmd", "replay_command", "replay_page"]
