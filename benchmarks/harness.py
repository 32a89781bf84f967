"""Harness overhead: the arena's wall time per decision against a raw pipe round trip.

    python benchmarks/harness.py [--matches N] [--roundtrips N]

1. Raw: one JSON request line written to the trivial compiled bot (bots/c/firstmove.c) and
   its reply read back, on the bare pipe, with nothing else (median of several batches).
2. Arena: full 1v1 matches between two such bots through ``play_match`` (events, views,
   legal moves, checks, the record); wall time divided by the number of decisions.

The last line is ``overhead: X.XX`` = arena time per decision / raw round trip, both with
the default scheduling (no CPU pinning); a line before gives the same two figures with the
arena and the bots pinned to one CPU (``arena play --cpu``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.botproc import BotProcess, BotSpec, Limits  # noqa: E402
from arena.game import MatchState  # noqa: E402
from arena.protocol import request_line  # noqa: E402
from arena.referee import LocalBot, _view, play_match  # noqa: E402
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


def raw_round_trip(binary: Path, count: int, batches: int = 5, cpu: int | None = None) -> float:
    """Seconds per request/reply on the bare pipe (median of ``batches``)."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, preexec_fn=pin)
    fin, fout = proc.stdin.fileno(), proc.stdout.fileno()
    line = typical_request()
    write, read = os.write, os.read
    results = []
    try:
        write(fin, b'{"type":"hello","protocol":1}\n')
        read(fout, 4096)
        for _ in range(batches):
            start = time.perf_counter()
            for _ in range(count):
                write(fin, line)
                reply = read(fout, 4096)
                while not reply.endswith(b"\n"):
                    reply += read(fout, 4096)
            results.append((time.perf_counter() - start) / count)
    finally:
        proc.stdin.close()
        proc.wait()
    return statistics.median(results)


def arena_per_decision(binary: Path, matches: int, batches: int = 5, cpu: int | None = None) -> tuple[float, int]:
    """Seconds of arena wall time per decision in full matches (median of ``batches``)."""
    spec = BotSpec(name="firstmove", cmd=(str(binary),), limits=Limits())
    cpus = None if cpu is None else [cpu]
    bots = [BotProcess(spec, cpus=cpus), BotProcess(spec, cpus=cpus)]
    rules, seating = Rules(), Seating.alone(2)
    results = []
    total = 0
    try:
        play_match(bots, rules, seating, seed=0)  # start the processes, warm the caches
        for b in range(batches):
            decisions = 0
            start = time.perf_counter()
            for i in range(matches):
                record = play_match(bots, rules, seating, seed=1000 * b + i)
                decisions += len(record.moves)
            results.append((time.perf_counter() - start) / decisions)
            total += decisions
    finally:
        for bot in bots:
            bot.close()
    return statistics.median(results), total


def in_process_per_decision(matches: int) -> tuple[float, float]:
    """For the breakdown: seconds per decision of the rules core alone (legal moves and
    apply), and of the referee with in-process bots (no pipe, no process)."""
    rules, seating = Rules(), Seating.alone(2)
    start = time.perf_counter()
    decisions = 0
    for seed in range(matches):
        state = MatchState.new(rules, seating, seed)
        while not state.is_over:
            state.apply(state.legal_moves()[0])
            decisions += 1
    core = (time.perf_counter() - start) / decisions
    start = time.perf_counter()
    decisions = 0
    for seed in range(matches):
        record = play_match([LocalBot(first=True), LocalBot(first=True)], rules, seating, seed)
        decisions += len(record.moves)
    return core, (time.perf_counter() - start) / decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per batch")
    parser.add_argument("--roundtrips", type=int, default=5000, help="raw round trips per batch")
    args = parser.parse_args()
    binary = build_bot()
    core, local = in_process_per_decision(args.matches * 5)
    print(f"breakdown: rules core alone {core * 1e6:.1f} us per decision; "
          f"referee with in-process bots {local * 1e6:.1f} us per decision")
    # Everything on one CPU (arena --cpu): hand-overs are local context switches.
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    os.sched_setaffinity(0, {cpu})
    try:
        raw_pinned = raw_round_trip(binary, args.roundtrips, cpu=cpu)
        arena_pinned, _ = arena_per_decision(binary, args.matches, cpu=cpu)
    finally:
        os.sched_setaffinity(0, allowed)
    print(f"pinned to CPU {cpu} (arena and bots): raw round trip {raw_pinned * 1e6:.1f} us, "
          f"arena {arena_pinned * 1e6:.1f} us per decision, ratio {arena_pinned / raw_pinned:.2f}")
    # The default: no pinning. This is the figure the last line reports.
    raw = raw_round_trip(binary, args.roundtrips)
    arena, decisions = arena_per_decision(binary, args.matches)
    print(f"raw round trip: {raw * 1e6:.1f} us per JSON line through a pipe to {binary.name}")
    print(f"arena: {arena * 1e6:.1f} us per decision ({decisions} decisions in full 1v1 matches)")
    print(f"overhead: {arena / raw:.2f}")


if __name__ == "__main__":
    main()
