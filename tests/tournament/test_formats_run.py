"""Swiss and ladder runs end to end: real bot processes through the command line (a ladder
that bots join), and a ladder on a Dask cluster (in-process, matches decided by the rating
model: tests/formats_helpers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament import runner as tr
from arena.tournament.config import parse_config
from arena.tournament.executors import InlineExecutor, Summary, WorkerPlan
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import ResultStore
from tests.formats_helpers import outcome_row

pytestmark = pytest.mark.slow

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()


def write(folder: Path, extra: str, policies) -> Path:
    bots = "\n".join(f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}"}}' for p in policies)
    path = folder / "t.yaml"
    path.write_text(f"name: t\nseed: 11\noutput: {folder / 'out'}\nconcurrency: 2\n{extra}\nbots:\n{bots}\n")
    return path


def rows(folder: Path):
    with ResultStore.open_existing(str(folder)) as store:
        return [(r.index, r.id, r.seats, r.winner) for r in store.results()]


def test_a_ladder_that_bots_join_keeps_its_results_and_rates_the_newcomers_with_new_matches(tmp_path: Path):
    path = write(tmp_path, "format: ladder\nmax_matches: 8\nwindow: 1", ("first", "greedy", "hash"))
    assert cli.invoke(app, ["run", str(path), "--quiet", "--no-report"]).exit_code == 0
    before = rows(tmp_path / "out")
    assert len(before) == 8
    path = write(tmp_path, "format: ladder\nmax_matches: 14\nwindow: 1", ("first", "greedy", "hash", "last"))
    dry = cli.invoke(app, ["run", str(path), "--dry-run"])
    assert dry.exit_code == 0 and "8 matches already in" in dry.output and "last" in dry.output
    assert cli.invoke(app, ["run", str(path), "--quiet", "--no-report"]).exit_code == 0
    after = rows(tmp_path / "out")
    assert after[:8] == before and len(after) == 14
    assert all("last" in seats for _, _, seats, _ in after[8:])  # the newcomer first: it has no rating
    for command in (["verify", str(tmp_path / "out")], ["table", str(tmp_path / "out"), "--format", "json"],
                    ["export", str(tmp_path / "out"), "--games", "csv"],
                    ["report", str(tmp_path / "out"), "--html", str(tmp_path / "r.html")]):
        done = cli.invoke(app, command)
        assert done.exit_code == 0, (command, done.output)
    table = json.loads(cli.invoke(app, ["table", str(tmp_path / "out"), "--format", "json"]).stdout)
    assert {row["name"] for row in table} == {"first", "greedy", "hash", "last"}
    # Another change than bots or the stop is refused as for any format.
    path.write_text(path.read_text().replace("window: 1", "window: 2"))
    refused = cli.invoke(app, ["run", str(path), "--quiet"])
    assert refused.exit_code == 2 and "changed: " in refused.output and "window" in refused.output


def test_a_swiss_through_the_command_line(tmp_path: Path):
    path = write(tmp_path, "format: swiss\nrounds: 2", ("first", "greedy", "hash", "last"))
    done = cli.invoke(app, ["run", str(path), "--quiet", "--no-report"])
    assert done.exit_code == 0, done.output
    stored = rows(tmp_path / "out")
    assert len(stored) == 2 * 2 * 2
    assert cli.invoke(app, ["verify", str(tmp_path / "out")]).exit_code == 0
    again = cli.invoke(app, ["run", str(path), "--dry-run"])
    assert "nothing left to choose" in again.output


# --- a ladder on a Dask cluster, matches decided in-process ----------------------------------------

STRENGTH = {f"b{i}": 80.0 * i for i in range(8)}


def _open(job, worker_id):
    return None


def _play(job, spec: MatchSpec, state):
    return {"row": outcome_row(spec, STRENGTH, None)}  # type: ignore[arg-type]


def _close(state):
    pass


def _summarize(spec: MatchSpec, played, duration: float) -> Summary:
    return Summary(played["row"], "{}")


PLAN = WorkerPlan(job=None, open_state=_open, play=_play, close_state=_close, summarize=_summarize)


def _ladder(folder: Path):
    bots = "\n".join(f"  - {{name: {name}, cmd: x}}" for name in STRENGTH)
    return parse_config(f"name: l\nseed: 4\nformat: ladder\nmax_matches: 60\nwindow: 6\noutput: {folder}\nbots:\n{bots}\n")


def test_a_ladder_on_dask_chooses_as_one_worker_would(tmp_path: Path):
    distributed = pytest.importorskip("distributed")
    from arena.tournament.dask_executor import DaskExecutor

    schedules = []
    for name in ("inline", "dask"):
        config = _ladder(tmp_path / name)
        with tr.open_store(config) as store:
            strategy = tr.plan_strategy(config, store)
            if name == "inline":
                tr.play(store, strategy, InlineExecutor(PLAN))
            else:
                with distributed.LocalCluster(n_workers=1, threads_per_worker=4, processes=False,
                                              dashboard_address=None) as local:
                    tr.play(store, strategy, DaskExecutor(PLAN, local.scheduler_address, min_window=8))
            schedules.append([(r.index, r.id, r.seats) for r in store.results()])
    assert len(schedules[0]) == 60 and schedules[0] == schedules[1]


def test_a_fixed_schedules_view_never_touches_the_adaptive_formats_module(tmp_path: Path, monkeypatch):
    """``arena run`` imports its later modules on a thread while it starts (cli/tournament.py's
    ``_Warm``): the adaptive formats' module may be half imported there when the run's view is
    made. The view of a round robin or a sequential test does not look at it; a ladder's
    imports it in full."""
    import sys
    import types

    from arena.cli.tournament import _ScheduleView, _SprtView, _view_of

    bots = "\n".join(f"  - {{name: {name}, cmd: x}}" for name in STRENGTH)
    fixed = [parse_config(f"name: r\nseed: 4\nformat: round_robin\noutput: {tmp_path / 'r'}\nbots:\n{bots}\n"),
             parse_config(f"name: s\nseed: 4\nformat: sprt\nsprt: {{elo0: 0, elo1: 50}}\noutput: {tmp_path / 's'}\n"
                          f"bots:\n  - {{name: a, cmd: x}}\n  - {{name: b, cmd: y}}\n")]
    views = []
    for config in fixed:
        with tr.open_store(config) as store:
            strategy = tr.plan_strategy(config, store)
        with monkeypatch.context() as patched:
            patched.setitem(sys.modules, "arena.tournament.adaptive", types.ModuleType("arena.tournament.adaptive"))
            views.append(type(_view_of(config, strategy)))
    assert views == [_ScheduleView, _SprtView]
    ladder = _ladder(tmp_path / "l")
    with tr.open_store(ladder) as store:
        assert isinstance(_view_of(ladder, tr.plan_strategy(ladder, store)), _ScheduleView)
