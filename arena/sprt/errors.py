"""Typed errors of the sequential test: each says in one line what is wrong and with what."""

from __future__ import annotations

from arena.errors import ArenaError


class SprtError(ArenaError, ValueError):
    """Bad input to the sequential test or its statistics."""


class SprtParamError(SprtError):
    """A test parameter (elo0, elo1, points0, points1, alpha, beta, model, metric, max_pairs) is not allowed."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(f"{parameter}: {reason}")
        self.parameter = parameter
        self.reason = reason


class CountsError(SprtError):
    """Result counts that are not a trinomial or pentanomial of non-negative whole numbers."""


class PairResultError(SprtError):
    """A game or pair result that cannot be (a score outside 0..1 per game, negative hands, ...)."""


class UnreachableHypothesisError(SprtError):
    """An Elo hypothesis so extreme that the likelihood ratio cannot be computed for it."""
