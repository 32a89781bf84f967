"""Wall time of a 6-bot round robin at concurrency 1 and 2; prints both, and last the ratio.

Acceptance (issue 5): on 2 cores the ratio (time at 2 / time at 1) is at most 0.6.

    .venv/bin/python benchmarks/tournament.py [--matches-per-pairing N] [--keep]

Each level runs ``--repeat`` times (default 3), interleaved, and the best time of each is
compared. Each run is the real command (`arena run FILE --concurrency N`) in a fresh results folder,
so the time includes starting workers and bots, storing every match and writing tables.
The six bots are the bundled Python bots in bots/ (copies under new names to make six).
Run it on an otherwise idle machine: other processes competing for the two cores make
the concurrency-2 run look worse than it is (the script prints the load average).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# Fast bots: the benchmark measures the arena's parallelism, not a bot's thinking.
BOT_SCRIPTS = ("random_bot.py", "greedy_bot.py")


def bundled_bots() -> list[tuple[str, str]]:
    scripts = [ROOT / "bots" / name for name in BOT_SCRIPTS if (ROOT / "bots" / name).is_file()]
    if not scripts:
        raise SystemExit(f"none of the bundled bots {', '.join(BOT_SCRIPTS)} is in bots/")
    out = []
    for i in range(6):
        script = scripts[i % len(scripts)]
        base = script.stem.removesuffix("_bot")
        out.append((f"{base}{i // len(scripts) + 1}", f"$PYTHON {script.relative_to(ROOT)}"))
    return out


def write_tournament(folder: Path, matches: int) -> Path:
    lines = ["name: bench6", "seed: 20260101", f"matches_per_pairing: {matches}", f"output: {folder / 'unused'}", "bots:"]
    for name, cmd in bundled_bots():
        lines.append(f'  - {{name: {name}, cmd: "{cmd}", cwd: "{ROOT}"}}')
    path = folder / "bench6.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def timed_run(path: Path, concurrency: int, output: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "run",
            str(path),
            "--no-progress",
            "--no-report",  # the time to play, as before the run wrote a report page
            "--concurrency",
            str(concurrency),
            "--output",
            str(output),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"arena run failed at concurrency {concurrency}:\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches-per-pairing", type=int, default=30)
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs at each concurrency, interleaved; the best of each is compared (default 3)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the results folders")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    try:
        path = write_tournament(folder, args.matches_per_pairing)
        print(
            f"cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}; "
            f"6 bots, 15 pairings x {args.matches_per_pairing} = {15 * args.matches_per_pairing} matches"
        )
        # Interleaved and best-of-N, so a burst of unrelated load hurts neither level alone.
        times: dict[int, list[float]] = {1: [], 2: []}
        for run in range(args.repeat):
            for level in (1, 2):
                times[level].append(timed_run(path, level, folder / f"c{level}-{run}"))
                print(f"concurrency {level}, run {run + 1}: {times[level][-1]:.2f} s", flush=True)
        t1, t2 = min(times[1]), min(times[2])
        print(f"concurrency 1: {t1:.2f} s (best of {args.repeat})")
        print(f"concurrency 2: {t2:.2f} s (best of {args.repeat})")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        print(f"ratio (concurrency 2 / concurrency 1): {t2 / t1:.3f}")
    finally:
        if args.keep:
            print(f"kept: {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
