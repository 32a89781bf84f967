"""Scoring a hand: one point per category, per side, with the breakdown (RULES.md)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from arena.cards import Card, Suit
from arena.rules import Rules

_oro = attrgetter("oro")
_seven = attrgetter("seven")
_VELO = Card.parse("7o")

# Order in which a tie on sevens is broken under sevens: most_tiebreak (seed 000).
_TIEBREAK_RANKS: tuple[tuple[int, ...], ...] = ((6,), (1,), (5,), (4,), (3,), (2,), (10, 11, 12))

CATEGORIES = ("escobas", "cards", "oros", "velo", "sevens", "all_sevens")


def _unique_max(values: Sequence[int | float]) -> int | None:
    """Index of the strictly greatest value, or None when the maximum is shared."""
    best = max(values)
    winners = [i for i, v in enumerate(values) if v == best]
    return winners[0] if len(winners) == 1 else None


def primera(pile: Sequence[Card]) -> int:
    """Sum over suits of the best primera value held in that suit (a missing suit adds 0)."""
    best = {suit: 0 for suit in Suit}
    for card in pile:
        if card.primera > best[card.suit]:
            best[card.suit] = card.primera
    return sum(best.values())


def _sevens_winner(piles: Sequence[Sequence[Card]], mode: str) -> int | None:
    if mode == "primera":
        return _unique_max([primera(p) for p in piles])
    counts = [sum(map(_seven, p)) for p in piles]
    winner = _unique_max(counts)
    if winner is not None or mode == "most":
        return winner
    top = max(counts)
    candidates = [i for i, n in enumerate(counts) if n == top]
    for ranks in _TIEBREAK_RANKS:
        held = [sum(1 for c in piles[i] if c.rank in ranks) for i in candidates]
        best = max(held)
        candidates = [i for i, n in zip(candidates, held, strict=False) if n == best]
        if len(candidates) == 1:
            return candidates[0]
    return None


def score_hand(piles: Sequence[Sequence[Card]], escobas: Sequence[int], rules: Rules) -> tuple[dict[str, int], ...]:
    """Per side: the points of each category, ``total``, and the counts behind them.

    The point keys are CATEGORIES plus ``total``; ``n_cards``, ``n_oros``, ``n_sevens`` (and
    ``primera`` under sevens: primera) are the raw counts, kept so a reader can see why a point went where it did.
    """
    sides = len(piles)
    n_cards = [len(p) for p in piles]
    n_oros = [sum(map(_oro, p)) for p in piles]
    n_sevens = [sum(map(_seven, p)) for p in piles]
    cards_w = _unique_max(n_cards)
    oros_w = _unique_max(n_oros)
    sevens_w = _sevens_winner(piles, rules.sevens)
    result = []
    for side in range(sides):
        b = {
            "escobas": escobas[side],
            "cards": int(cards_w == side),
            "oros": int(oros_w == side),
            "velo": int(_VELO in piles[side]),
            "sevens": int(sevens_w == side),
            "all_sevens": int(rules.all_sevens_bonus and n_sevens[side] == 4),
        }
        b["total"] = sum(b[k] for k in CATEGORIES)
        b["n_cards"] = n_cards[side]
        b["n_oros"] = n_oros[side]
        b["n_sevens"] = n_sevens[side]
        if rules.sevens == "primera":
            b["primera"] = primera(piles[side])
        result.append(b)
    return tuple(result)
