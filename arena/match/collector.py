"""How often the cycle collector runs in the arena's busy processes: one owner for the referee's
and the command line's workers.

A match keeps a few thousand containers alive until its record is made, and a report or analysis
worker a record's few thousand until it is answered; all are freed together by their counts when
dropped, and the hot paths make no reference cycles. At CPython's default young threshold (700) the
collector walked them several times an item without ever finding garbage: about 3% of the referee's
work per decision, a sixth of a report worker's CPU (benchmarks/RESULTS.md). At ``YOUNG`` a
collection comes every few items.
"""

from __future__ import annotations

import gc

YOUNG = 20_000


def settle() -> None:
    """Raise this process's young threshold to ``YOUNG``: never lowered, and a collector turned
    off (threshold 0) stays off."""
    young, older, oldest = gc.get_threshold()
    if 0 < young < YOUNG:
        gc.set_threshold(YOUNG, older, oldest)


__all__ = ["YOUNG", "settle"]
