"""Scoring a hand: one point per category, per side, with the breakdown (RULES.md)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import and_, itemgetter

from arena.core.cards import DECK, DECK_BITS, Card, Suit
from arena.core.rules import Rules

_CARD_BIT = Card._fields.index("bit")

_bit = itemgetter(_CARD_BIT)  # Card.bit, read as the named tuple's item: a C call without an attribute lookup
_bit_count = int.bit_count
_VELO = Card.parse("7o").bit
_OROS = sum(c.bit for c in DECK if c.oro)
_SEVENS = sum(c.bit for c in DECK if c.seven)

# Order in which a tie on sevens is broken under sevens: most_tiebreak (seed 000).
_TIEBREAK_RANKS: tuple[tuple[int, ...], ...] = ((6,), (1,), (5,), (4,), (3,), (2,), (10, 11, 12))

CATEGORIES = ("escobas", "cards", "oros", "velo", "sevens", "all_sevens")


def _unique_max(values: Sequence[int]) -> int | None:
    """Index of the strictly greatest value, or None when the maximum is shared."""
    best = max(values)
    return values.index(best) if values.count(best) == 1 else None


def primera(pile: Sequence[Card]) -> int:
    """Sum over suits of the best primera value held in that suit (a missing suit adds 0)."""
    best = {suit: 0 for suit in Suit}
    for card in pile:
        if card.primera > best[card.suit]:
            best[card.suit] = card.primera
    return sum(best.values())


def _sevens_winner(piles: Sequence[Sequence[Card]], sevens: list[int], mode: str) -> int | None:
    if mode == "primera":
        return _unique_max([primera(p) for p in piles])
    winner = _unique_max(sevens)
    if winner is not None or mode == "most":
        return winner
    top = max(sevens)
    candidates = [i for i, n in enumerate(sevens) if n == top]
    for ranks in _TIEBREAK_RANKS:
        held = [sum(1 for c in piles[i] if c.rank in ranks) for i in candidates]
        best = max(held)
        candidates = [i for i, n in zip(candidates, held, strict=True) if n == best]
        if len(candidates) == 1:
            return candidates[0]
    return None


def score_hand(piles: Sequence[Sequence[Card]], escobas: Sequence[int], rules: Rules) -> tuple[dict[str, int], ...]:
    """Per side: the points of each category, ``total``, and the counts behind them.

    The point keys are CATEGORIES plus ``total``; ``n_cards``, ``n_oros``, ``n_sevens`` (and
    ``primera`` under sevens: primera) are the raw counts, kept so a reader can see why a point went where it did.
    """
    # A comprehension costs a frame in CPython: the counts are loops that run in C.
    n_cards = list(map(len, piles))
    if len(piles) == 2 and n_cards[0] + n_cards[1] == 40:
        # Two piles holding the whole deck (someone captured, so the last sweep emptied the
        # table): one pile's set of cards is the rest of the other's, and the smaller is summed.
        small = 0 if n_cards[0] <= n_cards[1] else 1
        bits = sum(map(_bit, piles[small]))
        held = [bits, DECK_BITS ^ bits] if small == 0 else [DECK_BITS ^ bits, bits]
    else:
        held = [sum(map(_bit, p)) for p in piles]  # each pile as a set of cards, one bit per card
    n_oros = list(map(_bit_count, map(and_, held, repeat(_OROS))))
    n_sevens = list(map(_bit_count, map(and_, held, repeat(_SEVENS))))
    if len(piles) == 2:  # the common table, without the general search for a unique maximum
        first, second = n_cards
        cards_w = 0 if first > second else 1 if second > first else None
        first, second = n_oros
        oros_w = 0 if first > second else 1 if second > first else None
        first, second = n_sevens
        sevens_w = 0 if first > second else 1 if second > first else None
        if sevens_w is None or rules.sevens == "primera":
            sevens_w = _sevens_winner(piles, n_sevens, rules.sevens)
    else:
        cards_w = _unique_max(n_cards)
        oros_w = _unique_max(n_oros)
        sevens_w = _sevens_winner(piles, n_sevens, rules.sevens)
    bonus = rules.all_sevens_bonus
    by_primera = rules.sevens == "primera"
    result = []
    for side, pile in enumerate(piles):
        escoba = escobas[side]
        cards = 1 if cards_w == side else 0
        oros = 1 if oros_w == side else 0
        velo = 1 if held[side] & _VELO else 0
        sevens = 1 if sevens_w == side else 0
        all_sevens = 1 if bonus and n_sevens[side] == 4 else 0
        # The keys in this order: CATEGORIES, total, then the counts.
        b = {"escobas": escoba, "cards": cards, "oros": oros, "velo": velo, "sevens": sevens,
             "all_sevens": all_sevens, "total": escoba + cards + oros + velo + sevens + all_sevens,
             "n_cards": n_cards[side], "n_oros": n_oros[side], "n_sevens": n_sevens[side]}
        if by_primera:
            b["primera"] = primera(pile)
        result.append(b)
    return tuple(result)
