"""Harness overhead: the arena's wall time per decision against a raw pipe round trip.

    python benchmarks/harness.py [--matches N] [--roundtrips N] [--rounds N]

1. Raw: one JSON request line written to the trivial compiled bot (bots/c/firstmove.c) and
   its reply read back, on the bare pipe, with nothing else.
2. Arena: full 1v1 matches between two such bots through ``play_match`` (events, views,
   legal moves, checks, the record, each bot's usage); wall time divided by the number of
   decisions.

Raw and arena batches alternate (``--rounds`` of each), so that a change in the machine's load
touches both alike; each figure is the median of its batches. Printed:

- ``arena``: the package measured, and which of its modules run compiled (``pip install .``
  compiles the hot path with mypyc, see setup.py; an editable install runs it as Python);
- ``load average``: the machine's, when the benchmark starts (on a shared machine every wall
  time below grows with it);
- ``breakdown``: CPU time per decision of the rules core alone and of the referee with
  in-process bots (no pipe, no process);
- ``pinned``: the arena and its bots on one CPU (``arena play --cpu``), where each hand-over is
  a local context switch: raw round trip, arena per decision, and their difference, the
  arena's own cost per decision (the median of the rounds' differences, with their range);
- ``pinned CPU``: the same rounds in CPU time of the arena's process (user + system): per
  raw round trip, per decision, and their difference, the referee's own CPU per decision. On
  an idle machine the wall difference is about this; on a loaded one the pinned pair also
  waits for its share of the CPU, in proportion to the CPU it asks for;
- unpinned (the default scheduling): raw and arena, and last ``overhead: X.XX``, arena / raw.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The installed arena is measured where there is one: ``pip install .`` compiles the referee's
# hot path (setup.py), an editable install or this checkout alone runs it as Python. The first
# line printed says which.
if importlib.util.find_spec("arena") is None:
    sys.path.insert(0, str(ROOT))

from arena_build import arena_build  # noqa: E402

from arena.game import MatchState  # noqa: E402
from arena.harness.botproc import BotProcess, BotSpec, Limits  # noqa: E402
from arena.harness.local_bot import LocalBot  # noqa: E402
from arena.harness.protocol import request_line  # noqa: E402
from arena.match.referee import _view, play_match  # noqa: E402
from arena.rules import Rules, Seating  # noqa: E402


def build_bot() -> Path:
    src = ROOT / "bots" / "c" / "firstmove.c"
    out = ROOT / "bots" / "c" / "firstmove.bin"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-o", str(out), str(src)], check=True)
    return out


def typical_request() -> bytes:
    """A real request line from the middle of a hand, so the raw trip moves the same bytes."""
    state = MatchState.new(Rules(), Seating.alone(2), 1)
    for _ in range(5):
        state.apply(state.legal_moves()[0])
    seat = state.current_seat
    legal = [str(m) for m in state.legal_moves()]
    return request_line(1, 2000, 0, _view(state, seat, seat), legal)


class RawPipe:
    """The trivial bot on a bare pipe: nothing between the request and its reply."""

    def __init__(self, binary: Path, cpu: int | None = None) -> None:
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                                     preexec_fn=pin)
        self.fin, self.fout = self.proc.stdin.fileno(), self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.line = typical_request()
        os.write(self.fin, b'{"type":"hello","protocol":1}\n')
        os.read(self.fout, 4096)

    def per_trip(self, count: int) -> tuple[float, float]:
        """Seconds per request and reply, over ``count`` of them: wall time, and CPU time of
        this process."""
        write, read, fin, fout, line = os.write, os.read, self.fin, self.fout, self.line
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(count):
            write(fin, line)
            reply = read(fout, 4096)
            while not reply.endswith(b"\n"):
                reply += read(fout, 4096)
        return (time.perf_counter() - start) / count, (time.process_time() - cpu) / count

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait()


class ArenaMatches:
    """Two trivial bots playing full matches through the referee."""

    def __init__(self, binary: Path, cpu: int | None = None) -> None:
        spec = BotSpec(name="firstmove", cmd=(str(binary),), limits=Limits())
        cpus = None if cpu is None else [cpu]
        self.bots = [BotProcess(spec, cpus=cpus), BotProcess(spec, cpus=cpus)]
        self.rules, self.seating = Rules(), Seating.alone(2)
        self.seed = 0
        play_match(self.bots, self.rules, self.seating, seed=10**9)  # start the processes, warm the caches

    def per_decision(self, matches: int) -> tuple[float, float, int]:
        """Seconds per decision over ``matches`` matches (wall time, and CPU time of this
        process), and the number of decisions."""
        decisions = 0
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(matches):
            record = play_match(self.bots, self.rules, self.seating, seed=self.seed)
            self.seed += 1
            decisions += len(record.moves)
        return (time.perf_counter() - start) / decisions, (time.process_time() - cpu) / decisions, decisions

    def close(self) -> None:
        for bot in self.bots:
            bot.close()


class Rounds:
    """Seconds per raw trip and per arena decision of each round, wall and CPU time."""

    def __init__(self) -> None:
        self.raw: list[float] = []
        self.arena: list[float] = []
        self.raw_cpu: list[float] = []
        self.arena_cpu: list[float] = []
        self.decisions = 0

    @staticmethod
    def _us(values: list[float]) -> str:
        return f"{statistics.median(values) * 1e6:.1f} us"

    @staticmethod
    def _difference(a: list[float], b: list[float]) -> str:
        diffs = sorted(x - y for x, y in zip(a, b, strict=True))
        return f"{statistics.median(diffs) * 1e6:.1f} us [{diffs[0] * 1e6:.1f}, {diffs[-1] * 1e6:.1f}]"

    def wall(self) -> str:
        return (f"raw {self._us(self.raw)}, arena {self._us(self.arena)}, "
                f"overhead {self._difference(self.arena, self.raw)} per decision")

    def cpu(self) -> str:
        return (f"raw {self._us(self.raw_cpu)}, arena {self._us(self.arena_cpu)}, "
                f"referee {self._difference(self.arena_cpu, self.raw_cpu)} per decision")


def interleaved(binary: Path, matches: int, roundtrips: int, rounds: int, cpu: int | None = None) -> Rounds:
    """``rounds`` raw batches and arena batches, alternating."""
    raw, arena = RawPipe(binary, cpu), ArenaMatches(binary, cpu)
    out = Rounds()
    try:
        for _ in range(rounds):
            wall, used = raw.per_trip(roundtrips)
            out.raw.append(wall)
            out.raw_cpu.append(used)
            wall, used, decisions = arena.per_decision(matches)
            out.arena.append(wall)
            out.arena_cpu.append(used)
            out.decisions += decisions
    finally:
        raw.close()
        arena.close()
    return out


def in_process_per_decision(matches: int) -> tuple[float, float]:
    """For the breakdown: CPU seconds per decision of the rules core alone (legal moves and
    apply), and of the referee with in-process bots (no pipe, no process)."""
    rules, seating = Rules(), Seating.alone(2)
    start = time.process_time()
    decisions = 0
    for seed in range(matches):
        state = MatchState.new(rules, seating, seed)
        while not state.is_over:
            state.apply(state.legal_moves()[0])
            decisions += 1
    core = (time.process_time() - start) / decisions
    start = time.process_time()
    decisions = 0
    for seed in range(matches):
        record = play_match([LocalBot(first=True), LocalBot(first=True)], rules, seating, seed)
        decisions += len(record.moves)
    return core, (time.process_time() - start) / decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per arena batch")
    parser.add_argument("--roundtrips", type=int, default=5000, help="round trips per raw batch")
    parser.add_argument("--rounds", type=int, default=5, help="raw and arena batches of each kind, alternating")
    args = parser.parse_args()
    binary = build_bot()
    print(f"arena: {arena_build()}")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)")
    core, local = in_process_per_decision(args.matches * 5)
    print(f"breakdown (CPU time): rules core alone {core * 1e6:.1f} us per decision; "
          f"referee with in-process bots {local * 1e6:.1f} us per decision")
    # Everything on one CPU (arena --cpu): hand-overs are local context switches, and the
    # difference is what the arena itself costs a decision.
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    os.sched_setaffinity(0, {cpu})
    try:
        pinned = interleaved(binary, args.matches, args.roundtrips, args.rounds, cpu)
    finally:
        os.sched_setaffinity(0, allowed)
    where = f"arena and bots on CPU {cpu}; {pinned.decisions} decisions, {args.rounds} rounds: median [range]"
    print(f"pinned: {pinned.wall()} ({where})")
    print(f"pinned CPU: {pinned.cpu()} (CPU time of the arena's process)")
    # The default: no pinning. This is the figure the last line reports.
    free = interleaved(binary, args.matches, args.roundtrips, args.rounds)
    raw, arena = statistics.median(free.raw), statistics.median(free.arena)
    print(f"raw round trip: {raw * 1e6:.1f} us per JSON line through a pipe to {binary.name}")
    print(f"arena: {arena * 1e6:.1f} us per decision ({free.decisions} decisions in full 1v1 matches)")
    print(f"overhead: {arena / raw:.2f}")


if __name__ == "__main__":
    main()
