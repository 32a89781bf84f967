"""The simulation API a bot author uses: views, determinized copies, apply, score."""

from arena.cards import parse_cards
from arena.game import HandState, MatchState
from arena.rules import Rules, Seating
from arena.seeding import Rng


def test_determinize_keeps_everything_the_seat_knows():
    match = MatchState(Rules(), Seating.pairs(4), 11)
    rng = Rng(1)
    for _ in range(9):
        match.apply(match.legal_moves()[rng.below(len(match.legal_moves()))])
    seat = match.current_seat
    view = match.view(seat)
    for k in range(20):
        sim = HandState.determinize(view, Rng(k))
        assert sim.hands[seat] == list(view.hand)
        assert sim.table == list(view.table)
        assert [len(h) for h in sim.hands] == list(view.hand_sizes)
        assert sim.stock_count == view.stock_count
        assert sim.legal_moves() == match.legal_moves()
        while not sim.is_over:  # a simulation runs to the end of the hand and scores it
            sim.apply(sim.legal_moves()[0])
        assert sum(sim.points()) >= 0


def test_copy_is_independent():
    match = MatchState(Rules(), Seating.alone(2), 5)
    twin = match.copy()
    dealt = len(match.events)
    twin.apply(twin.legal_moves()[0])
    # The move is in the twin's log only: the original's log did not grow.
    assert len(match.events) == dealt and twin.events[dealt].kind == "play"
    assert match.hand.hands != twin.hand.hands or match.hand.table != twin.hand.table
    before = [e.to_dict() for e in match.events]
    match.apply(match.legal_moves()[0])
    assert [e.to_dict() for e in twin.events] == [e.to_dict() for e in match.events]
    assert before == [e.to_dict() for e in match.events[:len(before)]]


def test_position_rejects_missing_or_duplicate_cards():
    import pytest
    with pytest.raises(ValueError):
        HandState.position(Rules(), Seating.alone(2), hands=[parse_cards("5o"), parse_cards("5o")],
                           table=parse_cards("2c"))


def test_view_dict_is_plain_json():
    import json
    match = MatchState(Rules(), Seating.alone(3), 2)
    data = match.view(1).to_dict(include_events=True)
    assert json.loads(json.dumps(data)) == data
    assert data["hand"] == [str(c) for c in match.hand.hands[1]]
    assert "stock_cards" not in data and len(data["hand_sizes"]) == 3
