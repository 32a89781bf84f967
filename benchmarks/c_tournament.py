"""Wall time of a round robin of four compiled greedy bots (bots/c/greedy.c), 120 matches at
concurrency 2: the arena's own cost per match, with bots that cost almost nothing. Given two
``arena`` programs (two installs: an older version's and this one's), the runs alternate, old
then new, and the last line gives each one's median and the ratio new / old.

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the older arena program")
    parser.add_argument("new", nargs="?", default=shutil.which("arena") or "arena", help="the newer one (default: arena)")
    parser.add_argument("--runs", type=int, default=7, help="runs of each, alternating")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="c-tournament-"))
    try:
        program = work / "greedy.bin"
        subprocess.run(["cc", "-O2", "-o", str(program), str(ROOT / "bots" / "c" / "greedy.c")], check=True)
        bots = "\n".join(f"  - {{name: g{i}, cmd: {program}}}" for i in range(4))
        path = work / "t.yaml"
        path.write_text(f"name: c\nseed: 7\nformat: round_robin\nmatches_per_pairing: 20\nconcurrency: 2\nbots:\n{bots}\n")
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
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        ratios = sorted(n / o for o, n in zip(times["old"], times["new"], strict=True))
        print(f"120 matches: old {old:.2f} s, new {new:.2f} s (medians); new / old {new / old:.3f} "
              f"(pairs: {ratios[0]:.3f} to {ratios[-1]:.3f}); load average {os.getloadavg()[0]:.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
