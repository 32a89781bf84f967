"""Tests for arena.rating.table: agreement with independent fits, interval coverage, degenerate cases."""

from __future__ import annotations

import math
import random

import choix
import numpy as np
import pytest
from scipy.optimize import minimize

from arena.rating.table import (
    ELO_PER_NAT,
    Z95,
    AnchorError,
    MatchResult,
    PairResult,
    RatingError,
    ResultInputError,
    Status,
    expected_score,
    fit_ratings,
    likelihood_of_superiority,
    prior_sd_elo,
)


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _simulate_1v1(rng: np.random.Generator, strengths: np.ndarray, games: int, draw_rate: float = 0.0):
    results = []
    n = len(strengths)
    for i in range(n):
        for j in range(i + 1, n):
            p = 1.0 / (1.0 + math.exp(-(strengths[i] - strengths[j])))
            for _ in range(games):
                if rng.random() < draw_rate:
                    score = 0.5
                else:
                    score = 1.0 if rng.random() < p else 0.0
                results.append(PairResult((f"b{i}",), (f"b{j}",), score))
    return results


def _simulate_teams(rng: np.random.Generator, strengths: np.ndarray, matches: int, team_size: int = 2):
    results = []
    n = len(strengths)
    for _ in range(matches):
        seats = rng.permutation(n)[: 2 * team_size]
        a, b = seats[:team_size], seats[team_size:]
        p = 1.0 / (1.0 + math.exp(-(strengths[a].sum() - strengths[b].sum())))
        score = 1.0 if rng.random() < p else 0.0
        results.append(PairResult(tuple(f"b{i}" for i in a), tuple(f"b{i}" for i in b), score))
    return results


def _neg_loglik(r: np.ndarray, results, index, precision: float = 0.0) -> float:
    """The ties-as-halves Bradley-Terry likelihood, written out directly."""
    total = 0.0
    for res in results:
        d = sum(r[index[x]] for x in res.side_a) - sum(r[index[x]] for x in res.side_b)
        total += res.score_a * math.log(1.0 / (1.0 + math.exp(-d)))
        total += (1.0 - res.score_a) * math.log(1.0 / (1.0 + math.exp(d)))
    return -(total - 0.5 * precision * float(r @ r))


# --------------------------------------------------------------------------- independent fits


def test_matches_choix_on_one_vs_one_with_draws():
    rng = np.random.default_rng(20261130)
    n = 8
    strengths = rng.normal(0.0, 0.8, n)
    results = _simulate_1v1(rng, strengths, games=12, draw_rate=0.2)
    # choix has no draws: a win becomes two comparisons, a draw one each way. That doubles
    # the ties-as-halves log-likelihood, so the maximiser is the same.
    data = []
    for res in results:
        i, j = int(res.side_a[0][1:]), int(res.side_b[0][1:])
        if res.score_a == 1.0:
            data += [(i, j), (i, j)]
        elif res.score_a == 0.0:
            data += [(j, i), (j, i)]
        else:
            data += [(i, j), (j, i)]
    theirs = choix.ilsr_pairwise(n, data, alpha=0.0, tol=1e-12, max_iter=10_000)
    theirs = (theirs - theirs.mean()) * ELO_PER_NAT
    table = fit_ratings(results, prior=0)
    assert all(row.status is Status.RATED for row in table.ratings)
    ours = np.array([table[f"b{i}"].elo for i in range(n)])
    assert abs(ours.mean()) < 1e-9
    np.testing.assert_allclose(ours, theirs, atol=1e-4)


def test_teams_match_direct_scipy_maximisation_and_numeric_hessian():
    rng = np.random.default_rng(7)
    n = 6
    strengths = rng.normal(0.0, 0.5, n)
    results = _simulate_teams(rng, strengths, matches=400)
    index = {f"b{i}": i for i in range(n)}
    # Parametrise the sum-to-zero subspace explicitly so the optimum is unique.
    basis = np.linalg.qr(np.vstack([np.ones(n), np.eye(n)[:-1]]).T)[0][:, 1:]

    def f(theta):
        return _neg_loglik(basis @ theta, results, index)

    opt = minimize(f, np.zeros(n - 1), method="BFGS", options={"gtol": 1e-10})
    theirs = basis @ opt.x * ELO_PER_NAT
    table = fit_ratings(results, prior=0)
    ours = np.array([table[f"b{i}"].elo for i in range(n)])
    np.testing.assert_allclose(ours, theirs, atol=1e-3)

    # Observed information by central differences of the same likelihood, in theta.
    h = 1e-4
    k = n - 1
    hess = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            ea, eb = np.eye(k)[a] * h, np.eye(k)[b] * h
            hess[a, b] = (f(opt.x + ea + eb) - f(opt.x + ea - eb) - f(opt.x - ea + eb) + f(opt.x - ea - eb)) / (4 * h * h)
    cov = basis @ np.linalg.inv(hess) @ basis.T * ELO_PER_NAT**2
    ci = Z95 * np.sqrt(np.diag(cov))
    np.testing.assert_allclose([table[f"b{i}"].ci95 for i in range(n)], ci, rtol=1e-3)
    assert table.covariance["b0", "b1"] == pytest.approx(cov[0, 1], rel=1e-3, abs=1e-3)


def test_prior_matches_direct_map_estimate():
    rng = np.random.default_rng(11)
    n = 5
    results = _simulate_1v1(rng, rng.normal(0.0, 1.0, n), games=3)
    index = {f"b{i}": i for i in range(n)}
    strength = 2.0
    opt = minimize(lambda r: _neg_loglik(r, results, index, precision=strength / 4.0), np.zeros(n), method="BFGS",
                   options={"gtol": 1e-10})
    table = fit_ratings(results, prior=strength)
    np.testing.assert_allclose([table[f"b{i}"].elo for i in range(n)], opt.x * ELO_PER_NAT, atol=1e-3)
    # The prior is centred on the reference level and the data only fix differences, so
    # the mode has mean 0 exactly.
    assert sum(row.elo for row in table.ratings) == pytest.approx(0.0, abs=1e-8)


# --------------------------------------------------------------------------- closed forms


def test_two_bots_closed_form_elo_interval_and_los():
    # 7 wins, 3 losses: MLE difference ln(7/3) nats, variance 1 / (n p (1-p)).
    results = [(("a",), ("b",), 1.0)] * 7 + [(("a",), ("b",), 0.0)] * 3
    table = fit_ratings(results, prior=0)
    diff = math.log(7 / 3)
    sd_diff = math.sqrt(1.0 / (10 * 0.7 * 0.3))
    a, b = table["a"], table["b"]
    assert a.elo == pytest.approx(ELO_PER_NAT * diff / 2, abs=1e-9)
    assert b.elo == pytest.approx(-ELO_PER_NAT * diff / 2, abs=1e-9)
    assert a.ci95 == pytest.approx(Z95 * ELO_PER_NAT * sd_diff / 2, rel=1e-9)
    # a - b has sd 2*sd(a) because the centred ratings are perfectly anti-correlated;
    # ignoring the covariance would give sqrt(2)*sd(a) and a different LOS.
    expected_los = _phi(diff / sd_diff)
    assert a.los_next == pytest.approx(expected_los, rel=1e-9)
    assert table.los("a", "b") == pytest.approx(expected_los, rel=1e-9)
    assert table.los("b", "a") == pytest.approx(1.0 - expected_los, rel=1e-9)
    assert b.los_next is None
    assert (a.rank, a.matches, a.wins, a.draws, a.losses) == (1, 10, 7, 0, 3)
    assert expected_score(a.elo - b.elo) == pytest.approx(0.7)


def test_los_known_numbers():
    assert likelihood_of_superiority(0.0, 30.0) == 0.5
    assert likelihood_of_superiority(30.0, 30.0) == pytest.approx(0.8413447460685429)
    assert likelihood_of_superiority(-30.0, 30.0) == pytest.approx(0.15865525393145707)
    assert likelihood_of_superiority(Z95 * 10.0, 10.0) == pytest.approx(0.975)
    assert likelihood_of_superiority(5.0, 0.0) == 1.0


def test_los_uses_covariance_in_larger_field():
    rng = np.random.default_rng(3)
    results = _simulate_1v1(rng, np.array([0.6, 0.3, 0.0, -0.2, -0.7]), games=8, draw_rate=0.1)
    table = fit_ratings(results, prior=0)
    rows = table.ratings
    for this, nxt in zip(rows, rows[1:], strict=False):
        cov = table.covariance
        sd = math.sqrt(cov[this.name, this.name] + cov[nxt.name, nxt.name] - 2 * cov[this.name, nxt.name])
        assert this.los_next == pytest.approx(_phi((this.elo - nxt.elo) / sd), rel=1e-12)
        assert this.los_next >= 0.5  # ranked by rating, so never below a coin flip
        assert cov[this.name, nxt.name] < 0  # centred ratings are negatively correlated here


# --------------------------------------------------------------------------- coverage


def test_intervals_cover_true_values_about_95_percent_one_vs_one():
    rng = np.random.default_rng(12345)
    hits = total = 0
    for _ in range(60):
        strengths = rng.normal(0.0, 0.5, 6)
        table = fit_ratings(_simulate_1v1(rng, strengths, games=15), prior=0)
        true = (strengths - strengths.mean()) * ELO_PER_NAT
        for i in range(6):
            row = table[f"b{i}"]
            assert row.status is Status.RATED
            hits += abs(row.elo - true[i]) <= row.ci95
            total += 1
    assert total == 360
    assert 0.90 <= hits / total <= 0.99


@pytest.mark.slow
def test_intervals_cover_true_values_about_95_percent_teams():
    rng = np.random.default_rng(54321)
    hits = total = 0
    for _ in range(50):
        strengths = rng.normal(0.0, 0.4, 6)
        table = fit_ratings(_simulate_teams(rng, strengths, matches=120), prior=0)
        true = (strengths - strengths.mean()) * ELO_PER_NAT
        for i in range(6):
            row = table[f"b{i}"]
            assert row.status is Status.RATED
            hits += abs(row.elo - true[i]) <= row.ci95
            total += 1
    assert 0.90 <= hits / total <= 0.99


# --------------------------------------------------------------------------- anchor and prior


def test_anchor_pins_value_and_keeps_differences():
    rng = np.random.default_rng(5)
    results = _simulate_1v1(rng, np.array([0.5, 0.0, -0.5, 0.2]), games=10, draw_rate=0.1)
    free = fit_ratings(results, prior=0)
    pinned = fit_ratings(results, anchor="b1", anchor_elo=1500.0, prior=0)
    assert pinned["b1"].elo == pytest.approx(1500.0)
    assert pinned["b1"].ci95 == pytest.approx(0.0, abs=1e-9)
    for name in ("b0", "b2", "b3"):
        assert pinned[name].elo - 1500.0 == pytest.approx(free[name].elo - free["b1"].elo, abs=1e-9)
        # Relative to the anchor, the interval is that of the difference.
        cov = free.covariance
        sd = math.sqrt(cov[name, name] + cov["b1", "b1"] - 2 * cov[name, "b1"])
        assert pinned[name].ci95 == pytest.approx(Z95 * sd, rel=1e-9)
    assert [r.name for r in pinned.ratings] == [r.name for r in free.ratings]
    for a, b in zip(free.ratings, pinned.ratings, strict=False):
        assert a.los_next == pytest.approx(b.los_next) if a.los_next is not None else b.los_next is None


def test_anchor_errors():
    results = [(("a",), ("b",), 1.0), (("b",), ("a",), 1.0), (("w",), ("a",), 1.0)]
    with pytest.raises(AnchorError, match="no such bot"):
        fit_ratings(results, anchor="zz", prior=0)
    with pytest.raises(AnchorError, match="no finite rating"):
        fit_ratings(results, anchor="w", prior=0)
    teams = [(("a", "b"), ("c", "d"), 1.0), (("a", "b"), ("c", "d"), 0.0)]
    with pytest.raises(AnchorError, match="team-mates"):
        fit_ratings(teams, anchor="a", prior=0)


def test_prior_makes_perfect_record_finite_and_shrinks():
    results = [(("w",), ("a",), 1.0)] * 6 + [(("a",), ("b",), 1.0), (("b",), ("a",), 1.0), (("a",), ("b",), 0.5)]
    weak = fit_ratings(results, prior=1.0)
    strong = fit_ratings(results, prior=50.0)
    for table in (weak, strong):
        assert all(row.status is Status.RATED for row in table.ratings)
        assert table.ratings[0].name == "w"
        assert any("prior" in note for note in table.notes)
    assert 0 < strong["w"].elo < weak["w"].elo
    assert strong["w"].ci95 < weak["w"].ci95
    assert prior_sd_elo(4.0) == pytest.approx(ELO_PER_NAT)
    # Prior 0 is the plain maximum-likelihood fit, with its unbounded perfect record.
    assert fit_ratings(results, prior=0.0)["w"].status is Status.UNBOUNDED_ABOVE
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(RatingError):
            fit_ratings(results, prior=bad)



def _laplace_evidence(pairs: np.ndarray, wins: np.ndarray, n: int, tau: float) -> float:
    """log p(results | prior sd tau) by the Laplace approximation, written out directly: the
    Bradley-Terry MAP by Newton, then log-posterior + (n/2) log(1/tau^2) - (1/2) log det(H + I/tau^2)."""
    r = np.zeros(n)
    i, j = pairs[:, 0], pairs[:, 1]
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(r[i] - r[j])))
        g = np.bincount(i, wins - p, n) - np.bincount(j, wins - p, n) - r / tau**2
        h = np.zeros((n, n))
        np.add.at(h, (i, i), p * (1 - p))
        np.add.at(h, (j, j), p * (1 - p))
        np.add.at(h, (i, j), -p * (1 - p))
        np.add.at(h, (j, i), -p * (1 - p))
        a = h + np.eye(n) / tau**2
        step = np.linalg.solve(a, g)
        r += step
        if np.abs(step).max() < 1e-12:
            break
    d = r[i] - r[j]
    loglik = float(np.sum(wins * d - np.logaddexp(0.0, d)))
    return loglik - 0.5 * float(r @ r) / tau**2 - n * math.log(tau) - 0.5 * float(np.linalg.slogdet(a)[1])


def test_a_field_wider_than_the_prior_gets_the_prior_of_the_highest_evidence():
    # 40 bots 700 Elo apart (sd), each meeting its 3 nearest above it 4 times, as a ladder
    # does, and 240 pairs drawn anywhere once: the results say little of the whole field's
    # spread, and the prior's width is the one under which they are likeliest (a Gaussian EM
    # alone stops narrower).
    rng = np.random.default_rng(1)
    n = 40
    truth = np.sort(rng.normal(0.0, 700.0 / ELO_PER_NAT, n))
    near = [(a, b) for a in range(n) for b in range(a + 1, min(n, a + 4)) for _ in range(4)]
    anywhere = [tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(6 * n)]
    pairs = np.array(near + anywhere)
    wins = (rng.random(len(pairs)) < 1.0 / (1.0 + np.exp(-(truth[pairs[:, 0]] - truth[pairs[:, 1]])))).astype(float)
    results = [PairResult((f"b{a}",), (f"b{b}",), w) for (a, b), w in zip(pairs.tolist(), wins.tolist(), strict=True)]
    table = fit_ratings(results)
    assert table.prior < 2.0 and any("prior widened" in note for note in table.notes)
    tau = 2.0 / math.sqrt(table.prior)
    grid = np.log(tau) + np.linspace(-0.1, 0.1, 41)
    evidence = [_laplace_evidence(pairs, wins, n, math.exp(u)) for u in grid]
    peak = int(np.argmax(evidence))
    assert 0 < peak < len(grid) - 1  # a peak inside the grid, not at its ends
    assert abs(grid[peak] - math.log(tau)) <= 0.015
    # Two such fields that never met: the evidence is the product of theirs, so the same prior.
    twin = [PairResult((f"c{a}",), (f"c{b}",), w) for (a, b), w in zip(pairs.tolist(), wins.tolist(), strict=True)]
    both = fit_ratings(results + twin)
    assert len(both.groups) == 2 and both.prior == pytest.approx(table.prior, rel=1e-9)
    assert both["c0"].elo == pytest.approx(table["b0"].elo, abs=1e-6)


# --------------------------------------------------------------------------- degenerate cases


def _core():
    return [
        (("a",), ("b",), 1.0),
        (("b",), ("a",), 0.5),
        (("a",), ("c",), 0.0),
        (("b",), ("c",), 1.0),
        (("c",), ("b",), 0.0),
        (("c",), ("a",), 0.5),
    ]


def test_perfect_record_is_unbounded_not_a_number():
    results = _core() + [(("w",), (x,), 1.0) for x in "abc" for _ in range(4)]
    results += [(("l",), ("a",), 0.0), (("b",), ("l",), 1.0)]
    table = fit_ratings(results, prior=0)
    w, loser = table["w"], table["l"]
    assert (w.status, w.elo, w.ci95, w.rank) == (Status.UNBOUNDED_ABOVE, None, None, 1)
    assert w.note == "won all 12 matches: rating unbounded above; a positive --prior (the default) gives a finite estimate"
    assert (loser.status, loser.elo, loser.rank) == (Status.UNBOUNDED_BELOW, None, 5)
    assert loser.note.startswith("lost all 2 matches: rating unbounded below")
    assert w.los_next is None and table.ratings[3].los_next is None
    # The rest is rated exactly as if the perfect records were not there.
    alone = fit_ratings(_core(), prior=0)
    for name in "abc":
        assert table[name].status is Status.RATED
        assert table[name].elo == pytest.approx(alone[name].elo, abs=1e-9)
        assert table[name].ci95 == pytest.approx(alone[name].ci95, rel=1e-9)
        assert table[name].group == table["w"].group == 1


def test_chain_with_no_upsets_has_no_finite_rating():
    table = fit_ratings([(("A",), ("B",), 1.0), (("B",), ("C",), 1.0), (("A",), ("C",), 1.0)], prior=0)
    assert [r.name for r in table.ratings] == ["A", "B", "C"]
    assert [r.status for r in table.ratings] == [Status.UNBOUNDED_ABOVE, Status.SEPARATED, Status.UNBOUNDED_BELOW]
    assert all(r.elo is None for r in table.ratings)
    assert "unbounded" in table["B"].note


def test_clique_that_never_lost_to_the_rest_is_rated_separately():
    results = _core() + [(("p",), ("q",), 1.0), (("q",), ("p",), 1.0)]
    results += [((x,), (y,), 1.0) for x in "pq" for y in "abc"]
    table = fit_ratings(results, prior=0)
    assert [r.name for r in table.ratings][:2] in (["p", "q"], ["q", "p"])
    assert table["p"].group == table["q"].group != table["a"].group
    assert table["p"].elo == pytest.approx(0.0, abs=1e-9)  # 1-1 between them, centred
    assert "unbounded" in table["p"].note
    assert table.ratings[1].los_next is None  # next bot is in another group
    alone = fit_ratings(_core(), prior=0)
    assert table["a"].elo == pytest.approx(alone["a"].elo, abs=1e-9)


def test_disconnected_groups_are_centred_separately():
    other = [(("x",), ("y",), 1.0), (("y",), ("x",), 0.5), (("x",), ("y",), 0.0), (("x",), ("y",), 1.0)]
    table = fit_ratings(_core() + other, players=["lonely"], prior=0)
    assert [g.id for g in table.groups] == [1, 2, 3]
    assert table.groups[0].members == tuple(r.name for r in table.ratings[:3])
    assert {table[n].group for n in "abc"} == {1}
    assert table["x"].group == table["y"].group == 2
    assert sum(table[n].elo for n in "abc") == pytest.approx(0.0, abs=1e-9)
    assert table["x"].elo + table["y"].elo == pytest.approx(0.0, abs=1e-9)
    assert table.ratings[2].los_next is None  # last of group 1, next is group 2
    assert table["x"].los_next is not None
    lonely = table["lonely"]
    assert (lonely.status, lonely.elo, lonely.matches, lonely.group) == (Status.NO_MATCHES, None, 0, 3)
    assert any("never met" in note for note in table.notes)
    assert "not comparable" in table["x"].note
    assert table.los("a", "x") is None
    # Anchored: the anchor's group is pinned, the others are centred on the anchor's value.
    pinned = fit_ratings(_core() + other, anchor="a", anchor_elo=1000.0, prior=0)
    assert pinned["a"].elo == pytest.approx(1000.0)
    assert pinned["x"].elo + pinned["y"].elo == pytest.approx(2000.0)


def test_inseparable_team_mates_are_flagged():
    results = [(("a", "b"), ("c", "d"), 1.0), (("a", "b"), ("c", "d"), 0.0), (("a", "b"), ("c", "d"), 0.5)]
    table = fit_ratings(results, prior=0)
    assert all(r.status is Status.NOT_IDENTIFIED and r.ci95 is None for r in table.ratings)
    assert "team" in table["a"].note
    # Once the partners rotate, everyone is identified.
    results += [(("a", "c"), ("b", "d"), 1.0), (("a", "c"), ("b", "d"), 0.0), (("a", "d"), ("b", "c"), 0.5)]
    assert all(r.status is Status.RATED for r in fit_ratings(results, prior=0).ratings)


def test_order_and_side_swaps_do_not_matter():
    rng = np.random.default_rng(9)
    results = _simulate_1v1(rng, np.array([0.3, 0.0, -0.3]), games=6, draw_rate=0.2)
    swapped = [PairResult(r.side_b, r.side_a, 1.0 - r.score_a) for r in results]
    random.Random(1).shuffle(swapped)
    a, b = fit_ratings(results, prior=0), fit_ratings(swapped, prior=0)
    for row in a.ratings:
        assert b[row.name].elo == pytest.approx(row.elo, abs=1e-9)
        assert (b[row.name].wins, b[row.name].draws, b[row.name].losses) == (row.wins, row.draws, row.losses)


def test_team_records_count_every_member():
    table = fit_ratings([(("a", "b"), ("c", "d"), 1.0), (("a", "c"), ("b", "d"), 0.5)], prior=0)
    assert (table["a"].matches, table["a"].wins, table["a"].draws, table["a"].losses) == (2, 1, 1, 0)
    assert (table["d"].matches, table["d"].wins, table["d"].draws, table["d"].losses) == (2, 0, 1, 1)


# --------------------------------------------------------------------------- input checks and helpers


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ((("a",), ("b",), 2), "score_a must be 1, 0.5 or 0"),
        ((("a",), ("b",), True), "score_a must be 1, 0.5 or 0"),
        ((("a",), ("a",), 1), "on both sides"),
        ((("a", "b"), ("c",), 1), "different sizes"),
        (((), ("c",), 1), "side_a is empty"),
        ((("a", "a"), ("b", "c"), 1), "same bot twice"),
        ((("",), ("b",), 1), "empty or non-text"),
        ((("a",), ("b",)), "expected"),
    ],
)
def test_bad_results_raise_typed_errors(bad, message):
    with pytest.raises(ResultInputError, match=message) as info:
        fit_ratings([(("x",), ("y",), 1.0), bad], prior=0)
    assert info.value.index == 1
    assert isinstance(info.value, ValueError)


def test_empty_input_gives_empty_table():
    table = fit_ratings([], prior=0)
    assert table.ratings == () and table.groups == ()


def test_match_result_places_from_scores():
    assert MatchResult.from_scores(["a", "b", "c"], [10, 7, 7]) == MatchResult((("a",), ("b",), ("c",)), (1, 2, 2))
    teams = MatchResult.from_scores([("a", "d"), ("b", "e"), ("c", "f")], [3, 21, 12])
    assert teams.places == (3, 1, 2)
    assert MatchResult.from_scores(["a", "b", "c", "d"], [5, 9, 5, 1]).places == (2, 1, 2, 4)
    with pytest.raises(RatingError):
        MatchResult.from_scores(["a", "b"], [1])
    with pytest.raises(RatingError):
        MatchResult.from_scores(["a", "b"], [1, math.nan])
    with pytest.raises(RatingError):
        MatchResult.from_scores(["a", "b"], [True, 0])


def _strong_components(names, results):
    """Strongly connected components of "a scored against b" (a win: one edge; a draw: both)."""
    reach = {a: {a} for a in names}
    for res in results:
        a, b = res.side_a[0], res.side_b[0]
        if res.score_a > 0:
            reach[b].add(a)  # edge loser -> winner: from b you can climb to a
        if res.score_a < 1:
            reach[a].add(b)
    changed = True
    while changed:  # transitive closure; the fields here are tiny
        changed = False
        for a in names:
            new = set().union(*(reach[x] for x in reach[a]))
            if new != reach[a]:
                reach[a], changed = new, True
    return {frozenset(x for x in names if a in reach[x] and x in reach[a]) for a in names}


@pytest.mark.slow
def test_separation_matches_strong_components_on_random_sparse_fields():
    # For 1v1 the MLE is finite exactly within strongly connected components of the
    # "scored against" graph; check the LP-based detection against that graph fact.
    rng = np.random.default_rng(2026)
    for _ in range(150):
        n = int(rng.integers(3, 7))
        names = [f"b{i}" for i in range(n)]
        strengths = rng.normal(0.0, 1.2, n)
        results = []
        for _ in range(int(rng.integers(n, 3 * n))):
            i, j = rng.choice(n, size=2, replace=False)
            p = 1.0 / (1.0 + math.exp(-(strengths[i] - strengths[j])))
            u = rng.random()
            score = 0.5 if u < 0.1 else 1.0 if rng.random() < p else 0.0
            results.append(PairResult((names[i],), (names[j],), score))
        played = sorted({x for r in results for x in (r.side_a[0], r.side_b[0])})
        table = fit_ratings(results, prior=0)
        for scc in _strong_components(played, results):
            statuses = {table[x].status for x in scc}
            if len(scc) == 1:
                assert statuses <= {Status.UNBOUNDED_ABOVE, Status.UNBOUNDED_BELOW, Status.SEPARATED}
            else:
                assert statuses == {Status.RATED}
                assert {table[x].group for x in scc} == {table[next(iter(scc))].group}
                members = set(scc)
                inside = [r for r in results if r.side_a[0] in members and r.side_b[0] in members]
                alone = fit_ratings(inside, prior=0)
                for x in scc:
                    assert table[x].elo == pytest.approx(alone[x].elo, abs=1e-6)
        rated_groups = {table[x].group for x in played if table[x].status is Status.RATED}
        for gid in rated_groups:
            members = {x for x in played if table[x].group == gid and table[x].status is Status.RATED}
            assert frozenset(members) in _strong_components(played, results)
        # Wins across separated parts always go from higher-ranked to lower-ranked.
        for r in results:
            a, b = table[r.side_a[0]], table[r.side_b[0]]
            if a.status is Status.RATED and b.status is Status.RATED and a.group == b.group:
                continue
            assert r.score_a != 0.5  # a draw always ties two bots into one rated part
            winner, loser = (a, b) if r.score_a == 1.0 else (b, a)
            assert winner.rank < loser.rank
