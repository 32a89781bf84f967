"""The bot's own notes (``info`` in a move reply): parsed, capped, recorded, replayed, exported.

Attacked as a hostile bot would: 4 KB + 1, an info that is not an object, nesting deeper than
the JSON parser goes, NaN, a lone surrogate, control characters. None of them costs the move.
"""

import io
import json

import pytest
from zoo.helpers import FAST, fake_spec

from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import MAX_INFO_BYTES, MAX_INFO_DEPTH, InfoDrop, check_info, parse_move
from arena.match.record import GameRecord, RecordError
from arena.match.referee import play_match
from arena.match.replay import replay, verify, verify_steps
from arena.render.html import replay_data
from arena.render.text import render_screen, render_transcript
from bots.kit import escoba_kit as kit


def reply(info_json: str, rid: int = 3) -> bytes:
    return b'{"type":"move","id":%d,"move":"7o","info":%s}' % (rid, info_json.encode())


def just_under(size: int) -> dict:
    """An object that encodes to exactly ``size`` bytes."""
    return {"x": "a" * (size - len('{"x":""}'))}


def test_an_object_within_the_limits_is_kept_and_others_dropped_never_failing():
    kept = {"eval": 0.25, "pv": ["7o", "3b"], "note": "é\x1b[2J"}
    assert parse_move(reply(json.dumps(kept))) == (3, "7o", kept)
    at_cap = just_under(MAX_INFO_BYTES)
    assert len(json.dumps(at_cap, separators=(",", ":")).encode()) == MAX_INFO_BYTES
    assert parse_move(reply(json.dumps(at_cap))).info == at_cap
    over = just_under(MAX_INFO_BYTES + 1)
    # Multi-byte characters count as their UTF-8 bytes, not as characters.
    wide = {"x": "é" * (MAX_INFO_BYTES // 2)}
    cases = {json.dumps(over): InfoDrop.TOO_LARGE, json.dumps(wide, ensure_ascii=False): InfoDrop.TOO_LARGE,
             "[1,2]": InfoDrop.NOT_OBJECT, '"text"': InfoDrop.NOT_OBJECT, "7": InfoDrop.NOT_OBJECT,
             '{"x":NaN}': InfoDrop.INVALID, '{"x":Infinity}': InfoDrop.INVALID, '{"x":"\\ud800"}': InfoDrop.INVALID,
             "{\"x\":" + "[" * MAX_INFO_DEPTH + "]" * MAX_INFO_DEPTH + "}": InfoDrop.TOO_DEEP,
             # Deeper than Python's parser can go: the reply is read without it, the move stands.
             "[" * 50_000 + "]" * 50_000: InfoDrop.TOO_DEEP,
             '{"a":"' + "[" * 3000 + '"}': None}  # brackets in a string are text
    for text, drop in cases.items():
        got = parse_move(reply(text))
        assert (got.id, got.move) == (3, "7o"), text[:40]
        assert got.info == (drop if drop is not None else json.loads(text)), text[:40]
    assert parse_move(reply("null")).info is None  # null says "no notes"
    assert check_info({"x": [[[]]]}) == {"x": [[[]]]}


def test_a_deep_reply_that_is_not_a_move_is_still_malformed():
    from arena.harness.protocol import BotFailure, Termination

    for bad in (b"[" * 100_000, b'{"type":"move","id":3,"info":' + b"[" * 5000 + b"]" * 5000 + b"}"):
        with pytest.raises(BotFailure) as failure:
            parse_move(bad)
        assert failure.value.termination is Termination.MALFORMED


class NotingBot(LocalBot):
    """Plays the first legal move with the notes it is given, one per decision."""

    def __init__(self, notes: list) -> None:
        super().__init__("noting", first=True)
        self._notes = list(notes)

    def decide(self, view, legal, move_ms, bank_ms, idle=None):  # noqa: ANN001, ANN201
        result = super().decide(view, legal, move_ms, bank_ms, idle)
        self.last_info = check_info(self._notes.pop(0)) if self._notes else None
        return result


def _record(notes: list) -> GameRecord:
    return play_match([NotingBot(notes), LocalBot("plain", seed=1)], Rules(target=1), Seating.alone(2), seed=5)


def test_notes_are_stored_with_their_move_and_read_back_in_schema_2():
    rec = _record([{"eval": 1}, [1], {"c": "\x07\u202e"}])
    infos = [m.info for m in rec.moves if m.seat == 0][:3]
    assert infos == [{"eval": 1}, InfoDrop.NOT_OBJECT, {"c": "\x07\u202e"}]
    data = json.loads(json.dumps(rec.to_dict()))
    assert data["schema_version"] == 2
    first, second = [m for m in data["moves"] if m["seat"] == 0][:2]
    assert first["info"] == {"eval": 1} and second["info_dropped"] == "not_object" and "info" not in second
    again = GameRecord.from_dict(data)
    assert again == rec and verify(again) == rec.result
    # Without notes a record is version 1, written as before them.
    plain = _record([])
    assert plain.to_dict()["schema_version"] == 1 and all("info" not in m for m in plain.to_dict()["moves"])


def test_a_record_with_bad_notes_is_refused():
    data = _record([{"eval": 1}]).to_dict()
    move = next(m for m in data["moves"] if "info" in m)
    for bad, why in (({"info": [1]}, "moves"), ({"info": just_under(MAX_INFO_BYTES + 1)}, "moves"),
                     ({"info_dropped": "bored"}, "info_dropped"), ({"info_dropped": "too_large"}, "both")):
        edited = json.loads(json.dumps(data))
        target = next(m for m in edited["moves"] if "info" in m)
        target.update(bad)
        with pytest.raises(RecordError, match=why):
            GameRecord.from_dict(edited)
    old = json.loads(json.dumps(data))
    old["schema_version"] = 1
    with pytest.raises(RecordError, match="schema_version 2"):
        GameRecord.from_dict(old)
    assert move["info"] == {"eval": 1}


def test_replay_shows_the_notes_under_the_move_escaped_and_the_page_beside_it():
    rec = _record([{"plan": "keep \x1b[31m7o"}, "not an object"])
    text = render_transcript(replay(rec))
    assert 'info: {"plan":"keep \\u001b[31m7o"}' in text and "\x1b" not in text
    assert "info: (notes dropped: not a JSON object)" in text
    lines = text.splitlines()
    first = next(i for i, ln in enumerate(lines) if "info:" in ln)
    assert lines[first - 1].strip().startswith("1.")  # right under its move
    rp = replay(rec)
    screen = next(render_screen(rp, i) for i, f in enumerate(rp.frames) if f.move_index == 0 and f.move is not None)
    assert "info: " in screen
    checked, steps = verify_steps(rec)
    notes = replay_data(checked, steps)["notes"]
    assert notes == [[0, '{"plan":"keep \\u001b[31m7o"}'], [2, "(notes dropped: not a JSON object)"]]


def test_the_kit_sends_notes_a_policy_returns_and_drops_what_the_arena_would():
    def policy(info):
        return lambda game, request, rng: kit.Noted(request.legal[0], info)

    hello = json.dumps({"type": "hello", "protocol": 1, "match": 1, "seat": 0, "side": 0, "players": 2,
                        "teams": [[0], [1]], "rules": {}, "time": {}, "seed": 1})
    request = json.dumps({"type": "request", "id": 1, "time_ms": 1000, "bank_ms": 0,
                          "view": {"seat": 0, "side": 0, "hand_number": 0, "round": 0, "dealer": 1, "hand": ["7o"],
                                   "table": [], "stock": 0, "hand_sizes": [1, 1], "scores": [0, 0]}, "legal": ["7o"]})
    for info, kept in (({"eval": 0.5, "s": "ñ"}, True), (just_under(MAX_INFO_BYTES + 1), False), ([1], False),
                       ({"x": float("nan")}, False), ({"x": object()}, False)):
        out, err = io.StringIO(), io.StringIO()
        kit.run(policy(info), stdin=io.StringIO(f"{hello}\n{request}\n"), stdout=out, stderr=err)
        answer = json.loads(out.getvalue().splitlines()[-1])
        assert answer["move"] == "7o"
        if kept:
            assert parse_move(out.getvalue().splitlines()[-1].encode()).info == info
        else:
            assert "info" not in answer and "notes" in err.getvalue()


def test_a_bot_process_reply_with_notes_through_the_referee(tmp_path):
    """The whole path with a real process: the reply's notes, a dropped one, and a move
    without notes on the fast path after them."""
    over = json.dumps(just_under(MAX_INFO_BYTES + 1))
    steps = [{"on": "request", "send": ['{"type":"move","id":{id},"move":"{legal0}","info":{"eval":-1}}\n']},
             {"on": "request", "send": ['{"type":"move","id":{id},"move":"{legal0}","info":' + over + "}\n"]}]
    bot = BotProcess(fake_spec(steps, limits=FAST))
    try:
        rec = play_match([bot, LocalBot("plain", seed=2)], Rules(target=1), Seating.alone(2), seed=3)
    finally:
        bot.close()
    mine = [m for m in rec.moves if m.seat == 0]
    assert [m.info for m in mine[:3]] == [{"eval": -1}, InfoDrop.TOO_LARGE, None]
    assert not rec.failures
    assert GameRecord.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
