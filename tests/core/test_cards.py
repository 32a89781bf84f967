import pickle

import pytest

from arena.core.cards import DECK, Card, Suit, format_cards, parse_cards
from arena.errors import CardParseError, RuleError


def test_deck_has_40_distinct_cards_without_8_and_9():
    assert len(DECK) == 40 == len(set(DECK))
    assert sorted({c.rank for c in DECK}) == [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]
    assert {c.suit for c in DECK} == set(Suit)


@pytest.mark.parametrize("card", DECK, ids=str)
def test_text_round_trip(card):
    assert Card.parse(str(card)) is card
    assert eval(repr(card)) is card  # repr is code you could paste back


def test_capture_values_figures_fill_the_gap():
    assert [Card.parse(t).value for t in ("1o", "7c", "10e", "11b", "12o")] == [1, 7, 8, 9, 10]


def test_velo_and_oros():
    assert Card.parse("7o").is_velo and not Card.parse("7c").is_velo
    assert Card.parse("3o").is_oros and not Card.parse("3b").is_oros


@pytest.mark.parametrize("text", ["8o", "9c", "0e", "7x", "", "o7", "13b", "7", "siete"])
def test_invalid_text_raises_a_rule_error(text):
    with pytest.raises(CardParseError) as info:
        Card.parse(text)
    assert isinstance(info.value, RuleError) and isinstance(info.value, ValueError)
    assert "expected" in str(info.value)


def test_cards_are_immutable_and_pickle_to_the_same_instance():
    card = Card.parse("12c")
    with pytest.raises(AttributeError):
        card.rank = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(card)) is card


def test_parse_and_format_lists():
    cards = parse_cards("3b 5c 10e 2o")
    assert format_cards(cards) == "3b 5c 10e 2o"
    assert parse_cards(["7o", "12c"]) == (Card.parse("7o"), Card.parse("12c"))


def test_sorting_is_by_value_then_suit():
    assert format_cards(sorted(parse_cards("12c 1b 10e 1o 7o"))) == "1o 1b 7o 10e 12c"
