"""Rule options and seatings, for bot authors and simulations (README, "The rules core"). The
code lives in ``arena.core.rules``; this module keeps the import bots were written against.
"""

from arena.core.rules import INITIAL_TABLE_CHOICES, RULE_OPTIONS, SEVENS_CHOICES, Rules, Seating

__all__ = ["INITIAL_TABLE_CHOICES", "RULE_OPTIONS", "SEVENS_CHOICES", "Rules", "Seating"]
