"""Does the SPRT keep its error rates, and how many pairs does it save? Simulated pairs, no bots.

    python benchmarks/sprt.py                          # 600 runs per hypothesis, seed 20261201: a minute or two
    python benchmarks/sprt.py --runs 4000              # tighter intervals (docs/SPRT.md's points figures): about 7x as long
    python benchmarks/sprt.py --runs 4000 --seed 7 --jobs 8
    python benchmarks/sprt.py --elo0 0 --elo1 5 --model logistic
    python benchmarks/sprt.py --points-only --points1 0.3 --points-min-pairs 1   # the points metric without its guard

Pairs are drawn from known pentanomial distributions and fed to the test until it
stops: ``--runs`` tests where the true strength difference is exactly elo0 (every H1
accepted is a false positive) and ``--runs`` where it is exactly elo1 (every H1 accepted
counts towards the power). Then the points-per-hand metric the same way, on per-pair
margins drawn from a normal distribution.

What is assumed about Escoba (see docs/SPRT.md, "The benchmark"):

* matches to 21 practically never draw (0 draws in 800 games of random against random
  below; a draw needs ``max_hands``), so pairs fall in three bins: LL, one win and one
  loss (the DD bin), WW;
* between equal bots a pair is split (each side wins once: the same seat won both games,
  the deal decided) 66% of the time and each side wins both games 17%: measured on 300
  pairs of the expert bot (20 playouts) against itself with independent seeds (51 LL,
  197 split, 52 WW). Skill makes the deal matter more: 400 pairs of the random bot
  against itself were split only 52% of the time (95 LL, 210 split, 95 WW);
* the stronger side at elo1 keeps the share of decisive pairs (34%) and moves them from
  LL to WW until the distribution's Elo (normalized or logistic, per ``--model``) is
  exactly elo1;
* a pair's margin is a whole number of points over 20 hands (19.3 on average in the
  random pairs), drawn from a normal distribution with a standard deviation of 0.64
  points per hand (the experts' pairs; 0.66 for the random ones) and rounded; the margin
  at points1 is 0.05 points per hand.

The fixed match of equal power is the number of pairs a one-sided z-test on the mean
pair score needs for the same alpha and beta, with each hypothesis's own variance:
``n = ((z_(1-alpha) sd0 + z_(1-beta) sd1) / (mu1 - mu0))^2``.

The decision of each simulated run is computed as the sequential test computes it (the
first pair whose cumulative counts give an LLR at or past a bound), over all prefixes at
once with ``arena.sprt.llr_array``; ``--check`` runs are also replayed pair by pair through
``SprtState`` and must agree exactly. Two things make that fast: many runs go side by side,
so one ``llr_array`` call covers the prefixes of all of them (its cost is mostly iterations,
the same for few prefixes or many); and the exact LLR is computed only for prefixes whose
normal approximation is within 0.5 of a bound (the first 64 pairs always), since only
those can decide. The approximation is within 0.1 of the exact ratio for bounds like
[0, 10] and [0, 20]; a run that sees it off by more than 0.25 is done again with every
prefix exact, so the decisions are those of the exact ratio.

Runs are independent and spread over ``--jobs`` processes (default: one per core). Each run
draws from its own random stream, ``[seed, metric, hypothesis, run]``, so the figures depend
on the seed and the number of runs, never on the number of processes.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # a script run from anywhere
    sys.path.insert(0, str(ROOT))

from arena.sprt import (  # noqa: E402
    NELO_PER_T,
    DealPair,
    EloModel,
    SprtParams,
    SprtState,
    llr_array,
    score_to_elo,
)
from arena.sprt.points import POINTS_MIN_PAIRS, VARIANCE_FLOOR  # noqa: E402
from arena.sprt.stats import REGULARIZATION  # noqa: E402

PAIR_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])  # a pair's mean score per game, per bin
EQUAL_SPLIT = 0.66  # share of split pairs (one win, one loss) between equal bots
POINTS_SD = 0.64  # per-pair points-per-hand margin, standard deviation
PAIR_HANDS = 20  # hands in a pair's two matches (19.3 on average, random against random)
SAFETY_CAP = 400_000  # pairs; a run still undecided then is reported, never silently dropped
# Pairs drawn at a time: the LLR of every prefix of a chunk is computed in one call, and the
# pairs of a chunk past the decision are wasted; chunks grow by CHUNK_GROWTH up to CHUNK_MAX.
CHUNK_FIRST, CHUNK_GROWTH, CHUNK_MAX = 512, 1.5, 32768
METRIC_STREAMS = {"elo": 1, "points": 2}
DEFAULT_RUNS = 600
# The exact LLR is needed only near the bounds: prefixes whose approximate LLR is more than
# SCREEN_MARGIN inside both are skipped (the approximation is off by under 0.1 for bounds
# like [0, 10] and [0, 20] nElo; a run that sees it off by more than half the margin is
# done again with every prefix exact).
SCREEN_MARGIN = 0.5
SCREEN_EXACT_FIRST = 64
BATCH_MAX = 250  # runs simulated side by side: bounds the memory of a chunk's prefixes (about 50 MB)


def population_elo(probs: np.ndarray, model: EloModel) -> float:
    """The strength difference a pentanomial distribution has, in the model's Elo."""
    mu = float(probs @ PAIR_SCORES)
    if model is EloModel.LOGISTIC:
        return score_to_elo(mu)
    var = float(probs @ (PAIR_SCORES - mu) ** 2)
    return (mu - 0.5) / math.sqrt(2.0 * var) * NELO_PER_T


def escoba_pentanomial(elo: float, model: EloModel) -> np.ndarray:
    """LL, 0, split, 0, WW with the split share fixed and the decisive pairs shifted to reach ``elo``."""
    decisive = 1.0 - EQUAL_SPLIT

    def probs(shift: float) -> np.ndarray:
        return np.array([decisive / 2 - shift, 0.0, EQUAL_SPLIT, 0.0, decisive / 2 + shift])

    if elo == 0.0:
        return probs(0.0)
    edge = decisive / 2 - 1e-9
    shift = brentq(lambda s: population_elo(probs(s), model) - elo, -edge, edge, xtol=1e-15)
    return probs(shift)


def fixed_pairs(mu0: float, sd0: float, mu1: float, sd1: float, alpha: float, beta: float) -> int:
    """Pairs a fixed one-sided z-test needs for level alpha and power 1 - beta."""
    z = norm.ppf(1.0 - alpha) * sd0 + norm.ppf(1.0 - beta) * sd1
    return math.ceil((z / (mu1 - mu0)) ** 2)


def first_crossing(values: np.ndarray, lower: float, upper: float, start: int) -> tuple[int, str] | None:
    """Index (from ``start``) and side of the first value at or past a bound, if any."""
    hit = np.nonzero((values[start:] >= upper) | (values[start:] <= lower))[0]
    if hit.size == 0:
        return None
    i = start + int(hit[0])
    return i, "H1" if values[i] >= upper else "H0"


def approx_llr(prefix: np.ndarray, params: SprtParams) -> np.ndarray:
    """A cheap stand-in for the LLR of every prefix, used only to find where the exact one is
    needed: the normal (Brownian) approximation ``N (m1 - m0)(2 m - m0 - m1) / (2 var)`` on
    the regularized counts, with m the measure the model constrains (the t-value of the pair
    score for normalized Elo, its mean for logistic)."""
    counts = np.where(prefix == 0, REGULARIZATION, prefix.astype(np.float64))
    total = counts.sum(axis=1)
    w = counts / total[:, None]
    mu = w @ PAIR_SCORES
    var = w @ PAIR_SCORES**2 - mu * mu
    if params.model is EloModel.NORMALIZED:
        t0, t1 = (math.sqrt(2.0) * e / NELO_PER_T for e in (params.h0, params.h1))
        return total * (t1 - t0) * (2 * (mu - 0.5) / np.sqrt(var) - t0 - t1) / 2
    s0, s1 = (1.0 / (1.0 + 10 ** (-e / 400)) for e in (params.h0, params.h1))
    return total * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)


def chunk_llr(prefix: np.ndarray, params: SprtParams, screen: bool) -> tuple[np.ndarray, float]:
    """The exact LLR (``llr_array``) of every prefix that could be at or past a bound, NaN
    elsewhere; and the largest gap between the exact and the approximate LLR seen.

    With ``screen``, the exact LLR is computed only where the approximation is within
    SCREEN_MARGIN of a bound (and for the first SCREEN_EXACT_FIRST pairs of a run): the
    exact one is what decides, the approximation only skips prefixes far inside the bounds.
    The largest gap is checked by the caller: past half the margin, the run is done again
    exactly. Without ``screen``, every prefix is exact."""
    if not screen:
        return llr_array(prefix, params.h0, params.h1, params.model), 0.0
    lower, upper = params.bounds
    approx = approx_llr(prefix, params)
    n = prefix.sum(axis=1)
    near = (approx >= upper - SCREEN_MARGIN) | (approx <= lower + SCREEN_MARGIN) | (n <= SCREEN_EXACT_FIRST)
    exact = np.full(len(prefix), np.nan)
    gap = 0.0
    if near.any():
        exact[near] = llr_array(prefix[near], params.h0, params.h1, params.model)
        # The first pairs are always exact, however far off the approximation is there.
        judged = near & (n > SCREEN_EXACT_FIRST)
        if judged.any():
            gap = float(np.max(np.abs(exact[judged] - approx[judged])))
    return exact, gap


def run_elo(rng: np.random.Generator, probs: np.ndarray, params: SprtParams,
            screen: bool = True) -> tuple[str, int, np.ndarray]:
    """One simulated test: (decision, pairs at the decision, the bins drawn up to it)."""
    lower, upper = params.bounds
    state = rng.bit_generator.state
    counts = np.zeros(5, dtype=np.int64)
    drawn: list[np.ndarray] = []
    chunk, played = CHUNK_FIRST, 0
    while played < SAFETY_CAP:
        bins = rng.choice(5, size=chunk, p=probs)
        prefix = counts + np.cumsum(np.eye(5, dtype=np.int64)[bins], axis=0)
        ratios, gap = chunk_llr(prefix, params, screen)
        if gap > SCREEN_MARGIN / 2:
            # The approximation is too far off to trust its skips: the same run, every prefix exact.
            rng.bit_generator.state = state
            return run_elo(rng, probs, params, screen=False)
        drawn.append(bins)
        with np.errstate(invalid="ignore"):
            crossing = first_crossing(ratios, lower, upper, 0)
        if crossing is not None:
            i, decision = crossing
            return decision, played + i + 1, np.concatenate(drawn)[: played + i + 1]
        counts, played, chunk = prefix[-1], played + chunk, min(int(CHUNK_GROWTH * chunk), CHUNK_MAX)
    return "undecided", played, np.concatenate(drawn)


def run_points(rng: np.random.Generator, mean: float, params: SprtParams, min_pairs: int) -> tuple[str, int, np.ndarray]:
    """One simulated points-metric test, all prefixes at once: (decision, pairs, point differences drawn).

    A pair's point difference is a whole number over PAIR_HANDS hands, from a normal
    distribution rounded to whole points.
    """
    lower, upper = params.bounds
    diffs = np.rint(rng.normal(mean * PAIR_HANDS, POINTS_SD * PAIR_HANDS, size=SAFETY_CAP // 10))
    x = diffs / PAIR_HANDS
    n = np.arange(1, x.size + 1)
    total, squares = np.cumsum(x), np.cumsum(x * x)
    floor = n * VARIANCE_FLOOR * (params.h1 - params.h0) ** 2
    s0 = np.maximum(squares - 2 * params.h0 * total + n * params.h0**2, floor)
    s1 = np.maximum(squares - 2 * params.h1 * total + n * params.h1**2, floor)
    ratios = n / 2.0 * np.log(s0 / s1)
    crossing = first_crossing(ratios, lower, upper, min_pairs - 1)
    if crossing is None:
        return "undecided", x.size, diffs
    i, decision = crossing
    return decision, i + 1, diffs[: i + 1]


def replay_elo(bins: np.ndarray, params: SprtParams) -> tuple[str, int | None]:
    state = SprtState.start(params)
    for b in bins:
        state = state.add(DealPair(float(b) / 2.0))
        if state.finished:
            break
    return state.decision.value, state.decided_at


def replay_points(diffs: np.ndarray, params: SprtParams) -> tuple[str, int | None]:
    state = SprtState.start(params)
    for diff in diffs:
        state = state.add(DealPair(1.0, point_diff=int(diff), hands=PAIR_HANDS))
        if state.finished:
            break
    return state.decision.value, state.decided_at


def rate(hits: int, runs: int) -> str:
    """A proportion with its 95% Wilson interval (sensible at 0 and 1 too)."""
    z = 1.959963984540054
    p = hits / runs
    center = (p + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / (1 + z * z / runs)
    return f"{100 * p:.1f}% (95%: {100 * (center - half):.1f}-{100 * (center + half):.1f}%)"


def run_elo_batch(streams: list[list[int]], probs: np.ndarray, params: SprtParams) -> list[tuple[str, int, np.ndarray]]:
    """``run_elo`` for many runs at once, each on its own stream, with the same results: the
    runs still going draw their next chunk, and the exact LLR of all their prefixes near a
    bound is one ``llr_array`` call (its iterations cost the same for 500 prefixes or
    500,000, so batching is what makes the exact ratio cheap)."""
    lower, upper = params.bounds
    rngs = [np.random.default_rng(stream) for stream in streams]
    counts = np.zeros((len(streams), 5), dtype=np.int64)
    drawn: list[list[np.ndarray]] = [[] for _ in streams]
    results: list[tuple[str, int, np.ndarray] | None] = [None] * len(streams)
    active = list(range(len(streams)))
    chunk, played = CHUNK_FIRST, 0
    eye = np.eye(5, dtype=np.int64)
    while active and played < SAFETY_CAP:
        bins = np.stack([rngs[r].choice(5, size=chunk, p=probs) for r in active])
        prefix = counts[active][:, None, :] + np.cumsum(eye[bins], axis=1)
        ratios, _ = chunk_llr(prefix.reshape(-1, 5), params, screen=True)
        ratios = ratios.reshape(len(active), chunk)
        still = []
        for k, r in enumerate(active):
            drawn[r].append(bins[k])
            if _screen_gap(prefix[k], ratios[k], params) > SCREEN_MARGIN / 2:
                # The approximation is too far off to trust its skips: this run, every prefix exact.
                results[r] = run_elo(np.random.default_rng(streams[r]), probs, params, screen=False)
                continue
            with np.errstate(invalid="ignore"):
                crossing = first_crossing(ratios[k], lower, upper, 0)
            if crossing is None:
                still.append(r)
                continue
            i, decision = crossing
            results[r] = decision, played + i + 1, np.concatenate(drawn[r])[: played + i + 1]
        counts[active] = prefix[:, -1, :]
        active = still
        played, chunk = played + chunk, min(int(CHUNK_GROWTH * chunk), CHUNK_MAX)
    for r in active:
        results[r] = "undecided", played, np.concatenate(drawn[r])
    return [result for result in results if result is not None]


def _screen_gap(prefix: np.ndarray, exact: np.ndarray, params: SprtParams) -> float:
    """The largest gap between the exact and approximate LLR where both are known, past the first pairs."""
    judged = ~np.isnan(exact) & (prefix.sum(axis=1) > SCREEN_EXACT_FIRST)
    if not judged.any():
        return 0.0
    return float(np.max(np.abs(exact[judged] - approx_llr(prefix[judged], params))))


def one_batch(task: tuple[str, list[list[int]], Any, SprtParams, int, int]) -> list[tuple[str, int, np.ndarray | None]]:
    """Simulated tests, each on its own random stream (a process pool's task): per test its
    decision, the pairs it took, and what it drew for the first ``keep`` (to be replayed)."""
    metric, streams, truth, params, min_pairs, keep = task
    if metric == "elo":
        done = [run for i in range(0, len(streams), BATCH_MAX)
                for run in run_elo_batch(streams[i:i + BATCH_MAX], truth, params)]
    else:
        done = [run_points(np.random.default_rng(stream), truth, params, min_pairs) for stream in streams]
    return [(decision, pairs, sample if i < keep else None) for i, (decision, pairs, sample) in enumerate(done)]


def simulate(label: str, runs: int, truth0, truth1, params: SprtParams, replay, check: int, *, seed: int, pool,
             jobs: int, min_pairs: int = POINTS_MIN_PAIRS):
    """Run ``runs`` tests at each hypothesis; print and return (false positives, power, mean pairs)."""
    results = {}
    for h, (name, truth) in enumerate((("H0", truth0), ("H1", truth1))):
        streams = [[seed, METRIC_STREAMS[label], h, i] for i in range(runs)]
        # Contiguous batches, one per process: the replayed runs are the first of the first batch.
        size = -(-runs // jobs)
        tasks = [(label, streams[i:i + size], truth, params, min_pairs, check if i == 0 else 0)
                 for i in range(0, runs, size)]
        batches = pool.map(one_batch, tasks) if pool is not None else map(one_batch, tasks)
        decisions, lengths, samples = [], [], []
        for decision, pairs, sample in (run for batch in batches for run in batch):
            decisions.append(decision)
            lengths.append(pairs)
            if sample is not None:
                samples.append((decision, pairs, sample))
        for decision, pairs, sample in samples:
            replayed = replay(sample, params)
            if replayed != (decision, pairs):
                raise SystemExit(f"{label}: pair-by-pair replay gave {replayed}, the prefix computation {(decision, pairs)}")
        undecided = decisions.count("undecided")
        h1 = decisions.count("H1")
        lengths_a = np.array(lengths)
        results[name] = (h1, float(lengths_a.mean()))
        print(f"{label} at {params.names[0] if name == 'H0' else params.names[1]} = "
              f"{params.h0 if name == 'H0' else params.h1:g}: H1 accepted {rate(h1, runs)}, "
              f"pairs mean {lengths_a.mean():.0f}, median {np.median(lengths_a):.0f}, 95th percentile "
              f"{np.percentile(lengths_a, 95):.0f}, max {lengths_a.max()}"
              + (f", {undecided} undecided at {SAFETY_CAP} pairs" if undecided else ""))
    false_positives = results["H0"][0] / runs
    print(f"{label}: false positives {results['H0'][0]} of {runs} runs at {params.names[0]}, "
          f"{rate(results['H0'][0], runs)}; power {results['H1'][0]} of {runs} runs at {params.names[1]}, "
          f"{rate(results['H1'][0], runs)}")
    power = results["H1"][0] / runs
    mean_pairs = (results["H0"][1] + results["H1"][1]) / 2
    return false_positives, power, mean_pairs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                    help=f"simulated tests per hypothesis and metric (default {DEFAULT_RUNS}: a minute or two on 2 "
                         "cores; 4000: intervals about 2.6 times tighter, as docs/SPRT.md's points figures)")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--elo0", type=float, default=0.0)
    ap.add_argument("--elo1", type=float, default=10.0)
    ap.add_argument("--model", choices=[m.value for m in EloModel], default=EloModel.NORMALIZED.value)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--points1", type=float, default=0.05, help="points per hand under H1 (points0 is 0)")
    ap.add_argument("--check", type=int, default=2, help="runs per hypothesis also replayed through SprtState")
    ap.add_argument("--points-min-pairs", type=int, default=POINTS_MIN_PAIRS,
                    help=f"simulate the points metric with another minimum (the library's is {POINTS_MIN_PAIRS}; "
                         "no replay check then)")
    ap.add_argument("--points-only", action="store_true", help="skip the elo metric (the last line is then the points one)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes the runs are spread over (default: one per core); the figures do not depend on it")
    args = ap.parse_args(argv)
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            report(args, pool)
    else:
        report(args, None)


def report(args: argparse.Namespace, pool) -> None:
    # One stream per run, so --points-only reproduces the points lines of a full run.
    model = EloModel(args.model)
    params = SprtParams.elo(args.elo0, args.elo1, model=model, alpha=args.alpha, beta=args.beta)
    h0_probs, h1_probs = escoba_pentanomial(args.elo0, model), escoba_pentanomial(args.elo1, model)
    print(f"seed {args.seed}, {args.runs} runs per hypothesis on {args.jobs} processes, alpha {args.alpha}, beta {args.beta}, "
          f"LLR bounds ({params.bounds[0]:.3f}, {params.bounds[1]:.3f})")
    for name, probs in (("elo0", h0_probs), ("elo1", h1_probs)):
        print(f"pentanomial at {name} = {params.h0 if name == 'elo0' else params.h1:g} {model.value}: "
              f"LL {probs[0]:.4f}, split {probs[2]:.4f}, WW {probs[4]:.4f}")

    if not args.points_only:
        fp, power, pairs = simulate("elo", args.runs, h0_probs, h1_probs, params, replay_elo, args.check, seed=args.seed,
                                    pool=pool, jobs=args.jobs)
        mu0, mu1 = float(h0_probs @ PAIR_SCORES), float(h1_probs @ PAIR_SCORES)
        sd0 = math.sqrt(float(h0_probs @ (PAIR_SCORES - mu0) ** 2))
        sd1 = math.sqrt(float(h1_probs @ (PAIR_SCORES - mu1) ** 2))
        fixed = fixed_pairs(mu0, sd0, mu1, sd1, args.alpha, args.beta)

    points = SprtParams.points(0.0, args.points1, alpha=args.alpha, beta=args.beta)
    check = args.check if args.points_min_pairs == POINTS_MIN_PAIRS else 0
    pfp, ppower, ppairs = simulate("points", args.runs, 0.0, args.points1, points, replay_points, check, seed=args.seed,
                                   pool=pool, jobs=args.jobs, min_pairs=args.points_min_pairs)
    pfixed = fixed_pairs(0.0, POINTS_SD, args.points1, POINTS_SD, args.alpha, args.beta)
    print(f"points: false positives {100 * pfp:.1f}%, power {100 * ppower:.1f}%, pairs {ppairs:.0f} (fixed match {pfixed})"
          + (f", minimum {args.points_min_pairs} pairs" if args.points_min_pairs != POINTS_MIN_PAIRS else ""))
    if not args.points_only:
        print(f"sprt: false positives {100 * fp:.1f}%, power {100 * power:.1f}%, pairs {pairs:.0f} (fixed match {fixed})")


if __name__ == "__main__":
    main()
