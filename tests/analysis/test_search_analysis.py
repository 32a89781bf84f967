"""The analyst's engine (arena/search/analysis.py): values on shared deals, their split by
category, the voids inferred from a seat's view, and moves that are worth the same."""

from arena.core.cards import Card
from arena.core.events import Play
from arena.core.game import OVER, MatchState
from arena.core.moves import Move
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.search.analysis import category_values, inferred_voids, move_values, representatives
from arena.search.determinized import capturing_values
from arena.search.evaluation import TERMS, evaluate, evaluate_terms


def _walk(seed: int, moves: int) -> MatchState:
    """A match after ``moves`` seeded random moves (or its end)."""
    match = MatchState(Rules(), Seating.alone(2), seed=seed)
    rng = Rng(seed)
    for _ in range(moves):
        if match.is_over:
            break
        legal = match.legal_moves()
        match.apply(legal[rng.below(len(legal))])
    return match


def test_the_terms_add_up_to_the_value_finished_or_not():
    seen_over = seen_open = 0
    for seed in range(60):
        hand = _walk(seed, 0).hand
        rng = Rng(seed)
        steps = rng.below(40)
        for _ in range(steps):
            if hand.phase is OVER:
                break
            legal = hand.legal_moves()
            hand.apply(legal[rng.below(len(legal))])
        for side in (0, 1):
            terms = evaluate_terms(hand, side)
            assert len(terms) == len(TERMS)
            assert abs(sum(terms) - evaluate(hand, side)) < 1e-9
        seen_over += hand.phase is OVER
        seen_open += hand.phase is not OVER
    assert seen_over and seen_open


def test_values_are_the_same_for_the_same_seed_and_the_same_whatever_the_other_candidates():
    match = _walk(3, 0)
    view = match.view(match.current_seat)
    legal = match.legal_moves()
    assert len(legal) >= 3
    everything = move_values(view, legal, Rng(11), 24)
    assert everything == move_values(view, legal, Rng(11), 24)
    assert move_values(view, [legal[2], legal[0]], Rng(11), 24) == [everything[2], everything[0]]
    by_category = category_values(view, legal, Rng(11), 24)
    assert [round(sum(t), 9) for t in by_category] == [round(v, 9) for v in everything]
    assert move_values(view, legal, Rng(12), 24) != everything  # another seed, other deals


def test_a_seat_that_trailed_cannot_hold_what_would_have_captured():
    checked = 0
    for seed in range(40):
        match = MatchState(Rules(), Seating.alone(2), seed=seed)
        rng = Rng(seed)
        while not match.is_over:
            view = match.view(match.current_seat)
            last = view.events[-1]
            if isinstance(last, Play) and not last.take and last.seat != view.seat:
                # The opponent just trailed: the table it met is the table now without that card.
                met = [c for c in view.table if c != last.card]
                assert capturing_values(met) <= inferred_voids(view)[last.seat]
                checked += 1
            legal = match.legal_moves()
            match.apply(legal[rng.below(len(legal))])
    assert checked > 50


def test_no_voids_at_the_start_of_a_hand():
    match = MatchState(Rules(), Seating.alone(2), seed=1)
    assert inferred_voids(match.view(match.current_seat)) == {}


def test_moves_that_differ_by_plain_suits_are_worth_the_same():
    c = Card.parse
    moves = [Move.play(c("4c")), Move.play(c("4e")), Move.play(c("4o")), Move.play(c("5b"), (c("10c"),)),
             Move.play(c("5e"), (c("10c"),)), Move.play(c("7c")), Move.play(c("7e"))]
    assert representatives(moves, Rules()) == [0, 0, 2, 3, 3, 5, 5]
    # Under primera every suit counts: nothing is merged.
    assert representatives(moves, Rules(sevens="primera")) == list(range(7))


def test_more_than_two_sides_play_the_hand_out():
    three = MatchState(Rules(), Seating.alone(3), seed=5)
    view = three.view(three.current_seat)
    legal = three.legal_moves()
    values = move_values(view, legal, Rng(1), 4)
    terms = category_values(view, legal, Rng(1), 4)
    assert [round(sum(t), 9) for t in terms] == [round(v, 9) for v in values]
    # Played out to the end of the hand: whole points, each margin a multiple of a half.
    assert all(abs(v * 4 * 2 - round(v * 4 * 2)) < 1e-9 for v in values)
