"""What a position is worth to a side: the real points of a finished hand, else an estimate."""

from __future__ import annotations

import math
from collections.abc import Sequence

from arena.core.cards import Card
from arena.core.game import OVER, HandState


def margin(points: Sequence[int], side: int) -> float:
    """This side's points minus the average of the other sides'."""
    others = [p for s, p in enumerate(points) if s != side]
    return points[side] - sum(others) / len(others)


def _edge_table(size: int, lump: float) -> list[list[float]]:
    """EDGE[r][d + 40]: P(ahead) - P(behind) at the end for a lead of ``d`` with ``r`` cards of
    a kind (of at most ``size``) still to share.

    The cards are not shared one by one at even odds: captures take them in lumps, so the
    share of one side varies about ``lump`` times as much as if each card went its own way.
    The share is beta-binomial, each side's odds at one half, with that variance (a
    correlation of (lump - 1) / (r - 1) between any two cards): exact at the bounds (a lead
    larger than the cards left is certain) and at ties (an even split scores nobody)."""
    table = []
    for r in range(size + 1):
        rho = min(0.99, (lump - 1) / (r - 1)) if r > 1 else 0.0
        if rho > 0:
            a = (1 / rho - 1) / 2  # both beta parameters: mean one half, correlation rho
            probs = [math.exp(math.lgamma(r + 1) - math.lgamma(x + 1) - math.lgamma(r - x + 1)
                              + math.lgamma(x + a) + math.lgamma(r - x + a) - math.lgamma(r + 2 * a)
                              - 2 * math.lgamma(a) + math.lgamma(2 * a))
                     for x in range(r + 1)]
        else:
            probs = [math.comb(r, x) / 2 ** r for x in range(r + 1)]
        below = [0.0]  # below[x]: the odds of fewer than x cards to this side
        for p in probs:
            below.append(below[-1] + p)
        row = []
        for d in range(-40, 41):
            # Ahead with x > (r - d) / 2 of them, behind with x < (r - d) / 2.
            tie = r - d
            first_ahead = min(r + 1, max(0, tie // 2 + 1))
            last_behind = min(r + 1, max(0, (tie + 1) // 2))
            row.append((1.0 - below[first_ahead]) - below[last_behind])
        table.append(row)
    return table


# How lumpy each majority's sharing is, fitted to where greedy self-play really ends (100,000
# hands, the lead and the cards left at every point where a playout stops: the squared error
# of the odds fell from 0.085 to 0.003 for the cards, 0.008 to 0.0004 for the oros and
# 0.0007 to 0.0001 for the sevens against sharing card by card at even odds). Cards go
# to the piles in lumps (a capture takes several), oros and sevens mostly one at a time.
_CARDS = _edge_table(40, 4.5)
_OROS = _edge_table(10, 1.5)
_SEVENS = _edge_table(4, 1.25)
_VELO = Card.parse("7o")


# The categories of a hand's points as the analyst splits a value (arena/search/analysis.py):
# all_sevens, a bonus of the sevens, counts among the sevens.
TERMS = ("escobas", "velo", "oros", "cards", "sevens")


def estimate_terms(state: HandState, side: int) -> tuple[float, float, float, float, float]:
    """``estimate`` by category, in the order of TERMS."""
    mine, theirs = state.piles[side], state.piles[1 - side]
    escobas = float(state.escobas[side] - state.escobas[1 - side])
    velo = 1.0 if _VELO in mine else -1.0 if _VELO in theirs else 0.0
    n_m, n_t = len(mine), len(theirs)
    o_m = o_t = s_m = s_t = 0
    for c in mine:
        o_m += c.oro
        s_m += c.seven
    for c in theirs:
        o_t += c.oro
        s_t += c.seven
    return (escobas, velo, _OROS[10 - o_m - o_t][o_m - o_t + 40], _CARDS[40 - n_m - n_t][n_m - n_t + 40],
            _SEVENS[4 - s_m - s_t][s_m - s_t + 40])


def estimate(state: HandState, side: int) -> float:
    """Expected point margin of ``side`` in an unfinished 2-side hand, from the piles so far:
    escobas and the velo as they stand, each majority by the odds of keeping the lead when
    the cards not yet captured are shared (see ``_edge_table``)."""
    escobas, velo, oros, cards, sevens = estimate_terms(state, side)
    return escobas + velo + cards + oros + sevens  # the order the terms were always added in


def evaluate(state: HandState, side: int) -> float:
    if state.phase == OVER:
        return margin(state.points(), side)
    return estimate(state, side)


def evaluate_terms(state: HandState, side: int) -> tuple[float, ...]:
    """``evaluate`` by category (TERMS): of a finished hand, each category's points as ``margin``
    counts them; else ``estimate_terms``. They add up to ``evaluate`` (to rounding)."""
    if state.phase != OVER:
        return estimate_terms(state, side)
    breakdown = state.breakdown or ()
    return tuple(margin([b[key] + (b["all_sevens"] if key == "sevens" else 0) for b in breakdown], side)
                 for key in TERMS)
