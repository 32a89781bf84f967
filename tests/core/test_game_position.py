"""HandState.position checks and lays out the 40 cards with bitmask loops: each refusal and
the deck it builds are checked here against the plain rule on random positions."""

from __future__ import annotations

import pytest

from arena.core.cards import DECK
from arena.core.game import HandState
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng


def _random_split(rng: Rng):
    cards = list(DECK)
    rng.shuffle(cards)
    sizes = [1 + rng.below(3), rng.below(4), rng.below(9), rng.below(20)]
    parts, pos = [], 0
    for size in sizes:
        parts.append(cards[pos:pos + size])
        pos += size
    hand0, hand1, table, stock = parts
    pile0, pile1 = cards[pos:pos + (40 - pos) // 2], cards[pos + (40 - pos) // 2:]
    return [hand0, hand1], table, stock, [pile0, pile1]


def test_the_deck_is_the_dealt_cards_in_deck_order_then_the_stock():
    rng = Rng(404)
    for _ in range(300):
        hands, table, stock, piles = _random_split(rng)
        hand = HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=stock, piles=piles,
                                  turn=0)
        in_stock = {c.index for c in stock}
        assert hand.deck == tuple(c for c in DECK if c.index not in in_stock) + tuple(stock)
        assert hand.stock == tuple(stock)


def test_a_card_twice_or_missing_is_refused_even_when_40_are_given():
    rng = Rng(405)
    for _ in range(200):
        hands, table, stock, piles = _random_split(rng)
        big = max(piles, key=len)
        doubled = big[:-1] + [hands[0][0]]  # 40 cards, one twice, one missing
        bad_piles = [doubled if p is big else p for p in piles]
        with pytest.raises(ValueError, match="exactly once"):
            HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=stock, piles=bad_piles)
        with pytest.raises(ValueError, match="exactly once"):  # 39 cards
            HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=stock,
                               piles=[p[:-1] if p is big else p for p in piles])
        with pytest.raises(ValueError, match="exactly once"):  # 41 cards
            HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=stock,
                               piles=[p + [table[0] if table else hands[0][0]] if p is big else p for p in piles])


def test_left_out_piles_get_every_card_not_placed():
    rng = Rng(406)
    for _ in range(100):
        hands, table, stock, _ = _random_split(rng)
        hand = HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=stock, turn=0)
        placed = {c.index for c in [*hands[0], *hands[1], *table, *stock]}
        assert hand.piles == [[c for c in DECK if c.index not in placed], []]
