"""``arena analyze``: every decision of a tournament's games re-examined by the analyst.

The records are verified first, as ``arena verify`` checks them (a refused one is named and
not analysed); their decisions go to worker processes in a fixed order, each with its own
seed, so any ``-j`` gives the same analysis. docs/ANALYSIS.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import arena.cli.console as console
from arena.analysis.budget import ANALYST_PLAYOUTS, ANALYST_SEED
from arena.errors import ExitCode, InputError
from arena.printable import printable

if TYPE_CHECKING:
    from arena.analysis import MoveAnalysis, Task

# Decisions handed to a worker at a time: a few tens of milliseconds of work each.
CHUNK = 4
# The worst moves the text lists under the table.
SHOWN_MOVES = 10


class AnalysisFormat(str, Enum):
    TEXT = "text"
    JSON = "json"


def analyze(
    results: Annotated[Path, typer.Argument(
        help="A tournament results folder (or a folder of record .json files, or one record file).", metavar="RESULTS")],
    ids: Annotated[list[str] | None, typer.Argument(
        help="The matches to analyse (default: every match).", metavar="[ID...]")] = None,
    bot: Annotated[str | None, typer.Option("--bot", help="Analyse only this bot's decisions.")] = None,
    fmt: Annotated[AnalysisFormat, typer.Option("--format", help="text (a table and the worst moves) or json (a list of "
                                                "objects, one per bot).")] = AnalysisFormat.TEXT,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="Worker processes (default: the number of cores).")] = None,
    playouts: Annotated[int, typer.Option("--playouts", min=1, help="The analyst's deals per decision (more: slower, "
                                          "surer; the analysis is the same at any -j).")] = ANALYST_PLAYOUTS,
    html: Annotated[Path | None, typer.Option("--html", help="With one match ID: write its replay page, the analysed "
                                              "moves marked.")] = None,
) -> None:
    """Re-examine every decision of the chosen matches with the analyst (the expert's search at a
    fixed budget and seed, knowing only what the seat knew): the expected points of each legal
    move, the loss of the move played, and marks (inaccuracy, mistake, blunder). Per bot: its
    decisions, mean loss, marks, and where the loss comes from. Exit code 1 if a record is refused."""
    from arena.analysis import by_bot, marked, tasks
    from arena.cli.replay import check_source, iter_sources, shown_labels
    from arena.match.record import RecordError
    from arena.render.text import counted
    from arena.tournament.standings import relabelled

    wanted = list(dict.fromkeys(ids or ()))
    if html is not None and len(wanted) != 1:
        raise InputError("--html writes one match's replay page: give exactly one match ID")
    if html is not None:
        from arena.cli.options import check_output

        check_output(html, "--html")
    todo: list[Task] = []
    records: dict[str, Any] = {}
    refused: list[str] = []
    found: set[str] = set()
    bots: set[str] = set()
    # Checked as recorded, then named as arena table names them (a version by its label).
    labels = shown_labels(results)
    for source in iter_sources(results):
        found.add(source.label)
        if wanted and source.label not in wanted:
            continue
        rec, why = check_source(source)
        if why is not None or rec is None:
            refused.append(f"refused {source.label}: {why}")
            continue
        rec = relabelled(rec, labels)
        bots.update(rec.seats)
        try:
            todo += tasks(source.label, rec, bot, ANALYST_SEED)
        except RecordError as exc:  # verified above: only a record changed since would get here
            refused.append(f"refused {source.label}: {exc}")
            continue
        records[source.label] = rec
    missing = [i for i in wanted if i not in found]
    if missing:
        raise InputError(f"{results}: no match {missing[0]!r}" + _ids_hint(found))
    if bot is not None and bot not in bots:
        from arena.tournament.identity import label_bot

        versions = sorted(name for name in bots if label_bot(name) == bot)
        if versions:  # a bot that changed, each version under its label (mybot@2.0)
            raise InputError(f"--bot {bot!r}: it has {len(versions)} versions in these matches; name one: "
                             + ", ".join(versions))
        raise InputError(f"--bot {bot!r}: no such bot in these matches (they have: {', '.join(sorted(bots)) or 'none'})")
    for line in refused:
        console.err(printable(line))
    console.err(f"analyze: {counted(len(todo), 'decision')} in {counted(len(records), 'match', 'matches')}, "
                f"{playouts} deals each")
    moves = _run(todo, playouts, jobs)
    summary = by_bot(moves)
    if fmt is AnalysisFormat.JSON:
        from arena.render.tables import render_json

        console.echo(render_json([b.to_dict() for b in summary]))
    else:
        from arena.render.analysis_text import bots_table, legend, worst_moves

        console.echo(bots_table(summary) if summary else "no decisions to analyse")
        console.echo(legend())
        worst = marked(moves)
        if worst:
            console.echo("")
            console.echo(f"the worst moves (mistakes and blunders, {len(worst)}):")
            for line in worst_moves(worst, SHOWN_MOVES, page_written=html is not None):
                console.echo(line)
    if html is not None:
        _write_html(html, wanted[0], records.get(wanted[0]), moves)
    if refused:
        console.err(printable(f"{results}: {len(refused)} records refused"))
        raise typer.Exit(ExitCode.CHECK_FAILED)


def _ids_hint(ids: set[str]) -> str:
    if not ids:
        return " (it holds no matches)"
    listed = sorted(ids)
    return f" (its {len(listed)} match ids: {', '.join(listed[:6])}{', ...' if len(listed) > 6 else ''})"


def _run(todo: Sequence[Task], playouts: int, jobs: int | None) -> list[MoveAnalysis]:
    """Every task's analysis, in the tasks' order, on ``jobs`` workers, under a progress bar."""
    from arena.analysis import analyse
    from arena.cli.replay import progress

    work = partial(analyse, playouts=playouts)
    with progress("analyze", len(todo), console.err, "decisions") as advance, _pool(jobs, len(todo)) as imap:
        out = []
        for result in imap(work, todo):
            out.append(result)
            advance(1)
    return out


@contextmanager
def _pool(jobs: int | None, total: int) -> Iterator[Any]:
    """``imap`` over worker processes (forks: they start with the arena imported), or this
    process's own ``map`` for one job or a handful of decisions."""
    workers = jobs if jobs is not None else len(os.sched_getaffinity(0))
    workers = min(workers, max(1, total // CHUNK))
    if workers < 2:
        yield map
        return
    from arena.cli.workers import worker_pool

    with worker_pool(workers, "analysing the decisions") as pool:
        yield lambda f, items: pool.imap(f, items, chunksize=CHUNK)


def _write_html(path: Path, match: str, record: Any, moves: Sequence[MoveAnalysis]) -> None:
    if record is None:
        return  # refused: said above
    from arena.cli.replay import write_replay_page

    marks = [m.to_dict() for m in moves if m.match == match]
    write_replay_page(path, record, f"Escoba replay · {match} · analysed", analysis=marks)
    console.echo(f"wrote {path} ({len(marks)} analysed moves)")


__all__ = ["AnalysisFormat", "analyze"]
