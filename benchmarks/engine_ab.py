"""Rules-core speed of two versions, compared in one session by interleaved runs of CPU time.

Usage: python benchmarks/engine_ab.py OLD_TREE [NEW_TREE] [--warmup N] [--chunk N] [--rounds N]

OLD_TREE and NEW_TREE are checkouts of the project (NEW_TREE defaults to this one), e.g. a
``git worktree add /tmp/old 657bb52``. Each version runs in its own long-lived worker process
(its ``arena`` package first on the path) and plays the workload of benchmarks/engine.py:
random-versus-random 2-player hands through the public API (legal_moves, apply, points), the
same hands from the same seeds in both. A checkout runs as Python; the compiled build a user
gets is measured from its unpacked wheel (benchmarks/two_trees.py says how).

After the warm-up, the two workers play the same chunk of hands in turn (old, new, new, old,
...), so that both meet the same load on a shared machine, and each chunk is timed in the
worker's CPU time (``time.thread_time``).

The last line printed is ``ratio R (median per round; quartiles Q1-Q3)``: how many times
faster the new version plays the same hands.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from two_trees import TreeWorker, tree_arguments


def worker() -> None:
    """Read ``COUNT SEED`` lines; play COUNT hands from seed SEED; answer the CPU seconds.
    ``build`` asks which arena the worker runs (its folder, and which modules are compiled)."""
    from arena_build import arena_build

    from arena.game import HandState
    from arena.rules import Rules, Seating
    from arena.seeding import Rng, derive_seed

    rules, seating, rng = Rules(), Seating.alone(2), Rng(1)
    for line in sys.stdin:
        if line.strip() == "build":
            print(arena_build(), flush=True)
            continue
        count, first = map(int, line.split())
        start = time.thread_time()
        for i in range(first, first + count):
            hand = HandState.shuffled(rules, seating, i % 2, derive_seed(2024, "bench", i))
            while not hand.is_over:
                moves = hand.legal_moves()
                hand.apply(moves[rng.below(len(moves))])
            hand.points()
        print(time.thread_time() - start, flush=True)


def main() -> None:
    if sys.argv[1:] == ["--worker"]:
        worker()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_arguments(parser)
    parser.add_argument("--warmup", type=int, default=3000, help="hands each version plays first (default 3000)")
    parser.add_argument("--chunk", type=int, default=200, help="hands per timed run (default 200)")
    parser.add_argument("--rounds", type=int, default=40, help="timed runs of each version (default 40)")
    args = parser.parse_args()
    workers = {"old": TreeWorker(__file__, args.old.resolve()), "new": TreeWorker(__file__, args.new.resolve())}
    try:
        for name, w in workers.items():
            print(f"{name}: {' '.join(w.ask('build'))}")
            w.ask(f"{args.warmup} 0")
        print(f"load average at the start: {Path('/proc/loadavg').read_text().strip()}"
              if Path("/proc/loadavg").exists() else "load average: unknown")
        spent = {"old": 0.0, "new": 0.0}
        ratios = []
        first = 100_000
        for r in range(args.rounds):
            times = {}
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                times[name] = float(workers[name].ask(f"{args.chunk} {first}")[0])
                spent[name] += times[name]
            ratios.append(times["old"] / times["new"])
            first += args.chunk
    finally:
        for w in workers.values():
            w.close()
    hands = args.rounds * args.chunk
    print(f"{args.rounds} rounds of {args.chunk} hands after {args.warmup} warm-up hands each")
    print(f"old {hands / spent['old']:.0f} hands per CPU second, new {hands / spent['new']:.0f}; "
          f"ratio of the totals {spent['old'] / spent['new']:.3f}, per round min {min(ratios):.3f} max {max(ratios):.3f}")
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
    print(f"ratio {statistics.median(ratios):.3f} (median per round; quartiles {q1:.3f}-{q3:.3f})")


if __name__ == "__main__":
    main()
