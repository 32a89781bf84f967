"""Elo-scale Bradley-Terry ratings fitted jointly over all match results.

Pure statistics: no I/O. The model: every bot ``i`` has a strength ``r_i`` (natural-log
units); a side's strength is the sum of its members' strengths; side A beats side B with
probability ``1 / (1 + exp(-(R_A - R_B)))``. A draw counts as half a win and half a loss
(the "ties as halves" pseudo-likelihood ``s*log p + (1-s)*log(1-p)``, as in Elo), so the
fit makes each bot's expected score equal its actual score.

The fit is the joint maximum-likelihood estimate (Newton's method on the concave
log-likelihood), optionally with a weak Gaussian prior. Reported Elo values are
``400/ln(10)`` times the natural-log strengths, centred to mean 0 per group, or shifted so
that an anchor bot reads a chosen value.

Degenerate data never produce a made-up number:

* a field split into parts that never met (disconnected comparison graph) is rated part
  by part, each centred on its own, and flagged as not comparable;
* perfectly separated results (a bot that won or lost everything, or a clique that never
  dropped a game to the rest) make the maximum-likelihood estimate infinite; such bots get
  ``elo=None`` with a status and a note, and the remaining results are rated as usual;
* team-mates who always play together cannot be told apart: only their sum is
  determined, so their individual interval is ``None`` and they are flagged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from arena.errors import ArenaError, ExitCode

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of strength (about 173.7)."""

Z95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal distribution."""

_VALID_SCORES = (0.0, 0.5, 1.0)
_MAX_NEWTON_STEPS = 200
# Eigenvalues of the information matrix below this fraction of the largest one are
# treated as zero: those directions are not determined by the data.
_NULL_TOL = 1e-9
# A margin the separation LP pushes above this (in a unit box) counts as separated.
_SEPARATION_TOL = 1e-7


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


def _check_result(index: int, raw: object) -> PairResult:
    try:
        side_a, side_b, score_a = raw  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ResultInputError(index, "expected (side_a, side_b, score_a)") from None
    sides = []
    for label, side in (("side_a", side_a), ("side_b", side_b)):
        if isinstance(side, str):
            side = (side,)
        try:
            side = tuple(side)
        except TypeError:
            raise ResultInputError(index, f"{label} must be a tuple of bot names") from None
        if not side:
            raise ResultInputError(index, f"{label} is empty")
        for member in side:
            if not isinstance(member, str) or not member.strip():
                raise ResultInputError(index, f"{label} has an empty or non-text bot name {member!r}")
        if len(set(side)) != len(side):
            raise ResultInputError(index, f"{label} lists the same bot twice: {'+'.join(side)}")
        sides.append(side)
    a, b = sides
    common = sorted(set(a) & set(b))
    if common:
        raise ResultInputError(index, f"bot {common[0]!r} is on both sides")
    if len(a) != len(b):
        # With sum-of-members strengths, uneven sides would make the absolute rating level
        # an estimated quantity rather than a free convention; refuse instead of guessing.
        raise ResultInputError(index, f"sides have different sizes ({len(a)} vs {len(b)})")
    if isinstance(score_a, bool) or not isinstance(score_a, (int, float)) or float(score_a) not in _VALID_SCORES:
        raise ResultInputError(index, f"score_a must be 1, 0.5 or 0, got {score_a!r}")
    return PairResult(a, b, float(score_a))


def pairwise_results(sides: Sequence[Sequence[str] | str], scores: Sequence[float]) -> tuple[PairResult, ...]:
    """Split one multi-side match (3 or 4 players alone, or 3 teams) into pairwise results.

    Every pair of sides becomes one result: the higher final score beats the lower, equal
    scores are a draw. This is an approximation: the pairs from one match are not
    independent games, so treating them as such overstates the evidence (intervals come
    out somewhat narrow) and each bot's match count grows by one per opponent side.
    """
    if len(sides) != len(scores):
        raise RatingError(f"{len(sides)} sides but {len(scores)} scores")
    if len(sides) < 2:
        raise RatingError("a match needs at least two sides")
    norm = [(side,) if isinstance(side, str) else tuple(side) for side in sides]
    out = []
    for i in range(len(norm)):
        for j in range(i + 1, len(norm)):
            si, sj = scores[i], scores[j]
            score = 1.0 if si > sj else 0.0 if si < sj else 0.5
            out.append(_check_result(len(out), (norm[i], norm[j], score)))
    return tuple(out)


# --------------------------------------------------------------------------- output


class Status(Enum):
    """Why a bot does or does not have a finite rating."""

    RATED = "rated"
    UNBOUNDED_ABOVE = "unbounded_above"  # won everything it played (no upsets)
    UNBOUNDED_BELOW = "unbounded_below"  # lost everything it played
    SEPARATED = "separated"  # mixed record, but every result perfectly ordered
    NOT_IDENTIFIED = "not_identified"  # never separated from its team-mates
    NO_MATCHES = "no_matches"


@dataclass(frozen=True)
class BotRating:
    """One row of the rating table. ``elo`` and ``ci95`` are Elo points; ``ci95`` is the
    half-width of the 95% interval; ``los_next`` is the probability that this bot is
    stronger than the next one in the ranking (``None`` when not comparable)."""

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

    @property
    def score(self) -> float | None:
        """Fraction of points won (a draw is half a point)."""
        return (self.wins + 0.5 * self.draws) / self.matches if self.matches else None


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
    prior: float | None = None
    anchor: str | None = None
    anchor_elo: float = 0.0
    # Covariance of (reported) Elo values between bots of the same rated group, in Elo^2.
    covariance: Mapping[tuple[str, str], float] = field(default_factory=dict, compare=False, repr=False)

    def __getitem__(self, name: str) -> BotRating:
        for row in self.ratings:
            if row.name == name:
                return row
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(row.name for row in self.ratings)

    def los(self, a: str, b: str) -> float | None:
        """Likelihood that ``a`` is stronger than ``b``, using their covariance.

        ``None`` when the two are not both rated in the same group.
        """
        ra, rb = self[a], self[b]
        if ra.status is not Status.RATED or rb.status is not Status.RATED or ra.group != rb.group:
            return None
        if a == b:
            return 0.5
        var = self.covariance[a, a] + self.covariance[b, b] - 2.0 * self.covariance[a, b]
        return likelihood_of_superiority(ra.elo - rb.elo, math.sqrt(max(var, 0.0)))  # type: ignore[operator]


# --------------------------------------------------------------------------- small pure helpers


def likelihood_of_superiority(elo_diff: float, sd_diff: float) -> float:
    """P(true difference > 0) for a normal estimate ``elo_diff`` with standard error ``sd_diff``."""
    if sd_diff <= 0.0:
        return 1.0 if elo_diff > 0 else 0.0 if elo_diff < 0 else 0.5
    return 0.5 * math.erfc(-elo_diff / (sd_diff * math.sqrt(2.0)))


def expected_score(elo_diff: float) -> float:
    """Expected score of a side rated ``elo_diff`` points above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo_diff / 400.0))


def prior_sd_elo(strength: float) -> float:
    """Standard deviation (Elo) of the Gaussian prior of the given strength.

    A strength of ``k`` has the curvature of ``k`` virtual draws against an opponent at the
    reference level (each draw between equals contributes 1/4 per nat^2).
    """
    return ELO_PER_NAT * 2.0 / math.sqrt(strength)


# --------------------------------------------------------------------------- fitting internals


@dataclass
class _Pairing:
    """All results between one canonical ordered pair of sides, aggregated."""

    side_a: tuple[str, ...]
    side_b: tuple[str, ...]
    games: int = 0
    points_a: float = 0.0

    @property
    def bots(self) -> tuple[str, ...]:
        return self.side_a + self.side_b


class _UnionFind:
    def __init__(self, items: Iterable[str]) -> None:
        self.parent = {item: item for item in items}

    def find(self, x: str) -> str:
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, items: Sequence[str]) -> None:
        first = self.find(items[0])
        for other in items[1:]:
            root = self.find(other)
            if root != first:
                self.parent[root] = first

    def groups(self) -> list[list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for item in self.parent:
            out[self.find(item)].append(item)
        return list(out.values())


def _components(bots: Iterable[str], pairings: Iterable[_Pairing]) -> list[list[str]]:
    uf = _UnionFind(bots)
    for p in pairings:
        uf.union(p.bots)
    return uf.groups()


def _design(pairings: Sequence[_Pairing], index: Mapping[str, int]) -> np.ndarray:
    x = np.zeros((len(pairings), len(index)))
    for k, p in enumerate(pairings):
        for name in p.side_a:
            x[k, index[name]] = 1.0
        for name in p.side_b:
            x[k, index[name]] = -1.0
    return x


def _design_sparse(pairings: Sequence[_Pairing], index: Mapping[str, int]) -> sparse.csr_matrix:
    rows, cols, vals = [], [], []
    for k, p in enumerate(pairings):
        for side, val in ((p.side_a, 1.0), (p.side_b, -1.0)):
            for name in side:
                rows.append(k)
                cols.append(index[name])
                vals.append(val)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(len(pairings), len(index)))


def _separated(pairings: Sequence[_Pairing], bots: Sequence[str]) -> tuple[set[int], dict[str, float]]:
    """Find the pairings whose outcome the MLE can make certain (an infinite margin).

    A direction ``v`` in rating space along which the likelihood never decreases keeps every
    unanimous pairing's margin ``z_k . v`` non-negative (``z_k`` is the design row signed
    by the winner) and every mixed pairing's margin at zero. The linear programme looks for
    such a ``v`` (in a box) that maximises the total margin; the pairings it pushes apart
    are separated. Dropping them and asking again until nothing more moves yields all
    separated pairings (a large multiple of the first direction plus the next one keeps
    the earlier margins positive). Returns their indices and the combined direction, used
    only to order the separated parts of the field.
    """
    index = {name: i for i, name in enumerate(bots)}
    n = len(bots)
    x = _design_sparse(pairings, index)
    unanimous = [k for k, p in enumerate(pairings) if p.points_a in (0.0, float(p.games))]
    mixed = np.array([k for k, p in enumerate(pairings) if p.points_a not in (0.0, float(p.games))], dtype=int)
    separated: set[int] = set()
    combined = np.zeros(n)
    if not unanimous:
        return separated, {name: 0.0 for name in bots}
    sign = np.array([1.0 if pairings[k].points_a > 0 else -1.0 for k in range(len(pairings))])
    z = sparse.diags(sign) @ x
    a_eq = x[mixed] if len(mixed) else None
    b_eq = np.zeros(len(mixed)) if len(mixed) else None
    open_rows = np.array(unanimous, dtype=int)
    while len(open_rows):
        zo = z[open_rows]
        res = linprog(
            c=-np.asarray(zo.sum(axis=0)).ravel(),
            A_ub=-zo,
            b_ub=np.zeros(len(open_rows)),
            A_eq=a_eq,
            b_eq=b_eq,
            bounds=[(-1.0, 1.0)] * n,
            method="highs",
        )
        if res.status != 0:
            raise ConvergenceError(f"separation check failed: {res.message}")
        v = res.x
        margins = zo @ v
        moved = margins > _SEPARATION_TOL
        if not moved.any():
            break
        if separated:
            # Keep the earlier separated margins positive in the combined direction.
            old = np.array(sorted(separated), dtype=int)
            old_m, new_m = z[old] @ combined, z[old] @ v
            scale = 1.0 + float(np.max(np.maximum(-new_m, 0.0) / old_m))
            combined = scale * combined + v
        else:
            combined = v
        separated.update(int(k) for k in open_rows[moved])
        open_rows = open_rows[~moved]
    return separated, {name: float(combined[i]) for name, i in index.items()}


@dataclass(frozen=True)
class _Fit:
    strengths: np.ndarray  # natural-log units
    covariance: np.ndarray  # generalised inverse of the information matrix
    null_projector: np.ndarray  # projector onto directions the data do not determine


def _loglik(x: np.ndarray, points: np.ndarray, games: np.ndarray, r: np.ndarray, precision: float) -> float:
    d = x @ r
    # log sigma(d) = -log(1 + e^-d), computed without overflow.
    ll = -(points * np.logaddexp(0.0, -d) + (games - points) * np.logaddexp(0.0, d)).sum()
    return float(ll - 0.5 * precision * r @ r)


def _newton(pairings: Sequence[_Pairing], bots: Sequence[str], precision: float) -> _Fit:
    index = {name: i for i, name in enumerate(bots)}
    x = _design(pairings, index)
    games = np.array([p.games for p in pairings], dtype=float)
    points = np.array([p.points_a for p in pairings], dtype=float)
    n = len(bots)
    r = np.zeros(n)
    ll = _loglik(x, points, games, r, precision)
    for _ in range(_MAX_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ r)))
        grad = x.T @ (points - games * p) - precision * r
        if np.max(np.abs(grad), initial=0.0) < 1e-12 * max(1.0, float(games.sum())):
            break
        info = x.T @ ((games * p * (1.0 - p))[:, None] * x) + precision * np.eye(n)
        # Minimum-norm step: starting from 0 the iterates stay orthogonal to the directions
        # the data do not determine, so those (the common level, inseparable team-mates)
        # settle at their even split.
        step = np.linalg.lstsq(info, grad, rcond=None)[0]
        t = 1.0
        while True:
            candidate = r + t * step
            new_ll = _loglik(x, points, games, candidate, precision)
            if new_ll >= ll - 1e-12 * (1.0 + abs(ll)) or t < 1e-10:
                break
            t *= 0.5
        r, ll = candidate, new_ll
        if np.max(np.abs(t * step)) < 1e-11:
            break
    else:
        raise ConvergenceError(f"no convergence after {_MAX_NEWTON_STEPS} Newton steps")
    p = 1.0 / (1.0 + np.exp(-(x @ r)))
    info = x.T @ ((games * p * (1.0 - p))[:, None] * x) + precision * np.eye(n)
    eigval, eigvec = np.linalg.eigh(info)
    cutoff = _NULL_TOL * max(float(eigval.max(initial=0.0)), 1e-300)
    keep = eigval > cutoff
    cov = (eigvec[:, keep] / eigval[keep]) @ eigvec[:, keep].T
    null = eigvec[:, ~keep]
    return _Fit(r, cov, null @ null.T)


def _all_matches(n: int) -> str:
    return "its only match" if n == 1 else f"all {n} matches"


# --------------------------------------------------------------------------- the fit


@dataclass
class _Record:
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0


@dataclass
class _Row:
    name: str
    status: Status
    elo: float | None = None
    ci95: float | None = None
    note: str = ""
    level: float = 0.0  # position along the separation direction, for ordering


def fit_ratings(
    results: Iterable[PairResult | tuple[Sequence[str], Sequence[str], float]],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    prior: float | None = None,
    players: Iterable[str] = (),
) -> RatingTable:
    """Fit Elo-scale Bradley-Terry ratings to all ``results`` jointly.

    ``anchor`` pins that bot at ``anchor_elo`` (its group is then reported relative to it;
    other groups are centred on ``anchor_elo``); otherwise every group has mean 0.
    ``prior`` (off by default) adds a Gaussian prior centred on the reference level with the
    curvature of ``prior`` virtual draws per bot (see :func:`prior_sd_elo`); it makes every
    rating finite. ``players`` lists extra bots to show even if they played no match.
    """
    checked = [_check_result(i, raw) for i, raw in enumerate(results)]
    if prior is not None and not (prior > 0.0 and math.isfinite(prior)):
        raise RatingError(f"prior strength must be a positive number, got {prior!r}")
    if not math.isfinite(anchor_elo):
        raise RatingError(f"anchor Elo must be a finite number, got {anchor_elo!r}")

    records: dict[str, _Record] = {}
    for name in players:
        records.setdefault(name, _Record())
    pairings: dict[tuple[tuple[str, ...], tuple[str, ...]], _Pairing] = {}
    for res in checked:
        a, b, s = tuple(sorted(res.side_a)), tuple(sorted(res.side_b)), res.score_a
        if b < a:
            a, b, s = b, a, 1.0 - s
        pairing = pairings.setdefault((a, b), _Pairing(a, b))
        pairing.games += 1
        pairing.points_a += s
        for side, own in ((res.side_a, res.score_a), (res.side_b, 1.0 - res.score_a)):
            for name in side:
                rec = records.setdefault(name, _Record())
                rec.matches += 1
                rec.wins += own == 1.0
                rec.draws += own == 0.5
                rec.losses += own == 0.0

    if anchor is not None and anchor not in records:
        raise AnchorError(anchor, "no such bot in the results")

    precision = 0.0 if prior is None else prior / 4.0
    all_pairings = list(pairings.values())
    rows: dict[str, _Row] = {}
    covariance: dict[tuple[str, str], float] = {}
    # Each entry: (component index, level, members) for a set of mutually comparable bots.
    clusters: list[tuple[int, float, list[str]]] = []
    components = sorted(_components(records, all_pairings), key=lambda c: (-len(c), min(c)))
    comp_of = {name: ci for ci, comp in enumerate(components) for name in comp}
    by_component: dict[int, list[_Pairing]] = defaultdict(list)
    for p in all_pairings:
        by_component[comp_of[p.side_a[0]]].append(p)

    for ci, comp in enumerate(components):
        comp_pairings = by_component[ci]
        if not comp_pairings:
            (name,) = comp
            rows[name] = _Row(name, Status.NO_MATCHES, note="no matches")
            clusters.append((ci, 0.0, [name]))
            continue
        comp = sorted(comp)
        separated: set[int] = set()
        direction = {name: 0.0 for name in comp}
        if prior is None:
            separated, direction = _separated(comp_pairings, comp)
        kept = [p for k, p in enumerate(comp_pairings) if k not in separated]
        for part in _components(comp, kept):
            part = sorted(part)
            level = sum(direction[name] for name in part) / len(part)
            clusters.append((ci, level, part))
            part_set = set(part)
            part_pairings = [p for p in kept if p.side_a[0] in part_set]
            if not part_pairings:
                (name,) = part
                rows[name] = _singleton_row(name, records[name], level)
                continue
            fit = _newton(part_pairings, part, precision)
            _rate_part(part, fit, anchor, anchor_elo, rows, covariance, level)

    if anchor is not None and rows[anchor].status is not Status.RATED:
        raise AnchorError(anchor, f"it has no finite rating ({rows[anchor].note})")
    table_rows, groups, notes = _assemble(records, rows, clusters, components, anchor, anchor_elo, prior, covariance)
    return RatingTable(
        ratings=table_rows,
        groups=groups,
        notes=notes,
        prior=prior,
        anchor=anchor,
        anchor_elo=anchor_elo,
        covariance=covariance,
    )


def _singleton_row(name: str, rec: _Record, level: float) -> _Row:
    hint = "use --prior to get a finite estimate"
    if rec.wins == rec.matches:
        return _Row(
            name,
            Status.UNBOUNDED_ABOVE,
            note=f"won {_all_matches(rec.matches)}: rating unbounded above; {hint}",
            level=level,
        )
    if rec.losses == rec.matches:
        return _Row(
            name,
            Status.UNBOUNDED_BELOW,
            note=f"lost {_all_matches(rec.matches)}: rating unbounded below; {hint}",
            level=level,
        )
    return _Row(
        name,
        Status.SEPARATED,
        note=(
            f"{rec.wins}-{rec.draws}-{rec.losses} with no upset: every result is perfectly "
            f"ordered, so the rating is unbounded; {hint}"
        ),
        level=level,
    )


def _rate_part(
    part: list[str],
    fit: _Fit,
    anchor: str | None,
    anchor_elo: float,
    rows: dict[str, _Row],
    covariance: dict[tuple[str, str], float],
    level: float,
) -> None:
    n = len(part)
    idx = {name: i for i, name in enumerate(part)}
    # A bot's own rating is determined iff the contrast "bot minus the group mean" is
    # orthogonal to every undetermined direction other than the common level.
    ones = np.full(n, 1.0 / n)
    contrasts = np.eye(n) - ones  # row i: e_i - mean
    identified = [float(c @ fit.null_projector @ c) < 1e-8 for c in contrasts]
    ref = anchor_elo if anchor is not None else 0.0
    if anchor is not None and anchor in idx:
        if not identified[idx[anchor]]:
            raise AnchorError(anchor, "its rating is not separable from its team-mates'")
        contrasts = np.eye(n)
        contrasts[:, idx[anchor]] -= 1.0  # row i: e_i - e_anchor
    centre = contrasts @ fit.strengths
    cov = ELO_PER_NAT**2 * (contrasts @ fit.covariance @ contrasts.T)
    for name, i in idx.items():
        if identified[i]:
            rows[name] = _Row(
                name,
                Status.RATED,
                elo=ref + ELO_PER_NAT * float(centre[i]),
                ci95=Z95 * math.sqrt(max(float(cov[i, i]), 0.0)),
                level=level,
            )
        else:
            rows[name] = _Row(
                name,
                Status.NOT_IDENTIFIED,
                elo=ref + ELO_PER_NAT * float(centre[i]),
                note="always played with the same team-mates: only the team's sum is determined (even split shown)",
                level=level,
            )
    for a, i in idx.items():
        for b, j in idx.items():
            if identified[i] and identified[j]:
                covariance[a, b] = float(cov[i, j])


def _assemble(
    records: Mapping[str, _Record],
    rows: Mapping[str, _Row],
    clusters: list[tuple[int, float, list[str]]],
    components: list[list[str]],
    anchor: str | None,
    anchor_elo: float,
    prior: float | None,
    covariance: Mapping[tuple[str, str], float],
) -> tuple[tuple[BotRating, ...], tuple[RatingGroup, ...], tuple[str, ...]]:
    # Components in size order; within one, separated parts from the top down.

    def sort_key(name: str) -> tuple[float, str]:
        elo = rows[name].elo
        return (-elo if elo is not None else math.inf, name)

    # Group ids follow the ranking order. A group is a set of bots rated on one common
    # scale: the largest rated part of each connected component is its main group, and
    # that component's unbounded bots join it (they are ordered relative to it, just not
    # by a finite amount); any other rated part is a group of its own.
    main_part: dict[int, int] = {}
    for pos, (ci, _level, members) in enumerate(clusters):
        if len(members) > 1 and len(members) > len(clusters[main_part[ci]][2] if ci in main_part else ()):
            main_part[ci] = pos
    gid_of_cluster: dict[object, int] = {}
    comp_gid: dict[int, int] = {}
    order = sorted(range(len(clusters)), key=lambda k: (clusters[k][0], -clusters[k][1], -len(clusters[k][2]), clusters[k][2][0]))
    next_gid = 1
    for k in order:
        ci, _level, members = clusters[k]
        key: object = main_part.get(ci, ("component", ci)) if len(members) == 1 else k
        if key not in gid_of_cluster:
            gid_of_cluster[key] = next_gid
            next_gid += 1
        gid_of_cluster[k] = gid_of_cluster[key]
        if main_part.get(ci) == k:
            comp_gid[ci] = gid_of_cluster[k]

    group_of: dict[str, int] = {}
    members_of: dict[int, list[str]] = defaultdict(list)
    group_note: dict[int, str] = {}
    sequence: list[str] = []
    for k in order:
        ci, _level, members = clusters[k]
        gid = gid_of_cluster[k]
        members = sorted(members, key=sort_key)
        if len(members) > 1 and comp_gid[ci] != gid:
            group_note[gid] = (
                f"no upset between group {gid} and group {comp_gid[ci]}: the gap between them is "
                "unbounded, so they are rated separately; use --prior to compare them"
            )
        for name in members:
            group_of[name] = gid
            members_of[gid].append(name)
        sequence.extend(members)
    groups = [RatingGroup(gid, tuple(members_of[gid]), group_note.get(gid, "")) for gid in sorted(members_of)]

    n_components = len({ci for ci, _, _ in clusters})
    notes: list[str] = []
    if n_components > 1:
        notes.append(
            f"the field splits into {n_components} parts that never met (directly or "
            "through common opponents); ratings are only comparable within a group"
        )
    if any(g.note for g in groups):
        notes.append("some results are perfectly separated (no upsets); see the notes column")
    if prior is not None:
        notes.append(
            f"prior: {prior:g} virtual draws per bot against the reference level "
            f"(Gaussian, sd {prior_sd_elo(prior):.0f} Elo)"
        )
    if anchor is not None:
        notes.append(f"anchor: {anchor} = {anchor_elo:g}")

    out: list[BotRating] = []
    for pos, name in enumerate(sequence):
        row, rec = rows[name], records[name]
        los = None
        if pos + 1 < len(sequence):
            nxt = sequence[pos + 1]
            if (
                group_of[nxt] == group_of[name]
                and row.status is Status.RATED
                and rows[nxt].status is Status.RATED
            ):
                var = covariance[name, name] + covariance[nxt, nxt] - 2.0 * covariance[name, nxt]
                los = likelihood_of_superiority(row.elo - rows[nxt].elo, math.sqrt(max(var, 0.0)))  # type: ignore[operator]
        gnote = group_note.get(group_of[name], "")
        note = row.note
        if gnote and not note:
            note = gnote
        elif n_components > 1 and group_of[name] != 1 and not note and row.status is Status.RATED:
            note = f"group {group_of[name]}: not comparable with other groups"
        out.append(
            BotRating(
                rank=pos + 1,
                name=name,
                elo=row.elo,
                ci95=row.ci95,
                los_next=los,
                matches=rec.matches,
                wins=rec.wins,
                draws=rec.draws,
                losses=rec.losses,
                group=group_of[name],
                status=row.status,
                note=note,
            )
        )
    return tuple(out), tuple(groups), tuple(notes)
