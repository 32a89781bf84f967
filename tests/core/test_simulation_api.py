"""The simulation API a bot author uses: views, determinized copies, apply, score."""

import pytest
from core_helpers import hand_from

from arena.core.cards import DECK, parse_cards
from arena.core.game import HandState, MatchState
from arena.core.moves import Move
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.errors import IllegalMoveError


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


# --- why a move is illegal: check / is_legal / apply ------------------------------------------

def _events_and_legal(state):
    return [e.to_dict() for e in state.events], [str(m) for m in state.legal_moves()]


def test_check_gives_the_precise_reason_and_changes_nothing():
    # Seed 001: seat 0 holds 5e 1c 12b; the table is 2c 4b 6o 10e.
    hand = hand_from(["5e 1c 12b", "3c 3e 3b"], "2c 4b 6o 10e")
    before = _events_and_legal(hand)
    assert hand.check("5e+4b+6o") == Move.parse("5e+4b+6o") and hand.is_legal("5e+6o+4b")
    cases = {
        "7o": "7o is not in the hand of seat 0",
        "5e+3o": "3o not on the table",
        "5e+2c": "the cards add up to 7, not 15",
        "5e+4b+": "invalid move",
        "pass": "no pass is possible now",
    }
    for text, reason in cases.items():
        with pytest.raises(IllegalMoveError, match=reason) as info:
            hand.check(text)
        assert not hand.is_legal(text)
        # apply refuses with exactly the same message
        with pytest.raises(IllegalMoveError) as applied:
            hand.apply(text)
        assert str(applied.value) == str(info.value)
    assert _events_and_legal(hand) == before  # nothing was played
    hand.apply("5e+4b+6o")
    assert hand.turn == 1


@pytest.mark.parametrize("thing", [42, None, ["5e"], {"move": "5e"}, b"5e", ("play",), 5.0])
def test_anything_that_is_not_a_move_is_refused_as_illegal_by_every_build(thing):
    # The compiled build (tests/test_compiled.py runs this file on it) enforces parameter types
    # before the first line runs: the verifier's must accept anything, to answer as the source does.
    match = MatchState(Rules(), Seating.alone(2), 5)
    before = _events_and_legal(match.hand)
    for verdict in (match.check, match.apply, match.hand.check, match.hand.apply):
        with pytest.raises(IllegalMoveError, match="expected a Move or its text"):
            verdict(thing)
    assert not match.is_legal(thing) and not match.hand.is_legal(thing)
    assert _events_and_legal(match.hand) == before


def test_check_answers_with_the_legal_move_itself():
    match = MatchState(Rules(), Seating.alone(2), 5)
    move = match.legal_moves()[-1]
    assert match.check(tuple(move)) is move and match.check(str(move)) is move
    match.apply(tuple(move))  # a plain tuple of a legal move's fields is that move
    assert match.hand.events[-1].card == move.card


def test_is_legal_agrees_with_the_legal_moves_through_whole_matches():
    for seed in range(6):
        rules = Rules(forced_capture=seed % 2 == 0, single_capture_priority=seed % 3 == 0, renuncio=seed % 2 == 1)
        match = MatchState(rules, Seating.alone(2 + seed % 3), seed)
        rng = Rng(seed)
        while not match.is_over:
            legal = match.legal_moves()
            assert all(match.is_legal(m) and match.check(str(m)) == m for m in legal)
            for _ in range(5):
                card = DECK[rng.below(40)]
                take = tuple(sorted({DECK[rng.below(40)] for _ in range(rng.below(3))}))
                guess = Move.play(card, take)
                assert match.is_legal(guess) == (guess in legal)
            match.apply(legal[rng.below(len(legal))])
        assert not match.is_legal(legal[0])
        with pytest.raises(IllegalMoveError, match="the match is over"):
            match.check(legal[0])


@pytest.mark.parametrize("rules", [Rules(), Rules(single_capture_priority=True, forced_capture=True)])
def test_a_state_pickles_and_deep_copies_small_and_plays_on_the_same(rules):
    # A bot author's search may send states to other processes or deep-copy them: a state must
    # carry its own data only, never a reference to the core's shared caches.
    import copy
    import pickle

    match = MatchState(rules, Seating.alone(3), 8)
    for _ in range(7):
        match.apply(match.legal_moves()[0])
    blob = pickle.dumps(match)
    assert len(blob) < 8_000
    rng = Rng(5)
    for seed in range(40):  # other matches fill the core's caches: the state's pickle stays the same
        other = MatchState(rules, Seating.alone(2), 100 + seed)
        while not other.is_over:
            moves = other.legal_moves()
            other.apply(moves[rng.below(len(moves))])
    assert pickle.dumps(match) == blob
    for twin in (pickle.loads(blob), copy.deepcopy(match)):
        rng_a, rng_b = Rng(3), Rng(3)
        a, b = match.copy(), twin
        while not a.is_over:
            assert a.legal_moves() == b.legal_moves()
            move = a.legal_moves()[rng_a.below(len(a.legal_moves()))]
            a.apply(move)
            b.apply(b.legal_moves()[rng_b.below(len(b.legal_moves()))])
        assert a.scores == b.scores and a.result == b.result
