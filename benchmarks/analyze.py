"""How fast is the analyst of ``arena analyze``, and how sure of itself at its default budget?

    python benchmarks/analyze.py                      # 120 decisions at the default budget and twice it
    python benchmarks/analyze.py --decisions 300 --playouts 100

Plays a few matches in-process (greedy against random, through the referee and the kit as bot
processes would; target 11), takes their first ``--decisions`` decisions and analyses each
twice, at ``--playouts`` deals (default: the analyst's, ANALYST_PLAYOUTS) and at twice that,
in this one process. Printed:

- decisions analysed per second at the budget, on the wall clock and per CPU second (the
  CPU time does not count the time a loaded machine kept the process waiting for a core);
- the agreement of the analyst with itself at twice the budget: how often the best move is
  the same (moves worth the same, by suit, count as one), how often the mark is the same,
  and the mean and 90th percentile of the difference of the loss of the played move.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from arena.analysis import ANALYST_PLAYOUTS, analyse, tasks  # noqa: E402
from arena.match.referee import play_match  # noqa: E402
from arena.rules import Rules, Seating  # noqa: E402
from bots import greedy_bot, random_bot  # noqa: E402
from bots.local import KitPlayer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=120, help="decisions to analyse (default 120)")
    parser.add_argument("--playouts", type=int, default=ANALYST_PLAYOUTS,
                        help=f"the budget (default: the analyst's, {ANALYST_PLAYOUTS}); compared with twice it")
    parser.add_argument("--seed", type=int, default=1, help="seed of the matches (default 1)")
    args = parser.parse_args()

    todo = []
    match = 0
    while len(todo) < args.decisions:
        seed = args.seed * 1000 + match
        players = [KitPlayer(greedy_bot.choose, "greedy", seed=seed), KitPlayer(random_bot.choose, "random", seed=seed + 1)]
        record = play_match(players, Rules(target=11), Seating.alone(2), seed)
        todo += tasks(f"m{match}", record)
        match += 1
    todo = todo[:args.decisions]
    print(f"{len(todo)} decisions from {match} matches (greedy against random, target 11), "
          f"budget {args.playouts} deals and {2 * args.playouts}")

    def timed(playouts: int) -> tuple[list, float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = [analyse(t, playouts) for t in todo]
        return out, time.perf_counter() - wall, time.process_time() - cpu

    once, wall, cpu = timed(args.playouts)
    print(f"at {args.playouts} deals: {len(todo) / wall:.1f} decisions/s (wall clock), "
          f"{len(todo) / cpu:.1f} per CPU second")
    twice, wall2, cpu2 = timed(2 * args.playouts)
    print(f"at {2 * args.playouts} deals: {len(todo) / wall2:.1f} decisions/s (wall clock), "
          f"{len(todo) / cpu2:.1f} per CPU second")
    same_best = sum(a.best == b.best for a, b in zip(once, twice, strict=True))
    same_mark = sum(a.mark == b.mark for a, b in zip(once, twice, strict=True))
    diffs = sorted(abs(a.loss - b.loss) for a, b in zip(once, twice, strict=True))
    p90 = diffs[int(0.9 * (len(diffs) - 1))]
    print(f"the same best move at twice the budget: {same_best}/{len(todo)} ({100 * same_best / len(todo):.0f}%); "
          f"the same mark: {same_mark}/{len(todo)} ({100 * same_mark / len(todo):.0f}%)")
    print(f"difference of the loss of the played move: mean {statistics.fmean(diffs):.3f}, 90th percentile {p90:.3f} points")


if __name__ == "__main__":
    main()
