"""A bot with one planted blunder, for the analysis tests: it plays as bots/greedy_bot.py does,
except that when it could sweep the table (an escoba) it trails instead, its lowest card.

Run: python3 tests/zoo/escoba_thrower.py   (the kit and the greedy bot from bots/)
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bots"))

import greedy_bot  # noqa: E402  # from bots/, put on the path above
from kit import escoba_kit as kit  # noqa: E402


def sweeps(move: kit.Move, table: list) -> bool:
    """Whether ``move`` takes every card on the table: an escoba."""
    return move.kind == kit.PLAY and bool(move.take) and len(move.take) == len(table)


def choose(game: kit.Game, request: kit.Request, rng: random.Random) -> kit.Move:
    legal = request.legal
    trails = [m for m in legal if m.is_trail]
    if trails and any(sweeps(m, game.table) for m in legal):
        return min(trails, key=lambda m: (m.card.value, m.card.text))  # the blunder: the escoba left on the table
    return greedy_bot.choose(game, request, rng)


if __name__ == "__main__":
    kit.run(choose, name="escoba-thrower")
