"""Swiss, ladder, knockout and several challengers: pairing logic in-process, no bot processes
(tests/formats_helpers.py decides matches by the rating model)."""

from __future__ import annotations

import hashlib
import math
import random
import re
import shutil
import time
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament import pairing, runner
from arena.tournament.adaptive import (
    FOCUS_KEY,
    AdaptiveRun,
    AdaptiveSchedule,
    Replay,
    champion,
    chosen_now,
    describe_format,
    mark_focus,
)
from arena.tournament.audit import scheduled_rows
from arena.tournament.config import ConfigError
from arena.tournament.executors import NOT_YET, Completed
from arena.tournament.identity import BotIdentity
from arena.tournament.pairing import LadderChooser, LadderRule, bracket_order, group_up
from arena.tournament.schedule import Side, build_schedule, entrants, schedule_size
from arena.tournament.standings import standings_from_store
from arena.tournament.store import ResultStore, StoreError
from tests.formats_helpers import field, outcome_row, play

NAMES = [f"b{i:02d}" for i in range(10)]
STRENGTH = {name: 60.0 * i for i, name in enumerate(NAMES)}


def schedule_of(rows):
    return sorted((r.index, r.id, r.seed, r.seats) for r in rows)


def pairs_by_round(rows, per_round):
    rounds: dict[int, list[frozenset[str]]] = {}
    for row in rows:
        if row.rotation == 0:
            rounds.setdefault(row.pairing // per_round, []).append(frozenset(row.seats))
    return rounds


# --- several challengers ------------------------------------------------------------------------


def test_several_challengers_meet_the_field_and_never_each_other():
    config = field("abcde", "format: gauntlet\nchallengers: [a, b]")
    met = Counter(frozenset(s.seats) for s in build_schedule(config))
    assert set(met) == {frozenset((c, f)) for c in "ab" for f in "cde"}
    assert len(build_schedule(config)) == schedule_size(config) == 6 * 2
    assert config.game_dict()["challengers"] == ["a", "b"] and config.game_dict()["challenger"] is None


def test_one_challenger_keeps_its_fingerprint_key():
    one = field("abc", "format: gauntlet\nchallenger: a")
    assert one.game_dict()["challenger"] == "a" and "challengers" not in one.game_dict()
    assert one.fingerprint == field("abc", "format: gauntlet\nchallengers: [a]").fingerprint


def test_several_challengers_at_four_player_tables_and_rotating_partners():
    config = field("abcdef", "format: gauntlet\nchallengers: [a, b]\nplayers: 3")
    groups = {frozenset(s.seats) for s in build_schedule(config)}
    assert groups == {frozenset((c, *rest)) for c in "ab" for rest in combinations("cdef", 2)}
    rotating = field("abcdef", "format: gauntlet\nchallengers: [a, b]\nmode: pairs\nteams: rotating")
    assert len(build_schedule(rotating)) == schedule_size(rotating)
    assert all(sum(bot in "ab" for bot in set(s.seats)) == 1 for s in build_schedule(rotating))


@pytest.mark.parametrize(("extra", "message"), [
    ("format: gauntlet\nchallengers: [a, zed]", "key 'challengers[1]': expected one of a, b, c"),
    ("format: gauntlet\nchallengers: [a, a]", "'a' is listed twice"),
    ("format: gauntlet\nchallengers: [a, b, c]", "expected at least one challenger and 1 of the field"),
    ("format: gauntlet\nchallenger: a\nchallengers: [b]", "give challenger or challengers, not both"),
    ("challengers: [a]", "only allowed with format: gauntlet"),
])
def test_bad_challengers_are_one_line(extra, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        field("abc", extra)


# --- swiss --------------------------------------------------------------------------------------


def test_swiss_pairs_similar_scores_without_repeats_and_gives_byes_to_the_lowest():
    names = NAMES[:9]
    config = field(names, "format: swiss\nrounds: 5")
    rows = play(config, STRENGTH)
    assert len(rows) == schedule_size(config) == 5 * 4 * 2
    rounds = pairs_by_round(rows, 4)
    met = [pair for pairs in rounds.values() for pair in pairs]
    assert len(met) == len(set(met)) == 20  # no pair twice
    for pairs in rounds.values():
        seated = [bot for pair in pairs for bot in pair]
        assert len(seated) == len(set(seated)) == 8  # one bye a round
    byes = Counter(bot for pairs in rounds.values() for bot in set(names) - {b for p in pairs for b in p})
    assert set(byes.values()) == {1}  # nobody gets a second bye while another has none
    # Round 1 from the file's order (all scores 0); the last one waits.
    assert rounds[0] == [frozenset(p) for p in (("b00", "b01"), ("b02", "b03"), ("b04", "b05"), ("b06", "b07"))]


def test_swiss_ranks_the_strong_first():
    config = field(NAMES, "format: swiss\nrounds: 6")
    run = AdaptiveSchedule(config)
    rows = play(config, {n: 400.0 * i for i, n in enumerate(NAMES)})
    for row in sorted(rows, key=lambda r: r.index):
        run.add(row)
    while run.next_batch() is not None:
        pass
    order = [run.chooser.entrants[i].label for i in run.chooser.standings()]  # type: ignore[attr-defined]
    assert order[:3] == ["b09", "b08", "b07"] and "b00" in order[-3:]


def test_swiss_repeats_only_when_unavoidable():
    config = field("abcd", "format: swiss\nrounds: 4")  # 3 rounds exhaust every pair
    rounds = pairs_by_round(play(config, STRENGTH | {c: 0.0 for c in "abcd"}), 2)
    first_three = [p for r in range(3) for p in rounds[r]]
    assert len(set(first_three)) == 6
    assert len(rounds[3]) == 2


def test_group_up_three_and_four_player_tables_of_similar_score():
    groups = group_up(list(range(12)), 3, [set() for _ in range(12)])
    assert groups == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11)]
    met = [set() for _ in range(8)]
    for a, b in ((0, 1), (0, 2), (1, 2)):
        met[a].add(b)
        met[b].add(a)
    # 0, 1 and 2 met each other and two tables cannot keep them apart: one repeat, no more.
    tables = group_up(list(range(8)), 4, met)
    assert sorted(x for g in tables for x in g) == list(range(8))
    assert sum(len(set(g) & {0, 1, 2}) - 1 for g in tables if set(g) & {0, 1, 2}) == 1


def test_swiss_four_player_tables():
    config = field(NAMES[:9], "format: swiss\nrounds: 3\nplayers: 4")
    rows = play(config, STRENGTH)
    assert len(rows) == 3 * 2 * 4  # two tables a round, one bye, 4 rotations each
    assert all(len(set(row.seats)) == 4 for row in rows)


@pytest.mark.parametrize("fmt", ["format: swiss\nrounds: 5", "format: ladder\nmax_matches: 60\nwindow: 4",
                                 "format: knockout", "format: swiss\nrounds: 3\nplayers: 3"])
def test_same_seed_same_results_same_schedule_at_any_concurrency(fmt):
    config = field(NAMES, fmt)
    one = play(config, STRENGTH)
    for concurrency, order in ((2, 1), (7, 2), (40, 3)):
        assert schedule_of(play(config, STRENGTH, concurrency=concurrency, order_seed=order)) == schedule_of(one)


@pytest.mark.parametrize("fmt", ["format: swiss\nrounds: 5", "format: ladder\nmax_matches: 60\nwindow: 4",
                                 "format: knockout"])
def test_killed_mid_round_resumes_with_no_match_lost_or_twice(fmt):
    config = field(NAMES, fmt)
    whole = play(config, STRENGTH, concurrency=4, order_seed=9)
    for cut in (1, 7, 13, 29):
        # What finished before the kill is stored; what was in play is lost and played again.
        first = play(config, STRENGTH, concurrency=4, order_seed=cut, stop_after=cut)
        resumed = play(config, STRENGTH, concurrency=3, order_seed=cut + 1, stored=first)
        ids = [row.id for row in resumed]
        assert len(ids) == len(set(ids))
        assert schedule_of(resumed) == schedule_of(whole)


def test_a_stored_row_that_was_not_chosen_is_refused():
    config = field(NAMES, "format: swiss\nrounds: 2")
    rows = sorted(play(config, STRENGTH), key=lambda r: r.index)
    replay = Replay(config)
    replay.add(rows[0])
    from arena.tournament.adaptive import NotChosen

    with pytest.raises(NotChosen, match="not in the tournament's schedule"):
        replay.add(rows[12])  # a match of round 2, before round 1's results


# --- ladder -------------------------------------------------------------------------------------


def test_ladder_stops_at_max_matches_in_whole_pairings():
    config = field(NAMES, "format: ladder\nmax_matches: 31")
    assert len(play(config, STRENGTH)) == schedule_size(config) == 30


def test_ladder_window_sets_how_many_pairings_are_chosen_ahead_of_the_results():
    config = field(NAMES, "format: ladder\nmax_matches: 1000\nwindow: 3")
    first = chosen_now(AdaptiveRun(config, Replay(config)))
    assert len({spec.pairing for spec in first}) == 4
    # Pairings in play at once spread over the field.
    assert len({bot for spec in first for bot in spec.seats}) == 8


def test_ladder_pairs_close_ratings_once_it_knows_them():
    names = [f"b{i:02d}" for i in range(30)]
    strength = {n: 40.0 * i for i, n in enumerate(names)}
    config = field(names, "format: ladder\nmax_matches: 1200\nwindow: 2")
    rows = play(config, strength)
    late = [r for r in rows if r.pairing > 400 and r.rotation == 0]
    gaps = [abs(strength[r.seats[0]] - strength[r.seats[1]]) for r in late]
    assert sum(gaps) / len(gaps) < 200  # a random pairing's mean gap is 413


def test_ladder_target_ci_stops_when_every_interval_is_narrow():
    config = field(NAMES[:6], "format: ladder\ntarget_ci: 150\nwindow: 0")
    schedule = AdaptiveSchedule(config)
    played = 0
    while isinstance(batch := schedule.next_batch(), list):
        for spec in batch:
            schedule.add(outcome_row(spec, STRENGTH, random.Random(0)))
        played += len(batch)
    chooser = schedule.chooser
    assert isinstance(chooser, LadderChooser)
    assert chooser.widest_ci() <= 150 and 20 < played < 400


def test_ladder_choice_for_a_thousand_bots_is_under_a_millisecond():
    field_ = [Side(f"b{i}", (f"b{i}",)) for i in range(1000)]
    config = field(["a", "b"], "format: ladder\nmax_matches: 100000")
    chooser = LadderChooser(field_, 2, config.seating, lag=16, per_pairing=2, max_matches=None, target_ci=None)
    rng = random.Random(1)
    chooser.mu[:] = [rng.gauss(0, 1) for _ in range(1000)]
    chooser.choose()
    start = time.process_time()
    for _ in range(500):
        chooser.choose()
    assert (time.process_time() - start) / 500 < 0.001


# A field crowded in the middle (12 bots 10 Elo apart) with sparse tails (4 each side, 300 apart).
CROWDED = dict(zip([f"b{i:02d}" for i in range(20)],
                   [-1500, -1200, -900, -600, *(10 * i for i in range(12)), 410, 710, 1010, 1310], strict=True))


@pytest.mark.parametrize("power", [1.0, 0.0])
def test_a_ranking_ladder_serves_the_crowded_middle_more_than_the_sparse_tails(monkeypatch, power):
    # Where bots are crowded an error of the same size costs more ranks: a ladder that ranks
    # (no target_ci) gives the middle more matches. With the focus on the widest interval
    # alone (power 0, the rule before) the tails, whose matches tell less, got more instead.
    monkeypatch.setattr(pairing, "FOCUS_DENSITY_POWER", power)
    names = list(CROWDED)
    rows = play(field(names, "format: ladder\nmax_matches: 3000\nwindow: 0"), CROWDED)
    count = Counter(seat for row in rows if row.pairing >= 300 for seat in row.seats)
    middle = sum(count[n] for n in names[4:16]) / 12
    tails = sum(count[n] for n in names[:4] + names[16:]) / 8
    assert middle > 1.5 * tails if power else middle < tails


def test_ladder_density_is_level_at_the_start_and_follows_the_estimates():
    sides = [Side(name, (name,)) for name in CROWDED]
    config = field(list(CROWDED), "format: ladder\nmax_matches: 1000")
    chooser = LadderChooser(sides, 2, config.seating, lag=0, per_pairing=2, max_matches=1000, target_ci=None)
    assert list(chooser.density()) == pytest.approx([1.0] * 20)
    chooser.mu[:] = [CROWDED[name] / 173.7 for name in CROWDED]
    density = chooser.density()
    # Over 5 ranks each side the crowd blurs into the tails; from the ends in, it rises.
    assert density[0] < density[3] < density[9] and density[19] < density[16] < density[10]
    assert density[9] > 10 * max(density[0], density[19])
    chooser.retired[7] = True
    assert chooser.density()[7] == 0.0
    # Equal estimates are ranked in file order, whatever order the last pick left them in (a
    # density depends on the rank: otherwise the choices would hang on the order of the past).
    chooser.mu[:] = [round(CROWDED[name] / 500) for name in CROWDED]
    chooser._order = chooser._order[::-1].copy()
    chooser.density()
    assert list(chooser._order) == sorted(range(20), key=lambda i: (chooser.mu[i], i))


@pytest.mark.parametrize("target_ci", [None, 50.0])
def test_a_ladder_that_stops_on_its_intervals_serves_the_widest_first(target_ci):
    # The same state: a tail bot has the widest interval, a middle bot one nearly as wide.
    sides = [Side(name, (name,)) for name in CROWDED]
    config = field(list(CROWDED), "format: ladder\nmax_matches: 1000")
    chooser = LadderChooser(sides, 2, config.seating, lag=0, per_pairing=2, max_matches=1000, target_ci=target_ci)
    chooser.mu[:] = [CROWDED[name] / 173.7 for name in CROWDED]
    chooser.precision[:] = 20.0
    chooser.precision[0], chooser.precision[9] = 10.0, 11.0
    focus = chooser.pick()[0][0]
    assert focus == (0 if target_ci else 9)


def test_a_ladder_stored_before_the_density_rule_still_reads_and_resumes_by_its_own_rule(tmp_path):
    names = list(CROWDED)
    config = field(names, "format: ladder\nmax_matches: 400\nwindow: 2", output=str(tmp_path / "out"))
    before = play(config, CROWDED, rule=LadderRule.WIDEST)
    assert schedule_of(before[:300]) != schedule_of(play(config, CROWDED)[:300])  # the rules differ here
    # Stored as an arena before the rule stored it: no FOCUS_KEY in the meta.
    _stored(config, before[:300])
    with ResultStore.open_existing(config.output) as store:
        assert FOCUS_KEY not in store.meta()
        assert len(scheduled_rows(store)) == 300  # tables, report and verify read it
        resumed = chosen_now(AdaptiveRun.resume(config, store))
    assert schedule_of(resumed) == schedule_of(before[300:300 + len(resumed)]) and resumed
    # A run opens it as it is (no key added to a store with rows) ...
    with runner.open_store(config) as store:
        assert FOCUS_KEY not in store.meta()
        # ... and the key is what tells the rules apart: marked, its rows are not the new rule's.
        mark_focus(store)
    with ResultStore.open_existing(config.output) as store, pytest.raises(StoreError, match="not the tournament's"):
        scheduled_rows(store)


def test_a_new_ladders_store_records_its_rule(tmp_path):
    config = field(list(CROWDED), "format: ladder\nmax_matches: 400\nwindow: 2", output=str(tmp_path / "out"))
    rows = play(config, CROWDED)
    with runner.open_store(config) as store:
        assert store.meta()[FOCUS_KEY] == "spread-refit"
        for row in sorted(rows, key=lambda r: r.index):
            store.add(row, {})
    with ResultStore.open_existing(config.output) as store:
        assert len(scheduled_rows(store)) == 400


# Past REFIT_EVERY pairings (250 here: two refits), at 200 Elo a rank.
REFITTED = "format: ladder\nmax_matches: 500\nwindow: 4"


@pytest.mark.parametrize(("rule", "work"), [(LadderRule.REFIT, None), (LadderRule.SPREAD, None),
                                            (LadderRule.SPREAD, 300)])
def test_a_refitting_ladder_gives_the_same_schedule_at_any_concurrency_and_after_kills(monkeypatch, rule, work):
    if work is not None:  # a fit spread over some 20 pairings of this small field, not 1
        monkeypatch.setattr(pairing, "REFIT_WORK", work)
        monkeypatch.setattr(pairing, "REFIT_WORK_FLOOR", work)
    config = field(NAMES, REFITTED)
    strength = {name: 200.0 * i for i, name in enumerate(NAMES)}
    one = play(config, strength, rule=rule)
    # The refits change the choices (else this would test nothing of them).
    assert schedule_of(one) != schedule_of(play(config, strength, rule=LadderRule.DENSITY))
    for concurrency, order in ((2, 1), (9, 2)):
        assert schedule_of(play(config, strength, concurrency=concurrency, order_seed=order, rule=rule)) == schedule_of(one)
    # Before, about and after the first refit's snapshot (pairing 100, matches 200), within
    # the spread fit (to pairing 121 or so at work 300) and after it is applied.
    for cut in (150, 199, 203, 221, 237, 333):
        first = play(config, strength, concurrency=4, order_seed=cut, stop_after=cut, rule=rule)
        resumed = play(config, strength, concurrency=3, order_seed=cut + 1, stored=first, rule=rule)
        assert schedule_of(resumed) == schedule_of(one)


# exp(-700) (where -745 is held), exp(-3.25), 1, 1, exp(0.5), e, exp(10), exp(709), by pairing._exp.
GOLDEN_EXP = ["0x1.14f2b0fb9307fp-1010", "0x1.3da368521902dp-5", "0x1.0000000000000p+0", "0x1.0000000000000p+0",
              "0x1.a61298e1e069cp+0", "0x1.5bf0a8b14576ap+1", "0x1.5829dcf950560p+14", "0x1.d945df4f8ec8ep+1009"]


def test_a_refitting_ladders_choices_are_the_recorded_ones(monkeypatch):
    # Its float operations are IEEE arithmetic alone, so this digest is the same on every
    # machine; a change here changes the choices of every refitting ladder stored so far.
    # The refit at once is the 2026-12-05 build's, whose stores replay by it: its digest is
    # that build's, though its fit is now the spread refit's code run in one go.
    config = field(NAMES, REFITTED)
    strength = {name: 200.0 * i for i, name in enumerate(NAMES)}
    rows = play(config, strength, rule=LadderRule.REFIT)
    digest = hashlib.sha256(repr(schedule_of(rows)).encode()).hexdigest()
    assert digest[:16] == "f0bbfeb0e50ab2d7"
    rows = play(config, strength, rule=LadderRule.SPREAD)
    digest = hashlib.sha256(repr(schedule_of(rows)).encode()).hexdigest()
    assert digest[:16] == "9809971a4f9b0708"
    # Each fit spread over some 20 pairings (in a field this small, one would do it all).
    monkeypatch.setattr(pairing, "REFIT_WORK", 300)
    monkeypatch.setattr(pairing, "REFIT_WORK_FLOOR", 300)
    rows = play(config, strength, rule=LadderRule.SPREAD)
    digest = hashlib.sha256(repr(schedule_of(rows)).encode()).hexdigest()
    assert digest[:16] == "8343727c9fc853c9"
    exps = pairing._exp(np.array([-745.0, -3.25, -1e-300, 0.0, 0.5, 1.0, 10.0, 709.0]))
    assert [float(x).hex() for x in exps] == GOLDEN_EXP
    assert np.allclose(exps[1:-1], np.exp([-3.25, -1e-300, 0.0, 0.5, 1.0, 10.0]), rtol=1e-15, atol=0)


def test_a_refit_is_the_fit_of_the_results_learned():
    # The refit solves the penalized likelihood: its gradient is zero at the new estimate; and
    # it reads the field's spread, which the one-match-at-a-time estimate reads much narrower.
    names = [f"b{i:02d}" for i in range(20)]
    strength = {name: 100.0 * i for i, name in enumerate(names)}
    config = field(names, "format: ladder\nmax_matches: 1000\nwindow: 0")
    schedule = AdaptiveSchedule(config, rule=LadderRule.DENSITY)
    for row in play(config, strength, rule=LadderRule.DENSITY):
        schedule.add(row)
    while schedule.next_batch(stored=True) not in (None, NOT_YET):
        pass
    chooser = schedule.chooser
    assert isinstance(chooser, LadderChooser)
    truth = np.array([strength[name] for name in names]) / pairing.ELO_PER_UNIT
    slopes = [np.polyfit(truth, chooser.mu, 1)[0]]
    for _ in range(4):
        chooser.refit()
        slopes.append(np.polyfit(truth, chooser.mu, 1)[0])
    mu, n = chooser.mu, len(names)
    a, b = np.nonzero(np.triu(np.ones((n, n), dtype=bool), 1))
    counts = np.array([chooser._counts[pairing._slot(int(x), int(y))] for x, y in zip(a, b, strict=True)], float)
    p = 1.0 / (1.0 + np.exp(mu[b] - mu[a]))
    residual = counts[:, 0] + 0.5 * counts[:, 1] - counts.sum(axis=1) * p
    likelihood_gradient = np.bincount(a, residual, n) - np.bincount(b, residual, n)
    # The prior's pull balances the results' (whatever its width): the gradient's mean is 0.
    assert abs(likelihood_gradient.sum()) < 1e-6
    assert np.corrcoef(likelihood_gradient, mu)[0, 1] > 0.999  # gradient = prior * mu
    # Each refit's prior is as wide as the estimate before it: refit after refit, they widen
    # towards the field's spread, from the running estimate's fraction of it.
    assert slopes == sorted(slopes) and slopes[0] < 0.5 and 0.85 < slopes[-1] < 1.15


def test_a_spread_refit_reaches_the_fit_done_at_once_a_bounded_work_at_a_time(monkeypatch):
    # The fit of pairing 100's counts, done REFIT_WORK at each pairing learned after it, is
    # bit for bit that fit done in one go from the same snapshot; it is applied at the pairing
    # that finishes it, with what the running estimate learned meanwhile added on.
    monkeypatch.setattr(pairing, "REFIT_WORK", 100)
    monkeypatch.setattr(pairing, "REFIT_WORK_FLOOR", 100)
    # Chunks of 8 pairs, one a pairing: the fit's first pass, which reads the counts, spans
    # pairings whose results add to counts it has yet to read (they are not the snapshot's).
    monkeypatch.setattr(pairing, "REFIT_CHUNK", 8)
    names = [f"b{i:02d}" for i in range(20)]
    strength = {name: 100.0 * i for i, name in enumerate(names)}
    config = field(names, "format: ladder\nmax_matches: 2000\nwindow: 0")
    by_pairing: dict[int, list] = {}
    for row in sorted(play(config, strength), key=lambda r: r.index):
        by_pairing.setdefault(row.pairing, []).append(row)
    sides = {side.label: side for side in entrants(config)}

    def chooser(rule):
        return LadderChooser(list(sides.values()), 2, config.seating, lag=0, per_pairing=config.matches_per_pairing,
                             max_matches=None, target_ci=None, rule=rule)

    # The density rule's running estimate is the refit's until its first refit is applied.
    spread, running = chooser(LadderRule.SPREAD), chooser(LadderRule.DENSITY)
    at_once = fit = None
    for learned, rows in enumerate(by_pairing.values(), 1):
        pair = tuple(sides[label] for label in rows[0].sides)
        fit = spread._refitting
        spread.learn(pair, rows)
        running.learn(pair, rows)
        if learned == pairing.REFIT_EVERY:
            assert fit is None and spread._refitting is not None  # the snapshot, none of its work done
            at_once = spread.snapshot()  # the same counts and estimate, all its work done now
            at_once.work(math.inf)
        elif fit is not None and spread._refitting is None:
            break
    else:
        pytest.fail("the refit was never applied")
    # Spread over many pairings (else this would test nothing of the spreading).
    assert learned > pairing.REFIT_EVERY + 5
    assert at_once is not None and at_once.fitted is not None and fit is not None and fit.fitted is not None
    assert all(np.array_equal(x, y) for x, y in zip(fit.fitted, at_once.fitted, strict=True))
    assert np.array_equal(spread.mu, fit.fitted[0] + (running.mu - fit.mu))
    assert np.array_equal(spread.precision, fit.fitted[1] - fit.prior + pairing.PRIOR_PRECISION
                          + (running.precision - fit.precision))
    assert not np.array_equal(running.mu, fit.mu)  # it did learn meanwhile


def test_a_spread_refits_work_at_a_pairing_is_bounded_by_its_count():
    # A step's work is counted from the pairs and entrants it visits, and said before it is
    # done (never timed: the same steps at the same pairings on every machine); the steps of
    # one pairing add up to its budget at most, and stop only where the next would pass it.
    rng = np.random.default_rng(3)
    n, m = 300, 9_000
    slots = np.sort(rng.choice(n * (n - 1) // 2, m, replace=False))
    a, b = pairing._slot_numbers(slots)
    c = pairing.REFIT_CHUNK
    chunks = [(a[lo:lo + c], b[lo:lo + c]) for lo in range(0, m, c)]
    counts = [rng.integers(0, 3, (len(x), 3)).astype(float) for x, _ in chunks]
    costs: list[int] = []

    def counted(steps):
        cost = next(steps)
        while True:
            costs.append(cost)  # the step about to be done
            try:
                cost = yield cost
                cost = next(steps)
            except StopIteration as done:
                return done.value

    budget = 12_000
    fit = pairing._Refit(np.zeros(n), np.zeros(n), 1.0,
                         counted(pairing._fit_steps(chunks, lambda k: counts[k], rng.normal(0, 1, n), 1.0)))
    largest = max(pairing.REFIT_EXP_COST * pairing.REFIT_CHUNK + n, pairing.REFIT_FIELD_COST * n)
    assert largest < budget
    spent = []
    while fit.fitted is None:
        done = len(costs) - 1  # the last one said is still to do
        fit.work(budget)
        spent.append(sum(costs[done:len(costs) - 1]) if fit.fitted is None else sum(costs[done:]))
    assert len(spent) > 50 and max(spent) <= budget
    assert min(spent[:-1]) > budget - largest


def test_a_ladder_that_stops_on_its_intervals_is_not_refitted():
    # Its stop was measured on the running estimate: it chooses as the density rule's ladders.
    config = field(NAMES, "format: ladder\ntarget_ci: 120\nmax_matches: 500\nwindow: 4")
    strength = {name: 200.0 * i for i, name in enumerate(NAMES)}
    assert schedule_of(play(config, strength)) == schedule_of(play(config, strength, rule=LadderRule.DENSITY))


@pytest.mark.parametrize("rule", [LadderRule.DENSITY, LadderRule.REFIT])
def test_a_ladder_stored_under_an_earlier_rule_still_reads_and_resumes_by_its_own_rule(tmp_path, rule):
    # The density rule's stores, and the 2026-12-05 build's that refitted at once.
    config = field(NAMES, REFITTED, output=str(tmp_path / "out"))
    strength = {name: 200.0 * i for i, name in enumerate(NAMES)}
    before = play(config, strength, rule=rule)
    _stored(config, before[:260])
    with _writable(config) as store:
        mark_focus(store, rule)
    with ResultStore.open_existing(config.output) as store:
        assert len(scheduled_rows(store)) == 260
        resumed = chosen_now(AdaptiveRun.resume(config, store))
    assert resumed and schedule_of(resumed) == schedule_of(before[260:260 + len(resumed)])
    with _writable(config) as store:
        mark_focus(store, LadderRule.SPREAD)
    with ResultStore.open_existing(config.output) as store, pytest.raises(StoreError, match="not the tournament's"):
        scheduled_rows(store)


def test_a_ladder_store_of_an_unknown_rule_is_refused_in_one_line(tmp_path):
    config = field(NAMES, REFITTED, output=str(tmp_path / "out"))
    _stored(config, play(config, STRENGTH)[:20])
    with _writable(config) as store:
        meta = store.meta()
        store.redescribe(meta["fingerprint"], meta["game"], meta["config"], {FOCUS_KEY: "psychic"})
    with ResultStore.open_existing(config.output) as store, pytest.raises(StoreError) as caught:
        scheduled_rows(store)
    assert "ladder_focus" in str(caught.value) and "'psychic'" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_ladder_newcomers_are_chosen_first():
    config = field(NAMES, "format: ladder\nmax_matches: 400\nwindow: 0")
    old = [(0, NAMES[:7])]
    schedule = AdaptiveSchedule(config, [*old, (60, NAMES[7:])])
    pairings = []
    while isinstance(batch := schedule.next_batch(), list):
        for spec in batch:
            schedule.add(outcome_row(spec, STRENGTH, random.Random(0)))
        pairings.append(set(batch[0].seats))
    assert all(not (p & set(NAMES[7:])) for p in pairings[:60])
    assert all(p & set(NAMES[7:]) for p in pairings[60:63])


# --- a ladder's changed bot -----------------------------------------------------------------------


LADDER_STRENGTH = {"a": 0.0, "b": 200.0, "c": 400.0, "d": 600.0, "b~2": 900.0}


def _identities(changed: str = ""):
    return {n: BotIdentity(n, "python3 bot.py", files=(("bot.py", ("2" if n == changed else "1") * 64),)) for n in "abcd"}


def _ladder_versions(tmp_path, stored_of):
    """A ladder of 12 matches, stored as ``stored_of`` keeps them; then b changes and the file
    asks for 24: the run's store, after the identity check."""
    config = field("abcd", "format: ladder\nmax_matches: 12\nwindow: 1", output=str(tmp_path / "out"))
    first = stored_of(play(config, LADDER_STRENGTH))
    _stored(config, first)
    with ResultStore.open_for_run(config.output, config.fingerprint, config.game_dict(), config.to_dict()) as store:
        runner.check_identities(store, _identities(), config)
    more = field("abcd", "format: ladder\nmax_matches: 24\nwindow: 1", output=str(tmp_path / "out"))
    return more, first


def test_a_ladders_changed_bot_joins_as_a_new_version_and_plays_new_matches_only(tmp_path):
    more, first = _ladder_versions(tmp_path, lambda rows: rows)
    with runner.open_store(more) as store:
        checked = runner.check_identities(store, _identities("b"), more)
        assert len(checked.new_versions) == 1 and checked.new_versions[0].startswith("b has a new version")
        assert checked.new_versions[0].endswith("the new version joins the ladder as a newcomer, from its next pairing")
        run = runner.plan_strategy(more, store)
        assert isinstance(run, AdaptiveRun) and "b~2" in {bot.name for bot in run.run_config.bots}
        new = []
        rng = random.Random(3)
        for spec in run.pending:
            assert spec is not NOT_YET  # one at a time: each result is in before the next choice
            row = outcome_row(spec, LADDER_STRENGTH, rng)
            store.add(row, {})
            run.on_completed(Completed(spec, row, "{}", 0.0, "w"), store.count())
            new.append(row)
    # Every stored result kept; the old b never chosen again, the new one chosen at once (widest interval).
    assert len(new) == 12 and not any("b" in row.seats for row in new)
    assert "b~2" in new[0].seats
    with ResultStore.open_existing(more.output) as store:
        assert store.count() == 24
        assert [r.id for r in scheduled_rows(store)][:12] == [r.id for r in sorted(first, key=lambda r: r.index)]
        standings = standings_from_store(store)
    # The table of current versions: the new matches and the old ones the old b did not play.
    assert len(standings.bots) == 4 and standings.matches == 12 + sum("b" not in r.seats for r in first)
    assert any(bot.name.startswith("b@") for bot in standings.bots)


def test_a_ladders_changed_bot_with_matches_in_play_is_refused_in_one_line(tmp_path):
    def cut(rows):
        last_b = max(r.pairing for r in rows if "b" in r.seats)
        return [r for r in rows if r.pairing < last_b or (r.pairing == last_b and r.rotation == 0)]

    more, _ = _ladder_versions(tmp_path, cut)
    with runner.open_store(more) as store, pytest.raises(StoreError, match=re.escape(
            "a ladder's changed bot cannot join yet: b had matches of the ladder in play when it stopped")):
        runner.check_identities(store, _identities("b"), more)


# --- knockout -----------------------------------------------------------------------------------


def test_bracket_order_keeps_the_top_seeds_apart():
    assert bracket_order(8) == [0, 7, 3, 4, 1, 6, 2, 5]


def test_knockout_plays_a_bracket_and_the_strongest_wins():
    names = NAMES[:6]
    config = field(names, "format: knockout\nmatches_per_pairing: 6")
    strength = {n: 500.0 * i for i, n in enumerate(names)}  # b05 far the strongest
    rows = play(config, strength)
    assert len(rows) == schedule_size(config) == 5 * 6
    schedule = AdaptiveSchedule(config)
    for row in sorted(rows, key=lambda r: r.index):
        schedule.add(row)
    while schedule.next_batch() is not None:
        pass
    assert schedule.chooser.champion.label == "b05"  # type: ignore[attr-defined]
    first_round = {frozenset(r.seats) for r in rows if r.pairing < 2}
    # Six in a bracket of eight: seeds 1 and 2 have byes; 3-6 and 4-5 play.
    assert first_round == {frozenset(("b02", "b05")), frozenset(("b03", "b04"))}


def test_knockout_seeding_from_the_file_and_a_tied_set_to_the_better_seed():
    config = field("abcd", "format: knockout\nseeding: [d, c, b, a]")
    assert config.seeding == ("d", "c", "b", "a")
    run = AdaptiveRun(config, Replay(config))
    first = chosen_now(run)
    assert {frozenset(s.seats) for s in first} == {frozenset("da"), frozenset("cb")}


def _writable(config) -> ResultStore:
    return ResultStore.open_for_run(config.output, config.fingerprint, config.game_dict(), config.to_dict())


def _stored(config, rows) -> None:
    with ResultStore.open_for_run(config.output, config.fingerprint, config.game_dict(), config.to_dict()) as store:
        for row in sorted(rows, key=lambda r: r.index):
            store.add(row, {})


def _rated(folder, strength, seed) -> None:
    config = field("abcd", "format: round_robin\nmatches_per_pairing: 8", output=str(folder))
    rng = random.Random(seed)
    _stored(config, [outcome_row(spec, strength, rng) for spec in build_schedule(config)])


def test_knockout_seeded_by_a_results_folders_ratings_keeps_its_bracket_and_names_its_champion(tmp_path):
    strength = {"a": 0.0, "b": 300.0, "c": 600.0, "d": 900.0, "e": 100.0}
    _rated(tmp_path / "rated", strength, 1)
    # e never played there: it follows the rated, in the file's order.
    extra = f"format: knockout\nmatches_per_pairing: 6\nseeding: rated\noutput: {tmp_path / 'cup'}"
    config = field("abcde", extra, base_dir=str(tmp_path))
    assert config.seeding == ("d", "c", "b", "a", "e")
    assert config.seeding_from == str(tmp_path / "rated")
    assert "seeded by the ratings of" in describe_format(config)
    first = play(config, strength, stop_after=6)  # the first round: a meets e, the others have byes
    _stored(config, first)
    # The folder ranks a first now: a new knockout seeds by that, this one keeps the seeds it began with.
    shutil.rmtree(tmp_path / "rated")
    _rated(tmp_path / "rated", {**strength, "a": 2000.0}, 2)
    other = field("abcd", "format: knockout\nseeding: rated", base_dir=str(tmp_path), output=str(tmp_path / "o"))
    assert other.seeding[0] == "a"
    again = field("abcde", extra, base_dir=str(tmp_path))
    assert again.seeding == config.seeding and again.fingerprint == config.fingerprint
    with ResultStore.open_existing(again.output) as store:
        assert champion(again, store) is None  # the bracket is not played out
    rows = play(again, strength, stored=first)
    shutil.rmtree(again.output)
    _stored(again, rows)
    with ResultStore.open_existing(again.output) as store:
        assert champion(again, store) == "d"
    shown = CliRunner().invoke(app, ["table", again.output, "--what", "standings"])
    assert shown.exit_code == 0 and shown.stdout.rstrip().endswith("champion: d")


def test_knockout_seeding_from_a_folder_without_results_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=re.escape("key 'seeding': expected a results folder to seed by its "
                                                    "ratings, or the entrants in seeding order;")):
        field("abcd", "format: knockout\nseeding: nowhere", base_dir=str(tmp_path), output=str(tmp_path / "o"))


@pytest.mark.parametrize(("extra", "message"), [
    ("format: swiss", "key 'rounds': missing (required with format: swiss)"),
    ("format: swiss\nrounds: 0", "key 'rounds': expected an integer from 1 to 1000"),
    ("rounds: 3", "key 'rounds': only allowed with format: swiss"),
    ("format: ladder", "key 'max_matches': missing: format ladder needs max_matches, target_ci or both"),
    ("format: ladder\ntarget_ci: fast", "key 'target_ci': expected a number of Elo from 1 to 1000"),
    ("format: ladder\nmax_matches: 10\nwindow: 2000", "key 'window': expected an integer from 0 to 1024"),
    ("format: knockout\nplayers: 3", "knockout plays one side against another"),
    ("format: knockout\nseeding: [a, b]", "key 'seeding': expected every entrant once"),
    ("format: swiss\nrounds: 2\nmode: pairs\nteams: rotating", "key 'teams': format swiss pairs sides of fixed"),
])
def test_bad_adaptive_keys_are_one_line(extra, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        field("abcd", extra)


def test_a_ladder_never_builds_the_round_robin_of_its_field():
    names = [f"b{i}" for i in range(1000)]
    config = field(names, "format: ladder\nmax_matches: 20000")
    assert schedule_size(config) == 20000 and len(entrants(config)) == 1000
    run = AdaptiveRun(config, Replay(config))
    assert next(iter(run.pending)) is not NOT_YET
