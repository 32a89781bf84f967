"""What the expert lacks: the same search told the hidden cards, on the same duplicate deals.

    .venv/bin/python benchmarks/bounds.py --vs greedy --deals 300 --seed 1 --jobs 2

Three runs of the expert against ``--vs``, uncapped (``ms=10000``: each plays its whole budget
of playouts, so the runs are deterministic and differ only in what the search knows):

- ``expert``: as it plays;
- ``sees hand``: its deals keep the other seat's true hand; only the stock is shuffled;
- ``sees all``: its deals are the true position, the other hand and the stock's order too
  (the "all-seeing copy" of issue 35).

Printed: each run's points per hand (95% interval) and CPU per move, then each cheat's gain
over the expert, paired deal by deal, and the share of the all-seeing gain that the other
hand alone gives. The cheats live here only: the deals the search draws
(``arena.search.determinized.dealer``) are replaced, in each worker, by deals made from the true
position, which the in-process driver hands its view builder (``bots.local._view``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import run  # noqa: E402
from strength import mean_interval  # noqa: E402

from arena.core.game import HandState, SeatView  # noqa: E402
from arena.core.seeding import Rng  # noqa: E402
from arena.search import determinized  # noqa: E402
from arena.search.dealing import Dealer  # noqa: E402
from bots import local  # noqa: E402

MODES = ("expert", "sees hand", "sees all")
SPEC = "expert:ms=10000"

_truth: list[HandState] = []  # the position of the seat now choosing, as the driver holds it


def _cheat(mode: str) -> None:
    """Worker start: the search's deals made from the true position, as ``mode`` says."""
    if mode == "expert":
        return
    view_of = local._view
    fair_dealer = determinized.dealer

    def spying_view(hand: HandState, *args: Any) -> dict[str, Any]:
        _truth[:] = [hand]
        return view_of(hand, *args)

    def told_dealer(view: SeatView, rng: Rng, *args: Any, **kwargs: Any) -> Callable[[], HandState]:
        if not _truth or view.seating.players != 2:
            return fair_dealer(view, rng, *args, **kwargs)
        truth = _truth[0]
        base = Dealer(view, rng, None, None)
        other = 1 - view.seat
        hand = sorted(truth.hands[other])
        held = 0
        for c in hand:
            held |= c.bit
        stock = [c for c in view.unseen if not c.bit & held]

        def draw() -> HandState:
            world = base.template.copy()
            world.hands[other] = list(hand)
            if mode == "sees all":
                world.deck = truth.deck
            else:
                cards = stock[:]
                rng.shuffle(cards)
                world.deck = (*base.known, *hand, *cards)
            return world

        return draw

    local._view = spying_view  # type: ignore[assignment]
    determinized.dealer = told_dealer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs", default="greedy", help="the opponent (default greedy)")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    runs: dict[str, list[float]] = {}
    for mode in MODES:
        got = run(SPEC, args.vs, args.seed, args.deals, args.jobs, _cheat, (mode,))
        runs[mode] = got["diffs"]
        mean, low, high = mean_interval(got["diffs"])
        count, _, _, cpu_total, cpu_worst = got["times"][0]
        print(f"{mode} vs {args.vs} (seed {args.seed}, {args.deals} deals): {mean:+.3f} [{low:+.3f}, {high:+.3f}]; "
              f"CPU per move mean {1000 * cpu_total / max(1, count):.2f} ms, worst {1000 * cpu_worst:.2f} ms", flush=True)
    gains = {}
    for mode in MODES[1:]:
        pairs = [b - a for a, b in zip(runs["expert"], runs[mode], strict=True)]
        gains[mode] = gain, low, high = mean_interval(pairs)
        print(f"{mode} minus expert: {gain:+.3f} [{low:+.3f}, {high:+.3f}] ({sum(1 for p in pairs if p)} deals differ)")
    if gains["sees all"][0] > 0:
        print(f"the other hand alone: {gains['sees hand'][0] / gains['sees all'][0]:.0%} of what seeing all gains")
    return 0


if __name__ == "__main__":
    sys.exit(main())
