"""Play a tournament's matches on a Dask distributed cluster (``arena run FILE --cluster ADDRESS``).

Each match is one Dask task: the spec goes in, the game record comes out. The task depends
on nothing but its spec and the tournament, so the scheduler may run it on any worker, and
again on another one if the first worker dies mid-match; the record is the same either way.
Records stream back to the submitting process as they finish, and the runner writes them to
the store there, exactly as with local worker processes: the store stays on this machine.

On a Dask worker, bot processes are kept alive across the matches it runs, in "lanes": a
lane is one long-lived thread plus the bots it started. Matches run on the lane's own thread,
never on a Dask pool thread, because the harness starts bots with PR_SET_PDEATHSIG, which
fires when the *thread* that started a bot exits; Dask may retire its pool threads, a lane's
thread lives as long as the worker process. So the bots die with the worker (SIGKILL), and a
worker killed mid-match leaves no bot behind.

Dask is an optional extra and is imported here only, lazily.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from arena.errors import InputError
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import NOT_YET, Completed, Executor, ExecutorError, Specs, Wait, WorkerPlan
from arena.tournament.schedule import MatchSpec

MISSING_EXTRA = "the cluster executor needs the cluster extra: pip install '.[cluster]'"

# Submitted but unfinished tasks at a time: enough to keep every worker thread busy, few
# enough that a huge schedule does not sit in the scheduler's memory at once.
MIN_WINDOW = 256
# A worker closes the bots of a tournament nobody has played a match of for this long
# (its arena was killed before it could say so), and only then.
IDLE_CLOSE_SECONDS = 300.0
_REAP_EVERY_SECONDS = 30.0


class ClusterUnavailable(ExecutorError):
    """Dask is not installed, or the scheduler cannot be reached, or it has no workers."""


def require_extra(where: str) -> None:
    """Before a run says anything: ``--cluster`` (or a file's ``cluster:``, as ``where`` says)
    on an install without the extra is an option this install cannot use, not a fault met
    mid-run."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise InputError(f"{where}: {MISSING_EXTRA}")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterUnavailable(MISSING_EXTRA) from None
    return distributed


# --- the parent side ------------------------------------------------------------------------


class DaskExecutor(Executor):
    """Plays specs as tasks on the Dask cluster whose scheduler is at ``address``.

    ``worker_timeout``: seconds to wait for at least one worker before giving up (a cluster
    with no workers would otherwise wait silently forever). At most ``per_thread`` matches
    per worker thread, and at least ``min_window``, are submitted and unfinished at a time;
    a sequential test keeps them to what the workers can play at once (1 and 1), since every
    match it submits is played and counted even after the test has decided.
    """

    def __init__(self, plan: WorkerPlan, address: str, *, connect_timeout: float = 10.0, worker_timeout: float = 60.0,
                 per_thread: int = 4, min_window: int = MIN_WINDOW) -> None:
        distributed = _distributed()  # fail before anything starts, with the one-line hint
        try:
            # A malformed address fails inside Client() in a way that stalls the exit by 20 s.
            if distributed.comm.parse_address(address)[0] != "inproc":  # in-process clusters (tests)
                distributed.comm.get_address_host_port(address)
        except ValueError as exc:
            raise ClusterUnavailable(
                f"{address!r} is not a Dask scheduler address ({exc}); expected tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786"
            ) from None
        self._plan_bytes = pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL)
        # The lanes of a worker are found by this key: same plan, same bots.
        self._key = hashlib.sha256(self._plan_bytes).hexdigest()[:20]
        self._address = address
        self._connect_timeout = connect_timeout
        self._worker_timeout = worker_timeout
        self._client: Any = None
        self._futures: dict[str, Any] = {}  # match id -> future, unfinished only
        self._token = uuid.uuid4().hex[:12]
        self._per_thread = max(1, per_thread)
        self._min_window = max(1, min_window)

    @property
    def address(self) -> str:
        return self._address

    def __enter__(self) -> DaskExecutor:
        distributed = _distributed()
        try:
            self._client = distributed.Client(self._address, timeout=self._connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterUnavailable(f"cannot reach the Dask scheduler at {self._address}: {exc}") from None
        try:
            self._client.wait_for_workers(1, timeout=self._worker_timeout)
        except (TimeoutError, OSError):
            self._close_client()
            raise ClusterUnavailable(
                f"the Dask scheduler at {self._address} has no workers (waited {self._worker_timeout:.0f} s); "
                "start some with: dask worker " + self._address
            ) from None
        except BaseException:
            self._close_client()
            raise
        return self

    def workers(self) -> dict[str, int]:
        """Worker address -> threads, as the scheduler sees them now."""
        return dict(self._client.nthreads())

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]:
        return self.run_stream(specs)

    def run_stream(self, specs: Specs) -> Iterator[Completed]:
        """Specs are taken from ``specs`` as the window frees up, in their order; after a
        ``NOT_YET``, again once the next finished match is stored."""
        distributed = _distributed()
        client = self._client
        todo: Iterator[MatchSpec | Wait] | None = iter(specs)
        window = max(self._min_window, self._per_thread * sum(self.workers().values()))
        pending = distributed.as_completed(loop=client.loop)
        done: set[str] = set()

        def submit_more() -> None:
            nonlocal todo
            while todo is not None and len(self._futures) < window:
                spec = next(todo, None)
                if spec is None:
                    todo = None
                    return
                if spec is NOT_YET:
                    return
                if spec.id in self._futures or spec.id in done:
                    continue  # given twice: played once
                # A fresh key per run: nothing of an earlier run (interrupted, still being
                # released by the scheduler) can be mistaken for this run's result.
                future = client.submit(
                    play_task,
                    self._key,
                    self._plan_bytes,
                    spec.to_dict(),
                    key=f"arena-match-{spec.id}-{self._token}",
                    pure=False,
                )
                self._futures[spec.id] = future
                pending.add(future)

        submit_more()
        for future in pending:
            match_id = _match_id_of(future.key, self._token)
            self._futures.pop(match_id, None)
            if future.status == "cancelled":
                raise ExecutorError(f"match {match_id} was cancelled by the cluster (was the scheduler restarted?)")
            try:
                completed = future.result()
            except distributed.KilledWorker:
                raise ExecutorError(
                    f"match {match_id}: more workers died while playing it than the scheduler allows "
                    "(distributed.scheduler.allowed-failures, default 3); are the workers short of memory?"
                ) from None
            except Exception as exc:  # noqa: BLE001 - an arena fault on a worker, or the cluster's
                raise ExecutorError(f"match {match_id} failed on the cluster: {exc.__class__.__name__}: {exc}") from None
            future.release()
            # Dask resolves a future once even when the scheduler ran its task twice (a worker
            # died after the match, before the result was fetched). A match seen twice would be
            # a bug here; it is skipped, so the store never gets a second copy.
            if match_id in done:
                submit_more()
                continue
            done.add(match_id)
            submit_more()
            yield completed
            submit_more()  # the stored result may be what the next choice waited for
            if todo is not None and not self._futures:
                raise ExecutorError("the schedule waits for a result while no match is in play (a bug)")

    def __exit__(self, *exc: object) -> None:
        if self._client is None:
            return
        try:
            if self._futures:
                self._client.cancel(list(self._futures.values()))
            self._futures.clear()
            # Bots of this tournament go now, not after the idle delay; a match still being
            # played (an interrupted run) closes its lane when it ends.
            self._client.run(close_lanes, self._key, wait=True)
        except Exception:  # noqa: BLE001 - leaving must not hide the reason we leave
            pass
        finally:
            self._close_client()

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception:  # noqa: BLE001
                pass


def _match_id_of(key: Any, token: str) -> str:
    text = key if isinstance(key, str) else str(key)
    return text.removeprefix("arena-match-").removesuffix(f"-{token}")


# --- the tournament's plan, resolved on the worker ----------------------------------------------


@dataclass(frozen=True)
class ClusterJob:
    """The tournament as shipped to workers; each worker turns it into its own ``worker.Job``.

    ``$PYTHON`` in a bot's command means the interpreter running the arena; on a worker that
    is the worker's interpreter (it has the arena installed, it is running it), not the path
    of the submitting machine's.
    """

    config: TournamentConfig
    logs_dir: str


@dataclass
class ClusterState:
    job: Any  # worker.Job
    state: Any  # worker.WorkerState


def cluster_plan(config: TournamentConfig) -> WorkerPlan:
    from arena.tournament import worker
    from arena.tournament.runner import LOGS_DIR

    return WorkerPlan(
        job=ClusterJob(config, os.path.join(config.output, LOGS_DIR)),
        open_state=open_cluster_state,
        play=play_cluster,
        close_state=close_cluster_state,
        summarize=worker.summarize,
    )


def make_dask_executor(config: TournamentConfig, address: str, **options: Any) -> DaskExecutor:
    """The executor ``arena run --cluster ADDRESS`` uses (the cluster twin of ``runner.make_executor``)."""
    return DaskExecutor(cluster_plan(config), address, **options)


def _logs_dir_on_this_machine(wanted: str, config: TournamentConfig) -> str:
    # The results folder is on the submitting machine; a worker without that path (no shared
    # file system) keeps its bots' stderr logs in its temp folder instead.
    try:
        os.makedirs(wanted, exist_ok=True)
        if os.access(wanted, os.W_OK):
            return wanted
    except OSError:
        pass
    fallback = os.path.join(tempfile.gettempdir(), "escoba-arena", f"{config.name}-{config.fingerprint[:12]}", "logs")
    os.makedirs(fallback, exist_ok=True)
    return fallback


def open_cluster_state(job: ClusterJob, worker_id: str) -> ClusterState:
    from arena.tournament import worker

    logs_dir = _logs_dir_on_this_machine(job.logs_dir, job.config)
    real = worker.make_job(job.config, python=sys.executable, logs_dir=logs_dir)
    return ClusterState(real, worker.open_state(real, worker_id))


def play_cluster(job: ClusterJob, spec: MatchSpec, state: ClusterState) -> dict[str, Any]:
    from arena.tournament import worker

    return worker.play(state.job, spec, state.state)


def close_cluster_state(state: ClusterState) -> None:
    from arena.tournament import worker

    worker.close_state(state.state)


# --- the worker side ------------------------------------------------------------------------------


class _Lane:
    """One long-lived thread and the worker state (bot processes) only it touches."""

    def __init__(self, plan: WorkerPlan, worker_id: str) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"arena-{worker_id}")
        self._plan = plan
        self.state = self.call(plan.open_state, plan.job, worker_id)

    def call(self, fn: Any, *args: Any) -> Any:
        return self._thread.submit(fn, *args).result()

    def play(self, spec: MatchSpec, worker_id: str) -> Completed:
        completed: Completed = self.call(self._plan.complete, spec, self.state, worker_id)
        return completed

    def close(self) -> None:
        try:
            self.call(self._plan.close_state, self.state)
        finally:
            self._thread.shutdown(wait=True)


class _LanePool:
    """The lanes of one tournament on this worker: one per task running at once (per Dask thread)."""

    def __init__(self, plan: WorkerPlan, name: str) -> None:
        self.plan = plan
        self.name = name
        self.free: list[_Lane] = []
        self.busy = 0
        self.closed = False
        self.last_used = time.monotonic()
        self._serial = 0

    def new_lane(self) -> _Lane:
        lane_id = f"{self.name}.{self._serial}"
        self._serial += 1
        return _Lane(self.plan, lane_id)


_POOLS: dict[str, _LanePool] = {}
_POOLS_LOCK = threading.Lock()
_reaper: threading.Thread | None = None


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return f"pid{os.getpid()}"


def play_task(key: str, plan_bytes: bytes, spec_dict: dict[str, Any]) -> Completed:
    """The Dask task: one match on this worker's lane for the tournament ``key``. Pure: the
    record depends only on the plan and the spec (bots restarted or reused alike); the row
    and the record's JSON are made here, so the submitting process only writes them."""
    spec = MatchSpec.from_dict(spec_dict)
    name = _worker_name()
    lane, pool = _acquire(key, plan_bytes, name)
    try:
        completed = lane.play(spec, name)
    except BaseException:
        # Bots in an unknown state must not play the next match.
        _discard(pool, lane)
        raise
    _release(pool, lane)
    return completed


def _acquire(key: str, plan_bytes: bytes, name: str) -> tuple[_Lane, _LanePool]:
    _ensure_reaper()
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool.closed:
            pool = _LanePool(pickle.loads(plan_bytes), name)
            _POOLS[key] = pool
        pool.busy += 1
        pool.last_used = time.monotonic()
        lane = pool.free.pop() if pool.free else None
    if lane is None:
        try:
            lane = pool.new_lane()
        except BaseException:
            with _POOLS_LOCK:
                pool.busy -= 1
            raise
    return lane, pool


def _release(pool: _LanePool, lane: _Lane) -> None:
    with _POOLS_LOCK:
        pool.busy -= 1
        pool.last_used = time.monotonic()
        if not pool.closed:
            pool.free.append(lane)
            return
    _close_quietly(lane)


def _discard(pool: _LanePool, lane: _Lane) -> None:
    with _POOLS_LOCK:
        pool.busy -= 1
    _close_quietly(lane)


def _ensure_reaper() -> None:
    global _reaper
    with _POOLS_LOCK:
        if _reaper is None or not _reaper.is_alive():
            _reaper = threading.Thread(target=_reap_forever, name="arena-lane-reaper", daemon=True)
            _reaper.start()


def _reap_forever() -> None:
    while True:
        time.sleep(_REAP_EVERY_SECONDS)
        reap_idle_lanes()


def reap_idle_lanes() -> int:
    """Close the bots of tournaments that played nothing here for IDLE_CLOSE_SECONDS: their
    arena died without saying so (kill -9, a lost machine). Returns how many lanes closed."""
    now = time.monotonic()
    lanes: list[_Lane] = []
    with _POOLS_LOCK:
        for key, pool in list(_POOLS.items()):
            if pool.busy == 0 and now - pool.last_used > IDLE_CLOSE_SECONDS:
                pool.closed = True
                lanes.extend(pool.free)
                pool.free.clear()
                del _POOLS[key]
    _close_all(lanes)
    return len(lanes)


def close_lanes(key: str) -> int:
    """Run on every worker when a tournament's executor leaves: close its bots. Returns how
    many lanes are being closed (busy ones close when their match ends).

    ``Client.run`` calls this on the worker's event loop, so the closing (a goodbye and a
    grace per bot) happens on a thread of its own, not here.
    """
    with _POOLS_LOCK:
        pool = _POOLS.pop(key, None)
        if pool is None:
            return 0
        pool.closed = True
        lanes, pool.free = pool.free, []
    if lanes:
        threading.Thread(target=_close_all, args=(lanes,), name="arena-close-lanes", daemon=True).start()
    return len(lanes)


def _close_all(lanes: list[_Lane]) -> None:
    for lane in lanes:
        _close_quietly(lane)


def _close_quietly(lane: _Lane) -> None:
    try:
        lane.close()
    except Exception:  # noqa: BLE001 - a bot that will not close is killed by close_state anyway
        pass


__all__ = [
    "ClusterJob",
    "ClusterUnavailable",
    "DaskExecutor",
    "MISSING_EXTRA",
    "close_lanes",
    "cluster_plan",
    "make_dask_executor",
    "require_extra",
    "play_task",
    "reap_idle_lanes",
]
