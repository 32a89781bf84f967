"""The statistics of game pairs: log-likelihood ratios, Elo with its interval, nElo and LOS.

Pure functions of result counts, with the definitions fishtest (``server/fishtest/stats``:
``LLRcalc.py``, ``stat_util.py``, ``sprt.py``) and fastchess
(``app/src/matchmaking/sprt``, ``app/src/matchmaking/elo``) use; written from their
formulas and M. Van den Bergh's notes ("Comments on normalized Elo", "Support for MLE of
multinomial distributions"), checked against their published numbers in
``tests/sprt/test_sprt.py``.

Counts come in one of two shapes, lowest score first, exactly as fishtest and fastchess
order them:

* a pentanomial ``[LL, LD, DD, WD, WW]`` of game pairs, the middle bin holding both DD
  and WL (a pair score of 0, 0.5, 1, 1.5, 2 points);
* a trinomial ``[L, D, W]`` of single games (kept for comparison with published
  trinomial numbers; the arena itself always plays pairs).

Each bin stands for a score ``a_i = i / (K - 1)`` on [0, 1] (a pair's mean score per game
for the pentanomial). The log-likelihood ratio is the generalized one: the likelihood of
the counts under the most likely distribution on these ``K`` values whose statistic (the
expected score, logistic model; or the t-value, normalized model) equals the hypothesis,
divided by the same under the other hypothesis. Empty bins are replaced by 0.001 pairs
("regularized") for the ratio, as both projects do, so it is always finite.

The functions are vectorized over leading axes (``counts`` of shape ``(..., K)``) so a
simulation can evaluate thousands of count vectors at once; the sequential test calls
them with one vector.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

import numpy as np
import numpy.typing as npt

from arena.rating.table import Z95, expected_score, likelihood_of_superiority
from arena.sprt.errors import CountsError, UnreachableHypothesisError

FloatArray = npt.NDArray[np.float64]

NELO_PER_T = 800.0 / math.log(10.0)
"""Normalized Elo per unit of per-game t-value (about 347.44; fishtest's ``nelo_divided_by_nt``)."""

REGULARIZATION = 1e-3
"""What an empty bin counts as in the likelihood ratio (fishtest's and fastchess's ``regularize``)."""

ELO_SCORE_CLAMP = 1e-3
"""Scores are clamped to [0.001, 0.999] before conversion to Elo (fishtest's ``elo``): at most about 1200 Elo."""

ELO_LIMITS = {"normalized": 200.0, "logistic": 800.0}
"""The largest |elo0|, |elo1| each model takes. Beyond 200 nElo the normalized model's fixed
point cannot take its first step (from the uniform distribution no multiplier keeps every
probability positive); 800 logistic Elo is an expected score of 0.99. Sequential tests
are for small differences: fishtest's bounds are a few Elo."""

# The inner root finder stops when a step moves the multiplier by less than this
# (relative); the normalized model's fixed point stops when no probability moves more
# than _FIXED_POINT_TOL. Both far below what any printed digit needs.
_ROOT_TOL = 1e-14
_ROOT_MAX_STEPS = 200
_FIXED_POINT_TOL = 1e-13
_FIXED_POINT_MAX_STEPS = 200


class EloModel(str, Enum):
    """What elo0 and elo1 measure."""

    NORMALIZED = "normalized"
    """Normalized Elo (nElo): the expected score's distance from 1/2 in standard deviations per game."""

    LOGISTIC = "logistic"
    """Logistic Elo: expected score ``1 / (1 + 10^(-elo/400))``."""


def score_to_elo(score: float) -> float:
    """Logistic Elo of an expected score per game, the score clamped to [0.001, 0.999] as fishtest does."""
    s = min(max(score, ELO_SCORE_CLAMP), 1.0 - ELO_SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / s - 1.0)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the log-likelihood ratio: ``(log(beta/(1-alpha)), log((1-beta)/alpha))``."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def check_counts(counts: object) -> tuple[int, ...]:
    """Counts as a tuple of 3 or 5 non-negative ints, or ``CountsError``."""
    if not isinstance(counts, Iterable) or isinstance(counts, (str, bytes)):
        raise CountsError(f"counts: expected 3 or 5 whole numbers, got {counts!r}")
    items = tuple(counts)
    if len(items) not in (3, 5):
        raise CountsError(f"counts: expected 3 (L D W) or 5 (LL LD DD WD WW) numbers, got {len(items)}")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)) or item < 0:
            raise CountsError(f"counts: expected non-negative whole numbers, got {item!r}")
    return tuple(int(item) for item in items)


def _as_count_array(counts: npt.ArrayLike) -> FloatArray:
    array = np.asarray(counts, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] not in (3, 5):
        raise CountsError(f"counts: expected a last axis of 3 or 5 bins, got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise CountsError("counts: expected non-negative finite numbers")
    return array


def _support(bins: int) -> FloatArray:
    """The scores of the bins as a column: shape (bins, 1)."""
    return np.linspace(0.0, 1.0, bins)[:, None]


def _regularized_pdf(counts: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(total per column, probabilities) of counts laid out bins-first, shape (K, M)."""
    reg = np.where(counts == 0, REGULARIZATION, counts)
    total = reg.sum(axis=0)
    return total, reg / total


def _secular_root(d: FloatArray, w: FloatArray) -> FloatArray:
    """Per column, the ``x`` solving ``sum_i w_i d_i / (1 + x d_i) = 0`` with every ``1 + x d_i > 0``.

    Shapes (K, M): ``w`` are probabilities (all positive), ``d`` has both signs in every
    column. The sum falls strictly as ``x`` grows, and at the root ``w_i / (1 + x d_i)``
    are themselves probabilities (each at most 1), which brackets the root. Newton steps
    from the linearized solution, kept inside the bracket (bisection otherwise), converge
    in a few steps when the hypothesis is near the data, the usual case.
    """
    if np.any(np.all(d >= 0, axis=0)) or np.any(np.all(d <= 0, axis=0)):
        raise UnreachableHypothesisError("the hypothesis is too far from the observed scores for the likelihood ratio")
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = (w - 1.0) / d
    lo = np.max(np.where(d > 0, limit, -np.inf), axis=0)
    hi = np.min(np.where(d < 0, limit, np.inf), axis=0)
    guess = np.sum(w * d, axis=0) / np.sum(w * d * d, axis=0)
    x = np.where((guess > lo) & (guess < hi), guess, 0.0)
    todo = np.arange(x.shape[0])
    for _ in range(_ROOT_MAX_STEPS):
        xt, dt, wt = x[todo], d[:, todo], w[:, todo]
        q = 1.0 + xt * dt
        wdq = wt * dt / q
        f = np.sum(wdq, axis=0)
        slope = -np.sum(wdq * dt / q, axis=0)
        lo_t = np.where(f > 0, xt, lo[todo])
        hi_t = np.where(f < 0, xt, hi[todo])
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = xt - f / slope
        step = np.where(f == 0, xt, np.where((newton > lo_t) & (newton < hi_t), newton, 0.5 * (lo_t + hi_t)))
        x[todo], lo[todo], hi[todo] = step, lo_t, hi_t
        todo = todo[np.abs(step - xt) > _ROOT_TOL * (1.0 + np.abs(xt))]
        if todo.size == 0:
            break
    return x


def _mle_expected_log_ratio(w: FloatArray, a: FloatArray, s: FloatArray) -> FloatArray:
    """``log(w_i / p_i)`` for the most likely ``p`` with expected score ``s`` (per column), given ``w``.

    The maximizer is ``p_i = w_i / (1 + x (a_i - s))`` with ``x`` the secular root.
    """
    d = a - s
    x = _secular_root(d, w)
    return np.log1p(x * d)


def _mle_t_log_ratio(w: FloatArray, a: FloatArray, ref: float, t: float) -> FloatArray:
    """``log(w_i / p_i)`` for the most likely ``p`` whose t-value ``(mu - ref) / sigma`` is ``t``.

    Van den Bergh's fixed point (normalized Elo notes, section 4.1): with ``mu``,
    ``sigma`` of the current ``p``, ``phi_i = a_i - ref - t sigma (1 + ((a_i - mu)/sigma)^2) / 2``
    and ``p_i = w_i / (1 + x phi_i)`` with ``x`` the secular root for ``phi``; repeated
    from the uniform distribution (as fishtest and fastchess start) until ``p`` stops moving.
    """
    p = np.full(w.shape, 1.0 / w.shape[0])
    log_ratio = np.zeros(w.shape)
    todo = np.arange(w.shape[1])
    for _ in range(_FIXED_POINT_MAX_STEPS):
        pt, wt = p[:, todo], w[:, todo]
        mu = np.sum(pt * a, axis=0)
        sigma = np.sqrt(np.sum(pt * (a - mu) ** 2, axis=0))
        phi = a - ref - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2)
        x = _secular_root(phi, wt)
        log_ratio[:, todo] = np.log1p(x * phi)
        p_next = wt / (1.0 + x * phi)
        moved = np.max(np.abs(p_next - pt), axis=0)
        p[:, todo] = p_next
        todo = todo[moved >= _FIXED_POINT_TOL]
        if todo.size == 0:
            break
    return log_ratio


def llr_array(counts: npt.ArrayLike, elo0: float, elo1: float, model: EloModel) -> FloatArray:
    """The generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), per count vector.

    ``counts`` has shape ``(..., K)`` with K = 5 (pairs) or 3 (games); the result has the
    leading shape. It is ``N * sum_i w_i (log p1_i - log p0_i)`` with ``w`` the regularized
    observed frequencies, ``N`` their regularized total and ``p0``, ``p1`` the most likely
    distributions under each hypothesis (fishtest's ``LLR_logistic`` / ``LLR_normalized``,
    fastchess's ``getLLR_logistic`` / ``getLLR_normalized``). A row of zero counts gives 0.
    """
    model = EloModel(model)
    for name, value in (("elo0", elo0), ("elo1", elo1)):
        limit = ELO_LIMITS[model.value]
        if not -limit <= value <= limit:
            raise UnreachableHypothesisError(
                f"{name}: at most {limit:g} in absolute value with the {model.value} model, got {value:g}"
            )
    array = _as_count_array(counts)
    lead, bins = array.shape[:-1], array.shape[-1]
    columns = array.reshape(-1, bins).T
    a = _support(bins)
    total, w = _regularized_pdf(columns)
    if model is EloModel.LOGISTIC:
        log_ratio0 = _mle_expected_log_ratio(w, a, np.full(total.shape, expected_score(elo0)))
        log_ratio1 = _mle_expected_log_ratio(w, a, np.full(total.shape, expected_score(elo1)))
    else:
        # A pair's mean score has half a game's variance: its t-value is sqrt(2) times the per-game one.
        scale = math.sqrt(2.0) if bins == 5 else 1.0
        log_ratio0 = _mle_t_log_ratio(w, a, 0.5, scale * elo0 / NELO_PER_T)
        log_ratio1 = _mle_t_log_ratio(w, a, 0.5, scale * elo1 / NELO_PER_T)
    # log p1 - log p0 = log(w/p0) - log(w/p1)
    llr: FloatArray = total * np.sum(w * (log_ratio0 - log_ratio1), axis=0)
    llr = np.where(columns.sum(axis=0) == 0, 0.0, llr)
    return llr.reshape(lead)


def llr(counts: object, elo0: float, elo1: float, model: EloModel = EloModel.NORMALIZED) -> float:
    """The log-likelihood ratio for one pentanomial (or trinomial) of counts; see ``llr_array``."""
    return float(llr_array(check_counts(counts), elo0, elo1, model))


@dataclass(frozen=True)
class EloEstimate:
    """What a fixed sample of pairs says about the strength difference (first bot minus second).

    ``elo`` is logistic Elo, ``elo_error`` the half-width of its 95% interval (the interval
    on the score mapped to Elo, its two sides averaged, as fishtest and fastchess print
    it), ``nelo`` and ``nelo_error`` the same in normalized Elo, ``los`` the likelihood of
    superiority (the probability that the first bot is the stronger), ``score`` the mean
    score per game and ``stdev`` the standard deviation of one game's score (for pairs: the
    standard deviation of a pair's 0-2 points divided by sqrt(2)).
    """

    elo: float
    elo_error: float
    nelo: float
    nelo_error: float
    los: float
    score: float
    stdev: float

    @property
    def elo_interval(self) -> tuple[float, float]:
        return self.elo - self.elo_error, self.elo + self.elo_error


def _moments(counts: list[float], a: list[float]) -> tuple[float, float, float]:
    """(total, mean score, variance of the score) of counts over the scores ``a``."""
    n = sum(counts)
    score = sum(c * x for c, x in zip(counts, a, strict=True)) / n
    var = sum(c * (x - score) ** 2 for c, x in zip(counts, a, strict=True)) / n
    return n, score, var


def elo_estimate(counts: object) -> EloEstimate | None:
    """Elo +- 95%, nElo +- 95% and LOS from pentanomial (or trinomial) counts; ``None`` for no results.

    fastchess's ``EloPentanomial`` / ``EloWDL`` on the raw counts. Only when every result
    sits in one bin (the spread is zero and fastchess prints inf or nan) the counts are
    regularized as fishtest's ``get_elo`` always does, so the numbers stay finite; with no
    empty bin fishtest's numbers are the same as fastchess's.
    """
    raw = [float(c) for c in check_counts(counts)]
    if sum(raw) == 0:
        return None
    bins = len(raw)
    a = [i / (bins - 1) for i in range(bins)]
    n, score, var = _moments(raw, a)
    if var == 0.0:
        n, score, var = _moments([c if c else REGULARIZATION for c in raw], a)
    # A pair's mean score has half the variance of one game's.
    var_per_game = var * (bins - 1) / 2.0
    stderr = math.sqrt(var / n)
    low, high = score - Z95 * stderr, score + Z95 * stderr
    elo = score_to_elo(score)
    elo_error = (score_to_elo(high) - score_to_elo(low)) / 2.0
    stdev = math.sqrt(var_per_game)
    nelo = (score - 0.5) / stdev * NELO_PER_T
    nelo_error = Z95 * stderr / stdev * NELO_PER_T
    los = likelihood_of_superiority(score - 0.5, stderr)
    return EloEstimate(elo=elo, elo_error=elo_error, nelo=nelo, nelo_error=nelo_error, los=los, score=score, stdev=stdev)
