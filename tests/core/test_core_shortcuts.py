"""The rules core's shortcuts give what the plain algorithm gives.

The shuffle draws once per group of steps, scoring has a shortcut for two sides, and a trail's
Play event is a shared instance: each is checked here against the straightforward version.
"""

from __future__ import annotations

from collections.abc import MutableSequence

import pytest

from arena.core.cards import DECK, Card
from arena.core.events import Play
from arena.core.game import HandState
from arena.core.rules import Rules, Seating
from arena.core.scoring import _sevens_winner, _unique_max, score_hand
from arena.core.seeding import Rng

_MASK = (1 << 64) - 1


def _reference_shuffle(state: int, items: MutableSequence[int]) -> int:
    """Rng.shuffle as its docstring states it: Fisher-Yates from the end, a fresh splitmix64
    draw whenever fewer than 16 bits of the fraction are left."""
    z = 0
    budget = 0
    for i in range(len(items) - 1, 0, -1):
        if budget < 16:
            state = (state + 0x9E3779B97F4A7C15) & _MASK
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
            z ^= z >> 31
            budget = 64
        product = z * (i + 1)
        j = product >> 64
        z = product & _MASK
        budget -= (i + 1).bit_length()
        items[i], items[j] = items[j], items[i]
    return state


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 40, 41, 100])
def test_the_shuffle_is_the_documented_fisher_yates(n):
    for seed in range(30):
        got, want = list(range(n)), list(range(n))
        rng = Rng(seed)
        rng.shuffle(got)
        state = _reference_shuffle(seed, want)
        assert got == want
        assert rng._state == state  # the next draws follow on from the same point


def _reference_winners(piles, rules):
    n_cards = [len(p) for p in piles]
    n_oros = [sum(c.oro for c in p) for p in piles]
    n_sevens = [sum(c.seven for c in p) for p in piles]
    return _unique_max(n_cards), _unique_max(n_oros), _sevens_winner(piles, n_sevens, rules.sevens)


@pytest.mark.parametrize("sevens", ["most", "most_tiebreak", "primera"])
def test_two_side_scoring_matches_the_general_rule(sevens):
    rules = Rules(sevens=sevens)
    rng = Rng(11)
    ties = 0
    for _ in range(400):
        cards = list(DECK)
        rng.shuffle(cards)
        cut = 14 + rng.below(13)  # around 20 each, so ties on every majority happen
        piles: list[list[Card]] = [cards[:cut], cards[cut:]]
        scored = score_hand(piles, [0, 0], rules)
        cards_w, oros_w, sevens_w = _reference_winners(piles, rules)
        for side in (0, 1):
            assert scored[side]["cards"] == int(cards_w == side)
            assert scored[side]["oros"] == int(oros_w == side)
            assert scored[side]["sevens"] == int(sevens_w == side)
        ties += scored[0]["n_sevens"] == scored[1]["n_sevens"]
    assert ties  # a tie on sevens, which the shortcut leaves to the general rule, was met


def test_a_trail_is_recorded_as_a_play_with_nothing_taken():
    rules, seating = Rules(), Seating.alone(3)
    hand = HandState.shuffled(rules, seating, 0, 5)
    while not hand.is_over:
        legal = hand.legal_moves()
        trails = [m for m in legal if not m.take]
        move = trails[0] if trails else legal[0]
        seat = hand.turn
        hand.apply(move)
        event = next(e for e in reversed(hand.events) if isinstance(e, Play))
        assert event == Play(seat, move.card, move.take)  # type: ignore[arg-type]
        assert type(event) is Play


@pytest.mark.parametrize("left_on_table", [0, 3])
def test_scoring_counts_match_the_cards_with_and_without_the_whole_deck(left_on_table):
    # Two piles holding all 40 cards are counted from the smaller one; otherwise pile by pile.
    rng = Rng(12)
    for _ in range(200):
        cards = list(DECK)
        rng.shuffle(cards)
        cut = 10 + rng.below(20)
        piles = [cards[:cut], cards[cut:40 - left_on_table]]
        scored = score_hand(piles, [0, 0], Rules())
        for side, pile in enumerate(piles):
            assert scored[side]["n_cards"] == len(pile)
            assert scored[side]["n_oros"] == sum(c.is_oros for c in pile)
            assert scored[side]["n_sevens"] == sum(c.rank == 7 for c in pile)
            assert scored[side]["velo"] == int(any(c.is_velo for c in pile))


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_every_dealt_hand_is_the_deck_slice_in_order(players):
    # The deal orders each seat's three cards by hand, without sorted().
    seating = Seating.alone(players) if players != 6 else Seating.pairs(6, 3)
    for seed in range(60):
        hand = HandState.shuffled(Rules(), seating, seed % players, seed)
        rng = Rng(seed)
        while not hand.is_over:
            legal = hand.legal_moves()
            hand.apply(legal[rng.below(len(legal))])
        dealt = [e for e in hand.events if e.kind == "cards"]
        assert len(dealt) == 12  # 36 cards dealt three at a time
        pos = 0
        for event in dealt:
            assert list(event.cards) == sorted(hand.deck[pos:pos + 3])
            pos += 3
            if pos in (3 * players,):
                pos += 4  # the table is laid after the first round's hands


def test_a_short_stock_deals_what_is_left():
    # A position's stock need not be a whole round: the last seat gets what is left.
    cards = list(DECK)
    hands = [cards[0:1], cards[1:2]]
    stock = [cards[9], cards[5], cards[7], cards[2]]
    table = cards[10:14]
    hand = HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=stock, turn=0)
    hand.apply(hand.legal_moves()[-1])
    hand.apply(hand.legal_moves()[-1])
    assert hand.hands[1] == sorted(stock[:3]) and hand.hands[0] == [stock[3]]
