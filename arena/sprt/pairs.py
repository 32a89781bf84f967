"""Game pairs and their pentanomial counts.

A *pair* is one deal played twice, the second time with the two sides in each other's
seats, so the luck of the cards falls on both. The first side's result over the pair is
its score in the two games together: 0, 0.5, 1, 1.5 or 2 points (a win is 1, a draw 1/2).
The pentanomial counts the pairs by that score, lowest first, in the order and with the
bins fishtest (``results["pentanomial"]``, "LL, LD+DL, LW+DD+WL, DW+WD, WW") and fastchess
(``Ptnml(0-2): [LL, LD, WL+DD, WD, WW]``) use:

====  =====  ===============================================
bin   score  pairs
====  =====  ===============================================
LL    0      lost both games
LD    0.5    one loss, one draw (either order)
DD    1      two draws, or one win and one loss (either order)
WD    1.5    one win, one draw
WW    2      won both games
====  =====  ===============================================

Everything is from the first side's point of view (the candidate, "A" in ``arena sprt A B``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.sprt.errors import CountsError, PairResultError

BINS = ("LL", "LD", "DD", "WD", "WW")
"""The pentanomial's bins in order: a pair score of 0, 0.5, 1, 1.5, 2 points."""

_GAME_SCORES = (0.0, 0.5, 1.0)
_PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)


def _whole(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PairResultError(f"{what}: expected a whole number, got {value!r}")
    return value


@dataclass(frozen=True)
class GameResult:
    """One game of a pair, for the first side: its score (1 win, 0.5 draw, 0 loss), its
    match points minus the other side's, and the hands the game lasted."""

    score: float
    point_diff: int
    hands: int

    def __post_init__(self) -> None:
        if self.score not in _GAME_SCORES:
            raise PairResultError(f"game score: expected 0, 0.5 or 1, got {self.score!r}")
        _whole(self.point_diff, "game point_diff")
        if _whole(self.hands, "game hands") < 0:
            raise PairResultError(f"game hands: expected 0 or more, got {self.hands}")


@dataclass(frozen=True)
class DealPair:
    """One finished pair for the first side: its score over both games (0, 0.5, 1, 1.5 or 2),
    its points minus the other side's over both games, and the hands both games lasted.

    ``hands`` 0 means the points are unknown (counts given without games, or both games
    forfeited before a hand was played): such a pair counts for Elo, not for points per hand.
    """

    score: float
    point_diff: int = 0
    hands: int = 0

    def __post_init__(self) -> None:
        if self.score not in _PAIR_SCORES:
            raise PairResultError(f"pair score: expected 0, 0.5, 1, 1.5 or 2, got {self.score!r}")
        _whole(self.point_diff, "pair point_diff")
        if _whole(self.hands, "pair hands") < 0:
            raise PairResultError(f"pair hands: expected 0 or more, got {self.hands}")

    @classmethod
    def from_games(cls, first: GameResult, second: GameResult) -> DealPair:
        """The pair of two games of one deal (the sides in swapped seats in the second)."""
        return cls(
            score=first.score + second.score,
            point_diff=first.point_diff + second.point_diff,
            hands=first.hands + second.hands,
        )

    @property
    def bin(self) -> int:
        """Index of this pair's pentanomial bin (0 = LL ... 4 = WW)."""
        return int(self.score * 2)

    @property
    def points_per_hand(self) -> float | None:
        """The first side's point difference per hand over the pair; ``None`` without hands."""
        return self.point_diff / self.hands if self.hands else None


@dataclass(frozen=True)
class Pentanomial:
    """Pair counts by the first side's pair score (see the module's table)."""

    ll: int = 0
    ld: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    def __post_init__(self) -> None:
        for name, value in zip(BINS, self.counts(), strict=True):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise CountsError(f"{name}: expected a whole number of pairs, 0 or more, got {value!r}")

    @classmethod
    def from_counts(cls, counts: Iterable[int]) -> Pentanomial:
        """From the five counts in order LL LD DD WD WW (fishtest's and fastchess's order)."""
        items = tuple(counts)
        if len(items) != 5:
            raise CountsError(f"pentanomial: expected 5 counts (LL LD DD WD WW), got {len(items)}")
        return cls(*items)

    @classmethod
    def from_pairs(cls, pairs: Iterable[DealPair]) -> Pentanomial:
        counts = [0] * 5
        for pair in pairs:
            counts[pair.bin] += 1
        return cls(*counts)

    def counts(self) -> tuple[int, int, int, int, int]:
        return self.ll, self.ld, self.dd, self.wd, self.ww

    @property
    def pairs(self) -> int:
        return sum(self.counts())

    @property
    def games(self) -> int:
        return 2 * self.pairs

    @property
    def points(self) -> float:
        """The first side's total score over all games."""
        return sum(count * score for count, score in zip(self.counts(), _PAIR_SCORES, strict=True))

    def add(self, pair: DealPair) -> Pentanomial:
        counts = list(self.counts())
        counts[pair.bin] += 1
        return Pentanomial(*counts)

    def __add__(self, other: Pentanomial) -> Pentanomial:
        return Pentanomial(*(a + b for a, b in zip(self.counts(), other.counts(), strict=True)))

    def reversed(self) -> Pentanomial:
        """The same pairs from the other side's point of view."""
        return Pentanomial(self.ww, self.wd, self.dd, self.ld, self.ll)

    def __str__(self) -> str:
        return " ".join(str(c) for c in self.counts())
