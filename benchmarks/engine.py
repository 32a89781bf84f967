"""Rules-core speed: random-versus-random 2-player hands, in-process, on one core.

Usage: python benchmarks/engine.py [--seconds S] [--warmup S]

Each hand is shuffled from its own seed, dealt, played to the end by two players choosing
uniformly among the legal moves (through the public API: legal_moves, apply), and scored.
The last line printed is ``N hands/s``.
"""

from __future__ import annotations

import argparse
import time

from arena.game import HandState
from arena.rules import Rules, Seating
from arena.seeding import Rng, derive_seed


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured warm-up time (default 1)")
    args = parser.parse_args()
    rules, seating, rng = Rules(), Seating.alone(2), Rng(1)

    seed = 0
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        play_hands(100, seed, rules, seating, rng)
        seed += 100

    hands = moves = 0
    start = time.perf_counter()
    while True:
        moves += play_hands(100, seed, rules, seating, rng)
        hands += 100
        seed += 100
        elapsed = time.perf_counter() - start
        if elapsed >= args.seconds:
            break
    print(f"{hands} hands, {moves} moves in {elapsed:.2f} s ({moves / elapsed:,.0f} moves/s)")
    print(f"{hands / elapsed:.0f} hands/s")


if __name__ == "__main__":
    main()
