"""The analyst's measure, arena.search.analysis.move_values: comparable values, seeded."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.core.game import HandState, hand_view
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.search.analysis import move_values

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the bots package lives at the repository root (test_compiled runs this file from elsewhere)
    sys.path.insert(0, str(ROOT))


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


def test_the_analyst_setting_of_the_expert_plays_the_move_the_analyst_values_best(monkeypatch):
    from arena.core.moves import Move
    from bots import expert_bot, greedy_bot, local

    asked: list[tuple[int, Move]] = []  # per valuation: its budget and its best candidate

    def values(view, candidates, rng, playouts, voids=None, seen=None, wary=False, endgame=False):
        found = move_values(view, candidates, rng, playouts, voids, seen, wary, endgame)
        asked.append((playouts, candidates[max(range(len(found)), key=found.__getitem__)]))
        return found

    monkeypatch.setattr(expert_bot, "move_values", values)
    analyst = expert_bot.Expert(analyst=True, playouts=12)
    checked = 0

    def spy(game, request, rng):
        nonlocal checked
        before = len(asked)
        move = analyst(game, request, rng)
        if len(asked) > before:
            assert Move.parse(move.text) == asked[-1][1]
            checked += 1
        return move

    local.play_hand([spy, greedy_bot.choose], Rules(), Seating.alone(2), 1, 17, policy_seeds=[1, 2])
    assert checked >= 5 and all(playouts == 12 for playouts, _ in asked)


def _last_round(seed: int):
    """A position of the hand's last round of two greedy seats, the seat to play holding two or
    three cards, with its view (events included: what the analyst reads the other seat's plays from)."""
    from arena.search.playout import greedy_move, public_counts

    events: list = []
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, seed, events=events)
    while state.stock_count or len(state.hands[state.turn]) < 2 or len(set(map(str, state.legal_moves()))) < 2:
        if state.phase.name == "OVER":
            return None
        state.apply(greedy_move(state, state.legal_moves(), public_counts(state)))
    return state, hand_view(state, state.turn, [0, 0], events)


def test_the_last_round_against_greedy_is_valued_exactly_by_category_too():
    """The analyst's endgame: against a seat that plays as greedy does, the last round's values are
    the ends of the solved lines (the same whatever the budget), and their categories add up to them."""
    from arena.search.analysis import category_values, inferred_round
    from arena.search.determinized import solve_end
    from arena.search.evaluation import margin

    checked = 0
    for seed in range(40):
        found = _last_round(seed)
        if found is None:
            continue
        state, view = found
        seen = inferred_round(view)
        if seen is None:
            continue
        legal = state.legal_moves()
        exact = []
        for move in legal:
            after = state.copy()
            after.apply(move)
            exact.append(margin(solve_end(after, view.seat, True).points(), view.side))
        assert move_values(view, legal, Rng(1), 40, seen=seen, endgame=True) == exact
        assert move_values(view, legal, Rng(9), 3, seen=seen, endgame=True) == exact
        terms = category_values(view, legal, Rng(1), 40, seen=seen, endgame=True)
        assert [round(sum(t), 9) for t in terms] == [round(v, 9) for v in exact]
        checked += 1
    assert checked >= 10
