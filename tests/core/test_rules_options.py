import pytest

from arena.core.rules import OLD_NAMES, RULE_OPTIONS, LastRoundEscoba, Rules, Seating
from arena.errors import OptionError, SeatingError


def test_defaults_match_rules_md():
    assert Rules().to_dict() == {
        "initial_table": "sum15", "forced_capture": False, "single_capture_priority": False,
        "renuncio": False, "last_round_escoba": True, "escoba_en_mano": False, "sevens": "most",
        "all_sevens_bonus": False, "target": 21, "max_hands": 100,
    }
    assert set(RULE_OPTIONS) == set(Rules().to_dict()) | set(OLD_NAMES)


@pytest.mark.parametrize("text, value", [(True, LastRoundEscoba.YES), (False, LastRoundEscoba.NO),
                                         ("last_card", LastRoundEscoba.LAST_CARD)])
def test_last_round_escoba_is_typed_and_keeps_its_text_form(text, value):
    rules = Rules.from_dict({"last_round_escoba": text})
    assert rules.last_round_escoba is value
    assert rules.to_dict()["last_round_escoba"] == text and type(rules.to_dict()["last_round_escoba"]) is type(text)
    assert Rules.from_dict(rules.to_dict()) == rules
    assert eval(repr(rules), {"Rules": Rules, "LastRoundEscoba": LastRoundEscoba}) == rules
    with pytest.raises(OptionError, match="expected true, false or last_card"):
        Rules(last_round_escoba=text)  # type: ignore[arg-type]  # the typed value, not its text


@pytest.mark.parametrize("text", [True, False, "last_card"])
def test_the_old_name_last_play_escoba_is_read_as_last_round_escoba(text):
    rules = Rules.from_dict({"last_play_escoba": text, "target": 11})
    assert rules == Rules.from_dict({"last_round_escoba": text, "target": 11})
    assert "last_play_escoba" not in rules.to_dict()


def test_the_old_and_the_new_name_together_are_refused():
    for both in ({"last_round_escoba": True, "last_play_escoba": True}, {"last_play_escoba": False, "last_round_escoba": False}):
        with pytest.raises(OptionError, match="last_play_escoba is the old name of last_round_escoba: give only"):
            Rules.from_dict(both)


@pytest.mark.parametrize("old", [True, False])
def test_a_records_last_play_escoba_is_read_as_it_was_refereed(old):
    # It withheld the escoba from the hand's very last card, which never sweeps: the games are
    # those of last_round_escoba true, whichever value the record carries.
    recorded = {k: v for k, v in Rules(target=11).to_dict().items() if k != "last_round_escoba"}
    recorded["last_play_escoba"] = old
    assert Rules.from_record(recorded) == Rules(target=11)
    assert Rules.from_record(Rules(last_round_escoba=LastRoundEscoba.NO).to_dict()).last_round_escoba is LastRoundEscoba.NO
    with pytest.raises(OptionError):
        Rules.from_record({**recorded, "last_round_escoba": True})
    with pytest.raises(OptionError):
        Rules.from_record({**recorded, "last_play_escoba": "last_card"})


def test_a_records_rules_read_again_are_the_same_value_and_a_value_of_another_type_is_read_anew():
    """A report reads the same rules in every record: the second reading is the first's value;
    an option of another type under the same name (True, equal to 1) is not that value."""
    recorded = Rules(target=11, renuncio=True).to_dict()
    first = Rules.from_record(recorded)
    assert Rules.from_record(dict(recorded)) is first
    assert first == Rules(target=11, renuncio=True)
    assert Rules.from_record({"target": 1}).target == 1
    with pytest.raises(OptionError):
        Rules.from_record({"target": True})
    with pytest.raises(OptionError):
        Rules.from_record({"target": 1.0})
    with pytest.raises(OptionError):
        Rules.from_record({"target": [21]})  # not hashable: read, and refused, as any other


def test_a_seating_read_again_is_the_same_value():
    teams = Seating.pairs(4).to_dict()
    assert Seating.from_dict(teams) is Seating.from_dict({"players": 4, "teams": [[0, 2], [1, 3]]}) == Seating.pairs(4)
    assert Seating.from_dict({"players": 3}) is Seating.from_dict({"players": 3, "teams": None}) == Seating.alone(3)
    with pytest.raises(SeatingError):
        Seating.from_dict({"players": 4, "teams": [[0, 1], [2, 3]]})  # refused each time it is read
    with pytest.raises(SeatingError):
        Seating.from_dict({"players": 4, "teams": [[0, 1], [2, 3]]})


def test_from_dict_round_trip_and_none():
    rules = Rules.from_dict({"target": 15, "sevens": "primera", "renuncio": True})
    assert Rules.from_dict(rules.to_dict()) == rules
    assert Rules.from_dict(None) == Rules() == Rules.from_dict({})


@pytest.mark.parametrize("data, key, hint", [
    ({"targt": 15}, "targt", "allowed:"),
    ({"target": "21"}, "target", "integer"),
    ({"target": 0}, "target", "integer"),
    ({"target": True}, "target", "integer"),
    ({"max_hands": -1}, "max_hands", "integer"),
    ({"sevens": "all"}, "sevens", "most, most_tiebreak, primera"),
    ({"initial_table": "sum30"}, "initial_table", "sum15, sum15_or_30, subset15, none"),
    ({"forced_capture": "yes"}, "forced_capture", "true or false"),
    ({"renuncio": 1}, "renuncio", "true or false"),
    ({"last_round_escoba": 1}, "last_round_escoba", "expected true, false or last_card, got 1"),
    ({"last_round_escoba": "true"}, "last_round_escoba", "expected true, false or last_card, got 'true'"),
    ({"last_round_escoba": "last_round"}, "last_round_escoba", "true, false or last_card"),
    ({"last_play_escoba": "no"}, "last_play_escoba", "expected true, false or last_card, got 'no'"),
])
def test_bad_options_name_the_key_and_what_is_allowed(data, key, hint):
    with pytest.raises(OptionError) as info:
        Rules.from_dict(data)
    assert info.value.key == key
    assert hint in str(info.value)


def test_rules_must_be_a_mapping():
    with pytest.raises(OptionError):
        Rules.from_dict(["target", 21])  # type: ignore[arg-type]


def test_table_shapes():
    assert Seating.alone(2).teams == ((0,), (1,))
    assert Seating.alone(3).sides == 3
    assert Seating.pairs(4).teams == ((0, 2), (1, 3))
    assert Seating.pairs(6, 2).teams == ((0, 3), (1, 4), (2, 5))
    assert Seating.pairs(6, 3).teams == ((0, 2, 4), (1, 3, 5))
    assert [Seating.alone(n).rounds_per_hand for n in (2, 3, 4)] == [6, 4, 3]
    assert Seating.pairs(6, 2).rounds_per_hand == 2
    assert Seating.pairs(4).side_of(2) == 0 and Seating.pairs(4).side_of(3) == 1


def test_five_players_is_refused_with_the_reason():
    with pytest.raises(SeatingError, match="5 players is not playable"):
        Seating.alone(5)


@pytest.mark.parametrize("players, teams", [
    (4, ((0, 1), (2, 3))),        # partners side by side
    (4, ((0, 2), (1,))),          # seat 3 missing
    (6, ((0, 3), (1, 4, 2, 5))),  # unequal teams
    (1, ((0,),)),
    (7, tuple((s,) for s in range(7))),
])
def test_bad_team_layouts_are_refused(players, teams):
    with pytest.raises(SeatingError):
        Seating(players, teams)


def test_six_alone_is_refused():
    with pytest.raises(SeatingError):
        Seating.alone(6)


def test_seating_dict_round_trip():
    for s in (Seating.alone(3), Seating.pairs(4), Seating.pairs(6, 3)):
        assert Seating.from_dict(s.to_dict()) == s
