"""Replaying records through the rules core: frames, verification, and refusals that name the move."""

from __future__ import annotations

import json

import pytest
from replay_helpers import RULE_VARIANTS, SEATINGS, change_one_card, other_card, play, record_dict

from arena.core.game import MatchState
from arena.core.rules import Rules, Seating
from arena.harness.local_bot import LocalBot
from arena.match.record import GameRecord, PlayedBy, RecordError, untimed
from arena.match.referee import FailurePolicy, play_match
from arena.match.replay import ReplayMismatch, replay, verify, verify_afterwards


def _through_json(record: GameRecord) -> dict:
    return json.loads(json.dumps(record.to_dict()))


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SEATINGS))
@pytest.mark.parametrize("variant", list(RULE_VARIANTS))
def test_random_records_replay_to_their_recorded_result(shape, variant):
    seating = SEATINGS[shape]
    for seed in (11, 12):
        record = play(seating, RULE_VARIANTS[variant], seed)
        rep = replay(_through_json(record))
        result = record.result
        assert verify(record.to_dict()) == result
        last = rep.frames[-1]
        assert last.kind == "match_end"
        assert last.scores == result.scores
        assert rep.frames[0].kind == "deal" and rep.frames[0].move_index is None
        assert [f.step for f in rep.frames] == list(range(len(rep.frames)))
        # Every recorded move appears on exactly one frame, in order.
        moved = [(f.move_index, f.seat, f.move) for f in rep.frames if f.move is not None]
        assert moved == [(i, m.seat, m.move) for i, m in enumerate(record.moves)]
        hand_scores = [f for f in rep.frames if f.kind == "hand_score"]
        assert len(hand_scores) == result.hands
        assert hand_scores[-1].scores == result.scores


@pytest.mark.parametrize("shape", list(SEATINGS))
def test_frames_show_the_same_table_as_the_core_after_every_move(shape):
    seating = SEATINGS[shape]
    record = play(seating, {"renuncio": True, "escoba_en_mano": True, "initial_table": "subset15", "target": 15}, 5)
    rep = replay(record)
    state = MatchState(Rules.from_dict(record.rules), seating, record.seed)
    last_frame_of = {}
    for f in rep.frames:
        # 40 cards, always: hands, table, piles and stock (the table keeps a no-capture hand's cards).
        held = sum(len(h) for h in f.hands) + len(f.table) + sum(len(p) for p in f.piles) + f.stock
        assert held == 40, f
        if f.move_index is not None:
            last_frame_of[f.move_index] = f
    for i, entry in enumerate(record.moves):
        state.apply(entry.move)
        frame = last_frame_of[i]
        if state.is_over:
            break
        hand = state.hand
        assert frame.turn == state.current_seat
        assert [list(h) for h in frame.hands] == [list(h) for h in hand.hands]
        assert list(frame.table) == list(hand.table)
        assert [sorted(p) for p in frame.piles] == [sorted(p) for p in hand.piles]
        assert list(frame.escobas) == list(hand.escobas)
        assert list(frame.scores) == list(state.scores)


def test_a_forfeit_replays_to_the_recorded_forfeit():
    record = play(Seating.alone(3), {}, 3, failing_seat=1, fail_on=9)
    assert record.result.reason == "forfeit"
    rep = replay(record.to_dict())
    assert rep.frames[-1].kind == "forfeit"
    assert rep.frames[-1].scores == record.result.scores
    # The lie "nobody failed" is refused.
    data = record_dict(record)
    for outcome in data["outcomes"]:
        outcome["termination"] = "ok"
    with pytest.raises(ReplayMismatch, match="no bot failure"):
        replay(data)


def test_a_forfeit_before_any_move_replays():
    record = play(Seating.alone(2), {}, 3, failing_seat=0, fail_on=1)
    assert record.moves == () and record.result.reason == "forfeit"
    assert [f.kind for f in replay(record).frames] == ["deal", "forfeit"]


def test_substituted_moves_replay_like_any_other():
    record = play(Seating.pairs(4), {"target": 11}, 4, failing_seat=2, fail_on=4,
                  policy=FailurePolicy("substitute", strikes=1000))
    assert any(m.by is PlayedBy.SUBSTITUTE for m in record.moves)
    assert replay(record).frames[-1].scores == record.result.scores


@pytest.mark.parametrize("capture", [True, False])
def test_one_changed_card_in_a_move_is_refused_naming_that_move(capture):
    record = play(Seating.alone(2), {}, 21)
    data = record_dict(record)
    index = change_one_card(data, capture=capture)
    changed = data["moves"][index]
    with pytest.raises(ReplayMismatch) as info:
        replay(data)
    err = info.value
    assert err.move_index == index
    assert err.move_number == index + 1
    assert err.seat == changed["seat"]
    assert err.move == changed["move"]
    assert f"move {index + 1} of {len(data['moves'])} (seat {changed['seat']} plays {changed['move']!r})" in str(err)
    with pytest.raises(RecordError):  # the family callers catch
        verify(data)


def test_one_changed_card_in_a_dealt_hand_is_refused_at_the_deal():
    record = play(Seating.alone(2), {}, 22)
    data = record_dict(record)
    cards = next(e for e in data["events"] if e["type"] == "cards")
    cards["cards"][0] = other_card(cards["cards"][0])
    with pytest.raises(ReplayMismatch) as info:
        replay(data)
    assert info.value.move_index is None
    assert "before the first move" in str(info.value)
    assert "cards" in str(info.value) and "recorded" in str(info.value)


def test_a_changed_card_in_a_later_deal_names_the_move_that_led_to_it():
    record = play(Seating.alone(2), {}, 23)
    data = record_dict(record)
    deals = [i for i, e in enumerate(data["events"]) if e["type"] == "deal"]
    target = deals[1]  # the second round's deal follows the 6th move (2 players x 3 cards)
    data["events"][target + 1]["cards"][1] = other_card(data["events"][target + 1]["cards"][1])
    with pytest.raises(ReplayMismatch) as info:
        replay(data)
    assert info.value.move_index == 5
    assert info.value.move == data["moves"][5]["move"]


def test_a_changed_captured_card_in_the_events_is_refused_naming_the_move():
    record = play(Seating.alone(2), {}, 24)
    data = record_dict(record)
    plays = [e for e in data["events"] if e["type"] == "play"]
    index, event = next((i, e) for i, e in enumerate(plays) if e["take"])
    event["take"][0] = other_card(event["take"][0])
    with pytest.raises(ReplayMismatch) as info:
        replay(data)
    assert info.value.move_index == index
    assert "take" in str(info.value)


def test_other_damage_is_refused_with_a_clear_reason():
    record = play(Seating.alone(2), {}, 25)
    base = record_dict(record)

    data = json.loads(json.dumps(base))
    data["result"]["scores"][0] += 1
    with pytest.raises(ReplayMismatch, match="result") as info:
        replay(data)
    assert info.value.move_index == len(data["moves"]) - 1
    said, got = data["result"]["scores"], base["result"]["scores"]
    assert info.value.reason == (f"the record's result says scores {said[0]}-{said[1]}, "
                                 f"but the replay ends with scores {got[0]}-{got[1]}")  # only the field that differs

    data = json.loads(json.dumps(base))
    data["moves"][3]["seat"] = 1 - data["moves"][3]["seat"]
    with pytest.raises(ReplayMismatch, match="move 4 of .*turn") as info:
        replay(data)
    assert info.value.move_index == 3

    data = json.loads(json.dumps(base))
    del data["moves"][-5:]
    with pytest.raises(ReplayMismatch, match=r"\d+ more events"):
        replay(data)
    # Cut cleanly (moves and their events): the match is simply not over.
    state = MatchState(Rules(), Seating.alone(2), data["seed"])
    for entry in data["moves"]:
        state.apply(entry["move"])
    del data["events"][len(state.events):]
    with pytest.raises(ReplayMismatch, match="unfinished"):
        replay(data)

    data = json.loads(json.dumps(base))
    data["moves"].append(dict(data["moves"][-1]))
    with pytest.raises(ReplayMismatch, match="already over"):
        replay(data)

    data = json.loads(json.dumps(base))
    data["events"].append(dict(data["events"][-1]))
    with pytest.raises(ReplayMismatch, match="more events"):
        replay(data)

    data = json.loads(json.dumps(base))
    data["moves"][2] = {"seat": 0}
    with pytest.raises(RecordError, match=r"malformed game record: moves\[2\]: missing 'move'"):
        replay(data)

    data = json.loads(json.dumps(base))
    data["rules"]["target"] = 5
    with pytest.raises(ReplayMismatch):
        replay(data)

    data = json.loads(json.dumps(base))
    data["seed"] += 1
    with pytest.raises(ReplayMismatch, match="before the first move"):
        replay(data)

    data = json.loads(json.dumps(base))
    data["rules"]["sevens"] = "sometimes"
    with pytest.raises(ReplayMismatch, match="sevens"):
        replay(data)

    with pytest.raises(RecordError, match="malformed"):
        replay({"schema_version": 1, "seed": 1})
    with pytest.raises(RecordError, match="JSON object"):
        replay([1, 2, 3])


def test_a_malformed_event_is_refused_by_the_walk_that_reads_it_and_the_verified_events_are_the_records():
    """A walk reads each event as it compares it with the rules core's (coerce_record): an event
    that is not plain JSON is refused as malformed, however deep or wherever it is; one that is
    the core's with its time verifies and stays in the record as it was read."""
    record = play(Seating.alone(2), {}, 31)
    base = record_dict(record)
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    for index in (0, len(base["events"]) // 2, len(base["events"]) - 1):
        for damage in ({"take": deep}, {"cards": float("nan")}, {"hand": 2**70}, {"extra": {"a": {"b": {"c": [1]}}}}):
            data = json.loads(json.dumps(base))
            data["events"][index].update(damage)
            with pytest.raises(RecordError, match=rf"malformed game record: events\[{index}\]"):
                verify(data)
    for index, bad in ((0, "deal"), (3, {"type": 7})):
        data = json.loads(json.dumps(base))
        data["events"][index] = bad
        with pytest.raises(RecordError, match=rf"malformed game record: events\[{index}\]"):
            verify(data)
    data = json.loads(json.dumps(base))
    data["events"].append({"type": "play", "take": deep})
    with pytest.raises(RecordError, match=r"malformed game record: events\[\d+\]"):
        verify(data)
    timed = json.loads(json.dumps(base))
    for i, event in enumerate(timed["events"]):
        event["t_ms"] = float(i)
    rec = replay(timed).record
    assert [e["t_ms"] for e in rec.events] == [float(i) for i in range(len(timed["events"]))]
    assert rec.events == tuple(timed["events"])


def test_an_events_time_is_checked_by_the_walk_and_the_page_gets_the_events_without_times():
    """The walk reads each event's time as it compares the event (the record's reader leaves
    events to it): a time that is not a number of milliseconds >= 0 is refused by name, and the
    events the walk hands a page are the record's without their times."""
    base = record_dict(play(Seating.alone(2), {}, 31))
    last = len(base["events"]) - 1
    for index in (0, last // 2, last):
        for bad in (-1.0, "12", float("nan"), True, [1.0], 2.0**64):
            data = json.loads(json.dumps(base))
            data["events"][index]["t_ms"] = bad
            with pytest.raises(RecordError, match=rf"malformed game record: events\[{index}\].t_ms"):
                verify(data)
    timed = json.loads(json.dumps(base))
    for i, event in enumerate(timed["events"]):
        event["t_ms"] = float(i) if i % 3 else i  # a whole number of ms may be written as an integer
    rec, _, _, events = verify_afterwards(timed)
    assert events == tuple(untimed(e) for e in timed["events"])
    assert all("t_ms" not in e for e in events)
    assert rec.events == tuple(timed["events"])  # the record keeps its times


# --- failures, outcomes and policy must tell the same story as the moves --------------------------


def _substituted_then_forfeited() -> dict:
    """Seat 1 fails from its 4th decision on: two substituted moves, then the forfeit."""
    record = play(Seating.alone(2), {"target": 11}, 6, failing_seat=1, fail_on=4,
                  policy=FailurePolicy("substitute", strikes=2))
    assert [f.action.value for f in record.failures] == ["substitute", "substitute", "forfeit"]
    verify(record.to_dict())
    return record_dict(record)


def test_an_invented_failure_for_a_move_the_bot_chose_is_refused():
    data = _substituted_then_forfeited()
    index = next(i for i, m in enumerate(data["moves"]) if m["seat"] == 0 and i > 2)
    move = data["moves"][index]
    fake = {"seat": 0, "termination": "timeout", "detail": "no reply", "move_index": index, "action": "substitute",
            "substitute": move["move"]}
    data["failures"].insert(sum(1 for f in data["failures"] if f["move_index"] <= index), fake)
    with pytest.raises(ReplayMismatch, match=r"failure \d \(seat 0, timeout, substitute at move \d+\) says the referee "
                                             r"played .* but the move is seat 0's .* by bot") as info:
        verify(data)
    assert info.value.move_index == index


def test_a_substituted_move_without_its_failure_is_refused_naming_the_move():
    data = _substituted_then_forfeited()
    first = data["failures"].pop(0)
    with pytest.raises(ReplayMismatch, match="no failure entry says why") as info:
        verify(data)
    assert info.value.move_index == first["move_index"] and info.value.move == first["substitute"]


def test_a_failure_naming_another_substitute_is_refused():
    data = _substituted_then_forfeited()
    data["failures"][1]["substitute"] = "1o"
    with pytest.raises(ReplayMismatch, match=r"failure 2 .* says the referee played '1o'"):
        verify(data)


def test_a_forfeit_that_does_not_end_the_match_is_refused():
    data = _substituted_then_forfeited()
    data["failures"][-1]["move_index"] = data["failures"][1]["move_index"] + 1
    with pytest.raises(ReplayMismatch, match=r"failure 3 .* does not end the match"):
        verify(data)

    finished = record_dict(play(Seating.alone(2), {"target": 5}, 9))
    finished["failures"].append({"seat": 0, "termination": "crash", "detail": "gone",
                                 "move_index": len(finished["moves"]), "action": "forfeit"})
    with pytest.raises(ReplayMismatch, match=r"failure 1 .* ends the match, yet the match reached its end"):
        verify(finished)


def test_a_faked_termination_is_refused():
    data = _substituted_then_forfeited()
    data["outcomes"][1]["termination"] = "timeout"
    with pytest.raises(ReplayMismatch, match=r"seat 1's outcome is timeout .* its forfeit says otherwise \(crash"):
        verify(data)

    data = _substituted_then_forfeited()
    data["outcomes"][1]["detail"] = "the arena was slow"
    with pytest.raises(ReplayMismatch, match="seat 1's outcome"):
        verify(data)

    # Blaming the other seat: outcomes and result agree with the lie, the moves do not.
    data = _substituted_then_forfeited()
    data["failures"][-1]["seat"] = 0
    data["outcomes"][0].update(termination="crash", detail=data["outcomes"][1]["detail"])
    data["outcomes"][1].update(termination="ok", detail="")
    scores = data["result"]["scores"]
    data["result"].update(forfeited=[0], winner=1)
    assert len(scores) == 2
    with pytest.raises(ReplayMismatch, match=r"failure 3 \(seat 0, .* ends the match, but seat 1 was the one to play"):
        verify(data)


def test_strikes_and_the_policy_must_match_the_failures():
    data = _substituted_then_forfeited()
    data["outcomes"][1]["strikes"] = 2
    with pytest.raises(ReplayMismatch, match="seat 1's outcome counts 2 strikes, but its failures in play count 3"):
        verify(data)

    data = _substituted_then_forfeited()
    data["policy"] = {"policy": "loss", "strikes": 2}
    with pytest.raises(ReplayMismatch, match=r"seat 1 has 2 substituted moves, more than its failure policy \(loss"):
        verify(data)

    data = _substituted_then_forfeited()
    data["policy"]["strikes"] = 5
    with pytest.raises(ReplayMismatch, match="seat 1 forfeits after 2 substituted moves, but its failure policy "
                                             "substitutes 5 first"):
        verify(data)


def test_outcomes_are_one_per_seat_naming_its_bot():
    data = _substituted_then_forfeited()
    data["outcomes"][0]["bot"] = "impostor"
    with pytest.raises(ReplayMismatch, match="seat 0's outcome names bot 'impostor'"):
        verify(data)

    data = _substituted_then_forfeited()
    data["outcomes"].reverse()
    with pytest.raises(ReplayMismatch, match="one per seat, in seat order"):
        verify(data)


# --- what the replay shows afterwards: the stock's order and the legal moves offered ------------------


class _Listening(LocalBot):
    """A random bot that keeps the legal moves the referee offered it at each decision."""

    def __init__(self, name: str, seed: int, heard: list) -> None:
        super().__init__(name, seed)
        self.heard = heard

    def decide(self, view, legal, move_ms, bank_ms, idle=None):  # noqa: ANN001, ANN201
        self.heard.append(tuple(legal))
        return super().decide(view, legal, move_ms, bank_ms, idle)


@pytest.mark.parametrize("shape", ["1v1", "3 alone", "4 in pairs"])
def test_afterwards_gives_the_moves_the_referee_offered_and_the_stock_as_it_is_dealt(shape):
    seating = SEATINGS[shape]
    rules = Rules.from_dict({"renuncio": True, "escoba_en_mano": True, "initial_table": "subset15", "target": 11})
    heard: list = []
    bots = [_Listening(f"bot{s}", 30 + s, heard) for s in range(seating.players)]
    record = play_match(bots, rules, seating, 77)
    rep = replay(_through_json(record))  # recomputed from the seed: the record holds neither
    assert rep.afterwards.offered == tuple(heard)
    assert all(m.move in offered for m, offered in zip(record.moves, heard, strict=True))
    deals = [f for f in rep.frames if f.kind == "deal"]
    assert len(rep.afterwards.decks) == record.result.hands
    for before, after in zip(deals, deals[1:], strict=False):
        stock = rep.afterwards.stock(before)
        assert len(stock) == before.stock
        seen = {c for h in before.hands for c in h} | set(before.table) | {c for p in before.piles for c in p}
        assert seen.isdisjoint(stock) and len(seen) + len(stock) == 40
        if after.hand == before.hand:  # the next round is dealt from the stock's front
            dealt = [c for e in after.events if e.kind == "cards" for c in e.cards]
            assert set(dealt) == set(stock[:len(dealt)])
    for f in rep.frames:
        legal = rep.afterwards.legal(f)
        assert bool(legal) == (f.turn is not None)


def test_afterwards_of_a_forfeit_offers_the_decision_never_answered():
    record = play(Seating.alone(2), None, 3, failing_seat=1, fail_on=4)
    rep = replay(record)
    assert len(rep.afterwards.offered) == len(record.moves) + 1
    assert rep.afterwards.legal(rep.frames[-2]) == rep.afterwards.offered[-1]


def test_records_written_before_show_their_stock_and_offered_moves_too():
    from pathlib import Path

    for path in sorted((Path(__file__).parents[1] / "golden" / "records").glob("*.json")):
        rep = replay(json.loads(path.read_text()))
        after = rep.afterwards
        assert all(m.move in after.offered[i] for i, m in enumerate(rep.record.moves)), path.name
        assert all(len(after.stock(f)) == f.stock for f in rep.frames), path.name
