"""The rest of the round searched over the seat's own moves on many deals at once
(arena/search/infoset.py): exact on one deal of known cards, and never better than choosing
with the hidden cards in view on several."""

from __future__ import annotations

from arena.core.game import HandState, hand_view
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.search.determinized import close, deal, fast_view, search, solve
from arena.search.infoset import Node, distinct, grow
from arena.search.playout import greedy_move


def _public(state: HandState) -> list[int]:
    public = [0] * 11
    for c in [*state.table, *(c for p in state.piles for c in p)]:
        public[c.value] += 1
    return public


def _greedy(state: HandState) -> None:
    legal = state.legal_moves()
    state.apply(legal[0] if len(legal) == 1 else greedy_move(state, legal, _public(state)))


def _round_start(seed: int, stock: int) -> HandState:
    """A 2-player hand played by greedy until the stock holds ``stock`` cards, to a turn with a choice."""
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, seed, events=[])
    while state.stock_count > stock or len(distinct(state.legal_moves(), True)) < 2:
        _greedy(state)
    return state


def test_a_node_takes_the_best_of_its_own_moves_and_sums_the_other_seats_replies():
    own, reply = Node(), Node()
    own.own = True
    a, b, c, d = Node(), Node(), Node(), Node()
    a.total, b.total, c.total, d.total = 3.0, 5.0, 1.0, 2.0
    moves = _round_start(1, 30).legal_moves()
    own.children = {moves[0]: a, moves[1]: b}
    reply.children = {moves[0]: c, moves[1]: d}
    assert own.value() == 5.0
    assert reply.value() == 3.0


def test_split_values_choose_each_halfs_moves_on_the_other_half():
    own = Node()
    own.own = True
    a, b = Node(), Node()
    a.halves, b.halves = [5.0, 1.0], [2.0, 4.0]
    a.total, b.total = 6.0, 6.0
    moves = _round_start(1, 30).legal_moves()
    own.children = {moves[0]: a, moves[1]: b}
    assert own.value() == 6.0
    # The even deals follow b (best on the odd ones): 2; the odd deals follow a: 1.
    assert own.split_value() == (2.0, 1.0)


def test_on_one_deal_of_the_last_round_the_tree_is_the_exact_solve_against_greedy():
    for seed in range(10):
        state = _round_start(seed, 0)
        me = state.turn
        root = Node()
        leaves = grow(root, state.copy(), me, me, state.round, -1, True)
        assert leaves >= 2
        assert abs(root.value() - solve(state.copy(), me, True)) < 1e-9


def test_on_several_deals_a_choice_per_deal_is_worth_at_least_one_choice_for_all():
    # Each deal alone lets the seat's later moves see its hidden cards; together they may not.
    fused = False
    for seed in range(6):
        state = _round_start(seed, 30)
        view = fast_view(hand_view(state, state.turn, [0, 0], ()))
        rng = Rng(seed)
        together, alone = Node(), 0.0
        for _ in range(8):
            world = deal(view, rng)
            grow(together, world.copy(), view.seat, view.side, view.round, -1, True)
            one = Node()
            grow(one, world.copy(), view.seat, view.side, view.round, -1, True)
            alone += one.value()
        assert together.value() <= alone + 1e-9
        fused = fused or together.value() < alone - 1e-9
    assert fused  # the bound is not met by construction: somewhere seeing the cards helps


def test_the_tree_search_is_deterministic_for_a_seed_and_counts_its_deals():
    state = _round_start(4, 30)
    view = hand_view(state, state.turn, [0, 0], ())
    candidates = distinct(state.legal_moves(), True)
    first = search(view, candidates, Rng(9), 10.0, 600, tree=True)
    again = search(view, candidates, Rng(9), 10.0, 600, tree=True)
    assert first == again
    best, totals, deals = first
    assert deals[best] == max(deals) > 0


def test_close_says_whether_a_paired_difference_is_within_the_noise():
    assert close([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0])  # mean difference 0
    assert not close([2.0, 2.5, 3.0, 2.0], [0.0, 0.5, 1.0, 0.0])  # 2 points on every deal
    assert close([1.0], [0.0])  # one deal says nothing


def test_extra_playouts_go_to_the_two_best_only_while_they_are_close():
    outcomes = set()
    for seed in range(8):
        state = _round_start(seed, 30)
        view = hand_view(state, state.turn, [0, 0], ())
        candidates = distinct(state.legal_moves(), True)
        if len(candidates) < 3:
            continue
        _, _, plain = search(view, candidates, Rng(9), 10.0, 600)
        best, _, more = search(view, candidates, Rng(9), 10.0, 600, extra=400)
        grown = [i for i in range(len(candidates)) if more[i] > plain[i]]
        assert len(grown) in (0, 2)
        assert 0 < sum(more) - sum(plain) <= 400 + 2 * 50 if grown else more == plain
        if grown:
            assert best in grown
        outcomes.add(bool(grown))
    assert outcomes == {True, False}  # some decisions were close, some were not
