"""The arena's own memory over a long tournament: it must stay flat (issue 14: under 300 MB
at 100,000 matches).

    .venv/bin/python benchmarks/longrun.py [--sizes 5000,20000,50000] [--concurrency 2] [--keep]

For each size, a fresh tournament of that many fast matches is played by the real command
(``arena run FILE``, in a child Python process that runs the command in-process so that it
can read its own peak resident memory at the end: ``getrusage(RUSAGE_SELF).ru_maxrss``).
The bots are real processes: two copies of the C bot ``bots/c/firstmove.bin`` (it plays
the first legal move at once), built through the tournament file's ``build:`` key like
any built bot; matches are short (``target: 1``, one hand or so). Real worker processes
and real bots, because the arena's memory is what a real run holds: the store, the
schedule, the progress, the tables and the report at the end. What is measured is the
arena's own process (the workers and bots are separate processes; the largest of them is
printed too, for reference).

Each size prints its time, the arena's peak, and its resident memory sampled every second
at a quarter, half and three quarters of the run and at the end: flat memory means those
do not grow with the number of matches played. Then the same command runs again on the
finished results (a resume that finds every match stored: it reads them all, for the failure
tally, the leader and the tables), and its peak is printed too. The last line is that of the
largest size, the higher of the two peaks: ``longrun: N matches, peak MB X``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_tournament(folder: Path, matches: int, concurrency: int) -> Path:
    c_dir = ROOT / "bots" / "c"
    bot = "{{name: {name}, cmd: ./firstmove.bin, cwd: '{cwd}', build: cc -O2 -o firstmove.bin firstmove.c}}"
    text = "\n".join([
        "name: longrun",
        "seed: 14",
        "rules: {target: 1}",
        f"matches_per_pairing: {matches}",
        f"concurrency: {concurrency}",
        f"output: {folder / 'out'}",
        "bots:",
        "  - " + bot.format(name="first-a", cwd=c_dir),
        "  - " + bot.format(name="first-b", cwd=c_dir),
        "",
    ])
    path = folder / "longrun.yaml"
    path.write_text(text)
    return path


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def child(argv: list[str]) -> None:
    """Run ``arena run`` in this process; print what its memory did, as JSON, on the last line of stderr."""
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(1.0):
            samples.append((time.monotonic(), _rss_mb()))

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    from arena.cli import main

    sys.argv = ["arena", *argv]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    stop.set()
    sampler.join()
    end = time.monotonic()
    at = {}
    for share in (0.25, 0.5, 0.75, 1.0):
        moment = start + share * (end - start)
        before = [rss for t, rss in samples if t <= moment]
        at[str(share)] = before[-1] if before else None
    print(json.dumps({
        "code": code,
        "seconds": end - start,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "largest_child_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "rss_at": at,
    }), file=sys.stderr)


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_mb: float
    largest_child_mb: float
    rss_at: dict[str, float | None]  # share of the run ("0.25", ...) -> RSS in MB then


def _run(path: Path, matches: int) -> Measured:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", "run", str(path), "--no-progress", "--no-report"],
        cwd=ROOT, capture_output=True, text=True,
    )
    lines = proc.stderr.strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"the run of {matches} matches failed:\n{proc.stderr[-3000:]}") from None
    if result["code"] != 0:
        raise SystemExit(f"the run of {matches} matches exited {result['code']}:\n{proc.stderr[-3000:]}")
    if "bot failures" in proc.stderr:
        raise SystemExit(f"bot failures in the run of {matches} matches:\n{proc.stderr[-3000:]}")
    return Measured(float(result["seconds"]), float(result["peak_mb"]), float(result["largest_child_mb"]),
                    dict(result["rss_at"]))


def measure(matches: int, concurrency: int, keep: bool) -> tuple[Measured, Measured]:
    """(the run, then the same command again: a resume that finds every match stored)."""
    folder = Path(tempfile.mkdtemp(prefix=f"arena-longrun-{matches}-"))
    try:
        path = write_tournament(folder, matches, concurrency)
        return _run(path, matches), _run(path, matches)
    finally:
        if keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000,50000", help="tournament sizes, in matches (each <= 100000)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the results folders")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if shutil.which("cc") is None:
        raise SystemExit("needs a C compiler (cc) to build bots/c/firstmove.c")
    print(f"load average before: {' '.join(open('/proc/loadavg').read().split()[:3])}; cores: {os.cpu_count()}")
    last = None
    for size in sizes:
        result, resumed = measure(size, args.concurrency, args.keep)
        shown = ", ".join(f"{int(float(k) * 100)}%: " + (f"{v:.0f}" if v is not None else "-")
                          for k, v in result.rss_at.items())
        print(f"{size} matches: {result.seconds:.0f} s ({size / result.seconds:.1f} matches/s); arena peak RSS "
              f"{result.peak_mb:.0f} MB; RSS MB over the run ({shown}); largest worker or bot "
              f"{result.largest_child_mb:.0f} MB; run again (a resume with all stored): "
              f"{resumed.seconds:.0f} s, peak {resumed.peak_mb:.0f} MB")
        last = (size, max(result.peak_mb, resumed.peak_mb))
    print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    if last is not None:
        print(f"longrun: {last[0]} matches, peak MB {last[1]:.0f}")


if __name__ == "__main__":
    main()
