"""``arena analyze``'s text: the table of the bots' losses and the list of the worst moves."""

from __future__ import annotations

from collections.abc import Sequence

from arena.analysis import THRESHOLDS, BotAnalysis, Mark, MoveAnalysis
from arena.render.tables import TableFormat, render_table
from arena.render.text import counted
from arena.search.evaluation import TERMS

HEADERS = ("bot", "decisions", "mean_loss", "inaccuracies", "mistakes", "blunders", *TERMS)


def bots_table(bots: Sequence[BotAnalysis]) -> str:
    """A row per bot: its decisions, mean loss, marks, and the mean loss by category."""
    rows = [[b.bot, b.decisions, f"{b.mean_loss:.3f}", b.inaccuracies, b.mistakes, b.blunders,
             *(f"{v:+.3f}" for v in b.loss_by)] for b in bots]
    return render_table(HEADERS, rows, TableFormat.PLAIN, colalign=("left",) + ("right",) * (len(HEADERS) - 1))


def move_line(m: MoveAnalysis) -> str:
    """One marked move: where, who, what was played and what was best, and the loss."""
    mark = "" if m.mark is None else f"{m.mark.value}: "
    return (f"{m.match} move {m.index + 1} ({m.bot}, seat {m.seat}): {mark}played {m.played} ({m.played_value:+.2f}), "
            f"best {m.best} ({m.best_value:+.2f}), loss {m.loss:.2f}")


def legend() -> str:
    """The marks' thresholds, as a line under the table."""
    marks = ", ".join(f"{mark.value} {THRESHOLDS[mark]:g}" for mark in (Mark.INACCURACY, Mark.MISTAKE, Mark.BLUNDER))
    return f"loss in expected points of the hand per decision; marks from a loss of: {marks}"


def worst_moves(moves: Sequence[MoveAnalysis], shown: int, *, page_written: bool = False) -> list[str]:
    """The first ``shown`` of ``moves`` (the worst first), and how many more there are (and
    where to see them, unless the page that marks them is being written)."""
    lines = [move_line(m) for m in moves[:shown]]
    if len(moves) > shown:
        more = counted(len(moves) - shown, "more marked move")
        where = "on the replay page" if page_written else "(--html OUT with one match ID marks them on its replay page)"
        lines.append(f"... and {more} {where}")
    return lines


__all__ = ["HEADERS", "bots_table", "legend", "move_line", "worst_moves"]
