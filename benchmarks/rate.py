"""League-scale ratings: `arena rate` on a synthetic league with known true ratings.

    .venv/bin/python benchmarks/rate.py [--seed 1] [--sizes 2000:40000,5000:1000000] [--prior 2]

For each size (bots:results) it draws true ratings (normal, sd ``--sd`` Elo), pairs bots at
random (a ladder-style league: most pairs meet at most once), draws each result from the
Bradley-Terry model with draws (a draw between equals with probability ``--draw-rate``; the
expected score stays the Bradley-Terry one, so the "ties as halves" fit is unbiased), writes
the CSV that `arena rate` reads, and runs the real command (``python -m arena.cli rate FILE
--format json --prior P``) in a fresh process: the time and peak memory are the whole
command's (start-up, streaming the file, the fit with intervals, the table). The JSON table
then gives how often the 95% intervals cover the true ratings (centred like the fit's).

Printed, one line per size and last the largest:
``rate: 5000 bots, 1000000 results, X s, Y MB peak`` (targets: 30 s and 1.5 GB; 3 s for
2,000 bots and 40,000 results). The machine's load average is printed too: on a shared
machine other processes slow the fit down.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.rating.table import DEFAULT_PRIOR, ELO_PER_NAT  # noqa: E402

CHUNK = 200_000


def write_league(path: Path, bots: int, results: int, *, sd: float, draw_rate: float, seed: int) -> np.ndarray:
    """Write the league's CSV; returns the true ratings (Elo, centred)."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, sd, bots)
    true -= true.mean()
    names = np.array([f"bot{i:05d}" for i in range(bots)], dtype=object)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("side_a,side_b,score_a\n")
        for start in range(0, results, CHUNK):
            m = min(CHUNK, results - start)
            a = rng.integers(0, bots, m)
            b = (a + rng.integers(1, bots, m)) % bots  # never the same bot
            p = 1.0 / (1.0 + np.exp(-(true[a] - true[b]) / ELO_PER_NAT))
            p_draw = 4.0 * draw_rate * p * (1.0 - p)
            u = rng.random(m)
            score = np.where(u < p - p_draw / 2.0, "1", np.where(u < p + p_draw / 2.0, "0.5", "0"))
            fh.write("\n".join(f"{x},{y},{s}" for x, y, s in zip(names[a], names[b], score, strict=True)))
            fh.write("\n")
    return true


def run_rate(path: Path, prior: float) -> tuple[float, float, float, list[dict[str, object]]]:
    """The real command in a fresh process: (wall seconds, CPU seconds, peak MB, JSON rows)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", "rate", str(path), "--format", "json", "--prior", f"{prior:g}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"arena rate failed ({proc.returncode}): {proc.stderr.strip()}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if usage.ru_maxrss <= before:
        print(f"  (peak memory of this run not above an earlier run's {before / 1024:.0f} MB)")
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    return seconds, cpu, usage.ru_maxrss / 1024.0, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000:40000,5000:1000000", help="bots:results pairs, smallest first")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sd", type=float, default=200.0, help="spread of the true ratings (Elo)")
    parser.add_argument("--draw-rate", type=float, default=0.1, help="draw probability between equals")
    parser.add_argument("--prior", type=float, default=DEFAULT_PRIOR, help="virtual draws per bot (the default prior)")
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in item.split(":")) for item in args.sizes.split(",")]
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cpus")
    print(f"seed {args.seed}, true sd {args.sd:g} Elo, draw rate {args.draw_rate:g} between equals, prior {args.prior:g}")
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (bots, results) in enumerate(sizes):
            path = Path(tmp) / f"league_{bots}_{results}.csv"
            true = write_league(path, bots, results, sd=args.sd, draw_rate=args.draw_rate, seed=args.seed + k)
            size_mb = path.stat().st_size / 2**20
            seconds, cpu, peak, rows = run_rate(path, args.prior)
            by_name = {row["name"]: row for row in rows}
            errors, hits, widths = [], 0, []
            for i in range(bots):
                row = by_name[f"bot{i:05d}"]
                elo, ci = row["elo"], row["ci95"]
                assert isinstance(elo, float) and isinstance(ci, float), row
                errors.append(elo - true[i])
                hits += abs(elo - true[i]) <= ci
                widths.append(ci)
            rmse = math.sqrt(float(np.mean(np.square(errors))))
            print(
                f"  {bots} bots, {results} results ({size_mb:.1f} MB CSV): 95% intervals cover {hits}/{bots} "
                f"= {100 * hits / bots:.1f}% of true ratings; mean ±{np.mean(widths):.0f} Elo, rmse {rmse:.0f} Elo"
            )
            print(f"  cpu time {cpu:.1f} s (wall {seconds:.1f} s; the difference is waiting for a core on a busy machine)")
            line = f"rate: {bots} bots, {results} results, {seconds:.1f} s, {peak:.0f} MB peak"
            print(line)
            lines.append(line)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(lines[-1])


if __name__ == "__main__":
    main()
