"""The game record: its end reasons, failure policy and forfeit rule, the store row it derives,
and reading it back as untrusted input (one-line RecordError, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay_helpers import play

from arena.core.rules import Seating
from arena.core.seeding import Rng
from arena.harness.protocol import Termination
from arena.match.record import (
    EndReason,
    FailureAction,
    FailureEntry,
    FailurePolicy,
    GameRecord,
    MoveEntry,
    PlayedBy,
    PolicyError,
    RecordError,
    derive_row_values,
    forfeit_result,
)

GOLDEN = Path(__file__).parents[1] / "golden" / "records"


# --- the forfeit rule, on plain values ---------------------------------------------------------


@pytest.mark.parametrize("scores,failed,hand_index,winner,forfeited", [
    ((3, 10), [1], 0, 0, (1,)),  # the only side left wins, whatever the score
    ((20, 5, 5), [0], 2, None, (0,)),  # the others tie: nobody wins
    ((1, 7, 30), [2], 4, 1, (2,)),  # the failed side's lead does not count
    ((1, 7, 7, 2), [1, 2], 1, 3, (1, 2)),  # two sides out
    ((4, 9), [1, 1], 0, 0, (1,)),  # teammates on one side
    ((4, 9), [0, 1], 6, None, (0, 1)),  # every side failed
])
def test_the_forfeit_rule(scores, failed, hand_index, winner, forfeited):
    result = forfeit_result(scores, failed, hand_index)
    assert result.winner == winner and result.forfeited == forfeited
    assert result.reason is EndReason.FORFEIT and result.scores == scores and result.hands == hand_index + 1


@pytest.mark.parametrize("failed", [[], [2], [-1]])
def test_the_forfeit_rule_needs_a_failed_side_of_the_match(failed):
    with pytest.raises(RecordError):
        forfeit_result((1, 2), failed, 0)


# --- the values of a record ----------------------------------------------------------------------


def test_end_reasons_are_their_json_text():
    assert [r.value for r in EndReason] == ["target", "max_hands", "forfeit"]
    for reason in EndReason:
        assert reason == reason.value and str(reason) == f"{reason}" == reason.value
        assert json.dumps({"reason": reason}) == json.dumps({"reason": reason.value})
        assert EndReason(reason.value) is reason
    assert EndReason("max_hands") is EndReason.MAX_HANDS


def test_a_failure_policy_is_validated_and_round_trips():
    for policy in (FailurePolicy(), FailurePolicy("substitute", 0), FailurePolicy("substitute", 7)):
        assert FailurePolicy.from_dict(policy.to_dict()) == policy
    assert FailurePolicy.from_dict({}) == FailurePolicy("loss", 3)
    assert FailurePolicy("substitute").substitutes and not FailurePolicy("loss").substitutes
    for bad in ({"policy": "forgive"}, {"strikes": -1}, {"strikes": "2"}, {"strikes": False}, {"strike": 2}, []):
        with pytest.raises(PolicyError):
            FailurePolicy.from_dict(bad)


def test_entries_write_the_json_the_referee_always_wrote():
    move = MoveEntry(1, "5o+10e", PlayedBy.SUBSTITUTE, 0.25, 12.5)
    assert json.dumps(move.to_dict()) == '{"seat": 1, "move": "5o+10e", "by": "substitute", "ms": 0.25, "t_ms": 12.5}'
    assert move.to_dict(times=False) == {"seat": 1, "move": "5o+10e", "by": "substitute"}
    failure = FailureEntry(1, Termination.TIMEOUT, "slow", 4, FailureAction.SUBSTITUTE, "5o+10e")
    assert json.dumps(failure.to_dict()) == ('{"seat": 1, "termination": "timeout", "detail": "slow", "move_index": 4, '
                                             '"action": "substitute", "substitute": "5o+10e"}')
    forfeit = FailureEntry(0, Termination.CRASH, "gone", 9, FailureAction.FORFEIT)
    assert "substitute" not in forfeit.to_dict()


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_a_golden_record_reads_and_writes_back_byte_for_byte(path):
    text = path.read_text()
    record = GameRecord.from_dict(json.loads(text))
    assert json.dumps(record.to_dict(), indent=1) + "\n" == text


def test_the_store_row_values_derive_from_the_record():
    record = play(Seating.pairs(4), {"target": 11}, 4, failing_seat=2, fail_on=6,
                  policy=FailurePolicy("substitute", strikes=2))
    values = derive_row_values(GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))))
    data = record.to_dict()
    # Counted here from the JSON, independently of the record's types.
    escobas = [sum(1 for e in data["events"] if e["type"] == "escoba" and e["side"] == side) for side in (0, 1)]
    assert values.escobas == tuple(escobas)
    assert values.terminations == (Termination.OK, Termination.OK, Termination.CRASH, Termination.OK)
    assert values.failures == ((2, Termination.CRASH),) * 3
    assert (values.winner, values.reason, values.hands) == (1, "forfeit", data["result"]["hands"])
    assert values.scores == tuple(data["result"]["scores"]) and values.seed == 4 and values.seats == record.seats


def test_the_worker_row_is_the_derived_values_in_the_spec_place():
    from arena.tournament.schedule import MatchSpec
    from arena.tournament.worker import row_from_record

    record = play(Seating.alone(3), {"target": 11}, 3, failing_seat=1, fail_on=9)
    spec = MatchSpec(id="00000.0", index=0, pairing=0, deal=0, rotation=0, seed=3, sides=("bot0", "bot1", "bot2"),
                     seats=("bot0", "bot1", "bot2"))
    row = row_from_record(spec, record.to_dict(), 1.5)
    values = derive_row_values(record)
    assert (row.winner, row.scores, row.reason, row.terminations, row.escobas, row.hands, row.failures) == (
        values.winner, values.scores, values.reason, values.terminations, values.escobas, values.hands, values.failures)
    assert row.reason is EndReason.FORFEIT and row.terminations[1] is Termination.CRASH
    assert row_from_record(spec, record, 1.5) == row


# --- reading untrusted records -------------------------------------------------------------------


def _base() -> dict:
    record = play(Seating.alone(2), {"target": 5}, 7, failing_seat=1, fail_on=4, policy=FailurePolicy("substitute", 1))
    assert record.failures and record.moves
    return json.loads(json.dumps(record.to_dict()))


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def _set(data: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        data = data[key]
    if value is _DELETE:
        del data[path[-1]]
    else:
        data[path[-1]] = value


_DELETE = object()

MALFORMED = [
    (("seed",), "1", "seed"),
    (("seed",), 10**30, "seed: expected an integer seed of at most 64 bits, got a huge integer"),
    (("seed",), _DELETE, "missing 'seed'"),
    (("seats",), [], "seats"),
    (("seats", 0), 7, r"seats\[0\]"),
    (("rules",), [1], "rules"),
    (("rules", "target"), _deep(50_000), "rules.target"),
    (("seating", "players"), 10**400, "seating.players"),
    (("seating", "teams"), [[0], 1], r"seating.teams\[1\]"),
    (("moves", 0, "seat"), "0", r"moves\[0\].seat"),
    (("moves", 0, "seat"), True, r"moves\[0\].seat"),
    (("moves", 0, "seat"), 2, r"moves\[0\].seat: expected an integer from 0 to 1"),
    (("moves", 0, "move"), 5, r"moves\[0\].move"),
    (("moves", 0, "by"), "robot", r"moves\[0\].by: expected one of bot, substitute"),
    (("moves", 0, "ms"), float("nan"), r"moves\[0\].ms"),
    (("moves", 0, "t_ms"), float("inf"), r"moves\[0\].t_ms"),
    (("moves", 0, "ms"), -1, r"moves\[0\].ms"),
    (("moves", 0, "extra"), 1, r"moves\[0\]: unknown key 'extra'"),
    (("moves", 0), "7o", r"moves\[0\]: expected an object"),
    (("events", 0, "type"), None, r"events\[0\].type"),
    (("events", 0, "table"), _deep(100_000), r"events\[0\].table"),
    (("events", 0, "stock"), 10**100, r"events\[0\].stock"),
    (("events",), {"type": "deal"}, "events: expected a list"),
    (("failures", 0, "termination"), "sleepy", r"failures\[0\].termination"),
    (("failures", 0, "termination"), "ok", r"failures\[0\].termination: expected a failure"),
    (("failures", 0, "action"), "forgive", r"failures\[0\].action"),
    (("failures", 0, "move_index"), -3, r"failures\[0\].move_index"),
    (("failures", 0, "detail"), _DELETE, r"failures\[0\]: missing 'detail'"),
    (("outcomes", 1, "termination"), 3, r"outcomes\[1\].termination"),
    (("outcomes", 1, "strikes"), 2.5, r"outcomes\[1\].strikes"),
    (("result", "reason"), "boredom", "result.reason: expected one of target, max_hands, forfeit"),
    (("result", "winner"), 2, "result.winner"),
    (("result", "scores", 0), -1, r"result.scores\[0\]"),
    (("result", "hands"), 10**40, "result.hands: expected an integer >= 0, got a huge integer"),
    (("result", "forfeited"), [5], r"result.forfeited\[0\]"),
    (("policy", "policy"), "forgive", "policy"),
    (("limits",), [{"move_ms": _deep(10)}], r"limits\[0\].move_ms"),
    (("duration_ms",), "soon", "duration_ms"),
    (("schema_version",), True, "schema_version True"),
    (("surprise",), 1, "unknown key 'surprise'"),
]


MOVE_DAMAGE = [
    ("seat", "0", "seat"), ("seat", True, "seat"), ("seat", -1, "seat"), ("seat", 2, "seat"), ("seat", _DELETE, "'seat'"),
    ("move", 5, "move"), ("move", _DELETE, "'move'"), ("by", "robot", "by"), ("by", ["bot"], "by"), ("by", True, "by"),
    ("ms", float("nan"), "ms"), ("ms", float("-inf"), "ms"), ("ms", -0.5, "ms"), ("ms", "1", "ms"), ("ms", 2.0**64, "ms"),
    ("t_ms", float("nan"), "t_ms"), ("t_ms", -1.0, "t_ms"), ("t_ms", [1.0], "t_ms"), ("extra", 1, "unknown key 'extra'"),
    ("info", {"text": "x"}, "notes need schema_version 2"),
]


@pytest.mark.parametrize("key,value,message", MOVE_DAMAGE, ids=lambda x: None)
def test_a_damaged_move_anywhere_is_named_though_moves_are_read_all_at_once(key, value, message):
    """The moves are read all at once where each is the common case, and one by one otherwise:
    a damaged move is named wherever it is, the first of two damaged ones first."""
    moves = len(_base()["moves"])
    for index in (0, moves // 2, moves - 1):
        data = _base()
        data["schema_version"] = 1
        _set(data, ("moves", index, key), value)
        if index + 1 < moves:
            _set(data, ("moves", index + 1, key), value)
        with pytest.raises(RecordError, match=rf"moves\[{index}\].*{message}"):
            GameRecord.from_dict(data)


def test_moves_read_all_at_once_are_those_read_one_by_one():
    data = _base()
    record = GameRecord.from_dict(data)
    assert [m.to_dict() for m in record.moves] == data["moves"]
    assert all(type(m) is MoveEntry and type(m.by) is PlayedBy for m in record.moves)
    for m in data["moves"]:  # whole milliseconds written as integers, and no times: read as written
        m["ms"] = 3
        del m["t_ms"]
    again = GameRecord.from_dict(data).moves
    assert [(m.ms, type(m.ms), m.t_ms) for m in again] == [(3, int, None)] * len(again)
    data["moves"] = []
    assert GameRecord.from_dict(data).moves == ()


@pytest.mark.parametrize("path,value,message", MALFORMED, ids=lambda x: None)
def test_a_malformed_record_is_one_line_naming_the_field(path, value, message):
    data = _base()
    _set(data, path, value)
    with pytest.raises(RecordError, match=message) as info:
        GameRecord.from_dict(data)
    assert "\n" not in str(info.value) and len(str(info.value)) < 300


def test_whatever_is_damaged_verification_answers_with_a_record_error():
    """Seeded damage anywhere in a record: verify either accepts it or raises RecordError."""
    from arena.match.replay import verify

    base = _base()
    junk = [None, -1, 0, 1, 10**30, "x", "7o", [], {}, True, 1.5, float("nan"), _deep(5000), [[0, 1]], {"type": "x"}]
    paths: list[tuple] = []

    def walk(value, path):
        paths.append(path)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))

    walk(base, ())
    rng = Rng(2026)
    refused = 0
    for _ in range(400):
        data = json.loads(json.dumps(base))
        path = paths[1 + rng.below(len(paths) - 1)]
        _set(data, path, junk[rng.below(len(junk))] if rng.below(8) else _DELETE)
        try:
            verify(data)
        except RecordError as exc:
            refused += 1
            assert "\n" not in str(exc)
    assert refused > 300  # nearly every change is caught; a few junk values equal what was there
