"""The analysis of game records: every decision re-examined by the expert's search (``arena analyze``).

A layer above the match records (arena/match) and below their presentation (arena/render).
"""

from arena.analysis.analyst import (
    ANALYST_PLAYOUTS,
    ANALYST_SEED,
    THRESHOLDS,
    BotAnalysis,
    Mark,
    MoveAnalysis,
    Task,
    analyse,
    by_bot,
    decision_seed,
    marked,
    tasks,
)

__all__ = ["ANALYST_PLAYOUTS", "ANALYST_SEED", "THRESHOLDS", "BotAnalysis", "Mark", "MoveAnalysis", "Task", "analyse",
           "by_bot", "decision_seed", "marked", "tasks"]
