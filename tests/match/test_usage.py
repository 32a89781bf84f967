"""What each bot used in a match, in its game record: CPU time of its whole process tree, wall
time and their ratio, peak memory. A measurement like the times: left out of to_dict(times=False),
optional when a record is read (records written before it have none), ignored by verification."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from replay_helpers import play
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, BotSpec, Limits
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import Termination
from arena.harness.resources import MIB, ResourceLimits, Usage
from arena.match.record import GameRecord, RecordError, SeatUsage
from arena.match.referee import play_match
from arena.match.replay import verify
from arena.render.standings import format_standings
from arena.tournament.standings import compute_standings
from arena.tournament.store import MatchRow, ResultStore, StoreDamagedError

GOLDEN = Path(__file__).parents[1] / "golden" / "records"

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
                   limits=Limits(move_ms=10_000), resources=ResourceLimits(writable=(str(tmp_path),)))
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


# --- the store and the table -----------------------------------------------------------------------

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
GOLDEN_STORE = Path(__file__).parents[1] / "golden" / "store"


def _row(k: int, seats: tuple[str, str], usage: tuple[tuple[int, float, float], ...]) -> MatchRow:
    return MatchRow(id=f"{k}.0", index=k, pairing=k, deal=0, rotation=0, seed=k, sides=seats, seats=seats, winner=0,
                    scores=(7, 3), reason="target", terminations=(Termination.OK, Termination.OK), escobas=(0, 0), hands=2,
                    usage=usage)


def test_the_table_gives_each_bot_its_cpu_time_over_the_wall_time_of_its_measured_matches():
    rows = [
        _row(0, ("a", "b"), ((0, 300.0, 100.0), (1, 50.0, 100.0))),
        _row(1, ("b", "a"), ((1, 100.0, 300.0),)),  # b's seat measured nothing here
        _row(2, ("a", "c"), ()),  # c is never measured
    ]
    standings = compute_standings(rows, Seating.alone(2), ["a", "b", "c"])
    by_name = {s.name: s for s in standings.bots}
    assert by_name["a"].cpu_per_wall == pytest.approx(400 / 400)
    assert by_name["b"].cpu_per_wall == pytest.approx(50 / 100)
    assert by_name["c"].cpu_per_wall is None
    data = {s["name"]: s for s in json.loads(format_standings(standings, "json"))}
    assert (data["a"]["cpu_s"], data["a"]["cpu_per_wall"]) == (0.4, 1.0)
    assert (data["c"]["cpu_s"], data["c"]["cpu_per_wall"]) == (None, None)
    text = format_standings(standings, "plain").splitlines()
    column = text[0].split().index("cpu/wall")
    cells = {line.split()[1]: line.split()[column] for line in text[2:5]}
    assert cells == {"a": "1.00", "b": "0.50", "c": "-"}


def _meta(folder: Path) -> dict:
    with ResultStore.open_existing(str(folder)) as store:
        return store.meta()


def test_a_store_written_before_the_usage_column_reads_without_it_and_gains_it_on_resume(tmp_path):
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN_STORE, folder)
    with ResultStore.open_existing(str(folder)) as store:
        rows = list(store.results())
    assert rows and all(row.usage == () for row in rows)
    meta = _meta(folder)
    with ResultStore.open_for_run(str(folder), meta["fingerprint"], meta["game"], meta["config"]) as store:
        spare = replace(rows[0], id="spare", index=10_000, usage=((1, 12.5, 50.0),))
        store.add(spare, store.record(rows[0].id))
    with ResultStore.open_existing(str(folder)) as store:
        again = list(store.results())
    assert again[:-1] == rows and again[-1] == spare


@pytest.mark.parametrize("text,message", [
    ("{}", "column usage: expected a JSON list"),
    ("[[0, 1]]", r"column usage: expected \[seat, cpu_ms, wall_ms\]"),
    ('[[0, "1", 2]]', r"column usage: expected \[seat, cpu_ms, wall_ms\]"),
    ("[[5, 1, 2]]", "column usage: seat 5 is not one of the 2 seats"),
])
def test_a_damaged_usage_column_is_one_line_naming_it(tmp_path, text, message):
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN_STORE, folder)
    meta = _meta(folder)
    with ResultStore.open_for_run(str(folder), meta["fingerprint"], meta["game"], meta["config"]):
        pass  # adds the column
    conn = sqlite3.connect(folder / "results.sqlite")
    with conn:
        conn.execute("UPDATE matches SET usage = ? WHERE idx = (SELECT MIN(idx) FROM matches)", (text,))
    conn.close()
    with ResultStore.open_existing(str(folder)) as store, pytest.raises(StoreDamagedError, match=message):
        list(store.results())


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real tournament of bot processes: every seat's usage is measured."""
    folder = tmp_path_factory.mktemp("usage")
    path = folder / "usage.yaml"
    path.write_text(
        f"name: usage\nseed: 3\nrules: {{target: 5}}\noutput: {folder / 'out'}\nconcurrency: 2\n"
        "matches_per_pairing: 2\nbots:\n"
        f'  - {{name: first, cmd: "$PYTHON policybot.py first", cwd: "{BOTS}"}}\n'
        f'  - {{name: greedy, cmd: "$PYTHON policybot.py greedy", cwd: "{BOTS}"}}\n'
    )
    result = CliRunner().invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    return folder / "out"


def _table(results: Path) -> dict[str, dict]:
    done = CliRunner().invoke(app, ["table", str(results), "--format", "json"])
    assert done.exit_code == 0, done.output
    return {row["name"]: row for row in json.loads(done.stdout)}


def test_a_run_stores_each_seats_usage_and_the_table_sums_it_per_bot(measured: Path):
    cpu: dict[str, float] = {"first": 0.0, "greedy": 0.0}
    wall = dict(cpu)
    with ResultStore.open_existing(str(measured)) as store:
        for row in store.results():
            record = GameRecord.from_dict(store.record(row.id))
            assert row.usage == tuple((u.seat, u.cpu_ms, u.wall_ms) for u in record.usage)
            assert [u.seat for u in record.usage] == [0, 1]  # both seats are bot processes
            for seat, cpu_ms, wall_ms in row.usage:
                cpu[row.seats[seat]] += cpu_ms
                wall[row.seats[seat]] += wall_ms
    table = _table(measured)
    for name in cpu:
        assert wall[name] > 0 and cpu[name] > 0
        assert table[name]["cpu_per_wall"] == round(cpu[name] / wall[name], 3)
        assert table[name]["cpu_s"] == round(cpu[name] / 1000, 3)
    plain = CliRunner().invoke(app, ["table", str(measured), "--what", "standings"]).stdout
    assert "cpu/wall" in plain.splitlines()[0]


def test_verify_does_not_check_usage(measured: Path, tmp_path: Path):
    """A measurement: an edited usage, in the row or in the record, is not refused, and the
    table shows the row's (what verify says in docs/REPLAY.md)."""
    results = tmp_path / "copy"
    results.mkdir()
    with sqlite3.connect(measured / "results.sqlite") as a, sqlite3.connect(results / "results.sqlite") as b:
        a.backup(b)
    conn = sqlite3.connect(results / "results.sqlite")
    first_seat = {"first": 0, "greedy": 0}
    matches = {"first": 0, "greedy": 0}
    with conn:
        for match_id, record_text, seats in conn.execute("SELECT id, record, seats FROM matches").fetchall():
            record = json.loads(record_text)
            for entry in record["usage"]:
                entry["cpu_ms"] = entry["cpu_per_wall"] = 0
            conn.execute("UPDATE matches SET record = ?, usage = ? WHERE id = ?",
                         (json.dumps(record), json.dumps([[0, 900.0, 100.0], [1, 0.0, 100.0]]), match_id))
            seats = json.loads(seats)
            first_seat[seats[0]] += 1
            for name in seats:
                matches[name] += 1
    conn.close()
    done = CliRunner().invoke(app, ["verify", str(results)])
    assert done.exit_code == 0, done.output
    table = _table(results)
    for name in matches:
        assert table[name]["cpu_per_wall"] == round(9 * first_seat[name] / matches[name], 3)
