"""Bot failures as a run reports them: the hint for each common failure, the notes a worker
sends with a finished match, the per-bot tally and its summary; and the live progress values
(the leader by a real rating fit, throttled; the -v line; the JSON line)."""

from __future__ import annotations

import json

import pytest

from arena.core.outcome import EndReason
from arena.core.rules import Seating
from arena.harness.protocol import Termination
from arena.match.record import FailureAction, FailureEntry
from arena.tournament import failures as fl
from arena.tournament.failures import FailureNote, FailureTally, failure_notes, hint
from arena.tournament.progress import LiveLeader, Throughput, match_json, match_line
from arena.tournament.store import MatchRow


@pytest.mark.parametrize("reason, detail, expected", [
    ("no_handshake", "not JSON (JSONDecodeError: Expecting value: line 1 column 1 (char 0)): 'DEBUG got hello'",
     fl.DEBUG_ON_STDOUT),
    ("malformed", "expected a JSON object, got '[1, 2]'", fl.DEBUG_ON_STDOUT),
    ("no_handshake", "no ready within 300 ms (+200 ms grace)", fl.SLOW_START),
    ("no_handshake", "cannot start ['nodejs', 'bot.js']: [Errno 2] No such file or directory: 'nodejs'", fl.CANNOT_START),
    ("no_handshake", "bot exited with code 127; stderr ends: sh: 1: node: not found", fl.CANNOT_START),
    ("crash", "bot exited with code 126; stderr ends: sh: 1: ./bot: Permission denied", fl.NOT_EXECUTABLE),
    ("timeout", "no reply before the deadline", fl.TIMEOUT),
    ("memory", "bot killed: 1100 MB over its 1024 MB limit", fl.OUT_OF_MEMORY),
    ("crash", "bot exited with code 3; stderr ends: Traceback ...", fl.CRASHED),
    ("illegal_move", "illegal move '7o+3b': not among the legal moves", fl.ILLEGAL),
    ("wrong_id", "reply id 3, expected 4", fl.WRONG_ID),
    ("oversized_line", "line of 2000000 bytes, the limit is 1048576", fl.OVERSIZED),
    ("no_handshake", 'expected {"type":"ready"}, got \'{"type":"move"}\'', None),
])
def test_each_common_failure_has_its_hint(reason, detail, expected):
    assert hint(reason, detail) == expected


def test_the_hints_name_the_setting_to_change():
    assert "stderr" in fl.DEBUG_ON_STDOUT and "startup_ms" in fl.SLOW_START and "cmd" in fl.CANNOT_START
    assert "move_ms" in fl.TIMEOUT and "bank_ms" in fl.TIMEOUT and "memory_mb" in fl.OUT_OF_MEMORY


def _row(match_id: str, seats: tuple[str, ...], failures=(), winner=0, scores=(5, 2)) -> MatchRow:
    terminations = tuple(Termination.OK for _ in seats)
    return MatchRow(id=match_id, index=int(match_id[:5]), pairing=0, deal=0, rotation=0, seed=1, sides=seats,
                    seats=seats, winner=winner, scores=scores, reason=EndReason.FORFEIT if failures else EndReason.TARGET,
                    terminations=terminations, escobas=(0, 0), hands=1, failures=tuple(failures))


def test_failure_notes_come_from_the_records_failures():
    from arena.match.record import EndReason, GameRecord, Result, SeatOutcome

    record = GameRecord(
        seed=1, rules={}, seating={"players": 2}, seats=("a", "b"), moves=(), events=(),
        outcomes=(SeatOutcome(0, "a"), SeatOutcome(1, "b", Termination.TIMEOUT, "late")),
        result=Result(0, (0, 0), EndReason.FORFEIT, 1, (1,)),
        failures=(FailureEntry(1, Termination.TIMEOUT, "late", 4, FailureAction.FORFEIT),),
    )
    assert failure_notes(record) == (FailureNote(1, "b", "timeout", "late", FailureAction.FORFEIT),)
    assert fl.failure_notes_of(record.to_dict()) == failure_notes(record)


def test_the_tally_counts_per_bot_and_calls_out_a_bot_that_failed_every_match():
    tally = FailureTally(["good", "bad", "flaky"])
    note = FailureNote(1, "bad", "no_handshake", "not JSON (x): 'DEBUG got hello'", FailureAction.FORFEIT)
    tally.add(_row("00000.0", ("good", "bad"), [(1, Termination.NO_HANDSHAKE)]), [note])
    tally.add(_row("00001.0", ("bad", "flaky"), [(0, Termination.NO_HANDSHAKE), (1, Termination.TIMEOUT)]))
    tally.add(_row("00002.0", ("good", "flaky")))
    assert tally.matches == 3 and tally.failed_matches == 2
    bad, flaky, good = tally.bots["bad"], tally.bots["flaky"], tally.bots["good"]
    assert (bad.matches, bad.failed, dict(bad.reasons)) == (2, 2, {"no_handshake": 2})
    assert (flaky.matches, flaky.failed, dict(flaky.reasons)) == (2, 1, {"timeout": 1})
    assert (good.matches, good.failed) == (2, 0)
    assert bad.failed_every_match and not flaky.failed_every_match
    assert bad.first == note and bad.first_match == "00000.0"
    assert flaky.first is None and flaky.first_match == "00001.0"  # stored earlier: no note here
    lines = tally.summary_lines({"bad": "logs/bad.stderr.log"}, {"bad": "arena check-bot 'python3 bad.py'"})
    text = "\n".join(lines)
    assert lines[0] == "bot failures: 2 of 3 bots failed, in 2 of 3 matches"
    assert "  bad: failed in 2 of 2 matches (no_handshake 2)" in lines
    assert "'DEBUG got hello'" in text and f"hint: {fl.DEBUG_ON_STDOUT}" in text
    assert "stderr log: logs/bad.stderr.log" in text
    assert "bad FAILED EVERY ONE OF ITS 2 MATCHES" in text and "arena check-bot 'python3 bad.py'" in text
    assert "flaky FAILED" not in text and "good" not in text


def test_a_tally_without_failures_says_nothing():
    tally = FailureTally(["a", "b"])
    tally.add(_row("00000.0", ("a", "b")))
    assert tally.summary_lines({}, {}) == [] and tally.failed_matches == 0


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_leader_is_a_rating_fit_redone_at_most_every_interval(monkeypatch):
    from arena.tournament import progress

    clock = FakeClock()
    fits: list[int] = []
    real = progress.fit_ratings

    def counting(results, **kwargs):
        results = list(results)
        fits.append(len(results))
        return real(results, **kwargs)

    monkeypatch.setattr(progress, "fit_ratings", counting)
    leader = LiveLeader(Seating.alone(2), ["a", "b", "c"], interval=5.0, clock=clock)
    assert leader.text() == "-" and fits == []
    # a beats b, b beats c, c beats a once in four: a leads.
    for i, (x, y, w) in enumerate([("a", "b", 0), ("b", "c", 0), ("a", "c", 0), ("c", "a", 0), ("a", "b", 0),
                                   ("b", "c", 0), ("a", "c", 0), ("a", "c", 1)]):
        leader.add(_row(f"{i:05d}.0", (x, y), winner=w))
    assert leader.text().startswith("a (") and fits == [8]
    leader.add(_row("00009.0", ("c", "a"), winner=0))
    assert leader.text().startswith("a (") and fits == [8]  # within the interval: not refitted
    clock.now += 5.0
    leader.text()
    assert fits == [8, 9]  # due: refitted over every result, kept as counts
    clock.now += 60
    leader.text()
    assert fits == [8, 9]  # nothing new: no fit


def test_throughput_and_the_lines_for_each_finished_match():
    clock = FakeClock()
    rate = Throughput(clock)
    assert rate.text() == "-/min"
    rate.add()
    rate.add()
    clock.now += 30
    assert rate.text() == "4.0/min"
    row = _row("00003.1", ("greedy", "newbie"), [(1, Termination.NO_HANDSHAKE)], winner=0, scores=(0, 0))
    note = FailureNote(1, "newbie", "no_handshake", "not JSON", FailureAction.FORFEIT)
    assert match_line(row, [note]) == "00003.1  greedy vs newbie  0-0  greedy wins (forfeit); newbie no_handshake"
    data = json.loads(match_json(row, [note], 7, 12))
    assert data == {
        "id": "00003.1", "index": 3, "seats": ["greedy", "newbie"], "sides": ["greedy", "newbie"], "scores": [0, 0],
        "winner": 0, "winner_side": "greedy", "reason": "forfeit", "hands": 1,
        "failures": [{"seat": 1, "bot": "newbie", "reason": "no_handshake", "detail": "not JSON", "action": "forfeit"}],
        "done": 7, "total": 12,
    }
