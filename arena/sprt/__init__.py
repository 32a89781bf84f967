"""Sequential testing (SPRT) on game pairs: is one bot stronger than another, with the fewest games.

Pure statistics, no I/O: the runner plays pairs and feeds them in; the CLI formats the
summary. docs/SPRT.md says how to use it and what the numbers mean.

* ``pairs``: a pair's result (``GameResult``, ``DealPair``) and the ``Pentanomial`` counts;
* ``stats``: the LLR (normalized and logistic Elo models), Elo +- 95%, nElo, LOS, as
  fishtest and fastchess define them;
* ``points``: the points-per-hand metric;
* ``sequential``: the test (``SprtParams``, ``SprtState``, ``Decision``, ``SprtSummary``).
"""

from arena.sprt.errors import CountsError, PairResultError, SprtError, SprtParamError, UnreachableHypothesisError
from arena.sprt.pairs import BINS, DealPair, GameResult, Pentanomial
from arena.sprt.points import POINTS_MIN_PAIRS, PointsEstimate, PointsTally, points_estimate, points_llr
from arena.sprt.sequential import (
    MAPPING_KEYS,
    Decision,
    Metric,
    SprtParams,
    SprtState,
    SprtSummary,
    replay,
    summarize_counts,
)
from arena.sprt.stats import (
    ELO_LIMITS,
    NELO_PER_T,
    EloEstimate,
    EloModel,
    elo_estimate,
    llr,
    llr_array,
    score_to_elo,
    sprt_bounds,
)

__all__ = [
    "BINS",
    "ELO_LIMITS",
    "MAPPING_KEYS",
    "NELO_PER_T",
    "POINTS_MIN_PAIRS",
    "CountsError",
    "DealPair",
    "Decision",
    "EloEstimate",
    "EloModel",
    "GameResult",
    "Metric",
    "PairResultError",
    "Pentanomial",
    "PointsEstimate",
    "PointsTally",
    "SprtError",
    "SprtParamError",
    "SprtParams",
    "SprtState",
    "SprtSummary",
    "UnreachableHypothesisError",
    "elo_estimate",
    "llr",
    "llr_array",
    "points_estimate",
    "points_llr",
    "replay",
    "score_to_elo",
    "sprt_bounds",
    "summarize_counts",
]
