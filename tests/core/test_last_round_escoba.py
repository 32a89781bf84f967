"""Option last_round_escoba over whole random matches (the positions are in
test_rule_options_effects.py): false leaves no escoba in any hand's last round, the default
leaves some, last_card none made with a player's final card of the hand."""

from __future__ import annotations

import pytest

from arena.core.events import Cards, Deal, Escoba, Play
from arena.core.game import MatchState
from arena.core.rules import LastRoundEscoba, Rules, Seating
from arena.core.seeding import Rng

SHAPES = [Seating.alone(2), Seating.alone(3), Seating.pairs(4), Seating.pairs(6, 2)]


def _late_escobas(rules: Rules, seating: Seating, seed: int) -> tuple[int, int]:
    """Escobas scored in hands' last rounds by one random match: (all of them, those made with
    the capturer's final card of the hand)."""
    match = MatchState(rules, seating, seed)
    rng = Rng(seed)
    while not match.is_over:
        legal = match.legal_moves()
        match.apply(legal[rng.below(len(legal))])
    late = final = 0
    last_round, held, final_play = False, [0] * seating.players, False
    for event in match.events:
        if isinstance(event, Deal):
            last_round = event.stock == 0
        elif isinstance(event, Cards):
            held[event.seat] = len(event.cards)
        elif isinstance(event, Play):
            held[event.seat] -= 1
            final_play = last_round and held[event.seat] == 0
        elif isinstance(event, Escoba) and last_round and event.source in ("play", "renuncio"):
            late += 1
            final += event.source == "play" and final_play
    return late, final


def _totals(late: LastRoundEscoba) -> tuple[int, int]:
    late_total = final_total = 0
    for seed in range(40):
        seating = SHAPES[seed % len(SHAPES)]
        # renuncio on half the seeds: its claims are captures too.
        rules = Rules(last_round_escoba=late, renuncio=seed % 2 == 1, target=11)
        counted, with_final = _late_escobas(rules, seating, 1000 + seed)
        late_total += counted
        final_total += with_final
    return late_total, final_total


def test_the_default_scores_escobas_in_last_rounds_even_with_final_cards():
    late, final = _totals(LastRoundEscoba.YES)
    assert late > 0 and final > 0


def test_false_scores_no_escoba_in_any_last_round():
    assert _totals(LastRoundEscoba.NO) == (0, 0)


def test_last_card_scores_last_round_escobas_but_none_with_a_final_card():
    late, final = _totals(LastRoundEscoba.LAST_CARD)
    assert late > 0 and final == 0


@pytest.mark.parametrize("late", list(LastRoundEscoba))
def test_every_setting_plays_the_same_moves_with_other_escobas(late):
    # The option changes only which sweeps score: a random match's moves, chosen from the same
    # legal lists, are the same under every setting until the scores make it end earlier.
    base = MatchState(Rules(target=1000, max_hands=3), Seating.alone(2), 5)
    other = MatchState(Rules(target=1000, max_hands=3, last_round_escoba=late), Seating.alone(2), 5)
    rng = Rng(5)
    while not base.is_over:
        legal = base.legal_moves()
        assert other.legal_moves() == legal
        move = legal[rng.below(len(legal))]
        base.apply(move)
        other.apply(move)
    assert other.is_over
