"""The sequential probability ratio test on game pairs, as an immutable value the runner drives.

    state = SprtState.start(SprtParams.elo(0, 10))
    for pair in pairs_in_deal_order:
        state = state.add(pair)
        if state.finished:
            break
    summary = state.summary()

The stop rule (docs/SPRT.md, "The stop rule"):

* after each pair the log-likelihood ratio (LLR) is compared with Wald's bounds
  ``lower = log(beta / (1 - alpha))`` and ``upper = log((1 - beta) / alpha)``: at or above
  ``upper`` H1 is accepted, at or below ``lower`` H0 is accepted (fastchess's inclusive
  comparison, checked after every pair as fastchess does; fishtest checks batches of
  pairs and corrects its bounds for the overshoot that batching causes, which a check
  after every pair does not need);
* otherwise, when ``max_pairs`` pairs are in, the test ends undecided (``MAX_PAIRS``);
* the first decision is final. Pairs added after it (the runner finishes the pairs that
  were being played when the test stopped) still count in the pentanomial, the Elo, the
  points and the LLR reported, but never change the decision or ``decided_at``.

The decision depends on the order pairs are added in, so the runner adds them in deal
order (pair k only once pairs 0..k-1 are in), however its workers finish them: then a run
that is interrupted and resumed, or played with a different number of workers, reaches
the same decision at the same pair.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from arena.sprt.errors import SprtError, SprtParamError
from arena.sprt.pairs import DealPair, Pentanomial
from arena.sprt.points import POINTS_MIN_PAIRS, PointsEstimate, PointsTally, points_estimate, points_llr
from arena.sprt.stats import ELO_LIMITS, EloEstimate, EloModel, elo_estimate, llr, sprt_bounds


class Metric(str, Enum):
    """What the test measures."""

    ELO = "elo"
    """Match results: the pentanomial of pair scores, hypotheses in Elo (``elo0``, ``elo1``)."""

    POINTS = "points"
    """Margin: the mean per-pair point difference per hand, hypotheses in points per hand (``points0``, ``points1``)."""


class Decision(str, Enum):
    CONTINUE = "continue"
    H0 = "H0"
    """H0 accepted: the LLR reached the lower bound (not worth elo1 / points1)."""
    H1 = "H1"
    """H1 accepted: the LLR reached the upper bound (worth elo1 / points1 or more)."""
    MAX_PAIRS = "max_pairs"
    """``max_pairs`` pairs played without reaching a bound: undecided."""


_HYPOTHESIS_NAMES = {Metric.ELO: ("elo0", "elo1"), Metric.POINTS: ("points0", "points1")}
MAPPING_KEYS = ("metric", "elo0", "elo1", "points0", "points1", "alpha", "beta", "model", "max_pairs")
"""The keys ``SprtParams.from_mapping`` (a tournament file's ``sprt:``) accepts."""


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SprtParamError(name, f"expected a number, got {value!r}")
    if not math.isfinite(value):
        raise SprtParamError(name, f"expected a finite number, got {value!r}")
    return float(value)


def _enum(name: str, kind: type[Metric] | type[EloModel], value: object) -> Any:
    try:
        return kind(value)
    except ValueError:
        allowed = " or ".join(member.value for member in kind)
        raise SprtParamError(name, f"expected {allowed}, got {value!r}") from None


@dataclass(frozen=True)
class SprtParams:
    """What a sequential test decides and with which error rates.

    ``h0`` and ``h1`` are the measure's value under each hypothesis: Elo (``elo0``,
    ``elo1``; normalized or logistic per ``model``) for ``Metric.ELO``, points per hand
    (``points0``, ``points1``) for ``Metric.POINTS`` (``model`` then plays no part).
    ``alpha`` is the probability of accepting H1 when H0 holds, ``beta`` of accepting H0
    when H1 holds. ``max_pairs`` (None: no limit) ends an undecided test.

    Build with ``SprtParams.elo``, ``SprtParams.points`` or ``SprtParams.from_mapping``;
    every construction is validated (``SprtParamError`` names the parameter).
    """

    h0: float
    h1: float
    metric: Metric = Metric.ELO
    model: EloModel = EloModel.NORMALIZED
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int | None = None

    def __post_init__(self) -> None:
        metric = _enum("metric", Metric, self.metric)
        model = _enum("model", EloModel, self.model)
        object.__setattr__(self, "metric", metric)
        object.__setattr__(self, "model", model)
        name0, name1 = _HYPOTHESIS_NAMES[metric]
        h0, h1 = _number(name0, self.h0), _number(name1, self.h1)
        if metric is Metric.ELO:
            limit = ELO_LIMITS[model.value]
            for name, value in ((name0, h0), (name1, h1)):
                if abs(value) > limit:
                    raise SprtParamError(name, f"at most {limit:g} in absolute value with the {model.value} model, got {value:g}")
        if h1 <= h0:
            raise SprtParamError(name1, f"must be greater than {name0} ({h0:g}), got {h1:g}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            rate = _number(name, value)
            if not 0.0 < rate < 0.5:
                raise SprtParamError(name, f"expected a probability strictly between 0 and 0.5, got {rate:g}")
        if self.max_pairs is not None and (
            isinstance(self.max_pairs, bool) or not isinstance(self.max_pairs, int) or self.max_pairs < 1
        ):
            raise SprtParamError("max_pairs", f"expected a whole number of pairs, at least 1, got {self.max_pairs!r}")
        object.__setattr__(self, "h0", h0)
        object.__setattr__(self, "h1", h1)
        object.__setattr__(self, "alpha", float(self.alpha))
        object.__setattr__(self, "beta", float(self.beta))

    @classmethod
    def elo(
        cls,
        elo0: float,
        elo1: float,
        *,
        model: EloModel = EloModel.NORMALIZED,
        alpha: float = 0.05,
        beta: float = 0.05,
        max_pairs: int | None = None,
    ) -> SprtParams:
        return cls(elo0, elo1, Metric.ELO, model, alpha, beta, max_pairs)

    @classmethod
    def points(
        cls, points0: float, points1: float, *, alpha: float = 0.05, beta: float = 0.05, max_pairs: int | None = None
    ) -> SprtParams:
        return cls(points0, points1, Metric.POINTS, EloModel.NORMALIZED, alpha, beta, max_pairs)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object]) -> SprtParams:
        """From plain data: a tournament file's ``sprt:`` mapping or a stored ``to_dict()``.

        Keys: ``metric`` (``elo``, the default, or ``points``); ``elo0`` and ``elo1`` (metric
        elo) or ``points0`` and ``points1`` (metric points), required; ``alpha``, ``beta``
        (default 0.05); ``model`` (metric elo only; ``normalized``, the default, or
        ``logistic``); ``max_pairs`` (default: no limit).
        """
        for key in mapping:
            if key not in MAPPING_KEYS:
                raise SprtParamError(str(key), f"unknown key (allowed: {', '.join(MAPPING_KEYS)})")
        metric = _enum("metric", Metric, mapping.get("metric", Metric.ELO.value))
        names = _HYPOTHESIS_NAMES[metric]
        other = _HYPOTHESIS_NAMES[Metric.POINTS if metric is Metric.ELO else Metric.ELO]
        for key in other:
            if key in mapping:
                raise SprtParamError(key, f"belongs to metric {'points' if metric is Metric.ELO else 'elo'}; "
                                          f"metric {metric.value} takes {names[0]} and {names[1]}")
        if metric is Metric.POINTS and "model" in mapping:
            raise SprtParamError("model", "applies to metric elo only")
        for key in names:
            if key not in mapping:
                raise SprtParamError(key, "required")
        max_pairs = mapping.get("max_pairs")
        return cls(
            h0=_number(names[0], mapping[names[0]]),
            h1=_number(names[1], mapping[names[1]]),
            metric=metric,
            model=_enum("model", EloModel, mapping.get("model", EloModel.NORMALIZED.value)),
            alpha=_number("alpha", mapping.get("alpha", 0.05)),
            beta=_number("beta", mapping.get("beta", 0.05)),
            max_pairs=max_pairs,  # type: ignore[arg-type]  # checked in __post_init__
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data that ``from_mapping`` reads back."""
        name0, name1 = self.names
        out: dict[str, Any] = {"metric": self.metric.value, name0: self.h0, name1: self.h1}
        if self.metric is Metric.ELO:
            out["model"] = self.model.value
        out.update(alpha=self.alpha, beta=self.beta, max_pairs=self.max_pairs)
        return out

    @property
    def names(self) -> tuple[str, str]:
        """The hypotheses' parameter names: ``("elo0", "elo1")`` or ``("points0", "points1")``."""
        return _HYPOTHESIS_NAMES[self.metric]

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper) bounds on the LLR."""
        return sprt_bounds(self.alpha, self.beta)


@dataclass(frozen=True)
class SprtSummary:
    """Everything a status line, a report or ``arena sprt --stats`` shows, as plain values.

    ``elo`` is ``None`` before the first pair, ``points`` below two pairs with points per
    hand. ``llr`` is the ratio for all pairs counted; ``decided_at`` is the number of
    pairs when the decision was made (``None`` while the test continues).
    """

    params: SprtParams
    pairs: int
    penta: Pentanomial
    elo: EloEstimate | None
    points: PointsEstimate | None
    llr: float
    lower: float
    upper: float
    decision: Decision
    decided_at: int | None

    def to_dict(self) -> dict[str, Any]:
        elo = self.elo
        points = self.points
        return {
            "params": self.params.to_dict(),
            "pairs": self.pairs,
            "pentanomial": list(self.penta.counts()),
            "elo": None if elo is None else {
                "elo": elo.elo, "elo_error": elo.elo_error, "nelo": elo.nelo, "nelo_error": elo.nelo_error,
                "los": elo.los, "score": elo.score, "stdev": elo.stdev,
            },
            "points": None if points is None else {
                "pairs": points.pairs, "mean": points.mean, "error": points.error, "stdev": points.stdev,
            },
            "llr": self.llr,
            "lower": self.lower,
            "upper": self.upper,
            "decision": self.decision.value,
            "decided_at": self.decided_at,
        }


@dataclass(frozen=True)
class SprtState:
    """A test in progress: the counts so far, the LLR, and the decision once made.

    Build with ``SprtState.start`` and grow with ``add`` / ``add_counts``; each returns a
    new state (the old one is unchanged), so a state is safe to keep, share and pickle.
    """

    params: SprtParams
    penta: Pentanomial = field(default_factory=Pentanomial)
    points: PointsTally = field(default_factory=PointsTally)
    llr: float = 0.0
    decision: Decision = Decision.CONTINUE
    decided_at: int | None = None

    @classmethod
    def start(cls, params: SprtParams) -> SprtState:
        return cls(params)

    @property
    def pairs(self) -> int:
        return self.penta.pairs

    @property
    def bounds(self) -> tuple[float, float]:
        return self.params.bounds

    @property
    def finished(self) -> bool:
        return self.decision is not Decision.CONTINUE

    def add(self, pair: DealPair) -> SprtState:
        """The state after one more pair (added in deal order; see the module's docstring)."""
        if not isinstance(pair, DealPair):
            raise SprtError(f"expected a DealPair, got {pair!r}")
        x = pair.points_per_hand
        points = self.points if x is None else self.points.add(x)
        return self._advance(self.penta.add(pair), points)

    def add_counts(self, penta: Pentanomial) -> SprtState:
        """The state after a batch of pairs known only by their counts (metric elo only).

        The bounds are checked once, after the whole batch, as fishtest checks each batch.
        """
        if self.params.metric is Metric.POINTS:
            raise SprtError("metric points needs each pair's points per hand; counts alone have none")
        return self._advance(self.penta + penta, self.points)

    def _advance(self, penta: Pentanomial, points: PointsTally) -> SprtState:
        p = self.params
        if p.metric is Metric.ELO:
            ratio = llr(penta.counts(), p.h0, p.h1, p.model) if penta.pairs else 0.0
            may_stop = True
        else:
            ratio = points_llr(points, p.h0, p.h1)
            may_stop = points.n >= POINTS_MIN_PAIRS
        decision, decided_at = self.decision, self.decided_at
        if decision is Decision.CONTINUE:
            lower, upper = p.bounds
            if may_stop and ratio >= upper:
                decision = Decision.H1
            elif may_stop and ratio <= lower:
                decision = Decision.H0
            elif p.max_pairs is not None and penta.pairs >= p.max_pairs:
                decision = Decision.MAX_PAIRS
            if decision is not Decision.CONTINUE:
                decided_at = penta.pairs
        return SprtState(p, penta, points, ratio, decision, decided_at)

    def summary(self) -> SprtSummary:
        lower, upper = self.bounds
        return SprtSummary(
            params=self.params,
            pairs=self.pairs,
            penta=self.penta,
            elo=elo_estimate(self.penta.counts()),
            points=points_estimate(self.points),
            llr=self.llr,
            lower=lower,
            upper=upper,
            decision=self.decision,
            decided_at=self.decided_at,
        )


def replay(params: SprtParams, pairs: Iterable[DealPair]) -> tuple[SprtState, tuple[float, ...]]:
    """Add ``pairs`` in order: the final state and the LLR after each pair (for a plot)."""
    state = SprtState.start(params)
    trace = []
    for pair in pairs:
        state = state.add(pair)
        trace.append(state.llr)
    return state, tuple(trace)


def summarize_counts(params: SprtParams, penta: Pentanomial) -> SprtSummary:
    """The summary of a test known only by its final counts (``arena sprt --stats``): one batch."""
    return SprtState.start(params).add_counts(penta).summary()
