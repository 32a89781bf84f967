"""The analyst: every decision of a verified record re-examined by the expert's search.

Pure: a record in, values out; no I/O, no clock, no process (the command line runs
``analyse`` in worker processes: a ``Task`` and the result are plain picklable values).

What the analyst knows at a decision is what its seat knew: the rules core's view of that
seat, rebuilt by the one verifier from the record (``arena.match.replay.verify_decisions``),
the values the other seats cannot hold, inferred from their trails this round
(``arena.search.analysis.inferred_voids``), and, where the other seats played as greedy does
in the rounds already shown, their plays this round, which every deal's hands must explain
(``arena.search.analysis.inferred_round``), as the expert's search holds its deals. It values
every legal move by ``move_values`` at a fixed budget (``playouts`` deals, default
ANALYST_PLAYOUTS) and a seed of its own per decision
(``decision_seed``), so the same record, budget and seed give the same analysis however many
workers share it. In the last round against a seat that plays as greedy does, the values are
exact (``ANALYST_ENDGAME``: the solved end of the hand). The loss of a move is what the best
move was worth more, in expected points of the hand's margin (the seat's side against the
others' average); the loss is split by category (escobas, velo, oros, cards, sevens) on the
same deals. docs/ANALYSIS.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from arena.analysis.budget import ANALYST_ENDGAME, ANALYST_PLAYOUTS, ANALYST_SEED, ANALYST_WARY
from arena.core.moves import Move
from arena.core.outcome import TextEnum
from arena.core.seeding import Rng, derive_seed
from arena.core.view import SeatView
from arena.match.record import GameRecord, PlayedBy
from arena.match.replay import verify_decisions
from arena.search.analysis import (
    category_values,
    inferred_round,
    inferred_voids,
    move_values,
    representatives,
    shown_plays,
)
from arena.search.determinized import MAX_CANDIDATES, shortlist
from arena.search.evaluation import TERMS
from arena.search.inference import Round, Shown


class Mark(TextEnum):
    """How bad a move was, by its loss in expected points (the thresholds below)."""

    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"

    @classmethod
    def of(cls, loss: float) -> Mark | None:
        """The mark of a move that lost ``loss`` points, or None for one below every threshold."""
        for mark in (cls.BLUNDER, cls.MISTAKE, cls.INACCURACY):
            if loss >= THRESHOLDS[mark]:
                return mark
        return None


# A loss of at least this many expected points earns the mark (docs/ANALYSIS.md says why these):
# an escoba is a point, so throwing one away that could be taken is a blunder; giving away a
# majority's odds or the velo's, a mistake; the rest of a fifth of a point, an inaccuracy.
THRESHOLDS: Mapping[Mark, float] = {Mark.INACCURACY: 0.2, Mark.MISTAKE: 0.5, Mark.BLUNDER: 1.0}


def decision_seed(record_seed: int, index: int, seed: int = ANALYST_SEED) -> int:
    """The seed of the analyst's deals for move ``index`` of the record of seed ``record_seed``."""
    return derive_seed(seed, "analyse", record_seed, index)


@dataclass(frozen=True)
class Task:
    """One decision to analyse (move ``index``, 0-based): plain values, for a worker process,
    of classes no compiler made native (a compiled class is rebuilt from its constructor's
    arguments alone, and a frozen one refuses the pickler's). ``view`` is the seat's before the
    move, without its event log: what the log says is here already, ``voids`` (the card values
    each other seat cannot hold) and ``plays`` (the cards played from hands this hand, with the
    table each met: ``seen`` infers from them what the other seats hold)."""

    match: str
    index: int
    bot: str
    view: SeatView
    legal: tuple[Move, ...]
    played: Move
    voids: tuple[tuple[int, frozenset[int]], ...]
    plays: tuple[Shown, ...]
    seed: int

    @property
    def seen(self) -> Round | None:
        """The other seats' plays this round, where they play as greedy does (``inferred_round``)."""
        return inferred_round(self.view, self.plays)


@dataclass(frozen=True)
class MoveAnalysis:
    """The analyst's word on one decision: ``values`` per legal move (in the core's order;
    None for a move it did not search, past MAX_CANDIDATES distinct ones), the best move and
    the played one with their values, the ``loss`` (best minus played, in expected points),
    its ``mark``, and ``loss_by`` the loss per category (TERMS), which adds up to it."""

    match: str
    index: int
    seat: int
    bot: str
    legal: tuple[Move, ...]
    values: tuple[float | None, ...]
    played: Move
    played_value: float
    best: Move
    best_value: float
    loss: float
    mark: Mark | None
    loss_by: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"match": self.match, "move": self.index + 1, "seat": self.seat, "bot": self.bot,
                "played": str(self.played), "value": _round(self.played_value), "best": str(self.best),
                "best_value": _round(self.best_value), "loss": _round(self.loss),
                "mark": None if self.mark is None else self.mark.value,
                "loss_by": {k: _round(v) for k, v in zip(TERMS, self.loss_by, strict=True)},
                "values": {str(m): None if v is None else _round(v) for m, v in zip(self.legal, self.values, strict=True)}}


def _round(value: float) -> float:
    return round(value, 4)


def tasks(match: str, record: GameRecord | Mapping[str, Any], bot: str | None = None,
          seed: int = ANALYST_SEED) -> list[Task]:
    """The decisions of one record to analyse (verified first: ``ReplayMismatch`` if it does not
    replay): every move its bot chose among at least two that differ (substituted moves were the
    referee's, and a forced move is no decision); with ``bot``, only that bot's."""
    rec, decisions = verify_decisions(record)
    out = []
    for decision in decisions:
        view = decision.view
        name = rec.seats[view.seat]
        if rec.moves[decision.index].by is not PlayedBy.BOT or (bot is not None and name != bot):
            continue
        if len(set(representatives(decision.legal, view.rules))) < 2:
            continue
        plays = tuple(shown_plays(view))
        voids = tuple(sorted((s, frozenset(v)) for s, v in inferred_voids(view, plays).items()))
        out.append(Task(match, decision.index, name, replace(view, events=()), decision.legal, decision.played, voids,
                        plays, decision_seed(rec.seed, decision.index, seed)))
    return out


def analyse(task: Task, playouts: int = ANALYST_PLAYOUTS) -> MoveAnalysis:
    """The analyst's values of one decision (see the module's doc)."""
    view, legal = task.view, task.legal
    rep = representatives(legal, view.rules)
    played = rep[legal.index(task.played)]
    searched = sorted(set(rep))
    if len(searched) > MAX_CANDIDATES:
        # As the expert: the best by one look ahead, and the move played, which must be valued.
        keep = shortlist(view, [legal[i] for i in searched], Rng(derive_seed(task.seed, "shortlist")))
        searched = sorted({searched[i] for i in keep} | {played})
    voids = {seat: set(values) for seat, values in task.voids} or None
    seen = task.seen
    found = move_values(view, [legal[i] for i in searched], Rng(task.seed), playouts, voids, seen, wary=ANALYST_WARY,
                        endgame=ANALYST_ENDGAME)
    value_of = dict(zip(searched, found, strict=True))
    best = max(searched, key=lambda i: (value_of[i], -i))  # the first of equals, in the core's order
    loss = max(0.0, value_of[best] - value_of[played])
    loss_by: tuple[float, ...] = (0.0,) * len(TERMS)
    if loss > 0:
        # The same deals (the same seed), for the two moves alone; a move worth the best's
        # loses nothing, by any category.
        terms = category_values(view, [legal[best], legal[played]], Rng(task.seed), playouts, voids, seen,
                                wary=ANALYST_WARY, endgame=ANALYST_ENDGAME)
        loss_by = tuple(b - p for b, p in zip(terms[0], terms[1], strict=True))
    return MoveAnalysis(
        match=task.match, index=task.index, seat=view.seat, bot=task.bot, legal=legal,
        values=tuple(value_of.get(r) for r in rep), played=task.played, played_value=value_of[played],
        best=legal[best], best_value=value_of[best], loss=loss, mark=Mark.of(loss), loss_by=loss_by)


@dataclass(frozen=True)
class BotAnalysis:
    """One bot's decisions in sum: how many, the mean loss per decision, the marks, and the
    mean loss per decision by category (``loss_by``, TERMS: they add up to ``mean_loss``)."""

    bot: str
    decisions: int
    mean_loss: float
    inaccuracies: int
    mistakes: int
    blunders: int
    loss_by: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"bot": self.bot, "decisions": self.decisions, "mean_loss": _round(self.mean_loss),
                                "inaccuracies": self.inaccuracies, "mistakes": self.mistakes, "blunders": self.blunders}
        data.update({k: _round(v) for k, v in zip(TERMS, self.loss_by, strict=True)})
        return data


def by_bot(moves: Iterable[MoveAnalysis]) -> list[BotAnalysis]:
    """Per bot, in order of name: its decisions summed up."""
    groups: dict[str, list[MoveAnalysis]] = {}
    for m in moves:
        groups.setdefault(m.bot, []).append(m)
    out = []
    for bot in sorted(groups):
        ms = groups[bot]
        n = len(ms)
        marks = [m.mark for m in ms]
        out.append(BotAnalysis(
            bot=bot, decisions=n, mean_loss=sum(m.loss for m in ms) / n,
            inaccuracies=marks.count(Mark.INACCURACY), mistakes=marks.count(Mark.MISTAKE),
            blunders=marks.count(Mark.BLUNDER),
            loss_by=tuple(sum(m.loss_by[k] for m in ms) / n for k in range(len(TERMS)))))
    return out


def marked(moves: Sequence[MoveAnalysis], worst: Mark = Mark.MISTAKE) -> list[MoveAnalysis]:
    """The moves marked ``worst`` or worse, the worst loss first."""
    order = (Mark.INACCURACY, Mark.MISTAKE, Mark.BLUNDER)
    floor = order.index(worst)
    return sorted((m for m in moves if m.mark is not None and order.index(m.mark) >= floor),
                  key=lambda m: (-m.loss, m.match, m.index))


__all__ = ["ANALYST_PLAYOUTS", "ANALYST_SEED", "THRESHOLDS", "BotAnalysis", "Mark", "MoveAnalysis", "Task", "analyse",
           "by_bot", "decision_seed", "marked", "tasks"]
