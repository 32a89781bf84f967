"""Wall time of round robins at concurrency 1 and 2: matches per second at each, and last the
ratio of the times (2 / 1), for Python bots and for compiled ones.

Acceptance (issue 5): on 2 cores the ratio (time at 2 / time at 1) is at most 0.6; issue 31:
concurrency 2 at least 1.7x concurrency 1 on the compiled bots (a ratio of at most 0.59).

    .venv/bin/python benchmarks/tournament.py [--bots python|c|both] [--arena PROGRAM] [--keep]

``python``: six bundled Python bots (copies of random and greedy under new names), 15 pairings
x ``--matches-per-pairing`` (default 30: 450 matches). ``c``: four bots built from
bots/c/greedy.c, 6 pairings x ``--c-matches-per-pairing`` (default 80: 480 matches), where
the arena's own cost per match is nearly all there is. Each level runs ``--repeat`` times
(default 3), interleaved, and the best time of each is compared. Each run is the real command
(`arena run FILE --concurrency N`) in a fresh results folder, so the time includes starting
workers and bots, storing every match and writing tables. ``--arena`` runs an installed
``arena`` program (a compiled `pip install .`) instead of this checkout's.
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

from c_tournament import greedy_tournament

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


def timed_run(arena: list[str], path: Path, concurrency: int, output: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            *arena,
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


def compare_levels(label: str, arena: list[str], path: Path, matches: int, repeat: int, folder: Path) -> None:
    print(f"{label}: {matches} matches; load average before: {os.getloadavg()[0]:.2f}", flush=True)
    # Interleaved and best-of-N, so a burst of unrelated load hurts neither level alone.
    times: dict[int, list[float]] = {1: [], 2: []}
    for run in range(repeat):
        for level in (1, 2):
            times[level].append(timed_run(arena, path, level, folder / f"{label}-c{level}-{run}"))
            print(f"{label}, concurrency {level}, run {run + 1}: {times[level][-1]:.2f} s", flush=True)
    t1, t2 = min(times[1]), min(times[2])
    print(f"{label}, concurrency 1: {t1:.2f} s, {matches / t1:.1f} matches/s (best of {repeat})")
    print(f"{label}, concurrency 2: {t2:.2f} s, {matches / t2:.1f} matches/s (best of {repeat})")
    print(f"{label}: load average after: {os.getloadavg()[0]:.2f}")
    print(f"{label}: ratio (concurrency 2 / concurrency 1): {t2 / t1:.3f}; speed-up {t1 / t2:.2f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", choices=("python", "c", "both"), default="both")
    parser.add_argument("--matches-per-pairing", type=int, default=30, help="Python bots (15 pairings)")
    parser.add_argument("--c-matches-per-pairing", type=int, default=80, help="compiled bots (6 pairings)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs at each concurrency, interleaved; the best of each is compared (default 3)"
    )
    parser.add_argument("--arena", help="an installed arena program (default: this checkout's, as Python)")
    parser.add_argument("--keep", action="store_true", help="keep the results folders")
    args = parser.parse_args()
    arena = [args.arena] if args.arena else [sys.executable, "-m", "arena.cli"]
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    try:
        print(f"cores: {os.cpu_count()}; arena: {' '.join(arena)}")
        if args.bots in ("python", "both"):
            path = write_tournament(folder, args.matches_per_pairing)
            compare_levels("python bots", arena, path, 15 * args.matches_per_pairing, args.repeat, folder)
        if args.bots in ("c", "both"):
            path = greedy_tournament(folder, args.c_matches_per_pairing)
            compare_levels("compiled bots", arena, path, 6 * args.c_matches_per_pairing, args.repeat, folder)
    finally:
        if args.keep:
            print(f"kept: {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
