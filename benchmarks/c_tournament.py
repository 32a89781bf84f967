"""Wall time of a round robin of four compiled greedy bots (bots/c/greedy.c), 480 matches at
concurrency 2 (``--matches-per-pairing 80``, ``--concurrency 2``): the arena's own cost per
match, with bots that cost almost nothing. Given two ``arena`` programs (two installs: an older
version's and this one's), the runs alternate, old then new, and the last line gives each
one's median, range and matches per second, and the ratio new / old.

    .venv/bin/python benchmarks/c_tournament.py OLD_ARENA [NEW_ARENA] [--runs 7]

For example ``OLD_ARENA`` = ``/tmp/old/bin/arena`` after ``python3 -m venv /tmp/old &&
/tmp/old/bin/pip install .`` in a checkout of the older commit. Each run is ``arena run`` in a
fresh results folder, so it includes starting the workers, the launchers and every bot (sealed,
where the newer arena seals them), storing each match and writing the tables.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def greedy_tournament(folder: Path, matches_per_pairing: int, concurrency: int | None = None, bots: int = 4) -> Path:
    """A round robin of ``bots`` bots built from bots/c/greedy.c, written into ``folder``."""
    program = folder / "greedy.bin"
    subprocess.run(["cc", "-O2", "-o", str(program), str(ROOT / "bots" / "c" / "greedy.c")], check=True)
    entries = "\n".join(f"  - {{name: g{i}, cmd: {program}}}" for i in range(bots))
    level = "" if concurrency is None else f"concurrency: {concurrency}\n"
    path = folder / "t.yaml"
    path.write_text(f"name: c\nseed: 7\nformat: round_robin\nmatches_per_pairing: {matches_per_pairing}\n{level}"
                    f"bots:\n{entries}\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the older arena program")
    parser.add_argument("new", nargs="?", default=shutil.which("arena") or "arena", help="the newer one (default: arena)")
    parser.add_argument("--runs", type=int, default=7, help="runs of each, alternating")
    parser.add_argument("--matches-per-pairing", type=int, default=80, help="matches a pairing (default 80: 480 with 4 bots)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--bots", type=int, default=4, help="bots in the round robin (default 4; 2 with "
                        "--matches-per-pairing 2 is a 2-match run: the fixed cost of a run)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="c-tournament-"))
    try:
        path = greedy_tournament(work, args.matches_per_pairing, args.concurrency, args.bots)
        matches = args.bots * (args.bots - 1) // 2 * args.matches_per_pairing
        times: dict[str, list[float]] = {"old": [], "new": []}
        print(f"{args.runs} runs each, alternating; load average {os.getloadavg()[0]:.2f}")
        for run in range(args.runs + 1):  # the first pair warms the disk cache and is not counted
            for name, arena in (("old", args.old), ("new", args.new)):
                out = work / f"out-{name}"
                shutil.rmtree(out, ignore_errors=True)
                start = time.perf_counter()
                subprocess.run([arena, "run", str(path), "-o", str(out), "--no-progress", "--no-report", "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                if run:
                    times[name].append(time.perf_counter() - start)
                    print(f"{name} {times[name][-1]:.2f} s; load average {os.getloadavg()[0]:.2f}", flush=True)
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        ratios = sorted(n / o for o, n in zip(times["old"], times["new"], strict=True))

        def spread(name: str) -> str:
            return f"{min(times[name]):.2f}-{max(times[name]):.2f}"

        print(f"{matches} matches at concurrency {args.concurrency}, {args.runs} runs each: old {old:.2f} s "
              f"({spread('old')}, {matches / old:.0f} matches/s), new {new:.2f} s ({spread('new')}, "
              f"{matches / new:.0f} matches/s) (medians, ranges); new / old {new / old:.3f} "
              f"(pairs: {ratios[0]:.3f} to {ratios[-1]:.3f}, median {statistics.median(ratios):.3f}); "
              f"load average {os.getloadavg()[0]:.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
