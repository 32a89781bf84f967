"""Rules-core speed: random-versus-random 2-player hands, in-process, on one core.

Usage: python benchmarks/engine.py [--seconds S] [--warmup S] [--playout-seconds S]

Each hand is shuffled from its own seed, dealt, played to the end by two players choosing
uniformly among the legal moves (through the public API: legal_moves, apply), and scored.

Then the playouts the expert bot gets per second, in-process: its own search
(bots/expert_bot.py ``search``, each playout a determinized deal played on by its greedy
playout policy and evaluated) on real positions, the decisions met in hands that policy plays
against itself. Skipped with ``--playout-seconds 0``.

Both figures are wall-clock rates: on a busy machine they fall with the share of a core the
process gets. The hands are also timed in CPU time (``time.process_time``), which waiting for
a core does not count: the steadier figure on a shared machine. The last line printed is
``N hands/s`` (wall clock).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The bots package sits at the root, found from anywhere; the arena is the installed one where
# there is one (``pip install .`` compiles the rules core's hand, setup.py), else this checkout's.
# The first line printed says which.
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from arena_build import arena_build  # noqa: E402

from arena.game import (  # noqa: E402
    HandState,
    Move,  # noqa: E402
    SeatView,
    hand_view,
)
from arena.rules import Rules, Seating  # noqa: E402
from arena.seeding import Rng, derive_seed  # noqa: E402


def play_hands(count: int, first_seed: int, rules: Rules, seating: Seating, rng: Rng) -> int:
    moves_played = 0
    for i in range(first_seed, first_seed + count):
        hand = HandState.shuffled(rules, seating, i % 2, derive_seed(2024, "bench", i))
        while not hand.is_over:
            moves = hand.legal_moves()
            hand.apply(moves[rng.below(len(moves))])
            moves_played += 1
        hand.points()
    return moves_played


def expert_positions(count: int, rules: Rules, seating: Seating) -> list[tuple[SeatView, list[Move]]]:
    """The first ``count`` decisions with a choice met in hands the expert's greedy playout
    policy plays against itself: each as the view of the seat to play and its legal moves."""
    from bots.expert_bot import playout

    positions: list[tuple[SeatView, list[Move]]] = []
    i = 0
    while len(positions) < count:
        hand = HandState.shuffled(rules, seating, i % 2, derive_seed(2024, "positions", i))
        i += 1
        while not hand.is_over and len(positions) < count:
            legal = hand.legal_moves()
            if len(legal) > 1:
                positions.append((hand_view(hand, hand.turn, [0] * seating.sides, ()), list(legal)))
            playout(hand, hand.round - 1)  # through no round: exactly one greedy move
    return positions


def expert_playouts(seconds: float, rules: Rules, seating: Seating) -> tuple[int, int, float]:
    """(playouts, positions searched, seconds): the expert's search, position after position."""
    from bots.expert_bot import search

    positions = expert_positions(500, rules, seating)
    rng = Rng(7)
    playouts = searched = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        view, legal = positions[searched % len(positions)]
        _, _, deals = search(view, legal, rng, 60.0, 200)
        playouts += sum(deals)
        searched += 1
        elapsed = time.perf_counter() - start
    return playouts, searched, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured warm-up time (default 1)")
    parser.add_argument("--playout-seconds", type=float, default=3.0,
                        help="measured time of the expert's playouts (default 3; 0 skips them)")
    args = parser.parse_args()
    rules, seating, rng = Rules(), Seating.alone(2), Rng(1)
    print(f"arena: {arena_build()}")

    seed = 0
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        play_hands(100, seed, rules, seating, rng)
        seed += 100

    hands = moves = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while True:
        moves += play_hands(100, seed, rules, seating, rng)
        hands += 100
        seed += 100
        elapsed = time.perf_counter() - start
        if elapsed >= args.seconds:
            break
    cpu = time.process_time() - cpu_start
    if args.playout_seconds > 0:
        playouts, searched, spent = expert_playouts(args.playout_seconds, rules, seating)
        print(f"expert: {playouts / spent:,.0f} playouts/s in-process ({playouts} playouts searching "
              f"{searched} real positions in {spent:.2f} s)")
    print(f"{hands} hands, {moves} moves in {elapsed:.2f} s ({moves / elapsed:,.0f} moves/s); "
          f"{hands / cpu:.0f} hands per CPU second")
    print(f"{hands / elapsed:.0f} hands/s")


if __name__ == "__main__":
    main()
