"""Is a setting of a bot stronger than another? Both against the same opponent on the same
duplicate deals, paired deal by deal, so that most of the luck of the cards cancels.

    python benchmarks/paired.py expert expert:tree=1 --vs greedy --deals 100 --seed 11
    python benchmarks/paired.py expert expert:tree=1 --save /tmp/screen.json   # keep each run
    python benchmarks/paired.py expert expert:tree=1 --load /tmp/screen.json   # reuse kept runs

Each setting plays ``strength.py``'s duplicate deals against ``--vs`` (``play_deals``: single
hands, no matches). Printed per setting: its points per hand against ``--vs`` with the 95%
interval and its CPU per move; for every setting after the first, its gain over the first,
the mean of the per-deal differences with their own interval (much narrower than the gap
between the two intervals, when the two play alike on most deals). A run depends only on
the setting, the opponent, the seed, the deals and the code: ``--save``/``--load`` keep runs
by those (the code is the caller's business: a file per commit).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from strength import _merge, _no_times, mean_interval, play_deals  # noqa: E402

from arena.rules import Rules, Seating  # noqa: E402


def run(spec: str, vs: str, seed: int, deals: int, jobs: int,
        initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Per-deal differences (``spec`` minus ``vs``) and the times of both, deal by deal in order.
    ``initializer(*initargs)``: run first in each worker process (then always in processes of
    their own, even with one job)."""
    base = (spec, vs, Rules().to_dict(), Seating.alone(2).to_dict(), seed)
    chunks = [list(range(k, deals, jobs * 4)) for k in range(min(deals, jobs * 4))]
    if jobs > 1 or initializer is not None:
        with multiprocessing.Pool(jobs, initializer, initargs) as pool:
            parts = pool.map(play_deals, [base + (idx,) for idx in chunks])
    else:
        parts = [play_deals(base + (idx,)) for idx in chunks]
    diffs = [0.0] * deals
    times = _no_times()
    for idx, part in zip(chunks, parts, strict=True):
        for i, d in zip(idx, part["diffs"], strict=True):
            diffs[i] = d
        _merge(times, part["times"])
    return {"diffs": diffs, "times": times}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", help="settings to compare, the first the reference")
    parser.add_argument("--vs", default="greedy", help="the opponent of every setting (default greedy)")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--save", type=Path, help="JSON file to add each run to")
    parser.add_argument("--load", type=Path, help="JSON file of runs to reuse instead of playing them")
    args = parser.parse_args(argv)
    kept: dict[str, Any] = json.loads(args.load.read_text()) if args.load and args.load.exists() else {}
    results = []
    for spec in args.specs:
        key = f"{spec}|{args.vs}|{args.seed}|{args.deals}"
        got = kept.get(key)
        if got is None:
            got = run(spec, args.vs, args.seed, args.deals, args.jobs)
            if args.save:
                saved = json.loads(args.save.read_text()) if args.save.exists() else {}
                saved[key] = got
                args.save.write_text(json.dumps(saved))
        results.append(got)
        mean, low, high = mean_interval(got["diffs"])
        count, _, _, cpu_total, cpu_worst = got["times"][0]
        line = (f"{spec} vs {args.vs} (seed {args.seed}, {args.deals} deals): {mean:+.3f} [{low:+.3f}, {high:+.3f}]"
                f"; CPU per move mean {1000 * cpu_total / max(1, count):.2f} ms, worst {1000 * cpu_worst:.2f} ms"
                f" over {int(count)} moves")
        if len(results) > 1:
            pairs = [b - a for a, b in zip(results[0]["diffs"], got["diffs"], strict=True)]
            gain, g_low, g_high = mean_interval(pairs)
            differ = sum(1 for p in pairs if p)
            line += f"; gain over {args.specs[0]}: {gain:+.3f} [{g_low:+.3f}, {g_high:+.3f}] ({differ} deals differ)"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
