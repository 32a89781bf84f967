"""How much stronger is one bot than another? Duplicate deals, in-process, through the rules core.

    python benchmarks/strength.py expert greedy --deals 1000 --jobs 2
    python benchmarks/strength.py greedy random --deals 2000 --seed 7
    python benchmarks/strength.py expert:ms=30 greedy --deals 200 --seating pairs --rule forced_capture=true
    python benchmarks/strength.py "cmd:node bots/js/bot.js" "cmd:python3 bots/greedy_bot.py" --deals 100
    python benchmarks/strength.py "cmd:./bots/c/greedy.bin" greedy --deals 100

Each deal (a shuffled deck and a dealer, both from the seed) is played twice as a single
hand, the second time with the bots in each other's seats, so the luck of the cards cancels.
Printed: the mean point difference per hand (A minus B) with its 95% interval over deals,
the win rate of A over full matches (also played in seat-swapped pairs; a draw counts half)
and each bot's mean and worst time per move.

Bots: ``random``, ``greedy``, ``expert`` (its settings as
``expert:ms=90,playouts=2000,horizon=0,infer=1,wary=1,endgame=1``),
each played in-process through the same kit code (bots/kit/escoba_kit.py) a real bot process
runs: fast enough for thousands of deals. Or ``cmd:COMMAND``: a real bot process through the
referee (each deal is then a match of exactly one hand), for bots in any language; against
it, a bot of the first kind plays through the same referee, fed the same lines in-process.
Times are measured in-process, on the wall clock and as CPU time: on a busy machine the wall
clock also counts the time the process waited for a core, the CPU time does not.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The bots package sits at the root, found from anywhere; the arena is the installed one where
# there is one (its rules core compiled by ``pip install .``: the times per move a user sees),
# else this checkout's. The first line printed says which.
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from arena_build import arena_build  # noqa: E402

from arena.match.record import PlayedBy  # noqa: E402
from arena.rules import Rules, Seating  # noqa: E402
from arena.seeding import derive_seed  # noqa: E402
from bots import expert_bot, greedy_bot, local, random_bot  # noqa: E402

BOTS = ("random", "greedy", "expert")


def make_policy(spec: str) -> Any:
    """``random``, ``greedy`` or ``expert[:key=value,...]`` as a kit policy."""
    name, _, params = spec.partition(":")
    settings: dict[str, float] = {}
    for item in filter(None, params.split(",")):
        key, _, value = item.partition("=")
        settings[key.strip()] = float(value)
    if name == "random" and not settings:
        return random_bot.choose
    if name == "greedy" and not settings:
        return greedy_bot.choose
    if name == "expert":
        allowed = {"ms", "playouts", "infer", "horizon", "wary", "endgame", "tree", "extra", "split", "analyst", "after", "tail"}
        unknown = set(settings) - allowed
        if unknown:
            raise ValueError(f"expert settings: unknown {', '.join(sorted(unknown))} "
                             f"(allowed: {', '.join(sorted(allowed))})")
        if "playouts" in settings:
            settings["playouts"] = int(settings["playouts"])
        for count in ("extra", "after"):
            if count in settings:
                settings[count] = int(settings[count])
        if "horizon" in settings:
            settings["horizon"] = int(settings["horizon"])
        for flag in ("infer", "wary", "endgame", "tree", "split", "analyst", "tail"):
            if flag in settings:
                settings[flag] = bool(settings[flag])
        return expert_bot.Expert(**settings)  # type: ignore[arg-type]
    raise ValueError(f"unknown bot {spec!r}: expected one of {', '.join(BOTS)} (expert may take settings)")


def seats_of(seating: Seating, first: bool) -> list[int]:
    """Which bot (0 = A, 1 = B) sits in each seat: A on side 0 when ``first``, else on side 1."""
    return [(seating.side_of(s) + (0 if first else 1)) % 2 for s in range(seating.players)]


def _no_times() -> list[list[float]]:
    return [[0, 0.0, 0.0, 0.0, 0.0], [0, 0.0, 0.0, 0.0, 0.0]]


def _timings(outcome: local.Outcome, owner: list[int]) -> list[list[float]]:
    """[count, wall total, wall worst, cpu total, cpu worst] per bot."""
    out = _no_times()
    for seat, t in enumerate(outcome.timings):
        _merge([out[owner[seat]]], [[t.count, t.total, t.worst, t.cpu_total, t.cpu_worst]])
    return out


def _merge(into: list[list[float]], more: list[list[float]]) -> None:
    for a, b in zip(into, more, strict=False):
        a[0] += b[0]
        a[1] += b[1]
        a[2] = max(a[2], b[2])
        a[3] += b[3]
        a[4] = max(a[4], b[4])


def play_deals(job: tuple[Any, ...]) -> dict[str, Any]:
    """Worker: the duplicate deals ``indexes`` -> per-deal mean difference (A minus B) and times."""
    spec_a, spec_b, rules_dict, seating_dict, seed, indexes = job
    rules, seating = Rules.from_dict(rules_dict), Seating.from_dict(seating_dict)
    policies = (make_policy(spec_a), make_policy(spec_b))
    diffs = []
    times = _no_times()
    for i in indexes:
        hand_seed = derive_seed(seed, "deal", i)
        dealer = derive_seed(seed, "dealer", i) % seating.players
        total = 0.0
        for first in (True, False):
            owner = seats_of(seating, first)
            outcome = local.play_hand([policies[o] for o in owner], rules, seating, dealer, hand_seed,
                                      policy_seeds=[derive_seed(seed, "bot", i, s) for s in range(seating.players)])
            points = outcome.state.points()
            side_a = 0 if first else 1
            total += points[side_a] - points[1 - side_a]
            _merge(times, _timings(outcome, owner))
        diffs.append(total / 2)
    return {"diffs": diffs, "times": times}


def _outcome_for_a(winner: int | None, a_first: bool) -> str:
    """A's side is 0 when A sat first, else 1: its result as a tally key."""
    if winner is None:
        return "draws"
    return "wins" if winner == (0 if a_first else 1) else "losses"


def play_matches(job: tuple[Any, ...]) -> dict[str, Any]:
    """Worker: full matches in seat-swapped pairs -> A's wins, draws, losses and times."""
    spec_a, spec_b, rules_dict, seating_dict, seed, indexes = job
    rules, seating = Rules.from_dict(rules_dict), Seating.from_dict(seating_dict)
    policies = (make_policy(spec_a), make_policy(spec_b))
    tally = {"wins": 0, "draws": 0, "losses": 0}
    times = _no_times()
    for i in indexes:
        match_seed = derive_seed(seed, "match", i)
        for first in (True, False):
            owner = seats_of(seating, first)
            outcome = local.play_match([policies[o] for o in owner], rules, seating, match_seed,
                                       policy_seeds=[derive_seed(seed, "mbot", i, s) for s in range(seating.players)])
            tally[_outcome_for_a(outcome.state.result.winner, first)] += 1
            _merge(times, _timings(outcome, owner))
    return {**tally, "times": times}


# --- real bot processes through the referee ----------------------------------------------


def _command(spec: str) -> str | None:
    return spec[len("cmd:"):] if spec.startswith("cmd:") else None


def _open_bots(job: tuple[Any, ...], seating: Seating) -> dict[int, list[Any]]:
    """Per bot (0 = A, 1 = B), a player for each seat its side holds: a process for a
    ``cmd:`` bot, else its kit policy in this process, fed the same lines (``local.KitPlayer``),
    so that a bot process can be measured against an in-process one."""
    from arena.harness.botproc import BotProcess, BotSpec, Limits

    spec_a, spec_b, move_ms = job[0], job[1], job[6]
    per_side = seating.players // 2
    limits = Limits(move_ms=move_ms)

    def player(spec: str, name: str) -> Any:
        command = _command(spec)
        if command is None:
            return local.KitPlayer(make_policy(spec), name, limits)
        return BotProcess(BotSpec.from_command(command, name=name, limits=limits))

    return {o: [player(spec, f"{'AB'[o]}{k}") for k in range(per_side)] for o, spec in enumerate((spec_a, spec_b))}


def _referee_match(bots: dict[int, list[Any]], owner: list[int], rules: Rules, seating: Seating, seed: int,
                   times: list[list[float]]) -> Any:
    from arena.match.referee import play_match

    used = [0, 0]
    players = []
    for o in owner:
        players.append(bots[o][used[o]])
        used[o] += 1
    record = play_match(players, rules, seating, seed)
    for m in record.moves:
        if m.by is PlayedBy.BOT and m.ms is not None:
            seconds = m.ms / 1000
            _merge([times[owner[m.seat]]], [[1, seconds, seconds, 0.0, 0.0]])
    return record


def play_deals_procs(job: tuple[Any, ...]) -> dict[str, Any]:
    """Like ``play_deals`` with bot processes: each deal is a match of exactly one hand."""
    spec_a, spec_b, rules_dict, seating_dict, seed, indexes, move_ms = job
    seating = Seating.from_dict(seating_dict)
    rules = Rules.from_dict({**rules_dict, "target": 1000, "max_hands": 1})
    bots = _open_bots(job, seating)
    diffs: list[float] = []
    failures: list[dict[str, Any]] = []
    times = _no_times()
    try:
        for i in indexes:
            total = 0.0
            for first in (True, False):
                record = _referee_match(bots, seats_of(seating, first), rules, seating, derive_seed(seed, "deal", i),
                                        times)
                failures.extend(f.to_dict() for f in record.failures)
                side_a = 0 if first else 1
                total += record.result.scores[side_a] - record.result.scores[1 - side_a]
            diffs.append(total / 2)
    finally:
        for group in bots.values():
            for bot in group:
                bot.close()
    return {"diffs": diffs, "times": times, "failures": failures}


def play_matches_procs(job: tuple[Any, ...]) -> dict[str, Any]:
    """Like ``play_matches`` with bot processes through the referee."""
    spec_a, spec_b, rules_dict, seating_dict, seed, indexes, move_ms = job
    seating, rules = Seating.from_dict(seating_dict), Rules.from_dict(rules_dict)
    bots = _open_bots(job, seating)
    tally = {"wins": 0, "draws": 0, "losses": 0}
    failures: list[dict[str, Any]] = []
    times = _no_times()
    try:
        for i in indexes:
            for first in (True, False):
                record = _referee_match(bots, seats_of(seating, first), rules, seating,
                                        derive_seed(seed, "match", i), times)
                failures.extend(f.to_dict() for f in record.failures)
                tally[_outcome_for_a(record.result.winner, first)] += 1
    finally:
        for group in bots.values():
            for bot in group:
                bot.close()
    return {**tally, "times": times, "failures": failures}


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% interval (normal approximation; fine for hundreds of deals)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, mean, mean
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = 1.96 * math.sqrt(var / n)
    return mean, mean - half, mean + half


def _chunks(n: int, parts: int) -> list[list[int]]:
    return [list(range(k, n, parts)) for k in range(parts) if k < n]


def _run(worker: Any, jobs: list[tuple[Any, ...]], processes: int,
         progress: Callable[[list[dict[str, Any]]], None] | None = None) -> list[dict[str, Any]]:
    """Every job's result (in the order they finish), with ``progress`` told after each."""
    results: list[dict[str, Any]] = []
    if processes <= 1:
        parts: Iterable[dict[str, Any]] = map(worker, jobs)
        for part in parts:
            results.append(part)
            if progress:
                progress(results)
        return results
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        for part in pool.imap_unordered(worker, jobs):
            results.append(part)
            if progress:
                progress(results)
    return results


def _deals_progress(total: int) -> Callable[[list[dict[str, Any]]], None]:
    """A line on stderr per finished chunk of deals: a long run shows its figure so far (each
    chunk is spread over the whole range of deals, so a partial figure is a fair sample)."""
    def show(parts: list[dict[str, Any]]) -> None:
        diffs = [d for part in parts for d in part["diffs"]]
        mean, low, high = mean_interval(diffs)
        print(f"  {len(diffs)}/{total} deals: {mean:+.3f} points per hand [{low:+.3f}, {high:+.3f}]",
              file=sys.stderr, flush=True)
    return show


def parse_rule(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"--rule {text!r}: expected NAME=VALUE")
    lowered = value.strip().lower()
    parsed: Any = value.strip()
    if lowered in ("true", "false"):
        parsed = lowered == "true"
    elif lowered.isdigit():
        parsed = int(lowered)
    return key.strip(), parsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bot_a", help="random, greedy or expert[:ms=90,playouts=2000,horizon=0,infer=1,wary=1,endgame=1], "
                                      "or cmd:COMMAND for a bot process played through the referee")
    parser.add_argument("bot_b")
    parser.add_argument("--move-ms", type=int, default=2000, help="time per decision for bot processes")
    parser.add_argument("--deals", type=int, default=1000, help="duplicate deals (each played twice)")
    parser.add_argument("--matches", type=int, default=None,
                        help="seat-swapped pairs of full matches for the win rate (default: deals/10, at least 10)")
    parser.add_argument("--seed", type=int, default=1, help="master seed of every deal and match")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--seating", choices=("2", "pairs"), default="2", help="1v1, or 4 players in pairs")
    parser.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="a rule option")
    args = parser.parse_args(argv)
    procs = [_command(spec) is not None for spec in (args.bot_a, args.bot_b)]
    try:
        rules = Rules.from_dict(dict(parse_rule(r) for r in args.rule))
        for spec, is_proc in zip((args.bot_a, args.bot_b), procs, strict=False):
            if is_proc and not (_command(spec) or "").strip():
                raise ValueError(f"{spec!r}: the command is empty")
            if not is_proc:
                make_policy(spec)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.deals < 1:
        print("error: --deals must be at least 1", file=sys.stderr)
        return 2
    seating = Seating.alone(2) if args.seating == "2" else Seating.pairs(4)
    matches = args.matches if args.matches is not None else max(10, args.deals // 10)
    jobs = max(1, args.jobs)
    base = (args.bot_a, args.bot_b, rules.to_dict(), seating.to_dict(), args.seed)
    if any(procs):
        # Through the referee (an in-process side too); one chunk per job: each starts its own processes.
        deal_worker, match_worker, parts = play_deals_procs, play_matches_procs, jobs
        extra: tuple[Any, ...] = (args.move_ms,)
    else:
        # Small chunks, so that the progress lines come often enough on a long run.
        deal_worker, match_worker, parts = play_deals, play_matches, jobs * 20
        extra = ()

    print(f"arena: {arena_build()}", flush=True)
    t0 = time.monotonic()
    deal_parts = _run(deal_worker, [base + (idx,) + extra for idx in _chunks(args.deals, parts)], jobs,
                      _deals_progress(args.deals))
    t1 = time.monotonic()
    match_parts = (_run(match_worker, [base + (idx,) + extra for idx in _chunks(matches, parts)], jobs)
                   if matches else [])
    t2 = time.monotonic()

    diffs = [d for part in deal_parts for d in part["diffs"]]
    times = _no_times()
    for part in deal_parts + match_parts:
        _merge(times, part["times"])
    mean, low, high = mean_interval(diffs)
    wins = sum(p["wins"] for p in match_parts)
    draws = sum(p["draws"] for p in match_parts)
    losses = sum(p["losses"] for p in match_parts)
    played = wins + draws + losses
    a, b = args.bot_a, args.bot_b
    print(f"{a} vs {b}: seed {args.seed}, seating {args.seating}, rules {rules.to_dict()}")
    print(f"points per hand ({a} minus {b}) over {len(diffs)} duplicate deals ({2 * len(diffs)} hands): "
          f"{mean:+.3f}  95% interval [{low:+.3f}, {high:+.3f}]   ({t1 - t0:.0f} s)")
    if played:
        print(f"match win rate of {a}: {(wins + draws / 2) / played:.1%} over {played} matches "
              f"({wins} won, {draws} drawn, {losses} lost; target {rules.target})   ({t2 - t1:.0f} s)")
    for name, (count, total, worst, cpu_total, cpu_worst) in zip((a, b), times, strict=False):
        if count:
            cpu = ("as the referee measured it, with the pipe round trip" if any(procs) else
                   f"CPU: mean {1000 * cpu_total / count:.2f} ms, worst {1000 * cpu_worst:.2f} ms")
            print(f"time per move, {name}: mean {1000 * total / count:.2f} ms, worst {1000 * worst:.2f} ms "
                  f"({cpu}) over {int(count)} moves")
    failures = [f for part in deal_parts + match_parts for f in part.get("failures", ())]
    if any(procs):
        print(f"bot failures: {len(failures)}" + "".join(f"\n  {f}" for f in failures[:10]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
