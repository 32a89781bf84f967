"""Elo-scale ratings fitted jointly over all match results (Bradley-Terry / Plackett-Luce).

Pure statistics: no I/O. The model (docs/RATINGS.md): every bot ``i`` has a strength ``r_i``
(natural-log units); a side's strength is the sum of its members'. A two-sided match is a
Bradley-Terry game, side A beating side B with probability ``1 / (1 + exp(-(R_A - R_B)))``;
a draw counts as half a win and half a loss (the "ties as halves" likelihood, as in Elo). A
match of three or four sides is one Plackett-Luce observation of the sides' finishing order
(sides that tie are averaged over their orders), which for two sides is exactly the
Bradley-Terry game.

The fit is the posterior mode under a weak Gaussian prior (``DEFAULT_PRIOR`` virtual draws
per bot against the reference level), so every rating is finite; ``prior=0`` gives the pure
maximum-likelihood estimate. Reported Elo values are ``400/ln(10)`` times the natural-log
strengths, centred to mean 0 per group, or shifted so that an anchor bot reads a chosen
value. Intervals and LOS come from the inverse of the information matrix (the posterior
covariance).

Without a prior, degenerate data never produce a made-up number:

* a field split into parts that never met (disconnected comparison graph) is rated part
  by part, each centred on its own, and flagged as not comparable (also with a prior);
* perfectly separated results (a bot that won or lost everything, or a clique that never
  dropped a game to the rest) make the maximum-likelihood estimate infinite; such bots get
  ``elo=None`` with a status and a note, and the remaining results are rated as usual;
* team-mates who always play together cannot be told apart: only their sum is
  determined, so their individual interval is ``None`` and they are flagged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import NamedTuple

from arena.errors import ArenaError, ExitCode

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of strength (about 173.7)."""

Z95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal distribution."""

DEFAULT_PRIOR = 2.0
"""The default prior: 2 virtual draws per bot against the reference level (Gaussian, sd 246
Elo), as BayesElo's default. Weak: after 20 real games it is a tenth of the evidence; yet it
gives a perfect record a finite rating. ``0`` is the pure maximum-likelihood fit."""

_VALID_SCORES = (0.0, 0.5, 1.0)
_PLACES_OF_SCORE = {1.0: (1, 2), 0.5: (1, 1), 0.0: (2, 1)}


# --------------------------------------------------------------------------- errors


class RatingError(ArenaError, ValueError):
    """Bad input to the rating fit."""


class ResultInputError(RatingError):
    """One match result is malformed; ``index`` is its position in the input sequence."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"result {index}: {reason}")
        self.index = index
        self.reason = reason


class AnchorError(RatingError):
    """The anchor bot is unknown or has no finite, identifiable rating."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"anchor {name!r}: {reason}")
        self.name = name
        self.reason = reason


class ConvergenceError(RatingError):
    """Newton's method failed to converge (should not happen on checked input)."""

    exit_code = ExitCode.FAULT


# --------------------------------------------------------------------------- input


class PairResult(NamedTuple):
    """One match between two sides; ``score_a`` is 1 (A won), 0.5 (draw) or 0 (B won)."""

    side_a: tuple[str, ...]
    side_b: tuple[str, ...]
    score_a: float


class MatchResult(NamedTuple):
    """One match between any number of sides (2, 3 or 4 players alone, 3 teams of 2 ...).

    ``places``: each side's finishing place, 1 for first; equal places are a tie (e.g.
    ``(1, 2, 2)``: the first side won, the other two tied behind it).
    """

    sides: tuple[tuple[str, ...], ...]
    places: tuple[int, ...]

    @classmethod
    def from_scores(cls, sides: Sequence[Sequence[str] | str], scores: Sequence[float]) -> MatchResult:
        """Places from final scores (higher is better, equal scores tie); sides are checked
        when the result is rated."""
        if len(sides) != len(scores):
            raise RatingError(f"{len(sides)} sides but {len(scores)} scores")
        for score in scores:
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise RatingError(f"scores must be finite numbers, got {score!r}")
        norm = tuple((side,) if isinstance(side, str) else tuple(side) for side in sides)
        return cls(norm, tuple(1 + sum(other > own for other in scores) for own in scores))


Result = PairResult | MatchResult | tuple[Sequence[str] | str, Sequence[str] | str, float]


def _check_side(index: int, label: str, side: object) -> tuple[str, ...]:
    if isinstance(side, str):
        side = (side,)
    if not isinstance(side, Iterable):
        raise ResultInputError(index, f"{label} must be a tuple of bot names")
    members = tuple(side)
    if not members:
        raise ResultInputError(index, f"{label} is empty")
    names: list[str] = []
    for member in members:
        if not isinstance(member, str) or not member.strip():
            raise ResultInputError(index, f"{label} has an empty or non-text bot name {member!r}")
        names.append(member)
    if len(set(names)) != len(names):
        raise ResultInputError(index, f"{label} lists the same bot twice: {'+'.join(names)}")
    return tuple(names)


def check_result(index: int, raw: object) -> tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]:
    """Check one result (a :class:`PairResult`, a ``(side_a, side_b, score_a)`` triple or a
    :class:`MatchResult`) and return its sides and finishing places.

    Raises :class:`ResultInputError` naming ``index``.
    """
    if type(raw) is PairResult:
        # The common case, checked without the general machinery: one bot per side.
        a, b, score = raw
        if type(a) is tuple and type(b) is tuple and len(a) == 1 and len(b) == 1 and type(score) in (float, int):
            x, y = a[0], b[0]
            places = _PLACES_OF_SCORE.get(score)
            if type(x) is str and type(y) is str and x != y and places is not None and x.strip() and y.strip():
                return (a, b), places
    if isinstance(raw, MatchResult):
        return _check_match(index, raw)
    if not isinstance(raw, Sequence) or isinstance(raw, str) or len(raw) != 3:
        raise ResultInputError(index, "expected (side_a, side_b, score_a) or a MatchResult")
    side_a, side_b, score_a = raw[0], raw[1], raw[2]
    a = _check_side(index, "side_a", side_a)
    b = _check_side(index, "side_b", side_b)
    common = sorted(set(a) & set(b))
    if common:
        raise ResultInputError(index, f"bot {common[0]!r} is on both sides")
    if len(a) != len(b):
        # With sum-of-members strengths, uneven sides would make the absolute rating level
        # an estimated quantity rather than a free convention; refuse instead of guessing.
        raise ResultInputError(index, f"sides have different sizes ({len(a)} vs {len(b)})")
    if isinstance(score_a, bool) or not isinstance(score_a, (int, float)) or float(score_a) not in _VALID_SCORES:
        raise ResultInputError(index, f"score_a must be 1, 0.5 or 0, got {score_a!r}")
    places = (1, 2) if score_a == 1 else (2, 1) if score_a == 0 else (1, 1)
    return (a, b), places


def _check_match(index: int, match: MatchResult) -> tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]:
    try:
        raw_sides = list(match.sides)
        places = tuple(match.places)
    except TypeError:
        raise ResultInputError(index, "sides and places must be sequences") from None
    if len(raw_sides) < 2:
        raise ResultInputError(index, f"a match needs at least two sides, got {len(raw_sides)}")
    if len(places) != len(raw_sides):
        raise ResultInputError(index, f"{len(raw_sides)} sides but {len(places)} places")
    sides = tuple(_check_side(index, f"side {k + 1}", side) for k, side in enumerate(raw_sides))
    seen: set[str] = set()
    for side in sides:
        for name in side:
            if name in seen:
                raise ResultInputError(index, f"bot {name!r} is on two sides")
            seen.add(name)
    sizes = [len(side) for side in sides]
    if len(set(sizes)) != 1:
        raise ResultInputError(index, f"sides have different sizes ({', '.join(map(str, sizes))})")
    problem = places_problem(places)
    if problem is not None:
        raise ResultInputError(index, f"places {problem}")
    return sides, places


def places_problem(places: Sequence[object]) -> str | None:
    """Why ``places`` are not the finishing places of as many sides (whole numbers from 1, first,
    to their number), as a phrase that follows the places' name; None when they are. The one
    statement of the rule: results files say it under their own key (arena/rating/inputs.py)."""
    for place in places:
        if isinstance(place, bool) or not isinstance(place, int) or not 1 <= place <= len(places):
            return f"must be whole numbers from 1 (first) to {len(places)} (the number of sides), got {place!r}"
    return None


# --------------------------------------------------------------------------- output


class Status(Enum):
    """Why a bot does or does not have a finite rating."""

    RATED = "rated"
    UNBOUNDED_ABOVE = "unbounded_above"  # won everything it played (no upsets)
    UNBOUNDED_BELOW = "unbounded_below"  # lost everything it played
    SEPARATED = "separated"  # mixed record, but every result perfectly ordered
    NOT_IDENTIFIED = "not_identified"  # never separated from its team-mates
    NO_MATCHES = "no_matches"


class Model(Enum):
    """The likelihood the ratings come from."""

    BRADLEY_TERRY = "bradley-terry"  # every match had two sides
    PLACKETT_LUCE = "plackett-luce"  # some match had three or more

    @property
    def description(self) -> str:
        if self is Model.BRADLEY_TERRY:
            return "Bradley-Terry (two sides per match, a draw counts half)"
        return (
            "Plackett-Luce on each match's finishing order of its sides (tied sides averaged "
            "over their orders; a two-sided match is a Bradley-Terry game)"
        )


@dataclass(frozen=True)
class BotRating:
    """One row of the rating table. ``elo`` and ``ci95`` are Elo points; ``ci95`` is the
    half-width of the 95% interval; ``los_next`` is the probability that this bot is
    stronger than the next one in the ranking (``None`` when not comparable).

    ``matches`` counts matches played; ``wins``, ``draws`` and ``losses`` count the
    two-sided ones; ``places[p]`` counts matches of three or more sides in which the bot's
    side finished ``p + 1``-th (tied sides share the better place); empty when the data
    have no such match."""

    rank: int
    name: str
    elo: float | None
    ci95: float | None
    los_next: float | None
    matches: int
    wins: int
    draws: int
    losses: int
    group: int
    status: Status
    note: str = ""
    places: tuple[int, ...] = ()

    @property
    def score(self) -> float | None:
        """Fraction of points won in two-sided matches (a draw is half a point)."""
        played = self.wins + self.draws + self.losses
        return (self.wins + 0.5 * self.draws) / played if played else None

    @property
    def record(self) -> str:
        """``W-D-L``, or the finishing places (``1st-2nd-3rd``) of matches with more sides."""
        wdl = f"{self.wins}-{self.draws}-{self.losses}"
        if not any(self.places):
            return wdl
        places = "-".join(map(str, self.places))
        return places if self.wins + self.draws + self.losses == 0 else f"{wdl}, places {places}"


@dataclass(frozen=True)
class RatingGroup:
    """Bots whose ratings are comparable with each other (and only with each other)."""

    id: int
    members: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class RatingTable:
    ratings: tuple[BotRating, ...]
    groups: tuple[RatingGroup, ...]
    notes: tuple[str, ...]
    prior: float = DEFAULT_PRIOR
    anchor: str | None = None
    anchor_elo: float = 0.0
    model: Model = Model.BRADLEY_TERRY
    # Covariance of (reported) Elo values between bots of the same rated group, in Elo^2.
    covariance: Mapping[tuple[str, str], float] = field(default_factory=dict, compare=False, repr=False)

    def __getitem__(self, name: str) -> BotRating:
        return self.ratings[self._position[name]]

    @cached_property
    def _position(self) -> dict[str, int]:
        return {row.name: i for i, row in enumerate(self.ratings)}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(row.name for row in self.ratings)

    def los(self, a: str, b: str) -> float | None:
        """Likelihood that ``a`` is stronger than ``b``, using their covariance.

        ``None`` when the two are not both rated in the same group, or have no interval.
        """
        ra, rb = self[a], self[b]
        if ra.status is not Status.RATED or rb.status is not Status.RATED or ra.group != rb.group:
            return None
        if ra.elo is None or rb.elo is None:
            return None
        if a == b:
            return 0.5
        try:
            return pair_los(ra.elo, rb.elo, self.covariance, a, b)
        except KeyError:
            return None


# --------------------------------------------------------------------------- small pure helpers


def pair_los(elo_a: float, elo_b: float, covariance: Mapping[tuple[str, str], float], a: str, b: str) -> float:
    """The likelihood that ``a`` is stronger than ``b``: their difference's normal estimate,
    with its variance from the fit's covariance (KeyError when it has none for them)."""
    var = covariance[a, a] + covariance[b, b] - 2.0 * covariance[a, b]
    return likelihood_of_superiority(elo_a - elo_b, math.sqrt(max(var, 0.0)))


def likelihood_of_superiority(elo_diff: float, sd_diff: float) -> float:
    """P(true difference > 0) for a normal estimate ``elo_diff`` with standard error ``sd_diff``."""
    if sd_diff <= 0.0:
        return 1.0 if elo_diff > 0 else 0.0 if elo_diff < 0 else 0.5
    return 0.5 * math.erfc(-elo_diff / (sd_diff * math.sqrt(2.0)))


def expected_score(elo_diff: float) -> float:
    """Expected score of a side rated ``elo_diff`` points above its opponent."""
    return 1.0 / (1.0 + math.pow(10.0, -elo_diff / 400.0))


def prior_sd_elo(strength: float) -> float:
    """Standard deviation (Elo) of the Gaussian prior of the given strength.

    A strength of ``k`` has the curvature of ``k`` virtual draws against an opponent at the
    reference level (each draw between equals contributes 1/4 per nat^2).
    """
    return ELO_PER_NAT * 2.0 / math.sqrt(strength)


def check_prior(prior: float | None) -> float:
    """The prior's strength as a number: ``None`` means :data:`DEFAULT_PRIOR` (an option the
    user did not give), 0 none; refuses negative or non-finite values."""
    if prior is None:
        return DEFAULT_PRIOR
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not (prior >= 0.0 and math.isfinite(prior)):
        raise RatingError(f"prior strength must be a number of virtual draws >= 0, got {prior!r}")
    return float(prior)


# --------------------------------------------------------------------------- the fit


def fit_ratings(
    results: Iterable[Result],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    prior: float | None = DEFAULT_PRIOR,
    players: Iterable[str] = (),
) -> RatingTable:
    """Fit Elo-scale ratings to all ``results`` jointly.

    ``results`` is read once, lazily (a generator over a large file is fine): each item is a
    :class:`PairResult` (or a ``(side_a, side_b, score_a)`` triple) or a :class:`MatchResult`.
    ``anchor`` pins that bot at ``anchor_elo`` (its group is then reported relative to it;
    other groups are centred on ``anchor_elo``); otherwise every group has mean 0.
    ``prior`` adds a Gaussian prior centred on the reference level with the curvature of
    ``prior`` virtual draws per bot (see :func:`prior_sd_elo`); it makes every rating finite.
    ``0`` is the pure maximum-likelihood fit; ``None`` means the default. ``players`` lists
    extra bots to show even if they played no match.
    """
    # numpy loads with the first fit, not with every command that imports this.
    from arena.rating.fit import fit

    return fit(results, anchor=anchor, anchor_elo=anchor_elo, prior=prior, players=players)
