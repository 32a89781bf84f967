"""The protocol module: encoding of arena messages and the judgement of bot replies."""

import json

import pytest

from arena.harness.protocol import (
    GOODBYE_LINE,
    PROTOCOL_VERSION,
    BotFailure,
    Clock,
    Termination,
    TimeLimits,
    encode,
    event_line,
    match_over_line,
    match_start,
    parse_move,
    parse_ready,
    request_line,
    timeout_line,
)


def test_lines_are_compact_json_objects_ending_in_newline():
    line = request_line(7, 2000, 0, {"hand": ["7o"]}, ["7o", "7o+3b+5c"])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    msg = json.loads(line)
    assert msg == {"type": "request", "id": 7, "time_ms": 2000, "bank_ms": 0, "clock": "wall",
                   "view": {"hand": ["7o"]}, "legal": ["7o", "7o+3b+5c"]}
    assert b" " not in line
    assert json.loads(GOODBYE_LINE) == {"type": "goodbye"}
    assert json.loads(timeout_line(3, "1c")) == {"type": "timeout", "id": 3, "move": "1c"}
    assert json.loads(event_line({"type": "play", "seat": 0, "card": "5e", "take": []}))["event"]["card"] == "5e"
    over = json.loads(match_over_line(None, [3, 3], "max_hands", Termination.OK))
    assert over == {"type": "match_over", "winner": None, "scores": [3, 3], "reason": "max_hands", "termination": "ok"}


def test_utf8_is_kept_not_escaped():
    assert encode({"name": "niño"}) == '{"name":"niño"}\n'.encode()


def test_match_start_carries_everything_the_bot_needs():
    msg = match_start(first=True, match=1, seat=2, side=0, players=4, teams=((0, 2), (1, 3)),
                      rules={"target": 21}, time=TimeLimits(1000, 500, 0, 50))
    assert msg["type"] == "hello" and msg["protocol"] == PROTOCOL_VERSION
    assert msg["teams"] == [[0, 2], [1, 3]] and msg["seat"] == 2 and msg["side"] == 0
    assert msg["time"] == {"startup_ms": 1000, "move_ms": 500, "bank_ms": 0, "grace_ms": 50, "clock": "wall"}
    on_cpu = match_start(first=True, match=1, seat=0, side=0, players=2, teams=((0,), (1,)), rules={},
                         time=TimeLimits(1000, 500, 0, 50, Clock.CPU))
    assert on_cpu["time"]["clock"] == "cpu"
    again = match_start(first=False, match=2, seat=1, side=1, players=2, teams=((0,), (1,)),
                        rules={}, time=TimeLimits())
    assert again["type"] == "new_match" and again["match"] == 2


def test_parse_ready():
    assert parse_ready(b'{"type":"ready","name":"x"}\n').name == "x"
    assert parse_ready(b'{"type":"ready","protocol":1}').name is None
    for bad in (b"hello", b"[1]", b'{"type":"move"}', b'{"type":"ready","protocol":2}', b"\xff\xfe"):
        with pytest.raises(BotFailure) as info:
            parse_ready(bad)
        assert info.value.termination is Termination.NO_HANDSHAKE


def test_parse_move():
    assert parse_move(b'{"type":"move","id":4,"move":"7o+10e"}\n') == (4, "7o+10e", None)
    cases = [b"7o", b"null", b'"7o"', b'{"id":4,"move":"7o"}', b'{"type":"move","move":"7o"}',
             b'{"type":"move","id":"4","move":"7o"}', b'{"type":"move","id":true,"move":"7o"}',
             b'{"type":"move","id":4,"move":7}', b'{"type":"move","id":4']
    for bad in cases:
        with pytest.raises(BotFailure) as info:
            parse_move(bad)
        assert info.value.termination is Termination.MALFORMED, bad
        assert info.value.detail


def test_termination_values_are_the_documented_names():
    names = {t.value for t in Termination}
    assert names == {"ok", "no_handshake", "timeout", "crash", "malformed", "wrong_id", "illegal_move",
                     "oversized_line", "memory"}
    assert not Termination.OK.is_failure and Termination.TIMEOUT.is_failure


@pytest.mark.slow
def test_hand_built_lines_equal_the_json_encoder():
    from arena.core.cards import Card
    from arena.core.events import Sweep
    from arena.core.game import MatchState
    from arena.core.rules import Rules, Seating
    from arena.core.seeding import Rng
    from arena.harness.protocol import core_event_line, core_event_out, move_texts, request_line
    from arena.match.referee import _view, _Views

    rules = Rules(renuncio=True, initial_table="subset15", escoba_en_mano=True)
    kinds = set()
    for seed in range(30):
        seating = (Seating.alone(2), Seating.alone(3), Seating.pairs(4))[seed % 3]
        state = MatchState.new(rules, seating, seed)
        views = _Views(state, [seating.side_of(s) for s in range(seating.players)])  # one per match, as the referee's
        rng = Rng(seed)
        while not state.is_over:
            seat = state.current_seat
            legal = [str(m) for m in state.legal_moves()]
            assert move_texts(state.legal_moves()) == legal
            side = seating.side_of(seat)
            fast = request_line(seed, 2000, 7, views.json(seat), legal)
            assert fast == request_line(seed, 2000, 7, _view(state, seat, side), legal)
            assert json.loads(fast)["view"] == _view(state, seat, side)
            state.apply(legal[rng.below(len(legal))])
        for event in [*state.events, Sweep(None, ()), Sweep(None, (Card.parse("7o"),))]:
            kinds.add(event.kind)
            assert core_event_line(event) == event_line(event.to_dict())
            line, data = core_event_out(event)
            assert line == event_line(event.to_dict()) and data == event.to_dict()
            assert list(data) == list(event.to_dict())  # the same key order too
    assert kinds == {"deal", "cards", "play", "renuncio", "escoba", "escoba_en_mano", "initial_capture", "sweep",
                     "hand_score", "match_end"}


def test_canonical_and_other_move_replies_parse_alike():
    variants = [b'{"type":"move","id":12,"move":"renuncio 5e+4b"}', b'{"type": "move", "id": 12, "move": "renuncio 5e+4b"}',
                b'{"move":"renuncio 5e+4b","id":12,"type":"move"}', b' {"type":"move","id":12,"move":"renuncio 5e+4b"} \r']
    assert {parse_move(v) for v in variants} == {(12, "renuncio 5e+4b", None)}
    with pytest.raises(BotFailure):
        parse_move(b'{"type":"move","id":12,"move":"7o"} x')


def test_hostile_json_is_malformed_not_a_crash():
    for bad in (b"[" * 100000, b'{"type":"move","id":' + b"9" * 5000 + b',"move":"7o"}',
                b'{"type":"move","id":1e400,"move":"7o"}', b"\xff\xfe\x00"):
        with pytest.raises(BotFailure) as info:
            parse_move(bad)
        assert info.value.termination is Termination.MALFORMED
