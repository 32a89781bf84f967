"""The analyst's measure, arena.search.analysis.move_values: comparable values, seeded."""

from __future__ import annotations

from arena.core.game import HandState, hand_view
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.search.analysis import move_values


def _position(seed: int):
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, seed, events=[])
    while len(state.legal_moves()) < 3:
        state.apply(state.legal_moves()[0])
    return hand_view(state, state.turn, [0, 0], ()), state.legal_moves()


def test_every_candidate_gets_a_value_and_the_same_seed_gives_the_same_values():
    view, legal = _position(7)
    values = move_values(view, legal, Rng(5), 40)
    assert len(values) == len(legal)
    assert all(-12 < v < 12 for v in values)
    assert values == move_values(view, legal, Rng(5), 40)


def test_a_candidate_listed_twice_gets_the_same_value_on_the_same_deals():
    view, legal = _position(11)
    values = move_values(view, [legal[0], legal[1], legal[0]], Rng(2), 30)
    assert values[0] == values[2]


def test_no_playouts_no_values():
    view, legal = _position(3)
    assert move_values(view, legal, Rng(1), 0) == [0.0] * len(legal)
