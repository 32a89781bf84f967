"""Each option of RULES.md, shown by the difference it makes."""

import pytest
from core_helpers import hand_from

from arena.core.cards import parse_cards
from arena.core.game import MatchState
from arena.core.moves import MoveKind
from arena.core.rules import LastRoundEscoba, Rules, Seating
from arena.core.scoring import score_hand
from arena.errors import IllegalMoveError


def texts(moves):
    return [str(m) for m in moves]


# --- initial_table -------------------------------------------------------------------------

def test_initial_table_sum15_gives_the_dealer_an_escoba():
    hand = hand_from(["1c 1e 1b", "2c 2e 2b"], "3o 4o 5o 3b")  # 3+4+5+3 = 15
    assert hand.table == [] and hand.escobas == [0, 1] and hand.piles[1] == sorted(parse_cards("3o 4o 5o 3b"))
    assert hand.last_capturer == 1
    none = hand_from(["1c 1e 1b", "2c 2e 2b"], "3o 4o 5o 3b", rules=Rules(initial_table="none"))
    assert len(none.table) == 4 and none.escobas == [0, 0]


def test_initial_table_sum15_or_30_gives_two_escobas_for_30():
    table = "12o 12c 5o 3b"  # 10+10+5+3 = 28
    table30 = "12o 12c 6o 4b"  # 10+10+6+4 = 30
    assert len(hand_from(["1c 1e 1b", "2c 2e 2b"], table30).table) == 4  # sum15 ignores 30
    hand = hand_from(["1c 1e 1b", "2c 2e 2b"], table30, rules=Rules(initial_table="sum15_or_30"))
    assert hand.table == [] and hand.escobas == [0, 2]
    other = hand_from(["1c 1e 1b", "2c 2e 2b"], table, rules=Rules(initial_table="sum15_or_30"))
    assert len(other.table) == 4


def test_initial_table_subset15_takes_the_only_subset_without_escoba():
    rules = Rules(initial_table="subset15")
    hand = hand_from(["1c 1e 1b", "2c 2e 2b"], "12o 5o 6b 7c", rules=rules)  # only 12o+5o = 15
    assert sorted(hand.table) == sorted(parse_cards("6b 7c")) and hand.escobas == [0, 0]
    assert hand.piles[1] == sorted(parse_cards("12o 5o"))
    assert len(hand_from(["1c 1e 1b", "2c 2e 2b"], "12o 5o 6b 7c").table) == 4  # default: no


def test_initial_table_subset15_lets_the_dealer_choose():
    rules = Rules(initial_table="subset15")
    hand = hand_from(["1c 1e 1b", "2c 2e 2b"], "12o 5o 10b 7c", rules=rules)  # 12o+5o, 10b+7c
    assert hand.turn == 1 and hand.phase == "take"
    moves = texts(hand.legal_moves())
    assert moves == ["mesa 7c+10b", "mesa 5o+12o"] or sorted(moves) == sorted(["mesa 7c+10b", "mesa 5o+12o"])
    with pytest.raises(IllegalMoveError):
        hand.apply("1c")
    hand.apply("mesa 7c+10b")
    assert sorted(hand.table) == sorted(parse_cards("5o 12o")) and hand.turn == 0 and hand.phase == "play"


# --- forced_capture / single_capture_priority -----------------------------------------------

def test_forced_capture_removes_the_trail_of_a_capturing_card():
    args = (["5e 1c 12b", "2c 2e 2b"], "2o 4b 6o 11e")
    free = texts(hand_from(*args).legal_moves())
    forced = texts(hand_from(*args, rules=Rules(forced_capture=True)).legal_moves())
    assert "5e" in free and "5e" not in forced
    assert "5e+4b+6o" in forced
    assert "12b" in forced  # a card that cannot capture may still be trailed
    with pytest.raises(IllegalMoveError, match="forced_capture"):
        hand_from(*args, rules=Rules(forced_capture=True)).apply("5e")


def test_single_capture_priority_excludes_sets_when_one_card_will_do():
    args = (["5e 1c 1b", "2c 2e 2b"], "12o 4b 6o 3c")  # 5e takes 12o alone, or 4b+6o
    free = texts(hand_from(*args).legal_moves())
    single = texts(hand_from(*args, rules=Rules(single_capture_priority=True)).legal_moves())
    assert "5e+4b+6o" in free and "5e+12o" in free
    assert "5e+4b+6o" not in single and "5e+12o" in single
    with pytest.raises(IllegalMoveError, match="single_capture_priority"):
        hand_from(*args, rules=Rules(single_capture_priority=True)).apply("5e+4b+6o")
    # Seed 000: a 6 onto 2 4 3 rey has no single capture, so the set stays legal.
    seed000 = hand_from(["6c 1c 1b", "2c 2e 2b"], "2o 4b 3e 12b", rules=Rules(single_capture_priority=True))
    assert "6c+2o+3e+4b" in texts(seed000.legal_moves())


# --- renuncio --------------------------------------------------------------------------------

def test_renuncio_lets_the_next_player_claim_a_missed_capture():
    rules = Rules(renuncio=True)
    hand = hand_from(["5e 1c 1b", "2c 2e 12c"], "4b 6o 11c 3o", rules=rules)
    hand.apply("5e")  # could have taken 4b+6o
    assert hand.phase == "claim" and hand.turn == 1
    assert texts(hand.legal_moves()) == ["renuncio 5e+4b+6o", "pass"]
    hand.apply("renuncio 5e+4b+6o")
    assert hand.piles[1] == list(parse_cards("5e 4b 6o")) and hand.last_capturer == 1
    assert hand.phase == "play" and hand.turn == 1  # then seat 1 plays its own turn
    assert hand.events[-1].kind == "renuncio"
    default = hand_from(["5e 1c 1b", "2c 2e 12c"], "4b 6o 11c 3o")
    default.apply("5e")
    assert default.phase == "play" and all(m.kind is MoveKind.PLAY for m in default.legal_moves())


def test_renuncio_escoba_goes_to_the_claimer_and_pass_declines():
    rules = Rules(renuncio=True)
    hand = hand_from(["5e 11c 11b", "2c 2e 12c"], "1o 2b 3c 4b", rules=rules)  # 5 + 10 = 15
    hand.apply("5e")
    hand.apply("renuncio 5e+1o+2b+3c+4b")
    assert hand.table == [] and hand.escobas == [0, 1]
    assert [e.to_dict() for e in hand.events[-1:]] == [{"type": "escoba", "seat": 1, "side": 1, "source": "renuncio"}]
    declined = hand_from(["5e 11c 11b", "2c 2e 12c"], "1o 2b 3c 4b", rules=rules)
    declined.apply("5e")
    declined.apply("pass")
    assert len(declined.table) == 5 and declined.phase == "play" and declined.turn == 1


def test_renuncio_is_not_offered_for_a_trail_that_could_not_capture():
    hand = hand_from(["12c 1e 1b", "2c 2e 12b"], "4b 6o 7e 7c", rules=Rules(renuncio=True))
    hand.apply("12c")
    assert hand.phase == "play"


# --- last_round_escoba ---------------------------------------------------------------------
# Positions of a 1v1 hand where seat 0 sweeps the table (2c 10e) with 5o: 5 + 2 + 8 = 15.

YES, NO, LAST_CARD = LastRoundEscoba.YES, LastRoundEscoba.NO, LastRoundEscoba.LAST_CARD


def _sweep(late, *, hand0, stock=(), renuncio=False):
    """Seat 0 sweeps with 5o (or, under renuncio, trails it and seat 1 claims the sweep)."""
    from arena.core.game import HandState
    rules = Rules(last_round_escoba=late, renuncio=renuncio)
    hand = HandState.position(rules, Seating.alone(2), hands=[parse_cards(hand0), parse_cards("1e")],
                              table=parse_cards("2c 10e"), stock=parse_cards(" ".join(stock)), dealer=1)
    if renuncio:
        hand.apply("5o")
        hand.apply("renuncio 5o+2c+10e")
    else:
        hand.apply("5o+2c+10e")
    assert hand.table == []  # the sweep took place: only the escoba is in question
    return [e.to_dict() for e in hand.events if e.kind == "escoba"]


def _escoba(seat):
    return [{"type": "escoba", "seat": seat, "side": seat, "source": "renuncio" if seat else "play"}]


@pytest.mark.parametrize("late, counted", [(YES, True), (NO, False), (LAST_CARD, True)])
def test_last_round_escoba_on_a_sweep_in_the_last_round_with_cards_left_in_hand(late, counted):
    # The stock is spent: this is the hand's last round, and seat 0 keeps 1c for later.
    assert _sweep(late, hand0="5o 1c") == (_escoba(0) if counted else [])


@pytest.mark.parametrize("late, counted", [(YES, True), (NO, False), (LAST_CARD, False)])
def test_last_round_escoba_on_a_sweep_with_the_players_final_card_of_the_hand(late, counted):
    assert _sweep(late, hand0="5o") == (_escoba(0) if counted else [])


@pytest.mark.parametrize("late", [YES, NO, LAST_CARD])
def test_last_round_escoba_leaves_every_earlier_round_alone(late):
    # Six cards still in the stock: another round follows, so 5o is only seat 0's last card of
    # this round, and every setting counts the escoba.
    assert _sweep(late, hand0="5o", stock=["3o", "3c", "3e", "3b", "4o", "4c"]) == _escoba(0)
    assert _sweep(late, hand0="5o 1c", stock=["3o", "3c", "3e", "3b", "4o", "4c"]) == _escoba(0)


@pytest.mark.parametrize("late, counted", [(YES, True), (NO, False), (LAST_CARD, True)])
def test_last_round_escoba_on_a_renuncio_claim_in_the_last_round(late, counted):
    # A claim is a capture of the last round (false withholds it), but not made with a card of
    # the claimer's hand (last_card keeps it), even when the trailed card was seat 0's final one.
    assert _sweep(late, hand0="5o", renuncio=True) == (_escoba(1) if counted else [])
    assert _sweep(late, hand0="5o", stock=["3o", "3c", "3e", "3b", "4o", "4c"], renuncio=True) == _escoba(1)


# --- escoba_en_mano ------------------------------------------------------------------------

def test_escoba_en_mano_scores_and_sits_out_the_round():
    rules = Rules(escoba_en_mano=True)
    hand = hand_from(["5e 4c 6b", "2c 2e 12c"], "1o 1b 3c 3e", rules=rules)  # 5+4+6 = 15
    assert hand.hands[0] == [] and hand.escobas == [1, 0]
    assert sorted(hand.piles[0]) == sorted(parse_cards("5e 4c 6b"))
    assert hand.turn == 1  # seat 0 sits the round out
    for _ in range(3):
        hand.apply(hand.legal_moves()[-1])
    assert hand.round == 1 and len(hand.hands[0]) == 3
    plain = hand_from(["5e 4c 6b", "2c 2e 12c"], "1o 1b 3c 3e")
    assert len(plain.hands[0]) == 3 and plain.escobas == [0, 0]


# --- sevens, all_sevens_bonus ----------------------------------------------------------------

def _piles(a, b):
    return [list(parse_cards(a)), list(parse_cards(b))]


def test_sevens_most_tie_gives_nobody_but_most_tiebreak_looks_at_sixes():
    piles = _piles("7o 7c 6e 6b 1o", "7e 7b 6o 1c")
    most = score_hand(piles, [0, 0], Rules())
    tiebreak = score_hand(piles, [0, 0], Rules(sevens="most_tiebreak"))
    assert [b["sevens"] for b in most] == [0, 0]
    assert [b["sevens"] for b in tiebreak] == [1, 0]
    # Tied on sixes too: the aces decide.
    piles = _piles("7o 6e 1o 1c", "7e 6o 1b")
    assert [b["sevens"] for b in score_hand(piles, [0, 0], Rules(sevens="most_tiebreak"))] == [1, 0]
    # Tied all the way down: nobody.
    piles = _piles("7o 6e 12c", "7e 6o 12b")
    assert [b["sevens"] for b in score_hand(piles, [0, 0], Rules(sevens="most_tiebreak"))] == [0, 0]


def test_sevens_primera():
    # Side 0: best per suit 7o(21) 7c(21) 1e(16) -> 58 ; side 1: 6e(18) 6b(18) 6o(18) 6c(18) -> 72
    piles = _piles("7o 7c 1e", "6e 6b 6o 6c")
    most = score_hand(piles, [0, 0], Rules())
    primera = score_hand(piles, [0, 0], Rules(sevens="primera"))
    assert [b["sevens"] for b in most] == [1, 0]
    assert [b["sevens"] for b in primera] == [0, 1]
    assert [b["primera"] for b in primera] == [58, 72]


def test_all_sevens_bonus():
    piles = _piles("7o 7c 7e 7b", "1o 2o")
    assert [b["all_sevens"] for b in score_hand(piles, [0, 0], Rules())] == [0, 0]
    bonus = score_hand(piles, [0, 0], Rules(all_sevens_bonus=True))
    assert [b["all_sevens"] for b in bonus] == [1, 0]
    assert bonus[0]["total"] == score_hand(piles, [0, 0], Rules())[0]["total"] + 1


def test_three_sides_need_a_unique_maximum():
    piles = [list(parse_cards("1o 2o 3c")), list(parse_cards("4o 5o 6c")), list(parse_cards("7c"))]
    b = score_hand(piles, [0, 0, 0], Rules())
    assert [x["cards"] for x in b] == [0, 0, 0]  # 3, 3, 1: shared maximum
    assert [x["oros"] for x in b] == [0, 0, 0]
    assert [x["sevens"] for x in b] == [0, 0, 1]


# --- target, max_hands ---------------------------------------------------------------------

def _play_out(match):
    while not match.is_over:
        match.apply(match.legal_moves()[0])
    return match


def test_target_changes_the_length_of_a_match():
    short = _play_out(MatchState(Rules(target=5), Seating.alone(2), 3))
    long = _play_out(MatchState(Rules(target=30), Seating.alone(2), 3))
    assert short.result.reason == "target" and max(short.result.scores) >= 5
    assert max(long.result.scores) >= 30 and long.result.hands > short.result.hands
    assert short.result.winner == max(range(2), key=lambda s: short.result.scores[s])


def test_max_hands_ends_a_match_as_a_draw():
    match = _play_out(MatchState(Rules(target=1000, max_hands=2), Seating.alone(2), 3))
    assert match.result.reason == "max_hands" and match.result.winner is None and match.result.hands == 2
    assert match.events[-1].to_dict()["type"] == "match_end"


def test_a_shared_top_score_plays_another_hand():
    # Find a seed where, after some hand, the top is shared at or over the target.
    for seed in range(400):
        match = MatchState(Rules(target=3), Seating.alone(2), seed)
        totals_seen = []
        while not match.is_over:
            before = match.hand_number
            match.apply(match.legal_moves()[0])
            if match.is_over or match.hand_number != before:
                totals_seen.append(tuple(match.scores))
        tied = [t for t in totals_seen[:-1] if max(t) >= 3 and t[0] == t[1]]
        if tied:
            assert match.result.scores[0] != match.result.scores[1]
            return
    raise AssertionError("no seed produced a tie at the target")


def test_renuncio_is_never_offered_to_the_trailers_own_side():
    # Seat 1 sat the round out (escoba en mano), so seat 0 plays on after its own trail.
    from arena.core.game import HandState
    hand = HandState.position(Rules(renuncio=True), Seating.alone(2), hands=[parse_cards("5e 11c 11b"), ()],
                              table=parse_cards("4b 6o 1o 12o"), dealer=1)
    hand.apply("5e")  # could have taken 4b+6o or 1o+... : a missed capture
    assert hand.phase == "play" and hand.turn == 0 and hand.pending is None
    assert all(m.kind is MoveKind.PLAY for m in hand.legal_moves())
