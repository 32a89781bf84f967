"""``arena sprt`` and ``format: sprt``: the sequential test played by real bots.

What must hold: a tournament file and the command line both set the test, and bad parameters
are one line and exit code 2 (with file and line from YAML); the schedule is deal pairs
without end; pairs reach the test in deal order, so the same seed gives the same decision at
any concurrency, after Ctrl-C or kill -9 and a resume; no deal starts after the decision, and
the pairs in progress are finished and counted; the results folder works with table, report,
export and verify; two revisions of a bot in a git repository are built and tested, and
their full commit ids named.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from process_helpers import as_from_a_terminal
from typer.testing import CliRunner

from arena.cli import app
from arena.harness.protocol import Termination
from arena.sprt import Decision, EloModel, Pentanomial, SprtParams, llr
from arena.tournament import runner as tr
from arena.tournament.config import ConfigError, load_config, parse_config
from arena.tournament.executors import InlineExecutor
from arena.tournament.schedule import SPRT_MAX_PAIRS, build_schedule, iter_schedule, schedule_size
from arena.tournament.sprt_run import PairBook, game_result, replay_store
from arena.tournament.store import MatchRow, ResultStore
from arena.tournament.worker import worker_plan
from tests.cli_helpers import arena_command

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
POLICYBOT = BOTS / "policybot.py"
cli = CliRunner()

# greedy beats first by about 230 Elo at target 5 (78% of the points); [0, 100] logistic
# accepts H1 after about a dozen pairs, [0, 50] after about 25.
FAST = "{elo0: 0, elo1: 100, model: logistic}"


def bot(name: str, policy: str, env: str = "") -> str:
    return f'  - {{name: {name}, cmd: "$PYTHON policybot.py {policy}", cwd: "{BOTS}"{env}}}\n'


def sprt_file(folder: Path, *, sprt: str = FAST, bots: str | None = None, extra: str = "", name: str = "t",
              concurrency: int = 2) -> Path:
    bots = bots if bots is not None else bot("greedy", "greedy") + bot("first", "first")
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 5\nrules: {{target: 5}}\nformat: sprt\nsprt: {sprt}\n"
                    f"concurrency: {concurrency}\noutput: {folder / 'out'}\n{extra}bots:\n{bots}")
    return path


def arena(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return arena_command(*args, cwd=cwd, env=env)


def stored_rows(folder: Path) -> list[MatchRow]:
    with ResultStore.open_existing(str(folder)) as store:
        return list(store.results())


# --- the tournament file -----------------------------------------------------------------------------


def test_format_sprt_reads_its_parameters_with_their_defaults(tmp_path: Path):
    config = load_config(sprt_file(tmp_path, sprt="{elo0: 0, elo1: 10}"))
    assert config.sprt == SprtParams.elo(0, 10)
    assert (config.sprt.alpha, config.sprt.beta, config.sprt.model, config.sprt.max_pairs) == (
        0.05, 0.05, EloModel.NORMALIZED, None)
    assert config.game_dict()["sprt"] == config.sprt.to_dict()
    points = load_config(sprt_file(tmp_path, sprt="{metric: points, points0: 0, points1: 0.1, alpha: 0.1, beta: 0.2, "
                                                  "max_pairs: 300}"))
    assert points.sprt == SprtParams.points(0, 0.1, alpha=0.1, beta=0.2, max_pairs=300)
    # Another format has no sprt key in its description: its fingerprint is as before.
    plain = parse_config("name: x\nseed: 1\nbots:\n  - {name: a, cmd: sh}\n  - {name: b, cmd: sh}\n")
    assert "sprt" not in plain.game_dict() and plain.sprt is None


@pytest.mark.parametrize(
    ("text", "line", "key", "why"),
    [
        ("sprt: {elo0: 0, elo1: -5}\n", 7, "sprt.elo1", "must be greater than elo0 (0), got -5"),
        ("sprt:\n  elo0: 0\n  elo1: 10\n  alpha: 0.7\n", 10, "sprt.alpha", "strictly between 0 and 0.5, got 0.7"),
        ("sprt: {elo0: 0, elo1: 10, beta: 0}\n", 7, "sprt.beta", "strictly between 0 and 0.5, got 0"),
        ("sprt: {elo0: 0, elo1: 10, max_pairs: 0}\n", 7, "sprt.max_pairs", "at least 1, got 0"),
        ("sprt: {elo0: 0, elo1: 10, max_pairs: 600000}\n", 7, "sprt.max_pairs", "at most 500,000 pairs"),
        ("sprt: {elo1: 10}\n", 7, "sprt.elo0", "missing (required)"),
        ("sprt: {elo0: 0, elo1: 10, model: bayes}\n", 7, "sprt.model", "expected normalized or logistic"),
        ("sprt: {elo0: 0, elo1: 10, draws: 3}\n", 7, "sprt.draws", "unknown key"),
        ("sprt: {metric: points, elo0: 0, elo1: 10}\n", 7, "sprt.elo0", "belongs to metric elo"),
        ("sprt: [0, 10]\n", 7, "sprt", "expected a mapping"),
        ("", 6, "sprt", "missing (required with format: sprt)"),
        ("sprt: {elo0: 0, elo1: 10}\nplayers: 3\n", 6, "format", "exactly 2 sides, this table has 3"),
        ("sprt: {elo0: 0, elo1: 10}\nmode: pairs\nplayers: 6\nteam_size: 2\n", 6, "format",
         "exactly 2 sides, this table has 3"),
        ("sprt: {elo0: 0, elo1: 10}\nmatches_per_pairing: 10\n", 8, "matches_per_pairing", "not used with format: sprt"),
        ("sprt: {elo0: 0, elo1: 10}\nduplicate: false\n", 8, "duplicate", "duplicate: false is not allowed"),
        ("sprt: {elo0: 0, elo1: 10}\nmode: pairs\nteams: rotating\n", 9, "teams", "two sides of fixed members"),
    ],
)
def test_bad_test_parameters_in_a_file_are_one_line_with_file_line_and_key(tmp_path: Path, text, line, key, why):
    path = tmp_path / "t.yaml"
    path.write_text("name: t\nseed: 1\nbots:\n" + bot("a", "first") + bot("b", "greedy") + "format: sprt\n" + text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert (error.line, error.key) == (line, key), str(error)
    assert why in error.message and "\n" not in str(error)
    result = cli.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and f"{path}:{line}" in result.stderr


def test_a_third_bot_and_the_sprt_key_elsewhere_are_refused(tmp_path: Path):
    three = sprt_file(tmp_path, bots=bot("a", "first") + bot("b", "greedy") + bot("c", "hash"))
    with pytest.raises(ConfigError, match="exactly 2 bots"):
        load_config(three)
    path = tmp_path / "rr.yaml"
    path.write_text("name: t\nseed: 1\nbots:\n" + bot("a", "first") + bot("b", "first") + "sprt: {elo0: 0, elo1: 5}\n")
    with pytest.raises(ConfigError, match="only allowed with format: sprt"):
        load_config(path)


def test_validate_shows_the_first_deals_of_the_open_schedule(tmp_path: Path):
    result = cli.invoke(app, ["validate", str(sprt_file(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "greedy (A) against first (B)" in result.stdout and "[0, 100] elo logistic" in result.stdout
    assert "00002.1" in result.stdout and "00003.0" not in result.stdout


# --- the schedule ------------------------------------------------------------------------------------


def test_the_schedule_is_deal_pairs_from_both_seats_up_to_the_pair_limit(tmp_path: Path):
    config = load_config(sprt_file(tmp_path))
    first = build_schedule(config, deals=3)
    assert [(s.id, s.index, s.deal, s.rotation, s.sides) for s in first] == [
        (f"0000{d}.{r}", 2 * d + r, d, r, ("greedy", "first") if r == 0 else ("first", "greedy"))
        for d in range(3) for r in (0, 1)
    ]
    assert first[0].seed == first[1].seed != first[2].seed
    # The same deals, seeds and seats as a round robin of the same two bots.
    robin = replace(config, format="round_robin", sprt=None, matches_per_pairing=6)
    assert build_schedule(robin) == first
    assert schedule_size(config) == 2 * SPRT_MAX_PAIRS
    capped = replace(config, sprt=replace(config.sprt, max_pairs=4))
    assert [s.deal for s in iter_schedule(capped)] == [0, 0, 1, 1, 2, 2, 3, 3]


# --- pairs in deal order -----------------------------------------------------------------------------


def _row(deal: int, rotation: int, winner_is_a: bool, margin: int = 5, hands: int = 4) -> MatchRow:
    sides = ("a", "b") if rotation == 0 else ("b", "a")
    a = sides.index("a")
    winner = a if winner_is_a else 1 - a
    scores = [0, 0]
    scores[winner] = 5 + margin
    scores[1 - winner] = 5
    return MatchRow(id=f"{deal:05d}.{rotation}", index=2 * deal + rotation, pairing=0, deal=deal, rotation=rotation,
                    seed=deal, sides=sides, seats=sides, winner=winner, scores=tuple(scores), reason="target",
                    terminations=(Termination.OK, Termination.OK), escobas=(0, 0), hands=hands)


def test_a_match_from_the_candidates_side():
    row = _row(3, 1, winner_is_a=True, margin=4, hands=6)
    result = game_result(row, "a")
    assert (result.score, result.point_diff, result.hands) == (1.0, 4, 6)
    assert game_result(row, "b").score == 0.0
    assert game_result(replace(row, winner=None), "a").score == 0.5


def test_pairs_reach_the_test_in_deal_order_whatever_order_the_matches_finish_in():
    rng = random.Random(7)
    rows = [_row(d, r, rng.random() < 0.7, rng.randint(1, 9), rng.randint(3, 9)) for d in range(60) for r in (0, 1)]
    params = SprtParams.elo(0, 100, model=EloModel.LOGISTIC)
    in_order = PairBook(params, "a")
    for row in rows:
        in_order.add(row)
    assert in_order.state.finished and in_order.state.decided_at is not None
    for seed in range(5):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        book = PairBook(params, "a")
        for row in shuffled:
            book.add(row)
        assert book.state == in_order.state and book.trace == in_order.trace
    # A missing match holds back every pair after it.
    book = PairBook(params, "a")
    for row in rows:
        if row.id != "00002.1":
            book.add(row)
    assert book.next_deal == 2 and book.state.pairs == 2 and book.waiting == len(rows) - 5


# --- playing: the same decision at any concurrency, and the stop rule --------------------------------


def _run(config, concurrency: int):
    """The library's whole run: concurrency 1 plays in this process, more on worker processes."""
    if concurrency == 1:
        executor = InlineExecutor(worker_plan(config, python=sys.executable, logs_dir=None))
        return tr.run_tournament(config, concurrency=1, executor=executor)
    return tr.run_tournament(config, concurrency=concurrency)


@pytest.mark.slow  # real bots played
def test_the_same_seed_gives_the_same_decision_at_concurrency_1_and_2(tmp_path: Path):
    config = load_config(sprt_file(tmp_path))
    one = _run(replace(config, output=str(tmp_path / "one")), 1)
    two = _run(replace(config, output=str(tmp_path / "two")), 2)
    s1, s2 = one["sprt"], two["sprt"]
    assert s1.decision is s2.decision is Decision.H1
    assert s1.decided_at == s2.decided_at
    # Concurrency 1 starts no deal after the decision. Two workers finish what they held, and
    # may have played further: the test decides on the pairs in deal order, so while one slow
    # match holds a pair back, the other worker plays on (how far is a matter of timing).
    assert s1.pairs == s1.decided_at and s2.decided_at <= s2.pairs
    for folder, summary in (("one", s1), ("two", s2)):
        rows = stored_rows(tmp_path / folder)
        # Every pair stored is complete: no deal was left half played.
        assert sorted((r.deal, r.rotation) for r in rows) == [(d, r) for d in range(summary.pairs) for r in (0, 1)]
        with ResultStore.open_existing(str(tmp_path / folder)) as store:
            assert replay_store(store).summary == summary
    # The test's LLR is the library's on the stored pentanomial.
    assert s2.llr == pytest.approx(llr(s2.penta.counts(), 0, 100, EloModel.LOGISTIC))
    # Run again: nothing to play, the same decision.
    again = _run(replace(config, output=str(tmp_path / "two")), 2)
    assert again["played"] == 0 and again["sprt"] == s2


@pytest.mark.slow  # real bots played
def test_max_pairs_ends_an_undecided_test_after_exactly_that_many_pairs(tmp_path: Path):
    config = load_config(sprt_file(tmp_path, sprt="{elo0: 0, elo1: 5, max_pairs: 3}", concurrency=1))
    result = _run(config, 1)
    assert result["sprt"].decision is Decision.MAX_PAIRS and result["sprt"].decided_at == 3
    assert len(stored_rows(tmp_path / "out")) == 6


@pytest.mark.slow  # real bots played
def test_two_copies_of_one_deterministic_bot_mirror_each_other_and_the_points_metric_accepts_h0(tmp_path: Path):
    path = sprt_file(tmp_path, sprt="{metric: points, points0: 0, points1: 0.5}",
                     bots=bot("hash1", "hash") + bot("hash2", "hash"))
    result = _run(load_config(path), 2)
    summary = result["sprt"]
    assert summary.decision is Decision.H0 and summary.decided_at == 20  # POINTS_MIN_PAIRS
    assert summary.penta == Pentanomial(0, 0, summary.pairs, 0, 0)  # every pair split: mirror images
    assert summary.points is not None and summary.points.mean == 0.0


@pytest.mark.slow  # real bots played
def test_pairs_matches_of_two_clone_teams_are_tested_the_same_way(tmp_path: Path):
    path = sprt_file(tmp_path, extra="mode: pairs\nplayers: 4\nteams: clones\n")
    config = load_config(path)
    assert config.seating.sides == 2 and config.team_mode == "clones"
    result = _run(config, 2)
    assert result["sprt"].decision is Decision.H1
    rows = stored_rows(tmp_path / "out")
    assert rows[0].sides == ("greedy", "first") and rows[1].sides == ("first", "greedy")
    assert rows[0].seats == ("greedy", "first", "greedy", "first") and rows[1].seats == ("first", "greedy", "first", "greedy")


# --- the command line --------------------------------------------------------------------------------


def test_stats_prints_what_fastchess_prints_for_the_same_counts():
    # fastchess 1.x summaries (tests/sprt/test_sprt.py: FASTCHESS_OUTPUTS).
    result = cli.invoke(app, ["sprt", "--stats", "19", "52", "94", "82", "50", "--elo0", "0", "--elo1", "10"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "Elo: 54.25 +/- 22.98, nElo: 67.15 +/- 27.94" in lines
    assert "Ptnml(0-2): [19, 52, 94, 82, 50]" in lines
    assert any(line.startswith("LOS: 100.00 %") for line in lines)
    share = 100 * llr([19, 52, 94, 82, 50], 0, 10) / 2.9444389791664403  # how far to the bound, as cutechess prints it
    assert f"LLR: 2.95 ({share:.1f}%) (-2.94, 2.94) [0.00, 10.00]" in lines
    assert lines[-1] == "SPRT ([0, 10]) completed - H1 was accepted at pair 297"
    logistic = cli.invoke(app, ["sprt", "--stats", "0", "3", "3", "2", "0", "--elo0", "0", "--elo1", "10",
                                "--model", "logistic"])
    assert "Elo: -21.74 +/- 96.80, nElo: -39.34 +/- 170.24" in logistic.stdout
    assert "LOS: 32.53 %" in logistic.stdout and "LLR: -0.11" in logistic.stdout
    assert logistic.stdout.splitlines()[-1].endswith("no decision yet (LLR between the bounds)")
    # PairsRatio is decisive pairs won over lost: infinite with none lost, none at all without either.
    for counts, ratio in (("0 0 2 0 3", "inf"), ("0 0 5 0 0", "-"), ("2 0 1 0 3", "1.50")):
        shown = cli.invoke(app, ["sprt", "--stats", *counts.split(), "--elo0", "0", "--elo1", "10"])
        assert f"PairsRatio: {ratio}\n" in shown.stdout


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--elo0", "0", "--elo1", "-5"], "--elo1: must be greater than elo0 (0), got -5"),
        (["--elo0", "0", "--elo1", "10", "--alpha", "0.7"], "--alpha: expected a probability strictly between 0 and 0.5"),
        (["--elo0", "0", "--elo1", "10", "--alpha", "0"], "--alpha: expected a probability strictly between 0 and 0.5"),
        (["--elo0", "0", "--elo1", "10", "--max-pairs", "0"], "--max-pairs: expected a whole number of pairs, at least 1"),
        (["--elo1", "10"], "--elo0: required"),
        (["--elo0", "0", "--elo1", "10", "--model", "bayes"], "--model: expected normalized or logistic"),
        (["--metric", "points", "--points0", "0"], "--points1: required"),
        (["--metric", "points", "--points0", "0", "--points1", "0.1", "--stats", "1", "2", "3", "4", "5"],
         "metric points needs each pair's points"),
        (["A", "--elo0", "0", "--elo1", "10", "--stats", "1", "2", "3", "4", "5"], "--stats takes counts instead of bots"),
        (["--elo0", "0", "--elo1", "10"], "give two bots"),
    ],
)
def test_bad_parameters_on_the_command_line_are_one_line_and_exit_code_2(args, why):
    if "--stats" not in args and "A" not in args and "give two bots" not in why:
        args = ["sh", "sh", *args]
    result = cli.invoke(app, ["sprt", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and why in result.stderr


def test_a_file_with_a_table_of_more_than_two_sides_is_refused_by_the_command(tmp_path: Path):
    path = tmp_path / "three.yaml"
    path.write_text("name: x\nseed: 1\nplayers: 3\nbots:\n" + bot("a", "first") + bot("b", "greedy") + bot("c", "hash"))
    result = cli.invoke(app, ["sprt", "a", "b", "--file", str(path), "--elo0", "0", "--elo1", "10"])
    assert result.exit_code == 2 and "exactly 2 sides" in result.stderr and result.stderr.count("\n") == 1
    missing = cli.invoke(app, ["sprt", "a", "zed", "--file", str(path), "--elo0", "0", "--elo1", "10"])
    assert missing.exit_code == 2 and "no bot named 'zed'" in missing.stderr


@pytest.mark.slow  # real bots played
def test_the_command_with_two_bot_commands_plays_until_it_decides_then_resumes_to_the_same(tmp_path: Path):
    a, b = (f"{shlex.quote(sys.executable)} {shlex.quote(str(POLICYBOT))} {p}" for p in ("greedy", "first"))
    args = ["sprt", a, b, "--elo0", "0", "--elo1", "100", "--model", "logistic", "-j", "2", "--seed", "5",
            "-o", str(tmp_path / "out"), "--progress", "jsonl"]
    result = arena(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines and all(line["total"] is None and "sprt" in line for line in lines)
    last = lines[-1]["sprt"]
    assert last["decision"] == "H1" and last["params"] == SprtParams.elo(0, 100, model=EloModel.LOGISTIC).to_dict()
    assert [line["sprt"]["pairs"] for line in lines] == sorted(line["sprt"]["pairs"] for line in lines)
    # Which program each side is: its name in the test, label, version and identity.
    with ResultStore.open_existing(str(tmp_path / "out")) as store:
        identities = store.identities()
    for role, name in (("a", "policybot-A"), ("b", "policybot-B")):
        known = identities[name]
        assert lines[-1]["sprt"][role] == {"name": name, "label": known.label, "version": known.version,
                                           "identity": known.key}
    # The final lines (with --progress jsonl, on stderr) name both sides and the decision.
    assert "Results of policybot-A vs policybot-B" in result.stderr
    assert f"H1 was accepted at pair {last['decided_at']}" in result.stderr
    again = arena(*args[:-2], "--no-progress", cwd=tmp_path)
    assert again.returncode == 0 and "resuming:" in again.stderr
    assert f"H1 was accepted at pair {last['decided_at']}; {last['pairs']} pairs counted" in again.stdout \
        or f"H1 was accepted at pair {last['decided_at']}\n" in again.stdout
    assert "pairs" in again.stderr and "Ptnml" in again.stderr


@pytest.mark.slow  # real bots played
def test_table_report_export_and_verify_work_on_a_test_results_folder(tmp_path: Path):
    config = load_config(sprt_file(tmp_path))
    summary = _run(config, 2)["sprt"]
    out = tmp_path / "out"
    table = cli.invoke(app, ["table", str(out)])
    assert table.exit_code == 0 and "greedy" in table.stdout
    assert f"SPRT ([0, 100]) completed - H1 was accepted at pair {summary.decided_at}" in table.stdout
    csv_table = cli.invoke(app, ["table", str(out), "--format", "csv"])
    assert csv_table.exit_code == 0 and "SPRT" not in csv_table.stdout
    verify = cli.invoke(app, ["verify", str(out)])
    assert verify.exit_code == 0 and f"all {2 * summary.pairs} records replay" in verify.stdout
    export = cli.invoke(app, ["export", str(out), "--games", "csv"])
    assert export.exit_code == 0 and len(export.stdout.splitlines()) == 1 + 2 * summary.pairs
    report = cli.invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    page = (out / "report.html").read_text()
    assert "Sequential test (SPRT): greedy against first: H1 accepted at pair" in page
    assert 'aria-label="log-likelihood ratio against pairs"' in page and "H1 bound 2.94" in page
    assert "<polyline" in page and "http" not in page.split("<svg", 1)[1].split("xmlns", 1)[0]


@pytest.mark.slow  # real bots played
def test_verify_names_a_missing_match_of_an_interrupted_test(tmp_path: Path):
    config = load_config(sprt_file(tmp_path, concurrency=1))
    _run(config, 1)
    out = tmp_path / "out"
    import sqlite3

    with sqlite3.connect(out / "results.sqlite") as conn:
        conn.execute("DELETE FROM matches WHERE id = '00001.1'")
    verify = cli.invoke(app, ["verify", str(out)])
    assert verify.exit_code == 1 and "missing 00001.1" in verify.stdout
    with ResultStore.open_existing(str(out)) as store:
        outcome = replay_store(store)
    assert outcome.summary.pairs == 1 and outcome.waiting > 0
    # A resume plays that match again and reaches the decision it had.
    again = _run(config, 1)
    assert again["played"] == 1 and again["sprt"].decision is Decision.H1


# --- interrupted: Ctrl-C and kill -9 -----------------------------------------------------------------


def _wait_for(folder: Path, matches: int, proc: subprocess.Popen, seconds: float = 300) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return -1
        try:
            with ResultStore.open_existing(str(folder)) as store:
                count = store.count()
        except Exception:  # noqa: BLE001 - not created yet
            count = 0
        if count >= matches:
            return count
        time.sleep(0.2)
    raise AssertionError("the run did not get far enough")


# Slow enough that the signals land before the test decides: in the environment of the runs to
# interrupt, which their bots get through the file's pass_env (a sealed bot gets no other variable
# of the arena's; the sleep changes no move, policybot.py, and the file is the same for every run,
# so every run is of the same test).
SLOW = {"POLICYBOT_SLEEP_MS": "15"}
SLOWED = ", pass_env: [POLICYBOT_SLEEP_MS]"


@pytest.mark.slow  # real bots played
def test_kill_9_and_ctrl_c_resume_to_the_same_decision_as_an_uninterrupted_run(tmp_path: Path):
    bots = bot("greedy", "greedy", SLOWED) + bot("first", "first", SLOWED)
    sprt = "{elo0: 0, elo1: 50, model: logistic}"
    (tmp_path / "ref").mkdir()
    # The uninterrupted reference plays the same bots, one match at a time, at full speed.
    reference = _run(load_config(sprt_file(tmp_path / "ref", sprt=sprt, bots=bots, concurrency=1)), 1)["sprt"]
    assert reference.decision is Decision.H1 and reference.decided_at > 12
    path = sprt_file(tmp_path, sprt=sprt, bots=bots)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CACHE_DIR"}
    # kill -9 of the arena mid-run, then Ctrl-C of the resumed run (both with 15 ms moves), then a
    # resume to the end (at full speed).
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env | SLOW)
    try:
        at_kill = _wait_for(out, 7, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(60)
    assert 0 < at_kill < 2 * reference.decided_at
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env | SLOW,
                            preexec_fn=as_from_a_terminal)
    try:
        at_stop = _wait_for(out, at_kill + 4, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and at_stop > 0, err
    assert "the test resumes from them to the same decision" in err and f"resume with: arena run {path}" in err
    done = arena("run", str(path), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"H1 was accepted at pair {reference.decided_at}" in done.stdout
    with ResultStore.open_existing(str(out)) as store:
        outcome = replay_store(store)
    assert outcome.summary.decision is Decision.H1 and outcome.summary.decided_at == reference.decided_at
    assert outcome.waiting == 0
    # The pairs counted differ from the reference's only by those finished after the decision:
    # up to it, the interrupted run's counts, LLR and points are the uninterrupted run's.
    assert outcome.summary.pairs >= reference.decided_at
    with ResultStore.open_existing(str(out)) as store:
        config = load_config(path)
        book = PairBook.of(config)
        for row in sorted(store.results(), key=lambda r: r.index):
            if row.deal < reference.decided_at:
                book.add(row)
    assert book.state.summary() == reference


# --- two revisions of a bot --------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    config = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", "-C", str(repo), *config, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.slow  # real bots played
def test_two_revisions_of_a_bot_are_built_tested_and_named_by_their_full_commits(tmp_path: Path):
    repo = tmp_path / "mybot"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    source = POLICYBOT.read_text()
    (repo / "bot.py").write_text(source)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first policy")
    git(repo, "checkout", "-q", "-b", "my-change")
    # The new revision plays greedily by default.
    (repo / "bot.py").write_text(re.sub(r'else "first"', 'else "greedy"', source))
    git(repo, "commit", "-q", "-am", "greedy policy")
    git(repo, "checkout", "-q", "main")
    commits = {rev: git(repo, "rev-parse", rev) for rev in ("main", "my-change")}
    assert commits["main"] != commits["my-change"]
    args = ["sprt", "--repo", str(repo), "--base", "main", "--dev", "my-change", "--build", "cp bot.py built.py",
            "--cmd", f"{shlex.quote(sys.executable)} built.py", "--elo0", "0", "--elo1", "100", "--model", "logistic",
            "-j", "2", "--no-progress"]
    result = arena(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "build: dev at" in result.stderr and "build: base at" in result.stderr
    assert "Results of dev vs base" in result.stdout and "H1 was accepted" in result.stdout
    assert re.search(rf"A dev: \S+@\S+, identity [0-9a-f]{{12}}, commit {commits['my-change']}",
                     result.stdout), result.stdout
    assert f", commit {commits['main']}" in result.stdout
    page = (tmp_path / "results" / "sprt-dev-vs-base" / "report.html").read_text()
    assert commits["main"] in page and commits["my-change"] in page
    assert not (repo / "built.py").exists() and git(repo, "status", "--porcelain") == ""  # the user's tree untouched


def test_sprt_stats_is_its_own_command_and_the_old_spelling_still_works():
    counts = ["19", "52", "94", "82", "50"]
    own = cli.invoke(app, ["sprt-stats", *counts, "--elo0", "0", "--elo1", "10"])
    old = cli.invoke(app, ["sprt", "--stats", *counts, "--elo0", "0", "--elo1", "10"])
    assert own.exit_code == old.exit_code == 0, own.output
    assert own.stdout == old.stdout and own.stdout.splitlines()[-1].endswith("H1 was accepted at pair 297")
    refused = cli.invoke(app, ["sprt-stats", *counts, "--elo0", "0", "--elo1", "10", "--model", "bayes"])
    assert refused.exit_code == 2 and "--model: expected normalized or logistic" in refused.stderr


@pytest.mark.slow  # real bots played, by three runs of the command
def test_a_changed_side_tests_in_a_folder_of_its_own_and_a_given_folder_refuses_it_with_the_way_out(tmp_path: Path):
    shutil.copy(POLICYBOT, tmp_path / "bot.py")
    args = ["sprt", "$PYTHON bot.py greedy", f"$PYTHON {shlex.quote(str(POLICYBOT))} first", "--elo0", "0",
            "--elo1", "100", "--max-pairs", "1", "-j", "2", "--seed", "5", "--no-progress", "--no-report"]
    old, new = tmp_path / "results" / "sprt-bot-vs-policybot", tmp_path / "results" / "sprt-bot-vs-policybot-2"
    assert arena(*args, cwd=tmp_path).returncode == 0
    before = stored_rows(old)
    with open(tmp_path / "bot.py", "a") as fh:
        fh.write("# tuned\n")
    again = arena(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    said = [line for line in again.stderr.splitlines() if "new version" in line]
    assert said == ["bot has a new version (program file bot.py changed (sha256 " + said[0].split("(sha256 ")[1]]
    assert said[0].endswith(": the test in results/sprt-bot-vs-policybot is about the programs it began with and is "
                            "kept; this test goes in results/sprt-bot-vs-policybot-2")
    assert stored_rows(old) == before and len(stored_rows(new)) == 2  # its own pair of the same deal
    with ResultStore.open_existing(str(old)) as a, ResultStore.open_existing(str(new)) as b:
        assert a.identities()["bot"].key != b.identities()["bot"].key
        assert a.identities()["policybot"].key == b.identities()["policybot"].key
    given = arena(*args, "--output", str(old), cwd=tmp_path)
    assert given.returncode == 2
    error = given.stderr.strip().splitlines()[-1]
    assert error.startswith("error: bot 'bot' changed since its results were stored: program file bot.py changed")
    assert error.endswith("a sequential test decides about the two programs it began with, so a new version cannot "
                          f"join it: test the new version in a folder of its own (--output DIR), or delete {old} to "
                          "start afresh")


# --- a tournament file's sprt: under arena sprt --file --------------------------------------------


def _last_params(result: subprocess.CompletedProcess) -> dict:
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return lines[-1]["sprt"]["params"]


@pytest.mark.slow  # real bots played, by three runs of the command
def test_a_files_sprt_mapping_is_the_tests_default_and_each_option_given_overrides_it(tmp_path: Path):
    path = sprt_file(tmp_path, sprt="{elo0: 0, elo1: 100, model: logistic, alpha: 0.1, beta: 0.2, max_pairs: 2}")
    common = ["sprt", "greedy", "first", "--file", str(path), "--no-report", "--progress", "jsonl"]
    plain = arena(*common, "-o", str(tmp_path / "plain"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert _last_params(plain) == SprtParams.elo(0, 100, model=EloModel.LOGISTIC, alpha=0.1, beta=0.2,
                                                 max_pairs=2).to_dict()
    assert f"sprt-greedy-vs-first: the test's parameters are {path}'s sprt:\n" in plain.stderr
    assert "; [0, 100] elo logistic, alpha 0.1, beta 0.2, at most 2 pairs;" in plain.stderr  # the header
    # Each option given replaces the file's value, the rest stays the file's.
    over = arena(*common, "-o", str(tmp_path / "over"), "--elo1", "50", "--beta", "0.1", "--max-pairs", "1",
                 cwd=tmp_path)
    assert over.returncode == 0, over.stderr
    assert _last_params(over) == SprtParams.elo(0, 50, model=EloModel.LOGISTIC, alpha=0.1, beta=0.1,
                                                max_pairs=1).to_dict()
    assert f"the test's parameters are {path}'s sprt:, with --elo1, --beta, --max-pairs from the command line" \
        in over.stderr
    assert "; [0, 50] elo logistic, alpha 0.1, beta 0.1, at most 1 pairs;" in over.stderr
    # Another metric takes its own hypotheses (the file's Elo bounds and model are not its own).
    points = arena(*common, "-o", str(tmp_path / "points"), "--metric", "points", "--points0", "0", "--points1", "0.5",
                   "--max-pairs", "1", cwd=tmp_path)
    assert points.returncode == 0, points.stderr
    assert _last_params(points) == SprtParams.points(0, 0.5, alpha=0.1, beta=0.2, max_pairs=1).to_dict()


@pytest.mark.parametrize(
    ("sprt", "args", "why"),
    [
        ("{elo0: 0, elo1: 100}", ["--elo0", "200"],
         "error: {path}: key 'sprt.elo1': must be greater than elo0 (200), got 100 (with --elo0 from the command line)"),
        ("{elo0: 0, elo1: 100}", ["--elo1", "-5"], "error: --elo1: must be greater than elo0 (0), got -5"),
        ("{elo0: 0, elo1: 500, model: logistic}", ["--model", "normalized"],
         "error: {path}: key 'sprt.elo1': at most 200 in absolute value with the normalized model, got 500 "
         "(with --model from the command line)"),
        ("{elo0: 0, elo1: 100}", ["--metric", "points", "--points0", "0"], "error: --points1: required"),
        ("{metric: points, points0: 0, points1: 0.1}", ["--model", "logistic"],
         "error: --model: applies to --metric elo only"),
        (None, ["--elo1", "10"], "error: --elo0: required"),  # a file without sprt: gives no bound
    ],
)
def test_a_test_that_the_file_and_the_options_make_invalid_is_one_line_naming_where_each_came_from(
        tmp_path: Path, sprt, args, why):
    if sprt is None:
        path = tmp_path / "rr.yaml"
        path.write_text("name: rr\nseed: 1\nbots:\n" + bot("greedy", "greedy") + bot("first", "first"))
    else:
        path = sprt_file(tmp_path, sprt=sprt)
    result = cli.invoke(app, ["sprt", "greedy", "first", "--file", str(path), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr == why.format(path=path) + "\n"


@pytest.mark.slow  # real bots played, by four runs of the command
def test_a_test_stopped_at_max_pairs_goes_on_under_a_higher_limit_as_one_test_with_it(tmp_path: Path):
    path = sprt_file(tmp_path, sprt="{elo0: 0, elo1: 5, max_pairs: 2}", concurrency=1)
    out = tmp_path / "out"
    args = ["sprt", "greedy", "first", "--file", str(path), "-o", str(out), "--no-progress", "--no-report"]
    first = arena(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "SPRT ([0, 5]) stopped undecided: max_pairs (2) reached" in first.stdout
    raised = arena(*args, "--max-pairs", "5", cwd=tmp_path)
    assert raised.returncode == 0, raised.stderr
    assert "note: sprt.max_pairs raised from 2 to 5" in raised.stderr
    assert "SPRT ([0, 5]) stopped undecided: max_pairs (5) reached" in raised.stdout
    # The same test, uninterrupted, with the higher limit from the start: the same pairs, LLR
    # after each, counts and decision.
    reference = _run(replace(load_config(path), sprt=SprtParams.elo(0, 5, max_pairs=5), output=str(tmp_path / "ref")), 1)
    with ResultStore.open_existing(str(out)) as a, ResultStore.open_existing(str(tmp_path / "ref")) as b:
        extended, whole = replay_store(a), replay_store(b)
        assert [r.outcome() for r in a.results()] == [r.outcome() for r in b.results()]
    assert extended.summary == whole.summary == reference["sprt"] and extended.trace == whole.trace
    assert extended.summary.pairs == 5 and extended.limit == 5
    # The folder describes the test it now holds: its table says so.
    table = cli.invoke(app, ["table", str(out)])
    assert "SPRT ([0, 5]) stopped undecided: max_pairs (5) reached" in table.stdout
    # A lower limit than the stored test's would make its pairs more than the test plays: refused.
    lowered = arena(*args, "--max-pairs", "3", cwd=tmp_path)
    assert lowered.returncode == 2, lowered.stderr
    assert lowered.stderr.splitlines()[-1] == (
        f"error: {out} holds a sequential test of up to 5 pairs (max_pairs): a limit can be raised, not lowered; give "
        "5 or more (--max-pairs, or sprt.max_pairs in a file), or a new output folder (--output DIR)")
    assert [r.outcome() for r in stored_rows(out)] == [r.outcome() for r in stored_rows(tmp_path / "ref")]


@pytest.mark.slow  # real bots played, by four runs of arena run
def test_arena_run_goes_on_under_the_files_raised_limit_once_its_bots_are_checked(tmp_path: Path):
    shutil.copy(POLICYBOT, tmp_path / "bot.py")
    bots = f'  - {{name: greedy, cmd: "$PYTHON bot.py greedy", cwd: "{tmp_path}"}}\n' + bot("first", "first")
    path = sprt_file(tmp_path, sprt="{elo0: 0, elo1: 5, max_pairs: 2}", bots=bots, concurrency=1)
    out = tmp_path / "out"

    def stored_limit() -> int:
        with ResultStore.open_existing(str(out)) as store:
            return store.meta()["game"]["sprt"]["max_pairs"]

    assert arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path).returncode == 0
    path.write_text(path.read_text().replace("max_pairs: 2", "max_pairs: 3"))
    # A changed bot refuses the run: the folder still describes the test it holds.
    original = (tmp_path / "bot.py").read_text()
    (tmp_path / "bot.py").write_text(original + "# tuned\n")
    refused = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert refused.returncode == 2 and "bot 'greedy' changed" in refused.stderr
    assert stored_limit() == 2 and len(stored_rows(out)) == 4
    (tmp_path / "bot.py").write_text(original)
    dry = arena("run", str(path), "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "note: sprt.max_pairs raised from 2 to 3" in dry.stdout, dry.stdout + dry.stderr
    assert stored_limit() == 2  # a dry run writes nothing
    done = arena("run", str(path), "--no-progress", "--no-report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "note: sprt.max_pairs raised from 2 to 3" in done.stderr
    assert "SPRT ([0, 5]) stopped undecided: max_pairs (3) reached" in done.stdout
    assert stored_limit() == 3 and len(stored_rows(out)) == 6


def test_max_pairs_on_the_command_line_is_held_to_the_files_cap():
    # Bots that cannot start: were the limit let through, the command would stop at them instead.
    result = cli.invoke(app, ["sprt", "./no-such-bot", "./no-such-bot", "--elo0", "0", "--elo1", "10", "--max-pairs",
                              str(SPRT_MAX_PAIRS + 1)])
    assert result.exit_code == 2, result.output
    assert result.stderr == "error: --max-pairs: at most 500,000 pairs (the size limit of a results folder), got 500,001\n"


@pytest.mark.slow  # real bots played, by two runs of the command
def test_changed_options_of_a_test_without_a_file_are_refused_naming_the_options_not_a_file(tmp_path: Path):
    args = ["sprt", f"$PYTHON {shlex.quote(str(POLICYBOT))} greedy", f"$PYTHON {shlex.quote(str(POLICYBOT))} first",
            "--elo0", "0", "--max-pairs", "1", "-j", "1", "--no-progress", "--no-report"]
    assert arena(*args, "--elo1", "100", cwd=tmp_path).returncode == 0
    changed = arena(*args, "--elo1", "50", cwd=tmp_path)
    assert changed.returncode == 2
    error = changed.stderr.strip().splitlines()
    assert len(error) == 1 and "Traceback" not in changed.stderr
    assert error[0].endswith("(changed: sprt.elo1); give the options it began with, or pick a new output folder "
                             "(--output DIR)"), error
