"""Ratings for matches of three or more sides (Plackett-Luce), the default prior, and the
large-field code paths, checked against closed forms and independent implementations."""

from __future__ import annotations

import itertools
import math

import choix
import numpy as np
import pytest
from scipy.optimize import minimize

from arena.rating import engine as ratings_engine
from arena.rating import fit as ratings_fit
from arena.rating.table import (
    DEFAULT_PRIOR,
    ELO_PER_NAT,
    Z95,
    MatchResult,
    Model,
    PairResult,
    ResultInputError,
    Status,
    fit_ratings,
)


def _plackett_luce(rng: np.random.Generator, strengths: np.ndarray, sides: int, matches: int, team: int = 1):
    """Random matches of ``sides`` sides of ``team`` bots, finishing order drawn from Plackett-Luce."""
    n = len(strengths)
    out = []
    for _ in range(matches):
        seats = rng.permutation(n)[: sides * team].reshape(sides, team)
        keys = strengths[seats].sum(axis=1) + rng.gumbel(size=sides)
        places = 1 + np.argsort(np.argsort(-keys))
        out.append(MatchResult(tuple(tuple(f"b{i}" for i in side) for side in seats), tuple(int(p) for p in places)))
    return out


def _orders(places: tuple[int, ...]) -> list[list[int]]:
    """Every order of the sides consistent with the places (tied sides in every order)."""
    tiers = [[i for i, p in enumerate(places) if p == value] for value in sorted(set(places))]
    return [list(itertools.chain.from_iterable(p)) for p in itertools.product(*(itertools.permutations(t) for t in tiers))]


def _neg_loglik(r: np.ndarray, matches: list[MatchResult], index: dict[str, int], precision: float = 0.0) -> float:
    """The Plackett-Luce log-likelihood with ties averaged over their orders, written out."""
    total = 0.0
    for m in matches:
        power = [sum(r[index[x]] for x in side) for side in m.sides]
        orders = _orders(m.places)
        for order in orders:
            for t in range(len(order) - 1):
                rest = order[t:]
                total += (power[order[t]] - math.log(sum(math.exp(power[k]) for k in rest))) / len(orders)
    return -(total - 0.5 * precision * float(r @ r))


def _elo(table, n: int) -> np.ndarray:
    return np.array([table[f"b{i}"].elo for i in range(n)])


# --------------------------------------------------------------------------- closed form and choix


def test_three_player_closed_form():
    # a first 4 times, second 2 times, last 2 times; b and c symmetric. With t = e^(r_a - r_b)
    # the likelihood equation is 3 t^2 - t - 6 = 0 (worked out in the test's comment below).
    orders = [("a", "b", "c"), ("a", "c", "b")] * 2 + [("b", "a", "c"), ("c", "a", "b"), ("b", "c", "a"), ("c", "b", "a")]
    matches = [MatchResult(tuple((x,) for x in order), (1, 2, 3)) for order in orders]
    # d/ds log L = (x + z) - N t/(t + 2) - (y + z) t/(1 + t) with x=4 (a first), z=2 (a second),
    # y=2 (a last), N=8: 6 (t+2)(t+1) = 8 t (t+1) + 4 t (t+2), i.e. 3 t^2 - t - 6 = 0.
    s = math.log((1.0 + math.sqrt(73.0)) / 6.0)
    table = fit_ratings(matches, prior=0)
    assert table.model is Model.PLACKETT_LUCE
    assert table["a"].elo == pytest.approx(ELO_PER_NAT * 2.0 * s / 3.0, abs=1e-9)
    assert table["b"].elo == pytest.approx(-ELO_PER_NAT * s / 3.0, abs=1e-9)
    assert table["c"].elo == pytest.approx(table["b"].elo, abs=1e-9)
    assert (table["a"].matches, table["a"].places) == (8, (4, 2, 2))
    assert table["b"].places == (2, 3, 3)
    assert any(note.startswith("model: Plackett-Luce") for note in table.notes)


@pytest.mark.slow
@pytest.mark.parametrize("sides", [3, 4])
@pytest.mark.parametrize("prior", [0.0, 2.0])
def test_matches_choix_plackett_luce(sides: int, prior: float):
    rng = np.random.default_rng(100 + sides)
    n = 7
    strengths = rng.normal(0.0, 0.8, n)
    matches = _plackett_luce(rng, strengths, sides, matches=150)
    rankings = [[int(m.sides[k][0][1:]) for k in np.argsort(m.places)] for m in matches]
    table = fit_ratings(matches, prior=prior)
    # choix's optimiser adds alpha * |theta|^2 (a Gaussian prior of precision 2 alpha); ours
    # has precision prior / 4. It starts from ours moved by a random step of about 0.2 (about
    # 35 Elo) a bot, not from zero: its objective is convex, so it ends at the one optimum
    # wherever it starts (ours or not), in a fraction of the evaluations (choix's are slow).
    start = _elo(table, n) / ELO_PER_NAT + rng.normal(0.0, 0.2, n)
    theirs = choix.opt_rankings(n, rankings, alpha=prior / 8.0, method="BFGS", tol=1e-12, initial_params=start)
    if prior == 0.0:
        theirs = theirs - theirs.mean()
    assert all(row.status is Status.RATED for row in table.ratings)
    np.testing.assert_allclose(_elo(table, n), theirs * ELO_PER_NAT, atol=1e-3)
    assert all(row.matches == sum(row.places) for row in table.ratings)
    assert sum(row.matches for row in table.ratings) == sides * len(matches)  # a match counts once per bot


@pytest.mark.slow
def test_ties_and_teams_match_direct_maximisation_and_numeric_hessian():
    rng = np.random.default_rng(5)
    n = 8
    strengths = rng.normal(0.0, 0.6, n)
    matches = _plackett_luce(rng, strengths, sides=3, matches=220, team=2)
    # Some ties: the last two sides share the place in every fifth match.
    matches = [MatchResult(m.sides, tuple(min(p, 2) for p in m.places)) if k % 5 == 0 else m for k, m in enumerate(matches)]
    index = {f"b{i}": i for i in range(n)}
    basis = np.linalg.qr(np.vstack([np.ones(n), np.eye(n)[:-1]]).T)[0][:, 1:]

    def f(theta):
        return _neg_loglik(basis @ theta, matches, index)

    opt = minimize(f, np.zeros(n - 1), method="BFGS", options={"gtol": 1e-9})
    table = fit_ratings(matches, prior=0)
    np.testing.assert_allclose(_elo(table, n), basis @ opt.x * ELO_PER_NAT, atol=1e-3)
    h, k = 1e-4, n - 1
    hess = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            ea, eb = np.eye(k)[a] * h, np.eye(k)[b] * h
            hess[a, b] = (f(opt.x + ea + eb) - f(opt.x + ea - eb) - f(opt.x - ea + eb) + f(opt.x - ea - eb)) / (4 * h * h)
    cov = basis @ np.linalg.inv(hess) @ basis.T * ELO_PER_NAT**2
    np.testing.assert_allclose([table[f"b{i}"].ci95 for i in range(n)], Z95 * np.sqrt(np.diag(cov)), rtol=2e-3)
    # LOS uses the same covariance.
    first, second = table.ratings[0], table.ratings[1]
    i, j = int(first.name[1:]), int(second.name[1:])
    sd = math.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])
    assert first.los_next == pytest.approx(0.5 * math.erfc(-(first.elo - second.elo) / (sd * math.sqrt(2))), rel=2e-3)


def test_prior_map_matches_direct_maximisation_with_ties():
    rng = np.random.default_rng(9)
    n = 5
    matches = _plackett_luce(rng, rng.normal(0.0, 1.0, n), sides=4, matches=12)
    matches += [MatchResult((("b0",), ("b1",), ("b2",)), (1, 1, 1)), MatchResult((("b3",), ("b4",), ("b0",)), (2, 1, 1))]
    index = {f"b{i}": i for i in range(n)}
    opt = minimize(lambda r: _neg_loglik(r, matches, index, precision=0.5), np.zeros(n), method="BFGS", options={"gtol": 1e-10})
    table = fit_ratings(matches)  # the default prior: 2 virtual draws, precision 1/2
    assert table.prior == DEFAULT_PRIOR == 2.0
    np.testing.assert_allclose(_elo(table, n), opt.x * ELO_PER_NAT, atol=1e-3)


def test_two_sided_matches_are_bradley_terry_either_way():
    rng = np.random.default_rng(4)
    pairs = []
    for _ in range(60):
        i, j = rng.choice(5, 2, replace=False)
        pairs.append(PairResult((f"b{i}",), (f"b{j}",), float(rng.choice([0.0, 0.5, 1.0]))))
    as_matches = [
        MatchResult((p.side_a, p.side_b), (1, 2) if p.score_a == 1 else (2, 1) if p.score_a == 0 else (1, 1)) for p in pairs
    ]
    a, b = fit_ratings(pairs, prior=0), fit_ratings(as_matches, prior=0)
    assert b.model is Model.BRADLEY_TERRY
    for row in a.ratings:
        assert b[row.name].elo == pytest.approx(row.elo, abs=1e-9)
        assert b[row.name].ci95 == pytest.approx(row.ci95, rel=1e-9)
        assert (b[row.name].wins, b[row.name].draws, b[row.name].losses) == (row.wins, row.draws, row.losses)
        assert b[row.name].places == ()


# --------------------------------------------------------------------------- the default prior


def test_default_prior_gives_perfect_records_finite_ratings_in_order():
    # A small field where every pairing is one-sided (4-0), a chain with no upsets.
    results = [(("expert",), ("greedy",), 1.0)] * 4 + [(("greedy",), ("random",), 1.0)] * 4
    results += [(("expert",), ("random",), 1.0)] * 4
    table = fit_ratings(results)
    assert [r.name for r in table.ratings] == ["expert", "greedy", "random"]
    for row in table.ratings:
        assert row.status is Status.RATED and math.isfinite(row.elo) and math.isfinite(row.ci95)
        assert row.ci95 > 150  # a handful of games: a wide interval
    assert table["greedy"].elo == pytest.approx(0.0, abs=1e-9)  # symmetric chain, centred
    assert any(note.startswith("prior: 2 virtual draws") for note in table.notes)
    plain = fit_ratings(results, prior=0)
    assert [r.status for r in plain.ratings] == [Status.UNBOUNDED_ABOVE, Status.SEPARATED, Status.UNBOUNDED_BELOW]


def test_multi_side_separation_without_prior():
    # "top" finished first in every match: unbounded; the rest rated on their own order.
    rest = [MatchResult((("a",), ("b",), ("c",)), p) for p in [(1, 2, 3), (2, 1, 3), (3, 2, 1), (2, 3, 1)]]
    with_top = [MatchResult(((("top",),) + m.sides), (1, *(p + 1 for p in m.places))) for m in rest]
    table = fit_ratings(with_top, prior=0)
    top = table["top"]
    assert (top.status, top.rank, top.places) == (Status.UNBOUNDED_ABOVE, 1, (4, 0, 0, 0))
    assert top.note.startswith("finished first in all 4 matches: rating unbounded above")
    alone = fit_ratings(rest, prior=0)
    for name in "abc":
        assert table[name].elo == pytest.approx(alone[name].elo, abs=1e-9)
    assert fit_ratings(with_top)["top"].status is Status.RATED  # the default prior: finite


# --------------------------------------------------------------------------- input checks


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (MatchResult((("a",),), (1,)), "at least two sides"),
        (MatchResult((("a",), ("b",), ("c",)), (1, 2)), "3 sides but 2 places"),
        (MatchResult((("a",), ("b",), ("a",)), (1, 2, 3)), "on two sides"),
        (MatchResult((("a", "d"), ("b",), ("c", "e")), (1, 2, 3)), "different sizes"),
        (MatchResult((("a",), ("b",), ("c",)), (1, 0, 2)), "places must be whole numbers"),
        (MatchResult((("a",), ("b",), ("c",)), (1, 2.5, 3)), "places must be whole numbers"),
        (MatchResult((("a",), ("b",), ("c",)), (1, 2, 2**63)), "to 3 \\(the number of sides\\)"),
        (MatchResult((("a",), (), ("c",)), (1, 2, 3)), "side 2 is empty"),
    ],
)
def test_bad_matches_raise_typed_errors(bad, message):
    with pytest.raises(ResultInputError, match=message) as info:
        fit_ratings([MatchResult((("x",), ("y",), ("z",)), (1, 2, 3)), bad])
    assert info.value.index == 1


# --------------------------------------------------------------------------- large-field code paths


def _league(rng, n, results, team=1, sides=2):
    strengths = rng.normal(0.0, 0.7, n)
    if sides > 2 or team > 1:
        return _plackett_luce(rng, strengths, sides, results, team)
    out = []
    for _ in range(results):
        i, j = rng.choice(n, 2, replace=False)
        p = 1.0 / (1.0 + math.exp(strengths[j] - strengths[i]))
        u = rng.random()
        out.append(PairResult((f"b{i}",), (f"b{j}",), 0.5 if u < 0.1 else 1.0 if rng.random() < p else 0.0))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("team", "sides", "prior"), [(1, 2, 0.0), (1, 2, 2.0), (2, 2, 0.0), (1, 4, 2.0), (2, 3, 0.0)])
def test_conjugate_gradient_path_agrees_with_dense_newton(monkeypatch, team, sides, prior):
    rng = np.random.default_rng(31 + team + sides)
    data = _league(rng, 40, 700, team=team, sides=sides)
    dense = fit_ratings(data, prior=prior)
    monkeypatch.setattr(ratings_engine, "DENSE_SOLVE_MAX", 5)
    iterative = fit_ratings(data, prior=prior)
    for row in dense.ratings:
        other = iterative[row.name]
        assert other.status is row.status is Status.RATED
        assert other.elo == pytest.approx(row.elo, abs=1e-6)
        assert other.ci95 == pytest.approx(row.ci95, rel=1e-9)


def test_conjugate_gradient_keeps_inseparable_team_mates_at_their_even_split(monkeypatch):
    results = [(("a", "b"), ("c", "d"), 1.0), (("a", "b"), ("c", "d"), 0.0), (("a", "b"), ("c", "d"), 1.0)]
    results += [(("a", "b"), ("e", "f"), 0.5), (("c", "d"), ("e", "f"), 0.0), (("e", "f"), ("c", "d"), 0.5)]
    dense = fit_ratings(results, prior=0)
    monkeypatch.setattr(ratings_engine, "DENSE_SOLVE_MAX", 1)
    iterative = fit_ratings(results, prior=0)
    for row in dense.ratings:
        assert row.status is Status.NOT_IDENTIFIED
        assert iterative[row.name].status is Status.NOT_IDENTIFIED
        assert iterative[row.name].elo == pytest.approx(row.elo, abs=1e-9)
    assert dense["a"].elo == pytest.approx(dense["b"].elo, abs=1e-9)


def test_groups_beyond_the_interval_limit_are_rated_without_intervals(monkeypatch):
    rng = np.random.default_rng(2)
    data = _league(rng, 12, 200)
    full = fit_ratings(data)
    monkeypatch.setattr(ratings_fit, "INTERVAL_MAX", 10)
    bare = fit_ratings(data)
    for row in full.ratings:
        assert bare[row.name].elo == pytest.approx(row.elo, abs=1e-9)
        assert bare[row.name].ci95 is None and bare[row.name].los_next is None
    assert any("larger than 10" in note for note in bare.notes)


def test_covariance_view_is_a_mapping_over_rated_pairs():
    results = [(("a",), ("b",), 1.0), (("b",), ("a",), 0.5), (("x",), ("y",), 1.0), (("y",), ("x",), 1.0)]
    table = fit_ratings(results)
    cov = table.covariance
    assert len(cov) == 8 and set(cov) == {(p, q) for g in ("ab", "xy") for p in g for q in g}
    assert cov["a", "b"] == pytest.approx(cov["b", "a"])
    assert cov["a", "a"] == pytest.approx((table["a"].ci95 / Z95) ** 2)
    with pytest.raises(KeyError):
        cov["a", "x"]
    assert table.los("a", "x") is None
