"""How many matches does each format need to rank a field? Round robin, swiss and ladder in
simulation, then a real run.

    .venv/bin/python benchmarks/formats.py [--bots 200] [--fields 4] [--sd-elo 350] [--window 16] [--seed 7]
    .venv/bin/python benchmarks/formats.py --real [--jobs 2]
    .venv/bin/python benchmarks/formats.py --scale [--scale-bots 1000]
    .venv/bin/python benchmarks/formats.py --oracles [--designs N ...] [--fits table ML] [--cap 0.8]
    .venv/bin/python benchmarks/formats.py --screen [--fields 12] [--seed 11] [--cap 0.5] [--sd-elo 700]

Simulation (no processes): ``--fields`` fields of ``--bots`` bots with known strengths
(normal, sd ``--sd-elo``). The arena's own schedules are played (``schedule.build_schedule``
for the round robin, ``adaptive.AdaptiveSchedule`` for swiss and ladder, the ladder with
``--window`` pairings chosen ahead of the results), each match a duplicate deal of two
matches, each match's result drawn from the rating model (Bradley-Terry on the true
strengths). After the round robin (one deal per pairing) the field is rated with
``arena.rating.table.fit_ratings`` and the Spearman rank correlation with the truth is its
target; swiss (round after round) and ladder (every ``--step`` matches) are rated as they
go until they reach it. The round robin's figure is its whole schedule: the arena plays it in
pairing order, so a round robin cut short is unbalanced and its correlation is only known at
the end; every format counts matches the same way (a pairing's duplicate deal is two
matches), and every format meets the same fields with the same stream of luck. Printed per
format: the matches needed (median over the fields) and the share of the round robin's.
The ladder's 95% intervals at that point are checked against the truth (coverage, target
93-97%), and so are those of ladders played to ``--target-ci`` (``--ci-fields`` fields of
``--ci-bots`` bots).

``--oracles``: on the same fields (same seed), designs that know the true strengths
(format_oracles.py: bands of true neighbours, partners drawn near in true rank with shares by
density, long-range pairings, a greedy design that removes the most expected inversions) and
the arena's ladder (with the same luck as above), each rated by the table's fit and by
alternatives for the final estimate only (the plain ML fit, a prior as wide as the true
field): the share of the round robin's matches each needs to reach its Spearman (checked
every ``--step`` matches up to ``--cap`` of the round robin's), and its error 1 - rho at a
third of the round robin's matches as a multiple of the round robin's error.

``--screen``: the ladder alone on the same fields with the same luck (field f is field f of
the first mode, the same seed), for many fields at a time: the share of the round robin's
matches it needs (every ``--step``, up to ``--cap``), its coverage then, and its error 1 - rho at
a quarter and a third of the round robin's matches as a multiple of the round robin's.

``--real``: 12 bots of known order (``mixbot.py P``: greedy with probability P, else a
hashed random move; P = 0, 1/11, ..., 1), a swiss of 6 rounds and a ladder of 96 matches,
each through ``arena run``; the Spearman correlation of the table's ranking with P.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.core.outcome import EndReason  # noqa: E402
from arena.harness.protocol import Termination  # noqa: E402
from arena.rating.table import ELO_PER_NAT, PairResult, RatingTable, fit_ratings  # noqa: E402
from arena.tournament.adaptive import AdaptiveSchedule  # noqa: E402
from arena.tournament.config import TournamentConfig, parse_config  # noqa: E402
from arena.tournament.executors import NOT_YET  # noqa: E402
from arena.tournament.schedule import MatchSpec, build_schedule  # noqa: E402
from arena.tournament.store import MatchRow  # noqa: E402


def config_of(n: int, extra: str) -> TournamentConfig:
    bots = "\n".join(f"  - {{name: b{i:03d}, cmd: x}}" for i in range(n))
    return parse_config(f"name: sim\nseed: 1\n{extra}\nbots:\n{bots}\n")


class Field:
    def __init__(self, rng: np.random.Generator, n: int, sd_elo: float) -> None:
        self.elo = rng.normal(0.0, sd_elo, n)
        # The results' draws come from their own stream, restarted for every format (``luck``),
        # so that the formats rank the same fields with the same luck whatever each consumed.
        self._seed = int(rng.integers(2**62))
        self.rng = np.random.default_rng(self._seed)
        self.results: list[PairResult] = []
        self.info = 0.0  # the true p(1-p) summed over the matches since ``luck``

    def p_win(self, a: int, b: int) -> float:
        return float(1.0 / (1.0 + 10 ** (-(self.elo[a] - self.elo[b]) / 400)))

    def play(self, a: int, b: int) -> None:
        """A pairing of bots numbered a and b: one duplicate deal, two matches."""
        p = self.p_win(a, b)
        for _ in range(2):
            win = self.rng.random() < p
            self.results.append(PairResult((f"b{a:03d}",), (f"b{b:03d}",), 1.0 if win else 0.0))
            self.info += p * (1 - p)

    def row(self, spec: MatchSpec) -> MatchRow:
        p = self.p_win(*(int(label[1:]) for label in spec.sides))
        win = self.rng.random() < p
        self.info += p * (1 - p)
        self.results.append(PairResult((spec.sides[0],), (spec.sides[1],), 1.0 if win else 0.0))
        return MatchRow(id=spec.id, index=spec.index, pairing=spec.pairing, deal=spec.deal, rotation=spec.rotation,
                        seed=spec.seed, sides=spec.sides, seats=spec.seats, winner=0 if win else 1,
                        scores=(21, 10) if win else (10, 21), reason=EndReason.TARGET,
                        terminations=(Termination.OK, Termination.OK), escobas=(0, 0), hands=3)

    def luck(self, stream: int) -> None:
        self.results.clear()
        self.info = 0.0
        self.rng = np.random.default_rng([self._seed, stream])

    def rate(self, upto: int | None = None) -> tuple[float, float]:
        """(Spearman with the truth, coverage of the 95% intervals) of the results so far (the
        first ``upto``)."""
        names = [f"b{i:03d}" for i in range(len(self.elo))]
        # Every bot, those yet to play too (a small step checks before a ladder has met them all).
        table = fit_ratings(self.results[:upto], players=names)
        by_name = {r.name: r for r in table.ratings}
        # A bot with no result yet has no rating: read as the prior's level, its interval the whole line.
        fitted = np.array([by_name[name].elo or 0.0 for name in names])
        ci = np.array([math.inf if by_name[name].ci95 is None else by_name[name].ci95 for name in names])
        truth = self.elo - self.elo.mean()
        rho = float(spearmanr(fitted, truth).statistic)
        return rho, float(np.mean(np.abs(fitted - truth) <= ci))


def round_robin(field: Field, config: TournamentConfig) -> tuple[int, float]:
    """The field's round robin, on its first stream of luck: its matches, and its Spearman with the
    truth, the target every other format is measured against."""
    field.luck(0)
    for spec in build_schedule(config):
        field.row(spec)
    return len(field.results), field.rate()[0]


def rank_rho(table: RatingTable, elo: np.ndarray) -> float:
    """Spearman of the table's ranking order with the truth (its order, not its numbers: the
    plain ML fit leaves a bot without an upset unbounded, yet ranked)."""
    position = {row.name: k for k, row in enumerate(table.ratings)}
    return float(spearmanr([-position[f"b{i:03d}"] for i in range(len(elo))], elo).statistic)


# The fits an oracle's (or the ladder's) results are rated by, for the final estimate only.
def fits(sd_elo: float, n: int) -> dict[str, Callable[[list[PairResult]], RatingTable]]:
    true_prior = 4.0 / (sd_elo / ELO_PER_NAT) ** 2  # virtual draws whose Gaussian has the field's sd
    players = [f"b{i:03d}" for i in range(n)]  # a bot yet to play is in the table all the same
    return {
        "table": lambda results: fit_ratings(results, players=players),
        "ML": lambda results: fit_ratings(results, prior=0.0, players=players),
        "true prior": lambda results: fit_ratings(results, prior=true_prior, players=players),
    }


def oracles(args: argparse.Namespace) -> None:
    """Designs that know the true strengths (format_oracles.py) and the arena's ladder, on the
    fields of ``simulate`` (same seed, same fields, the ladder with the same luck): the matches
    each needs to reach the round robin's Spearman (the round robin rated by the table's fit),
    rated by each of ``fits``; and each one's error 1 - rho at a third of the round robin's
    matches, as a multiple of the round robin's."""
    from benchmarks.format_oracles import arena_ladder, designs

    rng = np.random.default_rng(args.seed)
    n = args.bots
    rr_config = config_of(n, "format: round_robin")
    by_fit = {name: fit for name, fit in fits(args.sd_elo, n).items() if name in args.fits}
    need: dict[tuple[str, str], list[float]] = {}
    at_third: dict[tuple[str, str], list[float]] = {}
    infos: dict[str, list[float]] = {}
    start = time.process_time()
    for f in range(args.fields):
        field = Field(rng, n, args.sd_elo)
        field.luck(0)
        for spec in build_schedule(rr_config):
            field.row(spec)
        rr_matches = len(field.results)
        rr_info = field.info / rr_matches
        rr = {name: rank_rho(fit(field.results), field.elo) for name, fit in fits(args.sd_elo, n).items()}
        target = rr["table"]
        third = rr_matches // 3
        marks = sorted({*range(args.step, int(args.cap * rr_matches) + 1, args.step), third})
        print(f"  field {f}: round robin {rr_matches} matches, rho {target:.4f} (ML {rr['ML']:.4f}, true prior "
              f"{rr['true prior']:.4f}), p(1-p) a match {rr_info:.3f}", flush=True)
        ladder = arena_ladder(config_of(n, f"format: ladder\nmax_matches: {rr_matches}\nwindow: {args.window}"),
                              field.row)
        for s, named in enumerate(designs(ladder, n)):
            if args.designs and s not in args.designs:
                continue
            field.luck(2 if named.design is ladder else 10 + s)
            play = named.design(field, np.random.default_rng([args.seed, f, s]))
            reached: dict[str, int | None] = dict.fromkeys(by_fit)
            for mark in marks:
                if all(v is not None for v in reached.values()) and mark > third:
                    break
                while len(field.results) < mark and next(play, "end") is None:
                    pass
                if len(field.results) < mark:
                    break
                for name, fit in by_fit.items():
                    if reached[name] is not None and mark != third:
                        continue
                    rho = rank_rho(fit(field.results), field.elo)
                    if mark == third:
                        at_third.setdefault((named.name, name), []).append((1 - rho) / (1 - target))
                        if mark % args.step:
                            continue  # an extra checkpoint: the grid alone decides the matches needed
                    if reached[name] is None and rho >= target:
                        reached[name] = mark
                if mark == third:
                    infos.setdefault(named.name, []).append(field.info / len(field.results))
            for name, value in reached.items():
                need.setdefault((named.name, name), []).append(math.inf if value is None else value / rr_matches)
            shown = ", ".join(f"{name} {'-' if v is None else f'{v / rr_matches:.2f}'}" for name, v in reached.items())
            print(f"    {named.name}: {shown}; 1-rho at a third / round robin's: "
                  + ", ".join(f"{at_third[(named.name, name)][-1]:.2f}" for name in by_fit)
                  + f"; p(1-p) a match {infos[named.name][-1]:.3f}", flush=True)
    print(f"share of the round robin's matches to reach its rho (median, range over {args.fields} fields; "
          f"'-' and inf: not within {args.cap:g} of the round robin's count); 1-rho at a third as a multiple of "
          "the round robin's:")
    for (design, name), values in need.items():
        v = np.array(values)
        third_v = np.array(at_third[(design, name)])
        print(f"  {design:45s} {name:10s} {np.median(v):.3f} ({v.min():.3f}-{v.max():.3f}); "
              f"at a third {np.median(third_v):.2f}x ({third_v.min():.2f}-{third_v.max():.2f})")
    print(f"cpu {time.process_time() - start:.0f} s")


def play_adaptive(field: Field, config: TournamentConfig, checkpoints, target: float):  # type: ignore[no-untyped-def]
    """Play the format's choices; at each checkpoint (a count of matches) rate the field.
    Returns (matches when the rank correlation first reached ``target`` or None, last rho,
    coverage then, matches played, the widest running interval)."""
    schedule = AdaptiveSchedule(config)
    played, todo = 0, list(checkpoints)
    rho = cover = 0.0
    while todo:
        batch = schedule.next_batch()
        if batch is None:
            break
        if batch is NOT_YET or not isinstance(batch, list):
            raise SystemExit("waits with nothing in play")
        for spec in batch:
            schedule.add(field.row(spec))
            played += 1
            if played >= todo[0]:
                todo.pop(0)
                rho, cover = field.rate()
                if rho >= target:
                    return played, rho, cover, played
    rho, cover = field.rate()
    return (played if rho >= target else None), rho, cover, played


def simulate(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    n = args.bots
    rr_config = config_of(n, "format: round_robin")
    needs: dict[str, list[float]] = {"swiss": [], "ladder": []}
    covers: list[float] = []
    rr_matches = 0
    start = time.process_time()
    for f in range(args.fields):
        field = Field(rng, n, args.sd_elo)
        rr_matches, target = round_robin(field, rr_config)
        field.luck(1)
        per_round = n // 2 * 2
        swiss = config_of(n, f"format: swiss\nrounds: {n - 1}")
        s_need, s_rho, _, s_played = play_adaptive(field, swiss, [r * per_round for r in range(4, n, 4)], target)
        field.luck(2)
        ladder = config_of(n, f"format: ladder\nmax_matches: {rr_matches}\nwindow: {args.window}")
        l_need, l_rho, l_cover, l_played = play_adaptive(field, ladder, range(args.step, rr_matches + 1, args.step),
                                                          target)
        covers.append(l_cover)
        needs["swiss"].append(s_need if s_need is not None else math.inf)
        needs["ladder"].append(l_need if l_need is not None else math.inf)
        print(f"  field {f}: round robin {rr_matches} matches, rho {target:.4f}; swiss {s_need} (rho {s_rho:.4f}); "
              f"ladder {l_need} (rho {l_rho:.4f}, coverage {100 * l_cover:.1f}%)", flush=True)
    for name, values in needs.items():
        median = float(np.median(values))
        print(f"{name}: median {median:.0f} matches to the round robin's rank correlation, "
              f"{median / rr_matches:.2f} of the round robin's {rr_matches}")
    # A ladder that stops on its intervals: do they cover the truth?
    hits = total = 0
    played_ci = []
    for _ in range(args.ci_fields):
        field = Field(rng, args.ci_bots, args.sd_elo)
        ladder = config_of(args.ci_bots, f"format: ladder\ntarget_ci: {args.target_ci}\nwindow: {args.window}")
        schedule = AdaptiveSchedule(ladder)
        while isinstance(batch := schedule.next_batch(), list):
            for spec in batch:
                schedule.add(field.row(spec))
        table = fit_ratings(field.results)
        truth = field.elo - field.elo.mean()
        for r in table.ratings:
            hits += abs((r.elo or 0.0) - truth[int(r.name[1:])]) <= (r.ci95 or 0.0)
            total += 1
        widest = max(r.ci95 or 0.0 for r in table.ratings)
        played_ci.append((len(field.results), widest))
    coverage = f"coverage: ladder at the round robin's rank correlation {100 * float(np.mean(covers)):.1f}%"
    if total:  # --ci-fields 0 plays no such ladder: nothing to say of it
        rate = hits / total
        se = math.sqrt(rate * (1 - rate) / total)
        print(f"ladder target_ci {args.target_ci:g}: "
              f"{', '.join(f'{m} matches (widest fitted ci95 {w:.0f})' for m, w in played_ci)}")
        coverage += f"; ladder to target_ci {100 * rate:.1f}% (se {100 * se:.1f}, {total} bots)"
    print(coverage)
    print(f"cpu {time.process_time() - start:.0f} s")


def screen(args: argparse.Namespace) -> None:
    """The ladder alone, on ``--fields`` fields (the fields and luck of ``simulate``: field f
    here is field f there, its ladder the same choices and results): the matches it needs to
    reach the round robin's Spearman, checked every ``--step`` matches up to ``--cap`` of the
    round robin's, and its intervals' coverage then; and its error 1 - rho at a quarter and a
    third of the round robin's matches as a multiple of the round robin's (each field's own),
    a figure that no grid of checkpoints rounds. For many fields at a time: a change to the
    ladder is measured on fresh luck (``--seed``) in a third of ``simulate``'s time."""
    rng = np.random.default_rng(args.seed)
    n = args.bots
    rr_config = config_of(n, "format: round_robin")
    needs, covers, errors = [], [], []
    start = time.process_time()
    for f in range(args.fields):
        field = Field(rng, n, args.sd_elo)
        rr_matches, target = round_robin(field, rr_config)
        field.luck(2)
        schedule = AdaptiveSchedule(config_of(n, f"format: ladder\nmax_matches: {rr_matches}\nwindow: {args.window}"))
        cap = int(args.cap * rr_matches)
        while len(field.results) < cap and isinstance(batch := schedule.next_batch(), list):
            for spec in batch:
                schedule.add(field.row(spec))
        need, cover = math.inf, math.nan
        for mark in range(args.step, min(cap, len(field.results)) + 1, args.step):
            rho, at = field.rate(mark)
            if rho >= target:
                need, cover = mark / rr_matches, at
                covers.append(at)
                break
        needs.append(need)
        error = [(1 - field.rate(rr_matches // d)[0]) / (1 - target) for d in (4, 3)]
        errors.append(error)
        reached = (f"{need:.3f} of its matches (coverage {100 * cover:.1f}%)" if need < math.inf
                   else f"not within {args.cap:g} of its matches")
        print(f"  field {f}: round robin rho {target:.4f}; ladder {reached}; 1-rho at a quarter and a third of its "
              f"matches {error[0]:.2f}x, {error[1]:.2f}x", flush=True)
    v = np.array(needs)
    geo = np.exp(np.log(np.array(errors)).mean(axis=0))
    # A field not reached within the cap counts as more than it (inf): the median holds while most are reached.
    coverage = (f"{100 * float(np.mean(covers)):.1f}% ({100 * min(covers):.1f}-{100 * max(covers):.1f})" if covers
                else "- (no field reached)")
    print(f"ladder: median {np.median(v):.3f} of the round robin's matches ({v.min():.3f}-{v.max():.3f}; "
          f"{int(np.isfinite(v).sum())} of {len(v)} within {args.cap:g}); 1-rho at a quarter and a third, geometric "
          f"mean {geo[0]:.2f}x, {geo[1]:.2f}x; coverage {coverage}")
    print(f"cpu {time.process_time() - start:.0f} s")


def scale(args: argparse.Namespace) -> None:
    """A ladder of ``--scale-bots`` bots in-process (its chooser and its schedule, results drawn
    from the model): CPU per pick (the chooser's choice alone), per pairing chosen, played and
    learned (on average; the slowest since the last mark, and how many took 1 ms or more: the
    spread refit's work falls on the pairings learned after each ``REFIT_EVERY``); then, traced
    by tracemalloc (which slows it), the memory it holds as it goes."""
    import tracemalloc

    n = args.scale_bots
    for traced in (False, True):
        field = Field(np.random.default_rng(args.seed), n, args.sd_elo)
        field.luck(0)
        if traced:
            tracemalloc.start()  # before the ladder is made: what it allocates up front counts
        schedule = AdaptiveSchedule(config_of(n, "format: ladder\nmax_matches: 1000000\nwindow: 16"))
        chooser = schedule.chooser
        start = time.process_time()
        picking = 0.0
        slowest = 0.0
        over = 0  # pairings of 1 ms or more since the last mark
        for pairing in range(1, max(args.scale_marks) + 1):
            before = time.process_time()
            batch = schedule.next_batch()
            if not isinstance(batch, list):
                raise SystemExit("waits with nothing in play")
            for spec in batch:
                schedule.add(field.row(spec))
            took = time.process_time() - before
            slowest = max(slowest, took)
            over += took >= 1e-3
            field.results.clear()  # the benchmark's own list, not the ladder's memory
            if not traced and pairing % 10 == 0:
                before = time.process_time()
                chooser.pick()  # type: ignore[attr-defined]
                picking += time.process_time() - before
            if pairing not in args.scale_marks:
                continue
            cpu = time.process_time() - start - picking
            if traced:
                held, peak = tracemalloc.get_traced_memory()
                print(f"  {pairing:,} pairings: held {held / 1e6:.1f} MB (peak {peak / 1e6:.1f}), "
                      f"{int(chooser._counts.any(axis=1).sum()):,} pairs met", flush=True)  # type: ignore[attr-defined]
            else:
                print(f"{n} bots, {pairing:,} pairings: a pick {1e6 * picking / (pairing // 10):.0f} us CPU; a pairing "
                      f"chosen, played and learned {1e3 * cpu / pairing:.2f} ms (the slowest since the last mark "
                      f"{1e3 * slowest:.2f} ms; {over} of 1 ms or more)", flush=True)
                slowest, over = 0.0, 0
        if traced:
            tracemalloc.stop()
    hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(f"peak resident {int(hwm.split()[1]) / 1024:.0f} MB")


def real(args: argparse.Namespace) -> None:
    bots_dir = ROOT / "tests" / "data" / "tournament_bots"
    ps = [round(i / 11, 3) for i in range(12)]
    bots = "\n".join(f'  - {{name: p{p:.3f}, cmd: "$PYTHON mixbot.py {p}", cwd: "{bots_dir}"}}' for p in ps)
    arena = str(Path(sys.executable).with_name("arena"))
    for name, extra in (("swiss", "format: swiss\nrounds: 6"), ("ladder", "format: ladder\nmax_matches: 96\nwindow: 4")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{name}.yaml"
            path.write_text(f"name: {name}\nseed: {args.seed}\noutput: {tmp}/out\nconcurrency: {args.jobs}\n{extra}\n"
                            f"bots:\n{bots}\n")
            start = time.monotonic()
            done = subprocess.run([arena, "run", str(path), "--quiet", "--no-report"], capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(done.stdout + done.stderr)
            wall = time.monotonic() - start
            table = subprocess.run([arena, "table", f"{tmp}/out", "--format", "csv"], capture_output=True, text=True)
            lines = table.stdout.strip().splitlines()
            header = lines[0].split(",")
            rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:]]
            elo = [float(r["elo"]) for r in rows]
            p = [float(r["name"][1:]) for r in rows]
            matches = sum(int(r["matches"]) for r in rows) // 2
            rho = float(spearmanr(elo, p).statistic)
            print(f"real {name}: {matches} matches in {wall:.0f} s at concurrency {args.jobs}; Spearman of the "
                  f"ratings with P: {rho:.3f}; order: {' '.join(r['name'] for r in rows)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--fields", type=int, default=4)
    parser.add_argument("--sd-elo", type=float, default=350.0, help="spread of the true strengths, Elo")
    parser.add_argument("--window", type=int, default=16)
    parser.add_argument("--step", type=int, default=1000, help="matches between the ladder's ratings")
    parser.add_argument("--target-ci", type=float, default=100.0)
    parser.add_argument("--ci-bots", type=int, default=50, help="bots of the fields a ladder plays to --target-ci")
    parser.add_argument("--ci-fields", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--real", action="store_true", help="the run of 12 real bots instead")
    parser.add_argument("--scale", action="store_true", help="a large ladder's cost per pairing and memory instead")
    parser.add_argument("--scale-bots", type=int, default=1000)
    parser.add_argument("--scale-marks", type=int, nargs="+", default=[5000, 20000, 40000])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--oracles", action="store_true", help="designs that know the strengths, and fits (format_oracles.py)")
    parser.add_argument("--designs", type=int, nargs="*", default=[], help="with --oracles: only these (numbers)")
    parser.add_argument("--fits", nargs="+", default=["table", "ML"], choices=["table", "ML", "true prior"],
                        help="with --oracles: the fits of the final estimate")
    parser.add_argument("--cap", type=float, default=1.0, help="with --oracles or --screen: the most matches a design "
                        "plays, as a share of the round robin's")
    parser.add_argument("--screen", action="store_true", help="the ladder alone on many fields, with its error at a "
                        "quarter and a third of the round robin's matches")
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cpus")
    if args.real:
        real(args)
        return
    if args.scale:
        scale(args)
        return
    if args.oracles:
        oracles(args)
        return
    print(f"seed {args.seed}; {args.fields} fields x {args.bots} bots, true sd {args.sd_elo:g} Elo "
          f"({args.sd_elo / ELO_PER_NAT:.2f} nats); ladder window {args.window}")
    if args.screen:
        screen(args)
        return
    simulate(args)


if __name__ == "__main__":
    main()
