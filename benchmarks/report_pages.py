"""Wall time of ``arena report`` on a 480-match results folder, an older arena against this
one, runs interleaved (old, new, old, new, ...); the last line gives each one's median, range
and the ratio new / old.

    .venv/bin/python benchmarks/report_pages.py OLD_ARENA [NEW_ARENA] [--runs 5] [--results FOLDER]

``OLD_ARENA``: the ``arena`` program of an older install, e.g. ``/tmp/old/bin/arena`` after
``python3 -m venv /tmp/old && /tmp/old/bin/pip install .`` in a checkout of fb711a9 (the
page-per-match report). Without ``--results``, the folder is made first by the older arena
(so that both can read it): a round robin of four compiled greedy bots (bots/c/greedy.c), 80
matches a pairing. Each run writes the report into a fresh folder; the first pair warms the
disk cache and is not counted. ``--again``: each run writes it twice to the same fresh folder and
times the second (the report after every run of a tournament, once its replays exist).
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


def make_results(arena: str, work: Path) -> Path:
    program = work / "greedy.bin"
    subprocess.run(["cc", "-O2", "-o", str(program), str(ROOT / "bots" / "c" / "greedy.c")], check=True)
    bots = "\n".join(f"  - {{name: g{i}, cmd: {program}}}" for i in range(4))
    path = work / "t.yaml"
    path.write_text(f"name: c480\nseed: 7\nformat: round_robin\nmatches_per_pairing: 80\nconcurrency: 2\nbots:\n{bots}\n")
    out = work / "results"
    subprocess.run([arena, "run", str(path), "-o", str(out), "--no-progress", "--no-report", "--quiet"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the older arena program")
    parser.add_argument("new", nargs="?", default=shutil.which("arena") or "arena", help="the newer one (default: arena)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each, alternating")
    parser.add_argument("--results", type=Path, help="a results folder to report (default: make one of 480 matches)")
    parser.add_argument("--again", action="store_true",
                        help="each run writes the report a second time to the same place, and that second report is "
                             "timed (what the report after every run of a tournament costs once its replays exist; "
                             "an arena that keeps no replay makes them all again)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="report-pages-"))
    try:
        results = args.results or make_results(args.old, work)
        times: dict[str, list[float]] = {"old": [], "new": []}
        print(f"{results}: {args.runs} runs each, alternating; load average {os.getloadavg()[0]:.2f}")
        for run in range(args.runs + 1):
            for name, arena in (("old", args.old), ("new", args.new)):
                out = work / f"site-{name}"
                shutil.rmtree(out, ignore_errors=True)
                command = [arena, "report", str(results), "--html", str(out / "report.html")]
                if args.again:
                    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                start = time.perf_counter()
                done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                took = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(f"{arena} report failed: {done.stderr.strip()}")
                if run:
                    times[name].append(took)
                    print(f"  run {run} {name}: {took:.2f} s (load {os.getloadavg()[0]:.2f})")
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        ratios = sorted(n / o for o, n in zip(times["old"], times["new"], strict=True))
        what = "the second report to the same place" if args.again else "report"
        print(f"{what}: old {old:.2f} s [{min(times['old']):.2f}, {max(times['old']):.2f}], new {new:.2f} s "
              f"[{min(times['new']):.2f}, {max(times['new']):.2f}] (medians, ranges); new / old {new / old:.3f} "
              f"(pairs: {ratios[0]:.3f} to {ratios[-1]:.3f}); load average {os.getloadavg()[0]:.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
