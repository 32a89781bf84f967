"""Do the rating intervals mean what they say? Coverage of the 95% intervals in simulation.

    .venv/bin/python benchmarks/calibration.py [--fields 150] [--bots 20] [--games 60] [--seed 7] [--prior 2]

For each table shape (1v1, 2v2 with partners drawn at random, 3 players alone, 4 players
alone, 3 teams of 2) it simulates ``--fields`` independent fields of ``--bots`` bots with
known strengths (normal, sd ``--sd`` natural-log units), each bot playing about ``--games``
matches against random opponents. A match's finishing order of its sides is drawn from the
model the fit assumes: Plackett-Luce on the sides' summed strengths (for two sides, the
Bradley-Terry game). Two-sided matches also draw (a draw between equals with probability
``--draw-rate``, the expected score kept at the Bradley-Terry value); the multi-side shapes
have no ties. Each field is rated with ``arena.rating.table.fit_ratings`` at the default prior,
and the script counts how often the 95% interval of a bot holds its true strength (centred
like the fit's, on the field's mean). It also checks LOS against the truth: among adjacent
pairs with LOS in a bin, how often the higher-ranked bot is truly stronger.

Printed, last line: ``calibration: 1v1 X%, 2v2 Y%, 3p Z%, 4p W%, 3x2 V%`` (target 93-97% each).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.rating.table import DEFAULT_PRIOR, ELO_PER_NAT, MatchResult, PairResult, Status, fit_ratings  # noqa: E402

# name: (sides per match, bots per side)
SHAPES = {"1v1": (2, 1), "2v2": (2, 2), "3p": (3, 1), "4p": (4, 1), "3x2": (3, 2)}


def simulate(
    rng: np.random.Generator, strengths: np.ndarray, sides: int, size: int, matches: int, draw_rate: float
) -> list[PairResult | MatchResult]:
    n = len(strengths)
    seats = np.argsort(rng.random((matches, n)), axis=1)[:, : sides * size].reshape(matches, sides, size)
    power = strengths[seats].sum(axis=2)  # (matches, sides)
    names = np.array([f"b{i:02d}" for i in range(n)], dtype=object)
    out: list[PairResult | MatchResult] = []
    if sides == 2:
        p = 1.0 / (1.0 + np.exp(-(power[:, 0] - power[:, 1])))
        p_draw = 4.0 * draw_rate * p * (1.0 - p)
        u = rng.random(matches)
        score = np.where(u < p - p_draw / 2.0, 1.0, np.where(u < p + p_draw / 2.0, 0.5, 0.0))
        for m in range(matches):
            out.append(PairResult(tuple(names[seats[m, 0]]), tuple(names[seats[m, 1]]), float(score[m])))
        return out
    # Plackett-Luce: sort by strength plus standard Gumbel noise (no ties).
    keys = power + rng.gumbel(size=power.shape)
    places = 1 + np.argsort(np.argsort(-keys, axis=1), axis=1)
    for m in range(matches):
        out.append(MatchResult(tuple(tuple(names[seats[m, s]]) for s in range(sides)), tuple(int(v) for v in places[m])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fields", type=int, default=150, help="independent fields per shape")
    parser.add_argument("--bots", type=int, default=20, help="bots per field")
    parser.add_argument("--games", type=int, default=60, help="matches per bot, about")
    parser.add_argument("--sd", type=float, default=1.0, help="spread of true strengths (natural-log units; 1 = 174 Elo)")
    parser.add_argument("--draw-rate", type=float, default=0.05, help="draw probability between equals (two sides)")
    parser.add_argument("--prior", type=float, default=DEFAULT_PRIOR)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of " + ", ".join(SHAPES))
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cpus")
    print(
        f"seed {args.seed}; per shape {args.fields} fields x {args.bots} bots, ~{args.games} matches per bot; "
        f"true sd {args.sd:g} nats ({args.sd * ELO_PER_NAT:.0f} Elo); prior {args.prior:g}; draw rate {args.draw_rate:g}"
    )
    figures = []
    bins = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0 + 1e-9])
    for shape in args.shapes.split(","):
        sides, size = SHAPES[shape]
        matches = max(1, round(args.games * args.bots / (sides * size)))
        hits = total = 0
        los_sum = np.zeros(len(bins) - 1)
        los_true = np.zeros(len(bins) - 1)
        los_n = np.zeros(len(bins) - 1)
        start = time.process_time()
        for _ in range(args.fields):
            strengths = rng.normal(0.0, args.sd, args.bots)
            table = fit_ratings(simulate(rng, strengths, sides, size, matches, args.draw_rate), prior=args.prior)
            true = (strengths - strengths.mean()) * ELO_PER_NAT
            for row in table.ratings:
                if row.status is not Status.RATED or row.ci95 is None or row.elo is None:
                    raise SystemExit(f"{shape}: {row.name} not rated ({row.status.value}: {row.note})")
                hits += abs(row.elo - true[int(row.name[1:])]) <= row.ci95
                total += 1
            for this, nxt in zip(table.ratings, table.ratings[1:], strict=False):
                if this.los_next is None:
                    continue
                k = int(np.searchsorted(bins, this.los_next, side="right")) - 1
                los_sum[k] += this.los_next
                los_true[k] += true[int(this.name[1:])] > true[int(nxt.name[1:])]
                los_n[k] += 1
        cpu = time.process_time() - start
        rate = 100.0 * hits / total
        se = 100.0 * math.sqrt(rate / 100 * (1 - rate / 100) / total)
        print(f"  {shape}: {hits}/{total} bots covered = {rate:.1f}% (se {se:.1f}); {matches} matches a field; {cpu:.1f} s cpu")
        los_text = ", ".join(
            f"{100 * los_sum[k] / los_n[k]:.0f}%->{100 * los_true[k] / los_n[k]:.0f}% (n={int(los_n[k])})"
            for k in range(len(los_n))
            if los_n[k]
        )
        print(f"      LOS next, mean predicted -> share truly stronger: {los_text}")
        figures.append(f"{shape} {rate:.1f}%")
    print("calibration: " + ", ".join(figures))


if __name__ == "__main__":
    main()
