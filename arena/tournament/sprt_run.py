"""A sequential test (``format: sprt``) played: pairs in deal order, a stop the workers finish,
and a resume that reaches the same decision.

The schedule (schedule.py) is open-ended: deal 0, 1, 2, ... of the one pairing, each played
twice, the second time with the sides in each other's seats (rotation 0: candidate first,
rotation 1: baseline first). What this module adds is when to stop taking deals from it:

* ``PairBook`` turns finished matches, in whatever order the workers finish them, into
  pairs added to the test in deal order: pair k is added only once pairs 0..k-1 are in. So
  the decision, and the pair it is made at, depend on the seed alone, never on how many
  workers play or which finishes first.
* ``SprtRun.pending`` is the stream of matches the executor takes from as workers free up.
  It hands out both matches of a deal together, and once the test has decided it hands out
  no new deal: the executor finishes the matches it holds (a pair in progress is finished
  and counted, never cut in half) and the run ends. The pairs finished after the decision
  count in the numbers (pentanomial, Elo, LLR), never in the decision (arena/sprt's stop rule).
* A resume (after Ctrl-C or ``kill -9``) rebuilds the test from the store: every stored
  match goes through the same ``PairBook`` in schedule order, so the state is the one the
  interrupted run had for the same pairs, and the decision the same. If the test had
  decided, the run only completes the deals up to the last one the store holds (a deal
  with one of its two matches stored, or a gap left by a worker that was playing it).

The store is the one source of truth: no decision is stored, ``replay_store`` recomputes it
from the rows (what ``arena table``, ``arena report`` and the end of a run show).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from arena.sprt import DealPair, GameResult, SprtParams, SprtState, SprtSummary
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import Completed
from arena.tournament.inorder import InOrder
from arena.tournament.runner import RunPlan
from arena.tournament.schedule import Format, MatchSpec, iter_schedule, pairings, sprt_pair_limit
from arena.tournament.standings import hands_played
from arena.tournament.store import MatchRow, ResultStore, StoreDamagedError, StoreError


def sprt_params(config: TournamentConfig) -> SprtParams:
    if config.format is not Format.SPRT or config.sprt is None:
        raise StoreError(f"{config.name}: not a sequential test (format: {config.format})")
    return config.sprt


def sides_of(config: TournamentConfig) -> tuple[str, str]:
    """(candidate, baseline): the side labels of a sequential test, as its rows name them."""
    first, second = pairings(config)[0]
    return first.label, second.label


def game_result(row: MatchRow, candidate: str) -> GameResult:
    """One match from the candidate's side: its score (1, 1/2, 0), its points minus the
    other side's, and the hands played to their end (a forfeit's last hand is not)."""
    if len(row.sides) != 2 or candidate not in row.sides:
        raise StoreDamagedError(f"match {row.id!r}: expected two sides, one of them {candidate!r}, got {list(row.sides)}")
    a = row.sides.index(candidate)
    score = 0.5 if row.winner is None else 1.0 if row.winner == a else 0.0
    return GameResult(score=score, point_diff=row.scores[a] - row.scores[1 - a], hands=hands_played(row))


class PairBook:
    """Matches in, in any order; pairs out to the test, in deal order.

    ``state`` is the test after every complete pair from deal 0 on; ``trace`` the LLR after
    each of them (the report's plot). A deal whose pair is not complete, and every deal
    after it, waits (``waiting`` counts the matches held)."""

    def __init__(self, params: SprtParams, candidate: str) -> None:
        self.candidate = candidate
        self.state = SprtState.start(params)
        self.trace: list[float] = []
        self._book: InOrder[GameResult] = InOrder(2)

    @classmethod
    def of(cls, config: TournamentConfig) -> PairBook:
        return cls(sprt_params(config), sides_of(config)[0])

    @property
    def next_deal(self) -> int:
        return self._book.next

    def add(self, row: MatchRow) -> None:
        try:
            self._book.add(row.deal, row.rotation, game_result(row, self.candidate))
        except ValueError:
            raise StoreDamagedError(f"match {row.id!r}: deal {row.deal}, rotation {row.rotation} was already counted "
                                    "or is not one of a pair's two matches") from None
        while (games := self._book.pop()) is not None:
            self.state = self.state.add(DealPair.from_games(games[0], games[1]))
            self.trace.append(self.state.llr)

    @property
    def waiting(self) -> int:
        return self._book.held


class SprtRun:
    """A run's strategy (``runner.Strategy``) for a sequential test: the matches the test
    still needs (``pending``), and the test as they finish (``on_completed``). Made by
    ``resume`` from the store and the run's plan (``runner.plan_strategy`` does)."""

    def __init__(self, config: TournamentConfig, plan: RunPlan, book: PairBook) -> None:
        self.config = config
        self.plan = plan
        self.book = book
        # The deals the store reaches into: after a decision, these are completed, no more.
        self.stored_deals = -(-plan.total // config.sides)
        self.decided_before = book.state.finished
        self.limit = sprt_pair_limit(config)

    @classmethod
    def resume(cls, config: TournamentConfig, store: ResultStore, plan: RunPlan) -> SprtRun:
        """The test as the stored matches leave it (read once, in schedule order)."""
        book = PairBook.of(config)
        if plan.done:
            for row in store.iter_rows():
                book.add(row)
        return cls(config, plan, book)

    @property
    def done(self) -> int:
        """Matches stored before this run."""
        return self.plan.done

    @property
    def state(self) -> SprtState:
        return self.book.state

    @property
    def has_work(self) -> bool:
        """Whether any match is left: the test has not decided, or a stored deal is incomplete."""
        if not self.state.finished:
            return self.book.next_deal < self.limit
        return self.book.next_deal < self.stored_deals

    @property
    def pending(self) -> Iterator[MatchSpec]:
        """The matches to play, in schedule order, both of a deal together; no new deal once
        the test has decided (checked each time a deal would start)."""
        stored = self.plan.stored
        for spec in iter_schedule(self.config):
            if spec.rotation == 0 and self.state.finished and spec.deal >= self.stored_deals:
                return
            if spec.index >= len(stored) or not stored[spec.index]:
                yield spec

    @property
    def total(self) -> None:
        return None  # the test decides how many

    def on_completed(self, completed: Completed, done: int) -> None:
        """Told of every match as it is stored (by ``runner.play``)."""
        self.book.add(completed.row)

    def summary(self) -> SprtSummary:
        return self.state.summary()

    def outcome(self, store: ResultStore) -> dict[str, Any]:
        return {"total": store.count(), "sprt": self.summary()}


@dataclass(frozen=True)
class SprtOutcome:
    """A sequential test as its store tells it: the summary, the LLR after each pair in deal
    order, the two sides, and the matches stored beyond the first incomplete pair (0 once a
    run has finished: they wait for a resume)."""

    summary: SprtSummary
    trace: tuple[float, ...]
    candidate: str
    baseline: str
    waiting: int
    limit: int


def replay_store(store: ResultStore, rows: Iterable[MatchRow] | None = None) -> SprtOutcome:
    """The test recomputed from a store's rows (``rows``: already checked ones, e.g. from
    ``audit.scheduled_rows``; default: every row checked against the schedule)."""
    from arena.tournament.audit import scheduled_rows, store_config

    config = store_config(store)
    book = PairBook.of(config)
    for row in rows if rows is not None else scheduled_rows(store):
        book.add(row)
    candidate, baseline = sides_of(config)
    return SprtOutcome(book.state.summary(), tuple(book.trace), candidate, baseline, book.waiting,
                       sprt_pair_limit(config))


def is_sprt_store(store: ResultStore) -> bool:
    game = store.meta().get("game")
    return isinstance(game, dict) and game.get("format") == Format.SPRT.value


__all__ = ["PairBook", "SprtOutcome", "SprtRun", "game_result", "is_sprt_store", "replay_store", "sides_of", "sprt_params"]
