"""A bot that thinks "until its time is up", on each clock, on an idle and on a loaded machine.

Usage: python benchmarks/clocks.py [--deals N] [--move-ms MS] [--burners N] [--seed S]

The expert (bots/expert_bot.py --timed) searches for half its ``time_ms`` on the clock the
arena times it by: its own CPU time on ``clock: cpu``, the wall clock on ``clock: wall``. It
plays greedy on N duplicate deals (each deal once from each seat, one hand per match) four
times: on each clock, with the machine as it is and with ``--burners`` processes that burn
CPU the whole time (the load). Printed per run: the expert's points per hand minus greedy's,
with its 95% interval, its mean time per move as the referee charged it (``ms`` of the
moves: CPU time on the cpu clock, wall time on the wall clock), the CPU time it really had
per move (its cgroup's count over the match), its timeouts, and the load average. Under
``cpu`` the idle and loaded figures should agree (the load takes nothing from its thinking);
under ``wall`` they need not (the load takes its CPU, and so its playouts).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from arena.harness.botproc import BotProcess, BotSpec, Limits  # noqa: E402
from arena.harness.protocol import Clock  # noqa: E402
from arena.match.record import PlayedBy  # noqa: E402
from arena.match.referee import play_match  # noqa: E402
from arena.rules import Rules, Seating  # noqa: E402
from arena.seeding import derive_seed  # noqa: E402


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """The mean and its 95% interval (normal approximation)."""
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.inf
    return mean, mean - half, mean + half


def run(clock: Clock, deals: int, move_ms: int, seed: int) -> dict[str, float]:
    limits = Limits(move_ms=move_ms, clock=clock)
    python = sys.executable
    expert = BotSpec.from_command(f"{python} {ROOT / 'bots/expert_bot.py'} --timed", name="expert", limits=limits)
    greedy = BotSpec.from_command(f"{python} {ROOT / 'bots/greedy_bot.py'}", name="greedy", limits=limits)
    rules = Rules.from_dict({"target": 1000, "max_hands": 1})  # a match is one hand
    seating = Seating.alone(2)
    bots = {"expert": BotProcess(expert), "greedy": BotProcess(greedy)}
    diffs: list[float] = []
    ms: list[float] = []
    cpu_ms = 0.0  # the expert's CPU time over its matches, as its cgroup counted it
    moves = 0
    timeouts = 0
    try:
        for i in range(deals):
            total = 0.0
            for expert_seat in (0, 1):
                order = [bots["expert"], bots["greedy"]] if expert_seat == 0 else [bots["greedy"], bots["expert"]]
                record = play_match(order, rules, seating, derive_seed(seed, "deal", i))
                scores = record.result.scores
                total += scores[expert_seat] - scores[1 - expert_seat]
                ms += [m.ms for m in record.moves if m.seat == expert_seat and m.by is PlayedBy.BOT and m.ms]
                cpu_ms += record.usage[expert_seat].cpu_ms
                moves += sum(m.seat == expert_seat for m in record.moves)
                timeouts += sum(f.seat == expert_seat and f.termination.value == "timeout" for f in record.failures)
            diffs.append(total / 2)
    finally:
        for bot in bots.values():
            bot.close()
    mean, low, high = mean_interval(diffs)
    return {"mean": mean, "low": low, "high": high, "ms": statistics.fmean(ms) if ms else 0.0,
            "cpu": cpu_ms / max(1, moves), "timeouts": timeouts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=60, help="duplicate deals per run (default 60)")
    parser.add_argument("--move-ms", type=int, default=100, help="move_ms of both bots (default 100)")
    parser.add_argument("--burners", type=int, default=6, help="CPU burners for the loaded runs (default 6)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; expert --timed vs greedy, move_ms {args.move_ms}, {args.deals} duplicate deals "
          f"per run, seed {args.seed}")
    for loaded in (False, True):
        burners = ([subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
                   if loaded else [])
        try:
            for clock in (Clock.CPU, Clock.WALL):
                started = time.monotonic()
                load = Path("/proc/loadavg").read_text().split()[0]
                out = run(clock, args.deals, args.move_ms, args.seed)
                print(f"{'loaded' if loaded else 'as is ':6} clock {clock.value:4}: points per hand "
                      f"{out['mean']:+.3f} [{out['low']:+.3f}, {out['high']:+.3f}]; expert's charged time per move "
                      f"{out['ms']:.1f} ms, its CPU per move {out['cpu']:.1f} ms; timeouts {out['timeouts']:.0f}; "
                      f"load average at the start {load}; "
                      f"{time.monotonic() - started:.0f} s", flush=True)
        finally:
            for proc in burners:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
