"""The expert's endgame and its own playout policy: the last round solved on known cards, and
wary_move, greedy that weighs the sweep it leaves."""

from __future__ import annotations

from arena.core.cards import Card
from arena.core.game import HandState, hand_view
from arena.core.moves import Move
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.search.determinized import search, solvable, solve
from arena.search.evaluation import evaluate
from arena.search.playout import greedy_move, playout, wary_move


def _cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def _last_round(seed: int) -> HandState:
    """A 2-player hand played by greedy to the first move of its last round (stock spent)."""
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, seed, events=[])
    while state.stock_count:
        state.apply(state.legal_moves()[0] if len(state.legal_moves()) == 1 else
                    greedy_move(state, state.legal_moves(), _public(state)))
    return state


def _public(state: HandState) -> list[int]:
    public = [0] * 11
    for c in [*state.table, *(c for p in state.piles for c in p)]:
        public[c.value] += 1
    return public


def test_the_solved_last_round_is_worth_at_least_greedy_play_and_a_worst_case_other_seat_no_more():
    for seed in range(12):
        state = _last_round(seed)
        me = state.turn
        greedy = state.copy()
        playout(greedy)
        best = solve(state.copy(), me, True)
        assert best >= evaluate(greedy, me) - 1e-9  # greedy's own line is one of the lines searched
        assert solve(state.copy(), me, False) <= best + 1e-9  # greedy's reply is one of the replies


def test_the_search_solves_the_last_round_instead_of_sampling_it():
    state = _last_round(1)  # a last round of 1,909 positions, within SOLVE_POSITIONS (seed 3's has 5,312)
    while len(state.legal_moves()) < 2:
        state.apply(state.legal_moves()[0])
    view = hand_view(state, state.turn, [0, 0], ())
    assert solvable(view)
    candidates = state.legal_moves()
    best, totals, deals = search(view, candidates, Rng(1), 10.0, 400, endgame=True, seen=None)
    assert deals == [1] * len(candidates)
    for move, value in zip(candidates, totals, strict=True):
        after = state.copy()
        after.apply(move)
        assert value == solve(after, state.turn, False)
    assert totals[best] == max(totals)


def test_wary_trails_rather_than_leave_a_sweep_the_other_seat_surely_holds():
    # The last round: the other seat's three cards are the only ones unseen, one of them a 7.
    # Taking 7e 3c with the 5c leaves the 10b (a sota, 8) for that 7: greedy takes, wary trails.
    hands = [_cards("5c 1o"), _cards("7b 2b 6b")]
    table = _cards("10b 7e 3c")
    state = HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, turn=0, dealer=1,
                               round=5, last_capturer=1)
    legal = state.legal_moves()
    public = _public(state)
    assert greedy_move(state, legal, public) == Move.parse("5c+7e+3c")
    wary = wary_move(state, legal, public)
    assert wary in legal and not wary.take


def test_wary_takes_an_escoba_when_it_can():
    hands = [_cards("6o 1o"), _cards("7b 2b 6b")]
    state = HandState.position(Rules(), Seating.alone(2), hands=hands, table=_cards("5b 4c"), turn=0, dealer=1,
                               round=5, last_capturer=1)
    legal = state.legal_moves()
    assert wary_move(state, legal, _public(state)) == Move.parse("6o+5b+4c")


def test_a_playout_stops_after_the_moves_it_is_told_to_play_past_the_round():
    for after in (1, 2, 3):
        state = HandState.shuffled(Rules(), Seating.alone(2), 0, 5, events=[])
        stop = state.round
        playout(state, stop, -1, after)
        assert state.round == stop + 1
        assert sum(len(h) for h in state.hands) == 6 - after  # the new round's six cards, less those played


def test_a_solve_past_its_budget_gives_way_to_the_sampled_search():
    import pytest

    from arena.search.determinized import TooWide

    state = _last_round(3)
    while len(state.legal_moves()) < 2:
        state.apply(state.legal_moves()[0])
    me = state.turn
    assert solve(state.copy(), me, False, [10 ** 6]) == solve(state.copy(), me, False)
    with pytest.raises(TooWide):
        solve(state.copy(), me, False, [1])
    view = hand_view(state, me, [0, 0], ())
    candidates = state.legal_moves()
    import arena.search.determinized as determinized

    wide = determinized.SOLVE_POSITIONS
    try:
        determinized.SOLVE_POSITIONS = 1
        _, _, deals = search(view, candidates, Rng(1), 10.0, 400, endgame=True, seen=None)
    finally:
        determinized.SOLVE_POSITIONS = wide
    assert sum(deals) > len(candidates)  # sampled: many deals, not one solved "deal" each


def test_tail_values_a_penultimate_round_play_by_solving_the_last_round_it_leaves():
    from arena.search.determinized import fast_view, penultimate, play_out

    for seed in range(6):
        state = HandState.shuffled(Rules(), Seating.alone(2), 0, seed, events=[])
        while state.stock_count > 6 or len(state.legal_moves()) < 2:  # to a choice in the penultimate round
            state.apply(state.legal_moves()[0] if len(state.legal_moves()) == 1 else
                        greedy_move(state, state.legal_moves(), _public(state)))
        me = state.turn
        view = fast_view(hand_view(state, me, [0, 0], ()))
        assert penultimate(view)
        move = state.legal_moves()[0]
        rest = state.copy()
        rest.apply(move)
        playout(rest, state.round, me, 0)  # to the round's end, its own moves played wary
        assert play_out(state, move, view, wary=me, tail=True) == solve(rest, me, True)
        # Without it the same play is valued by the estimate at the next round's first move.
        estimated = state.copy()
        estimated.apply(move)
        playout(estimated, state.round, me, 1)
        assert play_out(state, move, view, wary=me) == evaluate(estimated, me)
