"""The referee: complete matches in every seating, records that replay, determinism."""

import gc
import json

import pytest
from zoo.helpers import FAST, firstmove_bin, running

from arena.core.game import HandState, MatchState
from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, BotSpec
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import BotFailure, Termination
from arena.match.record import FailureAction, PlayedBy, PolicyError, RecordError
from arena.match.referee import FailurePolicy, RefereeError, play_match
from arena.match.replay import replay, verify

SEATINGS = {
    "1v1": Seating.alone(2),
    "3 players": Seating.alone(3),
    "4 players": Seating.alone(4),
    "pairs": Seating.pairs(4),
    "6 in pairs": Seating.pairs(6, 2),
    "6 in threes": Seating.pairs(6, 3),
}


class Failing(LocalBot):
    """A seeded random bot that crashes on its ``fail_from``-th decision and every one after."""

    def __init__(self, seed, fail_from):
        super().__init__(f"failing{seed}", seed=seed)
        self.decisions = 0
        self.fail_from = fail_from

    def decide(self, view, legal, move_ms, bank_ms, idle=None):
        self.decisions += 1
        if self.decisions >= self.fail_from:
            raise BotFailure(Termination.CRASH, "exited with code 3")
        return super().decide(view, legal, move_ms, bank_ms, idle)


def c_bots(n):
    spec = BotSpec.from_command(str(firstmove_bin()), limits=FAST)
    return [BotProcess(spec) for _ in range(n)]


@pytest.mark.parametrize("name", list(SEATINGS))
def test_complete_match_between_processes(name):
    seating = SEATINGS[name]
    bots = c_bots(seating.players)
    try:
        record = play_match(bots, Rules(target=15), seating, seed=11)
        pids = [b.pid for b in bots]
    finally:
        for b in bots:
            b.close()
    assert not any(running(p) for p in pids)
    assert record.result.reason == "target"
    assert all(o.termination is Termination.OK for o in record.outcomes)
    assert max(record.result.scores) >= 15 and record.result.winner == record.result.scores.index(max(record.result.scores))
    assert record.seats == ("firstmove.bin",) * seating.players
    assert record.seating == seating.to_dict() and record.rules["target"] == 15
    assert all(m.by is PlayedBy.BOT and m.ms >= 0 for m in record.moves)
    assert record.events[-1]["type"] == "match_end"
    # Everything needed to replay is in the record, and it replays to the same events.
    assert verify(json.loads(json.dumps(record.to_dict()))) == record.result


def test_each_seat_gets_public_events_and_only_its_own_cards(tmp_path):
    from zoo.helpers import fake_spec

    transcripts = [tmp_path / f"t{i}.jsonl" for i in range(3)]
    bots = [BotProcess(fake_spec([], env={"ZOO_TRANSCRIPT": str(t)})) for t in transcripts]
    try:
        record = play_match(bots, Rules(target=5), Seating.alone(3), seed=5)
    finally:
        for b in bots:
            b.close()
    for seat, path in enumerate(transcripts):
        msgs = [json.loads(x) for x in path.read_text().splitlines()]
        assert msgs[0]["type"] == "hello" and msgs[0]["seat"] == seat and msgs[0]["teams"] == [[0], [1], [2]]
        events = [m["event"] for m in msgs if m["type"] == "event"]
        expected = [{k: v for k, v in e.items() if k != "t_ms"} for e in record.events
                    if e["type"] != "cards" or e["seat"] == seat]
        assert events == expected
        requests = [m for m in msgs if m["type"] == "request"]
        assert len(requests) == sum(1 for m in record.moves if m.seat == seat)
        for r in requests:
            assert r["view"]["seat"] == seat and r["legal"] and len(r["view"]["hand"]) >= 1
        over = [m for m in msgs if m["type"] == "match_over"]
        assert over == [{"type": "match_over", "winner": record.result.winner, "scores": list(record.result.scores),
                         "reason": "target", "termination": "ok"}]
        assert msgs[-1]["type"] == "goodbye"


def test_same_seed_same_record_and_bots_are_reused_across_matches():
    bots = c_bots(2)
    try:
        first = play_match(bots, Rules(), Seating.alone(2), seed=2024)
        pids = [b.pid for b in bots]
        second = play_match(bots, Rules(), Seating.alone(2), seed=2024)
        assert [b.pid for b in bots] == pids and [b.matches for b in bots] == [2, 2]
        other = play_match(bots, Rules(), Seating.alone(2), seed=2025)
    finally:
        for b in bots:
            b.close()
    a = json.dumps(first.to_dict(times=False), sort_keys=True)
    assert a == json.dumps(second.to_dict(times=False), sort_keys=True)
    assert a != json.dumps(other.to_dict(times=False), sort_keys=True)


def test_same_seed_same_record_with_variant_rules_and_substitutes():
    rules = Rules(renuncio=True, initial_table="subset15", escoba_en_mano=True, forced_capture=True, target=15)

    def run():
        players = [LocalBot("a", seed=1), LocalBot("b", seed=2), LocalBot("c", seed=3), LocalBot("d", seed=4)]
        return play_match(players, rules, Seating.pairs(4), seed=99, policy=FailurePolicy("substitute", 2))

    assert run().to_dict(times=False) == run().to_dict(times=False)
    replay(run())


def test_record_refuses_to_replay_a_tampered_move():
    record = play_match([LocalBot(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=3)
    data = record.to_dict()
    data["moves"][0]["move"] = "1o+1c"
    with pytest.raises(RecordError):
        replay(data)
    data["schema_version"] = 99
    with pytest.raises(RecordError, match="schema_version 99"):
        replay(data)


def test_observer_sees_moves_and_events_in_order():
    seen = []
    record = play_match([LocalBot(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=3,
                        observer=lambda kind, item: seen.append((kind, item)))
    assert [item for kind, item in seen if kind == "move"] == [m.to_dict() for m in record.moves]
    assert [item for kind, item in seen if kind == "event"] == list(record.events)


def test_observer_sees_each_failure_as_the_record_holds_it():
    seen = []
    players = [LocalBot(seed=1), Failing(seed=2, fail_from=3)]
    record = play_match(players, Rules(target=5), Seating.alone(2), seed=3, policy=FailurePolicy("substitute", 2),
                        observer=lambda kind, item: seen.append((kind, item)))
    assert [f.action for f in record.failures] == [FailureAction.SUBSTITUTE] * 2 + [FailureAction.FORFEIT]
    assert [item for kind, item in seen if kind == "failure"] == [f.to_dict() for f in record.failures]
    assert [m.move for m in record.moves if m.by is PlayedBy.SUBSTITUTE] == [f.substitute for f in record.failures[:2]]
    assert record.outcomes[1].strikes == 3 and record.result.forfeited == (1,) and record.result.winner == 0


class SlowIllegal(LocalBot):
    """Answers its first request, after 30 ms, with a move that is not legal."""

    def decide(self, view, legal, move_ms, bank_ms, idle=None):
        request_id, move, _ = super().decide(view, legal, move_ms, bank_ms, idle)
        return (request_id, "zz", 0.03) if request_id == 1 else (request_id, move, 0.0)


def test_a_substituted_illegal_move_keeps_the_time_the_bot_took():
    record = play_match([SlowIllegal(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=3,
                        policy=FailurePolicy("substitute", 2))
    first = next(m for m in record.moves if m.seat == 0)
    assert first.by is PlayedBy.SUBSTITUTE and first.ms == 30.0
    assert record.failures[0].termination is Termination.ILLEGAL_MOVE


def test_bad_setup_is_a_typed_error():
    with pytest.raises(RefereeError):
        play_match([LocalBot()], Rules(), Seating.alone(2), seed=1)
    with pytest.raises(PolicyError, match="forgive"):
        FailurePolicy("forgive")
    for strikes in (-1, True, 2.0, "3"):
        with pytest.raises(PolicyError, match="strikes"):
            FailurePolicy("substitute", strikes)


def test_a_move_with_its_taken_cards_in_another_order_is_accepted():
    class Reorder(LocalBot):
        def decide(self, view, legal, move_ms, bank_ms, idle=None):
            rid, move, t = super().decide(view, legal, move_ms, bank_ms, idle)
            card, *take = move.split("+")
            return rid, "+".join([card, *reversed(take)]), t

    record = play_match([Reorder(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=8)
    assert not record.failures and record.result.reason == "target"


def test_a_huge_illegal_move_text_is_recorded_briefly():
    class Verbose(LocalBot):
        def decide(self, view, legal, move_ms, bank_ms, idle=None):
            rid, _, t = super().decide(view, legal, move_ms, bank_ms, idle)
            return rid, "7o+" * 20000, t

    record = play_match([Verbose(), LocalBot()], Rules(), Seating.alone(2), seed=1)
    assert record.outcomes[0].termination is Termination.ILLEGAL_MOVE
    assert len(record.outcomes[0].detail) < 600 and len(record.failures[0].detail) < 600


def test_an_illegal_move_is_refused_with_the_rules_reason_and_no_copy_of_the_state(monkeypatch):
    """The referee asks the rules core why a move is illegal (``MatchState.check``) and never
    tries the move on a copy of the match."""

    def no_copy(self):
        raise AssertionError("the referee copied the state")

    monkeypatch.setattr(MatchState, "copy", no_copy)
    monkeypatch.setattr(HandState, "copy", no_copy)

    class NotHeld(LocalBot):
        """Plays the first table card, which it does not hold."""

        def decide(self, view, legal, move_ms, bank_ms, idle=None):
            rid, _, t = super().decide(view, legal, move_ms, bank_ms, idle)
            return rid, json.loads(view)["table"][0], t

    record = play_match([NotHeld(), LocalBot()], Rules(), Seating.alone(2), seed=3)
    assert record.outcomes[0].termination is Termination.ILLEGAL_MOVE
    card = record.failures[0].detail.split("'")[1]
    assert record.outcomes[0].detail == f"illegal move {card!r}: {card} is not in the hand of seat 0"


@pytest.fixture
def gc_threshold():
    """The process's collector thresholds, restored after the test."""
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_a_refereeing_process_raises_the_young_generation_threshold_once(gc_threshold):
    """A match's events and moves live until its record is made and die together: the
    referee raises CPython's default young threshold (700), keeping the older generations'."""
    gc.set_threshold(700, 11, 12)
    play_match([LocalBot(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=3)
    young, older, oldest = gc.get_threshold()
    assert young > 700 * 10 and (older, oldest) == (11, 12)
    gc.set_threshold(young * 2, 11, 12)  # the host's own, higher, choice stays
    play_match([LocalBot(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=3)
    assert gc.get_threshold() == (young * 2, 11, 12)


def test_a_collector_turned_off_by_threshold_stays_off(gc_threshold):
    gc.set_threshold(0, 10, 10)
    play_match([LocalBot(seed=1), LocalBot(seed=2)], Rules(target=5), Seating.alone(2), seed=3)
    assert gc.get_threshold() == (0, 10, 10)
