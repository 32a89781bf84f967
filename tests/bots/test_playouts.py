"""Seeded random playouts over every table shape, checking the invariants of the rules core."""

from collections import defaultdict
from functools import cache, reduce
from itertools import chain, compress, repeat
from operator import attrgetter, eq, or_

import pytest

from arena.core.cards import DECK, DECK_BITS
from arena.core.game import HandState, MatchState, hand_view
from arena.core.moves import MoveKind
from arena.core.rules import LastRoundEscoba, Rules, Seating
from arena.core.seeding import Rng, derive_seed

pytestmark = pytest.mark.slow  # plays many hands through the expert search

SHAPES = {
    "2": Seating.alone(2),
    "3": Seating.alone(3),
    "4": Seating.alone(4),
    "4-pairs": Seating.pairs(4),
    "6-three-pairs": Seating.pairs(6, 2),
    "6-two-trios": Seating.pairs(6, 3),
}

# Rule sets cycled over the seeds so that every option is exercised in every shape.
RULE_SETS = [
    Rules(),
    Rules(forced_capture=True),
    Rules(single_capture_priority=True),
    Rules(renuncio=True),
    Rules(escoba_en_mano=True, last_round_escoba=LastRoundEscoba.NO),
    Rules(renuncio=True, last_round_escoba=LastRoundEscoba.LAST_CARD),
    Rules(initial_table="subset15", sevens="primera", all_sevens_bonus=True),
    Rules(initial_table="sum15_or_30", sevens="most_tiebreak"),
    Rules(initial_table="none", renuncio=True, single_capture_priority=True),
]

SEEDS = range(500)

_BIT, _AUDIENCE, _KIND, _SEAT = attrgetter("bit"), attrgetter("audience"), attrgetter("kind"), attrgetter("seat")


# The reference sets below are sets of cards as bit masks (``Card.bit`` is ``1 << index``, a
# card set is the sum of its bits): the same sets as Python sets of cards, compared without a
# Python-level ``Card.__hash__`` call per card (tens of millions of them over these seeds).


def bits(cards):
    """The set of ``cards`` as one integer (their bits or-ed, in C)."""
    return reduce(or_, map(_BIT, cards), 0)


@cache
def brute_force_by_need(table_bits):
    """Every subset of the table (given as its bit mask), as a bit mask, bucketed by the card
    value that would complete 15. Only a function of which cards lie on the table, so each
    table met is enumerated once.

    The subsets are grown card by card from the empty one, each with its total; one whose total
    reaches 15 is not grown further: every card is worth at least 1, so none of its supersets
    totals less than 15."""
    subsets = {0: 0}  # mask -> total
    for card in DECK:
        if card.bit & table_bits:
            for mask, total in list(subsets.items()):
                if total + card.value < 15:
                    subsets[mask | card.bit] = total + card.value
    by_need = defaultdict(set)
    for mask, total in subsets.items():
        if mask:
            by_need[15 - total].add(mask)
    return dict(by_need)


def expected_play_moves(hand_state):
    """The play moves as (the card's bit, the take's bit mask)."""
    rules = hand_state.rules
    by_need = brute_force_by_need(bits(hand_state.table))
    expected = set()
    for card in hand_state.hands[hand_state.turn]:
        sets = by_need.get(card.value, set())
        if rules.single_capture_priority and any(s.bit_count() == 1 for s in sets):
            sets = {s for s in sets if s.bit_count() == 1}
        expected |= {(card.bit, s) for s in sets}
        if not (sets and rules.forced_capture):
            expected.add((card.bit, 0))
    return expected


def check_position(h: HandState):
    # All 40 cards accounted for, each exactly once.
    where = [c for hand in h.hands for c in hand] + list(h.table) + [c for p in h.piles for c in p] + list(h.stock)
    assert len(where) == 40 and bits(where) == DECK_BITS
    moves = h.legal_moves()
    if h.is_over:
        assert moves == []
        return
    assert moves, "a player to move always has a move"
    assert len(set(moves)) == len(moves)
    for m in moves:
        if m.kind is MoveKind.PLAY and m.take:
            assert m.card.value + sum(c.value for c in m.take) == 15
        if m.kind is MoveKind.CLAIM:
            assert m.card.value + sum(c.value for c in m.take) == 15
    if h.phase == "play":
        got = {(m.card.bit, bits(m.take)) for m in moves}
        assert got == expected_play_moves(h), "the engine missed or invented a capture"
    # Every seat sees its own hand and the public state, never another hand or the stock.
    hands = [bits(hand) for hand in h.hands]
    stock = bits(h.stock)
    for seat in range(h.seating.players):
        view = HandState_view(h, seat)
        assert view.hand == tuple(h.hands[seat])
        hidden = reduce(or_, [hand for s, hand in enumerate(hands) if s != seat], stock)
        visible = bits(chain(view.hand, view.table, *view.piles))
        assert not (visible & hidden)
        assert bits(view.unseen) == hidden
        # Every event public or this seat's, and every dealt hand in it this seat's: the loop
        # ``for e in view.events`` written with map, run in C (over every event of the hand, at
        # every position, for every seat, it was a third of this test's time).
        events = view.events
        assert set(map(_AUDIENCE, events)) <= {None, seat}
        assert set(map(_SEAT, compress(events, map(eq, map(_KIND, events), repeat("cards"))))) <= {seat}


def HandState_view(h, seat):
    return hand_view(h, seat, [0] * h.seating.sides, h.events)


def random_hand(seating, rules, seed, check=True):
    h = HandState.shuffled(rules, seating, seed % seating.players, derive_seed(seed, "deck"))
    rng = Rng(seed)
    while True:
        if check:
            check_position(h)
        if h.is_over:
            break
        moves = h.legal_moves()
        h.apply(moves[rng.below(len(moves))])
    points = h.points()
    assert all(b["total"] == sum(b[k] for k in ("escobas", "cards", "oros", "velo", "sevens", "all_sevens"))
               for b in h.breakdown)
    assert points == tuple(b["total"] for b in h.breakdown)
    return h


@pytest.mark.parametrize("shape", SHAPES)
def test_random_hands_keep_every_invariant(shape):
    seating = SHAPES[shape]
    for seed in SEEDS:
        rules = RULE_SETS[seed % len(RULE_SETS)]
        h = random_hand(seating, rules, seed)
        # Same seed, same game.
        again = random_hand(seating, rules, seed, check=False)
        assert [e.to_dict() for e in again.events] == [e.to_dict() for e in h.events]


@pytest.mark.parametrize("shape", SHAPES)
def test_random_matches_end_and_repeat(shape):
    seating = SHAPES[shape]
    for seed in range(0, len(SEEDS), 5):
        rules = RULE_SETS[seed % len(RULE_SETS)]
        results = []
        for _ in range(2):
            match = MatchState(rules, seating, seed)
            rng = Rng(seed)
            while not match.is_over:
                moves = match.legal_moves()
                match.apply(moves[rng.below(len(moves))])
            results.append((match.result, [e.to_dict() for e in match.events]))
        result, events = results[0]
        assert results[1] == results[0]
        assert result.reason in ("target", "max_hands")
        if result.winner is not None:
            assert result.scores[result.winner] >= rules.target
            assert sorted(result.scores)[-1] > sorted(result.scores)[-2]
        assert events[-1]["type"] == "match_end"
        hand_scores = [e for e in events if e["type"] == "hand_score"]
        assert len(hand_scores) == result.hands
        assert [sum(e["points"][s] for e in hand_scores) for s in range(seating.sides)] == list(result.scores)
