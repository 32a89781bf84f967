"""The Dask cluster executor against a real ``dask scheduler`` and real ``dask worker`` processes on loopback.

What must hold: the same tournament file and seed give the same games on the cluster as
locally; a worker killed with SIGKILL mid-match loses nothing and duplicates nothing, and
its bots die with it; an interrupted run resumes on the cluster; the default install never
imports dask.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from typer.testing import CliRunner
from zoo.helpers import with_environ

from arena.cli import app
from arena.tournament import runner as tr
from arena.tournament.config import ConfigError, load_config, parse_config
from arena.tournament.dask_executor import (
    MISSING_EXTRA,
    ClusterUnavailable,
    DaskExecutor,
    close_lanes,
    cluster_plan,
    make_dask_executor,
    play_task,
    reap_idle_lanes,
)
from arena.tournament.executors import Completed, Executor
from arena.tournament.schedule import MatchSpec, build_schedule
from arena.tournament.store import ResultStore

pytestmark = pytest.mark.slow  # starts a Dask cluster

try:
    import distributed
except ImportError:  # the extra is optional: what needs no Dask still runs without it
    distributed = None
needs_dask = pytest.mark.skipif(distributed is None, reason="the cluster extra is not installed: pip install '.[cluster]'")

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
DASK = str(Path(sys.executable).with_name("dask"))
TAG = "ARENA_CLUSTER_TEST"
cli = CliRunner()


# --- processes ------------------------------------------------------------------------------


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen
    workers: dict[str, subprocess.Popen]  # name -> process (no nanny: the process is the worker)
    tags: dict[str, str]  # name -> the value of TAG in that worker's (and its bots') environment


def _start(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    # Own session: teardown kills the whole group, whatever a failing test left running.
    return subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(10)


def _scheduler_address(path: Path, proc: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"dask scheduler exited ({proc.returncode}):\n{log.read_text()}")
        try:
            return json.loads(path.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise RuntimeError(f"dask scheduler did not start:\n{log.read_text()}")


def _start_worker(cluster: Cluster, name: str, folder: Path) -> None:
    """A ``dask worker`` named ``name`` with a tag of its own, one thread, no nanny."""
    tag = f"{uuid.uuid4().hex}-{name}"
    env = dict(os.environ, **{TAG: tag})
    cluster.workers[name] = _start([DASK, "worker", cluster.address, "--name", name, "--nthreads", "1", "--no-nanny",
                                    "--no-dashboard", "--host", "127.0.0.1"], folder / f"{name}.log", env)
    cluster.tags[name] = tag


def _wait_for_workers(cluster: Cluster) -> None:
    """Until the scheduler has exactly the workers of ``cluster`` (none that died)."""
    with distributed.Client(cluster.address, set_as_default=False, timeout=30) as client:
        deadline = time.monotonic() + 60
        while True:
            names = {w.get("name") for w in client.scheduler_info(n_workers=-1)["workers"].values()}
            if names == set(cluster.workers):
                return
            dead = [name for name, proc in cluster.workers.items() if proc.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"the cluster's workers are {sorted(map(str, names))}, not {sorted(cluster.workers)}"
                                   f" (exited: {dead})")
            time.sleep(0.1)


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    """``dask scheduler`` on a free loopback port and two ``dask worker`` processes, one thread
    each: started once for the module (some seconds), each test given it through ``cluster``."""
    folder = tmp_path_factory.mktemp("cluster")
    sched_file = folder / "scheduler.json"
    sched_log = folder / "scheduler.log"
    # Its HTTP server (which --no-dashboard keeps) on a free port too: on 8787, Dask's default, it
    # would make the LocalCluster of a later test warn that the port is taken.
    scheduler = _start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                        "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(sched_file)], sched_log)
    cluster = Cluster("", scheduler, {}, {})
    try:
        cluster.address = _scheduler_address(sched_file, scheduler, sched_log)
        for name in ("w1", "w2"):
            _start_worker(cluster, name, folder)
        _wait_for_workers(cluster)
        yield cluster, folder
    finally:
        for proc in cluster.workers.values():
            _stop(proc)
        _stop(scheduler)


@pytest.fixture
def cluster(shared_cluster: tuple[Cluster, Path]) -> Cluster:
    """The module's cluster with two live workers: a worker a test killed is replaced first,
    by a new worker of a new name and tag (the scheduler may still remember the dead one)."""
    cluster, folder = shared_cluster
    assert cluster.scheduler.poll() is None
    for name, proc in list(cluster.workers.items()):
        if proc.poll() is not None:
            proc.wait()
            del cluster.workers[name], cluster.tags[name]
            _start_worker(cluster, f"{name}-{uuid.uuid4().hex[:6]}", folder)
    _wait_for_workers(cluster)
    return cluster


def _tagged(tag: str) -> list[int]:
    return with_environ(f"{TAG}={tag}")


def _bots(tag: str) -> list[int]:
    """The bot processes among the tagged ones (a worker also has the harness's keeper): the
    first process of each bot's tree (a sealed bot's is bubblewrap's, with the bot beneath)."""
    bots = [pid for pid in _tagged(tag) if "policybot.py" in _describe([pid])]
    return [pid for pid in bots if _parent(pid) not in bots]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return int(data[data.rfind(b")") + 2:].split()[1])


def _describe(pids: list[int]) -> str:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{pid}: {cmdline}")
        except OSError:
            out.append(f"{pid}: gone")
    return "; ".join(out)


def _wait_gone(tag: str, seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# --- the tournament ---------------------------------------------------------------------------


def write_tournament(folder: Path, extra: str = "", env: str = "") -> Path:
    # A few ms per move, so matches last long enough to kill a worker in the middle of one.
    bots = "\n".join(
        f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}", env: {{POLICYBOT_SLEEP_MS: 3{env}}}, '
        f'pass_env: [{TAG}]}}'  # the bots carry their worker's tag (_bots)
        for p in ("first", "greedy", "hash")
    )
    path = folder / "cl.yaml"
    # Matches to 5 points (a hand or two, still hundreds of ms of moves): what is checked is the
    # same as to 21.
    path.write_text(f"name: cl\nseed: 777\nrules: {{target: 5}}\nmatches_per_pairing: 4\noutput: {folder / 'out'}\n"
                    f"{extra}\nbots:\n{bots}\n")
    return path


def outcomes(folder: str) -> list[tuple]:
    with ResultStore.open_existing(folder) as store:
        return [row.outcome() for row in store.results()]


def without_times(value):
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in ("ms", "t_ms", "duration_ms", "usage")}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def records_without_times(folder: str) -> dict[str, dict]:
    with ResultStore.open_existing(folder) as store:
        return {row.id: without_times(store.record(row.id)) for row in store.results()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple], dict[str, dict]]:
    """The tournament file, and what a local run of it gives."""
    folder = tmp_path_factory.mktemp("cluster-ref")
    path = write_tournament(folder)
    config = replace(load_config(path), output=str(folder / "local"))
    summary = tr.run_tournament(config, executor=tr.make_executor(config, 1, inline=True))
    assert summary["played"] == len(build_schedule(config)) == 12
    return path, outcomes(config.output), records_without_times(config.output)


class Recording(Executor):
    """Passes everything through, remembering which worker played each match."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.played_by: dict[str, list[str]] = {}

    def __enter__(self) -> Recording:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.__exit__(*exc)

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]:
        for completed in self.inner.run(specs):
            self.played_by.setdefault(completed.spec.id, []).append(completed.worker)
            yield completed


# --- the tests --------------------------------------------------------------------------------


@needs_dask
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(tmp_path: Path, cluster: Cluster, reference):
    path, expected, expected_records = reference
    config = replace(load_config(path), output=str(tmp_path / "on-cluster"))
    executor = Recording(make_dask_executor(config, cluster.address))
    killed: dict[str, object] = {}

    with distributed.Client(cluster.address, set_as_default=False) as inspect:
        pids = inspect.run(os.getpid)  # worker address -> pid

        def kill_one_busy_worker(row, done) -> None:
            if killed or done < 3:
                return
            for address, keys in inspect.processing().items():
                if keys:
                    name = next(n for n, p in cluster.workers.items() if p.pid == pids[address])
                    # Bots of that worker are running right now (a match is in flight).
                    assert _bots(cluster.tags[name])
                    os.kill(pids[address], signal.SIGKILL)
                    killed.update(name=name, in_flight=[str(k) for k in keys])
                    return

        with tr.open_store(config) as store:
            plan = tr.plan_run(config, store)
            played = tr.play(store, plan, executor, kill_one_busy_worker)

    assert killed, "no worker had a match in flight after 3 results"
    assert played == plan.total == 12
    # Every match exactly once (the store's key refuses a second copy), equal to the local run.
    got = outcomes(config.output)
    assert [o[0] for o in got] == [s.id for s in build_schedule(config)]
    assert got == expected
    assert records_without_times(config.output) == expected_records
    assert all(len(workers) == 1 for workers in executor.played_by.values())
    # The match the dead worker was playing was played again, by the survivor.
    survivor = next(name for name in cluster.workers if name != killed["name"])
    lost = [match_id for match_id in executor.played_by if any(f"-{match_id}-" in key for key in killed["in_flight"])]
    assert lost and all(executor.played_by[m] == [survivor] for m in lost)
    # Nothing of the dead worker is left (its bots got PR_SET_PDEATHSIG), and the survivor
    # closed its bots when the tournament ended, while staying up itself.
    assert _wait_gone(cluster.tags[killed["name"]]) == []
    assert cluster.workers[survivor].poll() is None
    deadline = time.monotonic() + 10
    while _bots(cluster.tags[survivor]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _bots(cluster.tags[survivor]) == [], _describe(_bots(cluster.tags[survivor]))
    assert cluster.workers[survivor].pid in _tagged(cluster.tags[survivor])


@needs_dask
def test_started_locally_interrupted_then_finished_on_the_cluster_from_the_yaml(tmp_path: Path, cluster: Cluster, reference):
    path, expected, expected_records = reference
    folder = tmp_path / "t"
    folder.mkdir()
    # Same games as the reference (same bots, seed and options); the cluster key never
    # changes the fingerprint, so a run started without it resumes with it.
    path = write_tournament(folder, extra=f"cluster: {cluster.address}")
    config = load_config(path)
    assert config.cluster == cluster.address
    assert config.fingerprint == load_config(reference[0]).fingerprint
    seen: list[str] = []

    def stop_after_four(row, done):
        seen.append(row.id)
        if len(seen) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tr.run_tournament(config, executor=tr.make_executor(config, 1, inline=True), on_match=stop_after_four)
    assert len(outcomes(config.output)) == 4

    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "resuming: 4 of 12" in result.stderr and f"cluster: {cluster.address}" in result.stderr
    assert "greedy" in result.stdout
    assert outcomes(config.output) == expected
    assert records_without_times(config.output) == expected_records
    # Nothing more to play: the second resume does not even need the cluster.
    again = cli.invoke(app, ["run", str(path), "--no-progress", "--cluster", "tcp://127.0.0.1:9"])
    assert again.exit_code == 0 and "resuming: 12 of 12" in again.stderr


@needs_dask
def test_an_unreachable_scheduler_is_one_clear_error(tmp_path: Path):
    config = load_config(write_tournament(tmp_path))
    with pytest.raises(ClusterUnavailable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with DaskExecutor(cluster_plan(config), "tcp://127.0.0.1:9", connect_timeout=1):
            pass


@needs_dask
def test_a_malformed_address_is_refused_before_connecting(tmp_path: Path):
    config = load_config(write_tournament(tmp_path))
    for address in ("scheduler-host", "http://10.0.0.5:8786"):
        with pytest.raises(ClusterUnavailable, match="is not a Dask scheduler address"):
            make_dask_executor(config, address)


def test_a_worker_lane_keeps_its_bots_across_matches_then_closes_them(tmp_path: Path, reference):
    """The task itself, in this process: what a Dask worker runs for each match."""
    _, _, expected_records = reference
    tag = uuid.uuid4().hex
    config = load_config(write_tournament(tmp_path, env=f", {TAG}: {tag}"))
    blob = pickle.dumps(cluster_plan(config))
    key = f"test-{tag}"
    schedule = build_schedule(config)
    first, second = schedule[:2]  # the same two bots, seats swapped: one deal's two rotations
    other = next(m for m in schedule if m.deal != first.deal and set(m.seats) == set(first.seats))
    try:
        one = play_task(key, blob, first.to_dict())
        bots = sorted(_bots(tag))
        assert len(bots) == 2
        two = play_task(key, blob, second.to_dict())
        # The twin of a deal goes to processes that have not seen it (PROTOCOL.md); another
        # deal is played by processes kept from before.
        twins = sorted(_bots(tag))
        assert len(twins) == 4 and set(bots) < set(twins)
        three = play_task(key, blob, other.to_dict())
        assert sorted(_bots(tag)) == twins
        assert (one.spec, two.spec) == (first, second) and one.row.id == first.id
        assert without_times(json.loads(one.record_json)) == expected_records[first.id]
        assert without_times(json.loads(two.record_json)) == expected_records[second.id]
        assert without_times(json.loads(three.record_json)) == expected_records[other.id]
    finally:
        closing = close_lanes(key)
    assert closing == 1
    assert _wait_gone(tag) == []
    assert close_lanes(key) == 0


def _open_nothing(job, worker_id):
    return None


def _play_broken(job, spec, state):
    raise RuntimeError(f"an arena bug on match {spec.id}")


def _close_nothing(state):
    return None


@needs_dask
def test_an_arena_fault_on_a_worker_stops_the_run_naming_the_match(tmp_path: Path):
    from arena.tournament.executors import ExecutorError, WorkerPlan
    from arena.tournament.worker import summarize

    config = load_config(write_tournament(tmp_path))
    plan = WorkerPlan(job=None, open_state=_open_nothing, play=_play_broken, close_state=_close_nothing, summarize=summarize)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as local:
        with tr.open_store(config) as store:
            pending = tr.plan_run(config, store)
            expected = r"match 0000\d\.\d failed on the cluster: RuntimeError: an arena bug on match"
            with pytest.raises(ExecutorError, match=expected):
                tr.play(store, pending, DaskExecutor(plan, local.scheduler_address))
            assert store.count() == 0


def test_a_worker_closes_the_bots_of_a_tournament_idle_for_long(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Its arena died without saying so (kill -9): the bots go after IDLE_CLOSE_SECONDS."""
    from arena.tournament import dask_executor

    tag = uuid.uuid4().hex
    config = load_config(write_tournament(tmp_path, env=f", {TAG}: {tag}"))
    key = f"test-{tag}"
    try:
        play_task(key, pickle.dumps(cluster_plan(config)), build_schedule(config)[0].to_dict())
        assert len(_bots(tag)) == 2
        assert reap_idle_lanes() == 0  # not idle for long yet
        assert len(_bots(tag)) == 2
        monkeypatch.setattr(dask_executor, "IDLE_CLOSE_SECONDS", 0.0)
        assert reap_idle_lanes() == 1
        assert _wait_gone(tag) == []
    finally:
        close_lanes(key)


def test_without_dask_the_cli_says_which_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = write_tournament(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ClusterUnavailable) as info:
        make_dask_executor(load_config(path), "tcp://127.0.0.1:8786")
    assert str(info.value) == MISSING_EXTRA == "the cluster executor needs the cluster extra: pip install '.[cluster]'"
    # Refused before the run says anything or makes its folder: an option this install cannot use.
    result = cli.invoke(app, ["run", str(path), "--no-progress", "--cluster", "tcp://127.0.0.1:8786"])
    assert result.exit_code == 2, result.output  # bad input (README, exit codes)
    assert result.stderr == f"error: --cluster tcp://127.0.0.1:8786: {MISSING_EXTRA}\n"
    assert result.stdout == "" and not (tmp_path / "out").exists()
    in_file = path.with_name("in_file.yaml")
    in_file.write_text(path.read_text() + "cluster: tcp://127.0.0.1:8786\n")
    result = cli.invoke(app, ["run", str(in_file), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {in_file}: key 'cluster': {MISSING_EXTRA}\n" and result.stdout == ""


def test_the_cluster_key_in_the_yaml():
    base = "name: t\nseed: 1\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: y}\n"
    plain = parse_config(base)
    assert plain.cluster is None
    with_cluster = parse_config(base + "cluster: tcp://10.0.0.5:8786\n")
    assert with_cluster.cluster == "tcp://10.0.0.5:8786"
    assert with_cluster.fingerprint == plain.fingerprint
    with pytest.raises(ConfigError, match=r"<string>:6: key 'cluster': expected a Dask scheduler address"):
        parse_config(base + "cluster: [a, b]\n")


def test_the_default_install_never_imports_dask():
    code = (
        "import sys; import arena.cli;"
        "import arena.tournament.runner, arena.tournament.dask_executor;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
