"""Every worked example of RULES.md (from the seeds), as a test."""

from core_helpers import hand_from

from arena.core.cards import Card, parse_cards
from arena.core.game import captures_for
from arena.core.moves import Move
from arena.core.rules import Rules
from arena.core.scoring import score_hand


def texts(moves):
    return [str(m) for m in moves]


def test_seed_001_ana_and_luis():
    # Ana (seat 0) holds 5e, Luis (seat 1) holds 5o; Luis dealt.
    hand = hand_from(["5e 1c 1e", "5o 1b 2b"], "2c 4b 6o 10e")
    assert hand.turn == 0
    hand.apply("5e+4b+6o")
    assert sorted(hand.table) == list(parse_cards("2c 10e"))
    assert "5o+2c+10e" in texts(hand.legal_moves())
    hand.apply("5o+2c+10e")
    assert hand.table == []
    assert hand.escobas == [0, 1]
    assert hand.events[-1].to_dict() == {"type": "escoba", "seat": 1, "side": 1, "source": "play"}


def test_seed_000_captures():
    six, five, caballo = parse_cards("6c 5c 11c")
    assert captures_for(six, parse_cards("2o 4b 3e 12b")) == [parse_cards("2o 3e 4b")]
    assert captures_for(five, parse_cards("12b")) == [parse_cards("12b")]
    assert captures_for(caballo, parse_cards("6e")) == [parse_cards("6e")]


def test_seed_002_five_captures_not_four():
    hand = hand_from(["7o 12c 4b", "6e 1c 11b"], "3b 5c 10e 2o")
    assert sum(c.value for c in hand.table) == 18 and len(hand.table) == 4  # no dealer escoba
    captures = {str(m) for m in hand.legal_moves() if m.take}
    assert captures == {"12c+5c", "12c+2o+3b", "4b+3b+10e", "7o+10e", "7o+3b+5c"}


def test_seed_002_sample_game_opening_through_the_engine():
    # You are seat 0, Ada (seat 1) deals. The second round of cards is stacked too.
    hand = hand_from(["7o 12c 4b", "6e 1c 11b"], "3b 5c 10e 2o", later=["5b 7e 2c", "7c 4o 11o"])
    hand.apply("7o+3b+5c")              # the velo is yours
    hand.apply("1c")                    # Ada trails the ace: table 11
    hand.apply("4b+1c+2o+10e")          # escoba
    assert hand.escobas == [1, 0]
    hand.apply("6e")
    hand.apply("12c")                   # your K needs a five: trail, table 16
    hand.apply("11b+6e")                # Ada's caballo takes the 6
    assert hand.table == [Card.parse("12c")] and hand.round == 1
    hand.apply("5b+12c")                # second escoba
    assert hand.escobas == [2, 0]
    hand.apply("4o")
    hand.apply("7e")                    # leaves 11: needs a four
    hand.apply("7c")                    # 4 7 7: eighteen, out of reach
    hand.apply("2c")
    hand.apply("11o+2c+4o")             # two oros for Ada
    assert sorted(hand.table) == list(parse_cards("7c 7e"))


def test_seed_002_final_count_four_to_two():
    # 21 cards to 19, oros 5-5 (nobody), velo yours, sevens 3 to 1 for Ada; escobas 2 and 1.
    you = list(parse_cards("7o 1o 2o 3o 4o 6c 1c 2c 3c 4c 5c 1e 2e 3e 4e 5e 6e 10e 11e 12e 1b"))
    ada = [c for c in map(Card.parse, [
        "5o", "6o", "10o", "11o", "12o", "7e", "7b", "7c", "10c", "11c", "12c", "2b", "3b", "4b", "5b",
        "6b", "10b", "11b", "12b"])]
    assert len(you) == 21 and len(ada) == 19 and len(set(you) | set(ada)) == 40
    breakdown = score_hand([you, ada], [2, 1], Rules())
    assert [b["total"] for b in breakdown] == [4, 2]
    assert [(b["cards"], b["oros"], b["velo"], b["sevens"], b["escobas"]) for b in breakdown] == [
        (1, 0, 1, 0, 2), (0, 0, 0, 1, 1)]
    assert breakdown[0]["n_oros"] == breakdown[1]["n_oros"] == 5


def test_move_text_round_trip():
    for text in ("5e", "5e+4b+6o", "renuncio 5e+4b", "pass", "mesa 3b+12c"):
        assert str(Move.parse(text)) == text
    assert Move.parse("5e+6o+4b") == Move.parse("5e+4b+6o")
