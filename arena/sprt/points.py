"""Points per hand: the second metric, a sequential test on a normal mean with unknown spread.

Each pair gives one number: the first side's match points minus the other's, over both
games, divided by the hands both games lasted. Its mean ``mu`` over many pairs is the
margin the first side wins by, in points per hand. H0 says ``mu = points0``, H1 says
``mu = points1``.

The spread of this number depends on the game and the bots and is not known in advance,
so the test is the generalized likelihood ratio of a normal sample with unknown variance
(the sequential t-test in Wald's form): with ``S_k = sum_i (x_i - points_k)^2``, the
variance's most likely value under hypothesis k is ``S_k / n`` and

    LLR = n/2 * log(S_0 / S_1).

It is the same construction as fishtest's generalized ratio for the Elo models (the
nuisance parameter, here the variance, at its most likely value under each hypothesis),
and for large n it equals the Brownian approximation fishtest uses for its drift
(``LLR_alt2``): ``n (points1 - points0)(2 mean - points0 - points1) / (2 var)``. The mean
of n pairs is close to normal long before a test ends (pairs are independent, the
points per hand bounded), which is the approximation this rests on.

Two guards, both documented in docs/SPRT.md:

* a floor of ``1e-6 (points1 - points0)^2`` on each variance estimate, so the ratio stays
  finite when every pair has exactly one value (two copies of one deterministic bot mirror
  each other on duplicate deals: every pair is exactly 0);
* no decision before ``POINTS_MIN_PAIRS`` pairs: with a handful of pairs the estimated
  variance can be tiny by chance and the ratio overshoots. Simulated with
  ``benchmarks/sprt.py --points-only --points-min-pairs N``: without the guard a test that
  needs about 30 pairs accepts H1 wrongly about 9% of the time at alpha = 5%; with 20
  pairs, at most alpha (docs/SPRT.md gives the figures).

The tally keeps the count, mean and sum of squared deviations (Welford's update), so the
test's state is three numbers however long it runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena.rating.table import Z95

POINTS_MIN_PAIRS = 20
"""Pairs with points before the points metric may stop at a bound."""

VARIANCE_FLOOR = 1e-6
"""Each variance estimate is at least this times (points1 - points0) squared."""


@dataclass(frozen=True)
class PointsTally:
    """Per-pair points-per-hand differences seen so far: count, mean and sum of squared deviations."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, x: float) -> PointsTally:
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        return PointsTally(n=n, mean=mean, m2=self.m2 + delta * (x - mean))

    def squares_about(self, center: float) -> float:
        """``sum_i (x_i - center)^2``."""
        return self.m2 + self.n * (self.mean - center) ** 2


def points_llr(tally: PointsTally, points0: float, points1: float) -> float:
    """``n/2 log(S_0 / S_1)`` with the variance floor; 0 before the first pair."""
    if tally.n == 0:
        return 0.0
    floor = tally.n * VARIANCE_FLOOR * (points1 - points0) ** 2
    s0 = max(tally.squares_about(points0), floor)
    s1 = max(tally.squares_about(points1), floor)
    return tally.n / 2.0 * math.log(s0 / s1)


@dataclass(frozen=True)
class PointsEstimate:
    """The mean points-per-hand margin of the first side, its 95% half-width and per-pair spread."""

    pairs: int
    mean: float
    error: float
    stdev: float

    @property
    def interval(self) -> tuple[float, float]:
        return self.mean - self.error, self.mean + self.error


def points_estimate(tally: PointsTally) -> PointsEstimate | None:
    """Mean +- 95% (normal approximation, sample standard deviation); ``None`` below two pairs."""
    if tally.n < 2:
        return None
    stdev = math.sqrt(tally.m2 / (tally.n - 1))
    return PointsEstimate(pairs=tally.n, mean=tally.mean, error=Z95 * stdev / math.sqrt(tally.n), stdev=stdev)
