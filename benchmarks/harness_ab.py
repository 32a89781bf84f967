"""The referee's pinned cost per decision of two versions, compared in one session.

Usage: python benchmarks/harness_ab.py OLD_TREE [NEW_TREE] [--rounds N] [--matches N] [--new-clock cpu]

OLD_TREE and NEW_TREE are checkouts of the project (NEW_TREE defaults to this one), e.g. a
``git worktree add /tmp/old 657bb52``. A checkout runs as Python; the compiled build a user
gets is measured from its unpacked wheel (benchmarks/two_trees.py says how).

Each version runs in its own long-lived worker process (its ``arena`` package first on the
path), pinned with its two bots to the same CPU: the ``pinned`` set-up of
benchmarks/harness.py, with the same compiled bot (bots/c/firstmove.c, built from this
checkout) for both. The workers take turns (old, new, new, old, ...), each playing
``--matches`` full 1v1 matches and then timing raw round trips to its own bot, so that both
meet the same machine: on a shared or virtual machine the speed of the host drifts by a third
within minutes, which a comparison of separate runs cannot tell from a change of code.

Printed per version: wall time per decision, raw round trip, and their difference (the
arena's own cost per decision; medians of the rounds, with quartiles). The last line is
``new - old: D us per decision (median of the rounds' paired differences; quartiles; new lower
in K of N rounds)``. ``--new-clock cpu`` puts the new version's bots on the cpu clock (their
CPU time read at each request and reply): its cost against the old version's wall clock.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from two_trees import TreeWorker, tree_arguments


def worker(binary: str, clock: str | None = None) -> None:
    """Read lines ``MATCHES SEED``: play MATCHES matches from seed SEED, time 2,000 raw round
    trips, and answer ``WALL_PER_DECISION RAW_PER_TRIP DECISIONS`` (seconds). Only the API every
    version has is used: BotProcess, BotSpec, Limits, play_match, Rules, Seating."""
    from arena.harness.botproc import BotProcess, BotSpec, Limits
    from arena.match.referee import play_match
    from arena.rules import Rules, Seating

    limits = Limits() if clock is None else Limits(clock=clock)  # type: ignore[call-arg]  # not in older versions
    spec = BotSpec(name="firstmove", cmd=(binary,), limits=limits)
    bots = [BotProcess(spec), BotProcess(spec)]  # their launcher starts on this (pinned) CPU
    rules, seating = Rules(), Seating.alone(2)
    raw = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    fin, fout = raw.stdin.fileno(), raw.stdout.fileno()  # type: ignore[union-attr]
    request = (b'{"type":"request","id":7,"time_ms":2000,"bank_ms":0,"view":{"seat":0,"side":0,"hand_number":0,'
               b'"round":1,"dealer":1,"hand":["3e","7o","12c"],"table":["1b","5c","6o"],"stock":24,'
               b'"hand_sizes":[3,3],"scores":[0,0]},"legal":["3e+12c","3e","7o","12c+1b"]}\n')
    os.write(fin, b'{"type":"hello","protocol":1}\n')
    os.read(fout, 4096)
    for seed in range(3):  # start the bots, warm the caches
        play_match(bots, rules, seating, seed=10**9 + seed)
    try:
        for line in sys.stdin:
            matches, first = map(int, line.split())
            decisions = 0
            start = time.perf_counter()
            for seed in range(first, first + matches):
                decisions += len(play_match(bots, rules, seating, seed=seed).moves)
            wall = (time.perf_counter() - start) / decisions
            start = time.perf_counter()
            for _ in range(2000):
                os.write(fin, request)
                reply = os.read(fout, 4096)
                while not reply.endswith(b"\n"):
                    reply += os.read(fout, 4096)
            trip = (time.perf_counter() - start) / 2000
            print(wall, trip, decisions, flush=True)
    finally:
        for bot in bots:
            bot.close()
        raw.stdin.close()  # type: ignore[union-attr]
        raw.wait()


def _pin(cpu: int) -> Callable[[], None]:
    return lambda: os.sched_setaffinity(0, {cpu})  # in the worker, before it starts anything


def _quartiles(values: list[float]) -> tuple[float, float]:
    q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
    return q1, q3


def _median_q(values: list[float]) -> str:
    q1, q3 = _quartiles(values)
    return f"{statistics.median(values) * 1e6:.1f} us (quartiles {q1 * 1e6:.1f}-{q3 * 1e6:.1f})"


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_arguments(parser)
    parser.add_argument("--rounds", type=int, default=100, help="timed batches of each version (default 100)")
    parser.add_argument("--matches", type=int, default=5, help="matches per batch (default 5)")
    parser.add_argument("--new-clock", choices=("cpu", "wall"), help="the new version's bots on this clock")
    args = parser.parse_args()
    from harness import build_bot  # this script's directory is on the path

    binary = build_bot()
    cpu = min(os.sched_getaffinity(0))
    print(f"load average at the start: {Path('/proc/loadavg').read_text().strip()}"
          if Path("/proc/loadavg").exists() else "load average: unknown")
    extra = {"old": [], "new": [args.new_clock] if args.new_clock else []}
    workers = {name: TreeWorker(__file__, tree.resolve(), [str(binary), *extra[name]], preexec_fn=_pin(cpu))
               for name, tree in (("old", args.old), ("new", args.new))}
    walls: dict[str, list[float]] = {"old": [], "new": []}
    own: dict[str, list[float]] = {"old": [], "new": []}
    try:
        first = 0
        for r in range(args.rounds):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                wall, trip = map(float, workers[name].ask(f"{args.matches} {first}")[:2])
                walls[name].append(wall)
                own[name].append(wall - trip)
            first += args.matches  # both versions play the same deals
    finally:
        for w in workers.values():
            w.close()
    print(f"{args.rounds} rounds of {args.matches} matches each, both versions and their bots on CPU {cpu}")
    for name in ("old", "new"):
        print(f"{name}: arena {_median_q(walls[name])} per decision; own cost {_median_q(own[name])} per decision")
    diffs = [n - o for n, o in zip(own["new"], own["old"], strict=True)]
    q1, q3 = _quartiles(diffs)
    lower = sum(d < 0 for d in diffs)
    print(f"new - old: {statistics.median(diffs) * 1e6:+.2f} us per decision (median of the rounds' paired differences; "
          f"quartiles {q1 * 1e6:+.2f} to {q3 * 1e6:+.2f}; new lower in {lower} of {len(diffs)} rounds)")


if __name__ == "__main__":
    main()
