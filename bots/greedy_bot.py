"""A greedy Escoba bot: the best immediate capture, else the safest trail.

Captures are ranked by what they win now, in this order: an escoba (the table swept), the
siete de oros, then the most sevens, the most oros, the most cards; among equals, the one
that leaves the table hardest to sweep. With no capture it trails the card that leaves the
table hardest to sweep: the fewest unseen cards that would take the whole table, then the
least valuable card to give away (not the velo, a seven or an oro, then the lowest).

Run: python3 bots/greedy_bot.py   (needs only Python 3.8+ and bots/kit/escoba_kit.py)
"""

from __future__ import annotations

import random
from collections.abc import Sequence

if __package__:
    from .kit import escoba_kit as kit
else:  # run as a script: its directory, bots/, is first on sys.path
    from kit import escoba_kit as kit  # type: ignore[no-redef]  # run as a script: the kit from its own folder


def sweep_risk(total: int, unseen_values: Sequence[int]) -> int:
    """How many unseen cards would take a whole table adding up to ``total`` (0: none can)."""
    need = 15 - total
    return unseen_values[need] if 1 <= need <= 10 else 0


def capture_key(move: kit.Move, table: Sequence[kit.Card], unseen_values: Sequence[int]) -> tuple:
    """Bigger is better: (escoba, velo, sevens, oros, cards, -risk of the table left)."""
    got = move.captured
    taken = set(move.take)
    if move.kind == kit.CLAIM:
        taken.add(move.card)
    left = sum(c.value for c in table if c not in taken)
    escoba = int(left == 0 and len(taken) == len(table))
    return (escoba, int(any(c.is_velo for c in got)), sum(c.seven for c in got),
            sum(c.oro for c in got), len(got), -sweep_risk(left, unseen_values))


def trail_key(move: kit.Move, table_total: int, unseen_values: Sequence[int]) -> tuple:
    """Smaller is better: (risk of a sweep, velo, seven, oro, value) of the card left."""
    c = move.card
    return (sweep_risk(table_total + c.value, unseen_values), int(c.is_velo), c.seven, c.oro, c.value)


def best_move(legal: list[kit.Move], table: Sequence[kit.Card], unseen_values: Sequence[int]) -> kit.Move:
    captures = [m for m in legal if m.is_capture]
    if captures:
        return max(captures, key=lambda m: capture_key(m, table, unseen_values))
    trails = [m for m in legal if m.is_trail]
    if not trails:  # only 'pass' (or an empty 'mesa')
        return legal[0]
    total = sum(c.value for c in table)
    return min(trails, key=lambda m: trail_key(m, total, unseen_values))


def choose(game: kit.Game, request: kit.Request, rng: random.Random) -> kit.Move:
    return best_move(request.legal, game.table, game.unseen_values())


if __name__ == "__main__":
    kit.run(choose, name="greedy")
