"""Oracle designs for ``benchmarks/formats.py --oracles``: schedules that know the true strengths,
to measure how few matches any design needs to rank a field as well as a round robin does.

Every design here is a generator that plays pairings on a ``Field`` (each pairing one duplicate
deal: two matches drawn from the rating model) and yields after each, so that the caller can
rate the field at its checkpoints. The designs cheat: they read ``field.elo``. What they give is
an estimate from below of what the arena's ladder, which must learn the strengths as it goes,
can reach in this model (the best of the designs tried, not a proof over all designs).

* ``band``: each bot meets its ``k`` nearest neighbours in true rank on each side, every such
  pair once a round (the most information per match, p(1-p) near 1/4, but the field is a chain
  of overlapping neighbourhoods).
* ``near``: a bot chosen by how far it is behind its share meets a partner drawn at random
  within ``width`` ranks of it (or, ``long_share`` of the time, anywhere in the field); the
  shares are equal (``alpha`` 0) or follow the field's density in rating (``alpha`` 1: where
  bots are crowded a rating error costs more ranks, and the optimum of sum density^2 / info
  gives each bot information in proportion to its density).
* ``greedy``: the optimal design sought step by step. The expected number of pairs in the
  wrong order, sum over pairs of Phi(-gap / sd of the estimated gap), with every sd from the
  true information of the matches played so far (the gap's variance is the effective
  resistance between the two bots in the network of matches whose conductances are the
  matches' p(1-p)); each next pairing is the one whose matches reduce it most (the true gaps,
  the true p(1-p); the reduction to first order, recomputed every ``batch`` pairings). This is
  the brief's "expected reduction of the rank loss" with everything known but the luck.
* ``ladder``: the arena's own (``AdaptiveSchedule``), as the arena plays it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from arena.rating.table import ELO_PER_NAT, PairResult
from arena.tournament.adaptive import AdaptiveSchedule
from arena.tournament.config import TournamentConfig

# Ranks on each side over which a bot's density in rating is measured.
DENSITY_HALF_WIDTH = 5


class Playable(Protocol):
    elo: np.ndarray
    rng: np.random.Generator
    results: list[PairResult]

    def play(self, a: int, b: int) -> None: ...


Design = Callable[[Playable, np.random.Generator], Iterator[None]]


def density(elo: np.ndarray) -> np.ndarray:
    """Bots per nat of true strength around each bot (by rank, ``DENSITY_HALF_WIDTH`` each side)."""
    n = len(elo)
    order = np.argsort(elo, kind="stable")
    sorted_elo = elo[order]
    out = np.empty(n)
    for r in range(n):
        lo, hi = max(0, r - DENSITY_HALF_WIDTH), min(n - 1, r + DENSITY_HALF_WIDTH)
        out[order[r]] = (hi - lo) / max(sorted_elo[hi] - sorted_elo[lo], 1e-9)
    return out


def band(k: int) -> Design:
    def design(field: Playable, rng: np.random.Generator) -> Iterator[None]:
        order = np.argsort(field.elo, kind="stable").tolist()
        pairs = [(order[r], order[r + d]) for d in range(1, k + 1) for r in range(len(order) - d)]
        while True:
            # A round in a shuffled order, so that a round cut short is not all short pairs.
            for p in rng.permutation(len(pairs)).tolist():
                field.play(*pairs[p])
                yield

    return design


def near(width: int, alpha: float = 0.0, long_share: float = 0.0) -> Design:
    def design(field: Playable, rng: np.random.Generator) -> Iterator[None]:
        n = len(field.elo)
        order = np.argsort(field.elo, kind="stable")
        rank = np.empty(n, dtype=int)
        rank[order] = np.arange(n)
        share = density(field.elo) ** alpha
        share /= share.mean()
        played = np.zeros(n)
        while True:
            focus = int(np.argmin(played / share))
            if rng.random() < long_share:
                other = int(rng.integers(n - 1))
                partner = other + (other >= focus)
            else:
                lo, hi = max(0, rank[focus] - width), min(n - 1, rank[focus] + width)
                r = int(rng.integers(lo, hi))  # hi - lo ranks besides the focus's own
                partner = int(order[r + (r >= rank[focus])])
            field.play(focus, partner)
            played[focus] += 1
            played[partner] += 1
            yield

    return design


def greedy(batch: int = 8, seed_info: float = 0.05) -> Design:
    def design(field: Playable, rng: np.random.Generator) -> Iterator[None]:
        from scipy.stats import norm

        n = len(field.elo)
        theta = field.elo / ELO_PER_NAT
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        q = 2.0 * p * (1.0 - p)  # a pairing's two matches
        gap = np.abs(theta[:, None] - theta[None, :])
        upper = np.triu(np.ones((n, n), dtype=bool), 1)
        # G = (L + J/n)^-1, so that u'Gu is u'L+u for every difference u: the information so
        # far is a weak complete graph (``seed_info`` per bot in all), which keeps L invertible
        # and gives the first choices an order without favouring any pair.
        laplacian = seed_info / n * (n * np.eye(n) - np.ones((n, n)))
        g = np.linalg.inv(laplacian + np.ones((n, n)) / n)
        while True:
            d = np.diag(g)
            resistance = np.maximum(d[:, None] + d[None, :] - 2.0 * g, 1e-12)
            sd = np.sqrt(resistance)
            # d/dR of Phi(-gap / sqrt(R)): the weight of each pair's variance in the loss.
            w = norm.pdf(gap / sd) * gap / (2.0 * sd**3)
            np.fill_diagonal(w, 0.0)
            weights = np.diag(w.sum(axis=1)) - w  # the Laplacian of the weights
            a = g @ weights @ g
            da = np.diag(a)
            # Loss reduction of one more pairing of (i, j), Sherman-Morrison: q u'Au / (1 + q R).
            score = q * (da[:, None] + da[None, :] - 2.0 * a) / (1.0 + q * resistance)
            score[~upper] = -np.inf
            best = np.argpartition(score, -batch, axis=None)[-batch:]
            for flat in best[np.argsort(-score.flat[best], kind="stable")].tolist():
                i, j = divmod(flat, n)
                field.play(i, j)
                u = g[:, i] - g[:, j]
                g -= q[i, j] * np.outer(u, u) / (1.0 + q[i, j] * (u[i] - u[j]))
                yield

    return design


def arena_ladder(config: TournamentConfig, row_of: Callable[..., object]) -> Design:
    """The arena's ladder, every batch played as soon as it is chosen (as play_adaptive does)."""

    def design(field: Playable, rng: np.random.Generator) -> Iterator[None]:
        schedule = AdaptiveSchedule(config)
        while isinstance(batch := schedule.next_batch(), list):
            for spec in batch:
                schedule.add(row_of(spec))  # type: ignore[arg-type]
            yield

    return design


@dataclass(frozen=True)
class Named:
    name: str
    design: Design


def designs(ladder: Design, n: int) -> list[Named]:
    """The designs measured, the arena's ladder among them."""
    return [
        Named("band 1 (each bot its nearest neighbour each side)", band(1)),
        Named("band 4", band(4)),
        Named("band 16", band(16)),
        Named("near 8", near(8)),
        Named("near 24", near(24)),
        Named("near 64", near(64)),
        Named("near 24, by density", near(24, alpha=1.0)),
        Named("near 64, by density", near(64, alpha=1.0)),
        Named("near 24, by density, 1 in 10 anywhere", near(24, alpha=1.0, long_share=0.1)),
        Named("random pairs (reference)", near(n)),
        Named("greedy: most expected inversions removed", greedy()),
        Named("band 32", band(32)),
        Named("arena ladder (window 16)", ladder),
    ]
