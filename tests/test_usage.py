"""What each bot used in a match, in its game record: CPU time of its whole process tree, wall
time and their ratio, peak memory. A measurement like the times: left out of to_dict(times=False),
optional when a record is read (records written before it have none), ignored by verification."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from replay_helpers import play

from arena.botproc import BotProcess, BotSpec, Limits
from arena.record import GameRecord, RecordError, SeatUsage
from arena.referee import LocalBot, play_match
from arena.replay import verify
from arena.resources import MIB, Usage
from arena.rules import Rules, Seating

GOLDEN = Path(__file__).parent / "golden" / "records"

# A bot whose SPINNERS child processes spin for the first SPIN_S seconds of its match, while it
# answers every request after 10 ms; then it stops them (each writes the CPU time it used),
# waits for them, and plays the rest of the match at once. All their CPU time is within the
# match, and the match lasts little longer than the spinning.
SPINNERS, SPIN_S = 4, 0.8
SPINNING_BOT = r"""
import json, os, signal, sys, time
out, spinners, spin_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
children, until = [], 0.0
def spin(i):
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    end = time.monotonic() + 60
    while not stop and time.monotonic() < end:
        for _ in range(20000):
            pass
    with open(f"{out}.{i}", "w") as f:
        f.write(repr(time.process_time()))
    os._exit(0)
def stop():
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    for pid in children:
        os.waitpid(pid, 0)
    children.clear()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_match"):
        until = time.monotonic() + spin_s
        for i in range(spinners):
            pid = os.fork()
            if pid == 0:
                spin(i)
            children.append(pid)
        print(json.dumps({"type": "ready", "name": "spinner"}), flush=True)
    elif msg["type"] == "request":
        if children and time.monotonic() < until:
            time.sleep(0.01)
        elif children:
            stop()
        print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
    elif msg["type"] == "goodbye":
        break
stop()
"""


def _usage(seat: int, cpu_ms: float = 812.5, wall_ms: float = 406.2) -> SeatUsage:
    return SeatUsage(seat, cpu_ms, cpu_ms - 12.5, 12.5, wall_ms, round(cpu_ms / wall_ms, 3), 23.4, "cgroup")


def test_a_usage_entry_is_made_from_what_the_launcher_measured():
    usage = Usage(cpu_s=1.23456, user_s=1.0, system_s=0.23456, wall_s=0.61728, peak_memory_bytes=50 * MIB,
                  source="proc")
    entry = SeatUsage.of(1, usage)
    assert entry == SeatUsage(1, 1234.6, 1000.0, 234.6, 617.3, 2.0, 50.0, "proc")
    assert entry.to_dict() == {"seat": 1, "cpu_ms": 1234.6, "user_ms": 1000.0, "system_ms": 234.6, "wall_ms": 617.3,
                               "cpu_per_wall": 2.0, "peak_memory_mb": 50.0, "source": "proc"}


def test_a_record_round_trips_with_and_without_usage():
    record = play(Seating.alone(2), {"target": 5}, 3)
    assert record.usage == ()  # in-process players measure nothing
    plain = record.to_dict()
    assert "usage" not in plain and GameRecord.from_dict(json.loads(json.dumps(plain))) == record

    measured = GameRecord(**{**record.__dict__, "usage": (_usage(0), _usage(1, 20.0, 400.0))})
    data = json.loads(json.dumps(measured.to_dict()))
    assert data["usage"][1] == {"seat": 1, "cpu_ms": 20.0, "user_ms": 7.5, "system_ms": 12.5, "wall_ms": 400.0,
                                "cpu_per_wall": 0.05, "peak_memory_mb": 23.4, "source": "cgroup"}
    assert GameRecord.from_dict(data) == measured
    # A measurement, like the times: not part of the game.
    assert measured.to_dict(times=False) == record.to_dict(times=False)
    assert "usage" not in measured.to_dict(times=False)
    assert verify(data) == verify(plain) == record.result


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_records_written_before_usage_read_without_it(path):
    data = json.loads(path.read_text())
    assert "usage" not in data
    record = GameRecord.from_dict(data)
    assert record.usage == () and record.to_dict() == data


@pytest.mark.parametrize("change,message", [
    (lambda u: u.update(seat=2), r"usage\[0\].seat: expected an integer from 0 to 1"),
    (lambda u: u.update(cpu_ms=-1), r"usage\[0\].cpu_ms: expected a number >= 0"),
    (lambda u: u.update(cpu_per_wall=float("nan")), r"usage\[0\].cpu_per_wall"),
    (lambda u: u.update(wall_ms="long"), r"usage\[0\].wall_ms"),
    (lambda u: u.update(source=3), r"usage\[0\].source: expected a string"),
    (lambda u: u.update(gpu_ms=1), r"usage\[0\]: unknown key 'gpu_ms'"),
    (lambda u: u.pop("peak_memory_mb"), r"usage\[0\]: missing 'peak_memory_mb'"),
])
def test_a_malformed_usage_entry_is_refused_naming_it(change, message):
    data = play(Seating.alone(2), {"target": 5}, 3).to_dict()
    entry = _usage(0).to_dict()
    change(entry)
    data["usage"] = [entry]
    with pytest.raises(RecordError, match=message):
        GameRecord.from_dict(data)


def test_a_seat_has_one_usage_entry_at_most():
    data = play(Seating.alone(2), {"target": 5}, 3).to_dict()
    data["usage"] = [_usage(1).to_dict(), _usage(1).to_dict()]
    with pytest.raises(RecordError, match="a second entry for seat 1"):
        GameRecord.from_dict(data)
    data["usage"] = {"seat": 0}
    with pytest.raises(RecordError, match="usage: expected a list"):
        GameRecord.from_dict(data)


def test_a_bot_spinning_children_shows_its_whole_tree_cpu_in_the_record(tmp_path):
    script = tmp_path / "spinner.py"
    script.write_text(SPINNING_BOT)
    out = tmp_path / "spun"
    spec = BotSpec(name="spinner", cmd=(sys.executable, str(script), str(out), str(SPINNERS), str(SPIN_S)),
                   limits=Limits(move_ms=10_000))
    with BotProcess(spec) as bot:
        record = play_match([bot, LocalBot("local", seed=1)], Rules(), Seating.alone(2), seed=11)
    assert [o.termination.value for o in record.outcomes] == ["ok", "ok"]
    # Only the bot process is measured; the in-process player has no entry.
    assert [u.seat for u in record.usage] == [0]
    usage = record.usage[0]
    assert usage.source in ("cgroup", "proc") and usage.peak_memory_mb > 0
    assert usage.user_ms + usage.system_ms == pytest.approx(usage.cpu_ms, abs=0.2)
    assert usage.cpu_per_wall == pytest.approx(usage.cpu_ms / usage.wall_ms, rel=0.01)
    assert 0 < usage.wall_ms <= record.duration_ms
    # The spinners were stopped and waited for during the match, each wrote its own CPU time:
    # the record counts all of it (the whole tree, not only the bot's own process).
    spun_ms = 1000 * sum(float((tmp_path / f"spun.{i}").read_text()) for i in range(SPINNERS))
    assert usage.cpu_ms >= 0.99 * spun_ms > 0, (usage, spun_ms)
    # Where they got more than one CPU between them (two cores free for them), the record shows
    # more CPU than wall time: a bot that plays on more than one CPU is visible. This follows
    # from the spinners' own count, whatever the machine's load.
    if spun_ms > 1.05 * usage.wall_ms:
        assert usage.cpu_per_wall > 1


def test_the_referee_asks_each_player_that_measures_and_keeps_what_ran():
    class Measured(LocalBot):
        def __init__(self, name: str, usage: Usage) -> None:
            super().__init__(name, seed=1)
            self._usage = usage

        def usage(self) -> Usage:
            return self._usage

    ran = Usage(cpu_s=0.5, user_s=0.4, system_s=0.1, wall_s=0.25, peak_memory_bytes=MIB, source="proc")
    players = [Measured("a", ran), LocalBot("b", seed=2), Measured("c", Usage())]  # c: nothing ran
    record = play_match(players, Rules(target=5), Seating.alone(3), seed=4)
    assert record.usage == (SeatUsage.of(0, ran),) and record.usage[0].cpu_per_wall == 2.0
