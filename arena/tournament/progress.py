"""What a run shows while it plays: matches per minute, the current leader by rating, the
failures so far, and one line (or one JSON object) per finished match.

The leader comes from a real rating fit (``arena.rating.table.fit_ratings``, with the library's
default prior), over pairwise results kept as counts: the fit costs the same at the
100,000th match as at the 100th in memory, and it is redone at most every
``interval`` seconds (longer when a fit takes long), so it costs little. Pure apart from
the clock it is given; the command line prints what it returns.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from arena.core.rules import Seating
from arena.rating.table import PairResult, RatingError, fit_ratings
from arena.tournament.failures import FailureNote
from arena.tournament.store import MatchRow

DEFAULT_FIT_INTERVAL_S = 5.0
# A fit may take at most this share of the run's time.
_FIT_SHARE = 0.05


class LiveLeader:
    """The current leader by rating, refitted at most every ``interval`` seconds."""

    def __init__(self, seating: Seating, bots: Iterable[str], *, interval: float = DEFAULT_FIT_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._seating = seating
        self._bots = tuple(bots)
        self._interval = interval
        self._clock = clock
        # (side a, side b, score of a) -> how many times: all a Bradley-Terry fit needs.
        self._results: Counter[tuple[tuple[str, ...], tuple[str, ...], float]] = Counter()
        self._added = 0
        self._fitted_at: float | None = None
        self._fitted_with = 0
        self._wait = interval
        self._text = "-"
        self._settled: str | None = None

    def add(self, row: MatchRow) -> None:
        from arena.tournament.standings import pair_results

        if self._settled is not None:
            return
        for pair in pair_results(row, self._seating):
            self._results[tuple(pair.side_a), tuple(pair.side_b), float(pair.score_a)] += 1
        self._added += 1

    def _expanded(self) -> Iterator[PairResult]:
        for (side_a, side_b, score), count in self._results.items():
            result = PairResult(side_a, side_b, score)
            for _ in range(count):
                yield result

    def settle(self, name: str | None, elo: str) -> None:
        """The run is over: from now on the leader is the final table's (``name``, its ``elo``
        cell), so the last status line can never contradict the table printed under it."""
        self._settled = "-" if name is None else f"{name} ({elo})"

    def text(self) -> str:
        """``name (+123)``: the best-rated bot now; refits only when due."""
        if self._settled is not None:
            return self._settled
        now = self._clock()
        due = self._fitted_at is None or now - self._fitted_at >= self._wait
        if self._added and self._added != self._fitted_with and due:
            started = self._clock()
            self._text = self._fit()
            cost = self._clock() - started
            self._fitted_at = self._clock()
            self._fitted_with = self._added
            self._wait = max(self._interval, cost / _FIT_SHARE)
        return self._text

    def _fit(self) -> str:
        try:
            table = fit_ratings(self._expanded(), players=self._bots)
        except RatingError:
            return self._text
        best = min(table.ratings, key=lambda r: r.rank, default=None)
        if best is None:
            return "-"
        # Without a prior (an arena whose library has none by default) a perfect record is unbounded.
        return f"{best.name} ({best.elo:+.0f})" if best.elo is not None else f"{best.name} (unbounded)"


class Throughput:
    """Matches per minute over the matches played by this run."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()
        self.played = 0

    def add(self) -> None:
        self.played += 1

    def text(self) -> str:
        elapsed = self._clock() - self._start
        if not self.played or elapsed <= 0:
            return "-/min"
        return f"{60 * self.played / elapsed:.1f}/min"


def match_line(row: MatchRow, failures: Sequence[FailureNote]) -> str:
    """One finished match for ``-v``: id, sides, score, how it ended, failures."""
    sides = " vs ".join(row.sides)
    score = "-".join(map(str, row.scores))
    winner = "draw" if row.winner is None else f"{row.sides[row.winner]} wins"
    failed = "".join(f"; {note.bot} {note.reason}" for note in failures)
    return f"{row.id}  {sides}  {score}  {winner} ({row.reason}){failed}"


def match_json(row: MatchRow, failures: Sequence[FailureNote], done: int, total: int) -> str:
    """One finished match for ``--progress jsonl``: a JSON object on one line."""
    data: dict[str, Any] = {
        "id": row.id,
        "index": row.index,
        "seats": list(row.seats),
        "sides": list(row.sides),
        "scores": list(row.scores),
        "winner": row.winner,
        "winner_side": None if row.winner is None else row.sides[row.winner],
        "reason": row.reason.value,
        "hands": row.hands,
        "failures": [note.to_dict() for note in failures],
        "done": done,
        "total": total,
    }
    return json.dumps(data, separators=(",", ":"))


__all__ = ["DEFAULT_FIT_INTERVAL_S", "LiveLeader", "Throughput", "match_json", "match_line"]
