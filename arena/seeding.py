"""Portable seeded randomness (the arena's deals, a bot's own random source), for bot authors
(README, "The rules core"). The code lives in ``arena.core.seeding``; this module keeps the
import bots were written against.
"""

from arena.core.seeding import Rng, derive_seed

__all__ = ["Rng", "derive_seed"]
