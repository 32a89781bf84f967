"""A random Escoba bot: any legal move, uniformly, from a seeded rng.

Run: python3 bots/random_bot.py   (needs only Python 3.8+ and bots/kit/escoba_kit.py)
"""

from __future__ import annotations

import random

if __package__:
    from .kit import escoba_kit as kit
else:  # run as a script: its directory, bots/, is first on sys.path
    from kit import escoba_kit as kit  # type: ignore[no-redef]  # run as a script: the kit from its own folder


def choose(game: kit.Game, request: kit.Request, rng: random.Random) -> kit.Move:
    return request.legal[rng.randrange(len(request.legal))]


if __name__ == "__main__":
    kit.run(choose, name="random")
