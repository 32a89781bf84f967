"""Executors: something that plays match specs and hands back finished records, in any order.

The runner only needs ``Executor``: enter it, feed it the pending specs, iterate the
completions, leave it (which stops everything still running). ``LocalExecutor`` plays on
worker processes of this machine; another executor (a Dask cluster) can slot in beside it.

A worker is long-lived: it keeps one process per bot (per copy, for teams of clones)
alive across its matches, and plays one match at a time. A match depends only on its
spec, so the order and the worker it lands on never change its result.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
import traceback
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from arena.errors import ArenaError, ExitCode
from arena.harness.botproc import StartFailure
from arena.harness.sandbox import die_with_parent
from arena.tournament.failures import FailureNote
from arena.tournament.forkserver import let_server_go, worker_starts
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import MatchRow


class Wait(Enum):
    """What a stream of specs gives when its next match follows from results still in play
    (an adaptive format, adaptive.py): the executor gives that worker nothing now and asks
    the stream again once a match has finished and been stored."""

    NOT_YET = "not yet"


NOT_YET = Wait.NOT_YET
Specs = Iterable[MatchSpec | Wait]


class ExecutorError(ArenaError):
    """A match could not be played because of a fault of the arena itself (not of a bot).

    ``remote_traceback``: the traceback from the worker process, when there is one; the
    command line saves it to a file rather than print it."""

    exit_code = ExitCode.FAULT

    def __init__(self, message: str, remote_traceback: str | None = None) -> None:
        super().__init__(message)
        self.remote_traceback = remote_traceback


@dataclass(frozen=True)
class Summary:
    """What a worker makes of a played match (``WorkerPlan.summarize``)."""

    row: MatchRow
    record_json: str  # GameRecord.to_dict(), as JSON text
    ready: tuple[str | None, ...] = ()  # per seat: the name its bot gave in ``ready`` (None: not known)
    failures: tuple[FailureNote, ...] = ()  # every bot failure of the match, with its detail
    cannot_start: tuple[StartFailure | None, ...] = ()  # per seat: its command could not start (botproc)


@dataclass(frozen=True)
class Completed:
    """A finished match as it comes back from a worker: plain, picklable data.

    The row and the record's JSON are made where the match was played, so the parent,
    the one writer of the store, only has to write them; the bots' ``ready`` names and the
    failures' details come with them, so the parent can check and report without parsing
    the record.
    """

    spec: MatchSpec
    row: MatchRow
    record_json: str  # GameRecord.to_dict(), as JSON text
    duration: float  # wall seconds the worker spent on it
    worker: str
    ready: tuple[str | None, ...] = ()
    failures: tuple[FailureNote, ...] = ()
    cannot_start: tuple[StartFailure | None, ...] = ()


# A match player: (job, spec, worker state) -> the played match as a dict (the worker's
# is {"record": the GameRecord, "ready": [name or None per seat], "cannot_start": [StartFailure or
# None per seat]}). The worker state is created
# once per worker by ``open_state(job, worker_id)`` and closed by ``close_state(state)``;
# ``summarize(spec, played, duration)`` turns what it returned into a ``Summary``.
PlayFn = Callable[[Any, MatchSpec, Any], dict[str, Any]]


@dataclass(frozen=True)
class WorkerPlan:
    """What a worker runs: module-level callables (picklable by reference) and the job data."""

    job: Any
    open_state: Callable[[Any, str], Any]
    play: PlayFn
    close_state: Callable[[Any], None]
    summarize: Callable[[MatchSpec, dict[str, Any], float], Summary]

    def complete(self, spec: MatchSpec, state: Any, worker_id: str) -> Completed:
        start = time.monotonic()
        played = self.play(self.job, spec, state)
        duration = time.monotonic() - start
        summary = self.summarize(spec, played, duration)
        return Completed(spec, summary.row, summary.record_json, duration, worker_id, summary.ready, summary.failures,
                         summary.cannot_start)


class Executor(ABC):
    """Plays specs; yields ``Completed`` as matches finish. Leaving the context stops all work."""

    @abstractmethod
    def __enter__(self) -> Executor: ...

    @abstractmethod
    def __exit__(self, *exc: object) -> None: ...

    @abstractmethod
    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]: ...

    def run_stream(self, specs: Specs) -> Iterator[Completed]:
        """``run`` for specs given one at a time (a long schedule, streamed), with ``NOT_YET``
        while the next one waits for results in play. An executor that can take them lazily
        overrides this; the default gathers them first (no ``NOT_YET`` then)."""
        return self.run([spec for spec in specs if isinstance(spec, MatchSpec)])

    def run_batches(self, specs: Specs) -> Iterator[list[Completed]]:
        """``run_stream``, the matches that finished together in one list (the runner stores
        each list in one transaction). The default: one match a list."""
        for completed in self.run_stream(specs):
            yield [completed]


class InlineExecutor(Executor):
    """Plays in this process, one match after the other (tests, debugging, concurrency 1 without fork cost)."""

    def __init__(self, plan: WorkerPlan) -> None:
        self._plan = plan
        self._state: Any = None

    def __enter__(self) -> InlineExecutor:
        self._state = self._plan.open_state(self._plan.job, "w0")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._state is not None:
            self._plan.close_state(self._state)
            self._state = None

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]:
        return self.run_stream(specs)

    def run_stream(self, specs: Specs) -> Iterator[Completed]:
        for spec in specs:
            if not isinstance(spec, MatchSpec):
                # Every match it gave was finished and stored before it was asked again.
                raise ExecutorError("the schedule waits for a result while no match is in play (a bug)")
            yield self._plan.complete(spec, self._state, "w0")


# --- local worker processes -------------------------------------------------------------
#
# Each worker has its own duplex pipe to the parent and nothing shared with the others: a
# shared multiprocessing.Queue holds a lock while a worker waits on it or writes to it, and
# a worker killed at that moment (OOM killer, kill -9) would leave the lock taken and
# every other worker stuck. The parent hands out specs one at a time and knows at every
# moment which matches each worker holds: the one it plays and the next one, waiting in its
# pipe (``_HELD``), so that a worker never waits for the parent between two matches.

_READY, _DONE, _FAIL = "ready", "done", "fail"
_HELD = 2
_MAX_STARTUP_DEATHS = 3
_POLL = 0.5


def core_shares(workers: int, cpus: Iterable[int], least: int = 1) -> list[frozenset[int]] | None:
    """The cores each of ``workers`` worker processes is held to, with its launcher and bots:
    equal, disjoint shares of ``cpus`` (the arena's own), in their order, the remainder to none
    of them (the arena's own process, which stores the results, is not held). None when there
    is nothing to share out (one worker, or more workers than cores), or when a share would hold
    fewer than ``least`` cores: the most CPUs a bot of the tournament may use at once (its
    ``cpus`` limit), which a share must not cut.

    The processes of a match take turns: the referee asks, one bot thinks, the referee reads.
    Held to one core, each turn passes on that core; left to the scheduler, the bot often wakes
    on another core, and that wake-up costs more than a fast bot's whole move (benchmarks/
    RESULTS.md, "Matches per second"). Equal shares are fair too: a bot's threads start on its
    own match's cores, not another's (a bot may still move itself: its ``cpus`` limit caps it)."""
    ordered = sorted(set(cpus))
    if workers < 2 or workers > len(ordered):
        return None
    size = len(ordered) // workers
    if size < least:
        return None
    return [frozenset(ordered[i * size:(i + 1) * size]) for i in range(workers)]


def _hold_to(cores: frozenset[int] | None) -> None:
    """This process, and every process it starts from now on, on ``cores`` (where the system
    lets it: elsewhere they run where the scheduler puts them, as they would anyway)."""
    if cores:
        try:
            os.sched_setaffinity(0, cores)
        except (AttributeError, OSError):  # not Linux, or cores this process may not use
            pass


def _worker_main(plan: WorkerPlan, worker_id: str, conn: Any, cores: frozenset[int] | None = None) -> None:
    # First of all, held to its share of the cores (its launcher and bots inherit it): a worker
    # is never seen on the fork server's cores beside one on its share.
    _hold_to(cores)
    # Ctrl-C and a closed terminal's SIGHUP reach the whole foreground process group; only
    # the parent decides what happens then. SIGTERM (from the parent, or sent to the whole
    # group) must still run the finally below (bots closed).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker_starts()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    # Our parent is the fork server, which exits with the arena: when it goes (the arena was
    # killed, kill -9), SIGTERM us too, so the finally below closes the bots.
    parent_pid = os.getppid()
    _name(f"arena-{worker_id}")
    if not die_with_parent(parent_pid, signal.SIGTERM):
        return
    let_server_go()  # which then ends with the arena, and this worker with it
    state = None
    try:
        state = plan.open_state(plan.job, worker_id)
        _send(conn, (_READY, "", None, 0.0))
        while True:
            if not conn.poll(_POLL):
                if os.getppid() != parent_pid:
                    return  # the arena died: don't outlive it
                continue
            item = pickle.loads(conn.recv_bytes())
            if item is None:
                return
            spec = MatchSpec.from_dict(item)
            try:
                completed = plan.complete(spec, state, worker_id)
            except Exception:
                _send(conn, (_FAIL, spec.id, traceback.format_exc(limit=20), 0.0))
                return
            _send(conn, (_DONE, spec.id, completed, completed.duration))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the parent is gone
    finally:
        # On the way out already: a second SIGTERM (the group's, then the parent's) must not
        # cut the bots' clean-up short, nor land in the interpreter's exit handlers, where it
        # would print "Exception ignored in atexit callback".
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if state is not None:
            plan.close_state(state)


def own_cores() -> set[int]:
    """The cores this process may run on (all of them where the system cannot say)."""
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def _send(conn: Any, message: object) -> None:
    """One message on a worker's pipe, pickled by the standard library's C pickler: the pipe's
    own ``send`` pickles with dill, in Python, which cost about 0.5 ms a finished match at
    each end (the parent's share is serial)."""
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _exit_on_signal(signum: int, frame: object) -> None:
    signal.signal(signum, signal.SIG_IGN)  # once is enough: see the finally of _worker_main
    raise SystemExit(128 + signum)


def _name(name: str) -> None:
    """PR_SET_NAME (Linux): ps and top show "arena-w0", not the fork server's command line."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(15, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


@dataclass
class _Worker:
    id: str
    proc: Any
    conn: Any
    share: int | None  # its index in the executor's core shares, if it is held to one
    ready: bool = False
    # The specs sent to it and not yet answered, in the order it plays them.
    holding: deque[MatchSpec] = field(default_factory=deque)


class LocalExecutor(Executor):
    """``workers`` processes (the ``multiprocess`` package, forks of a preloaded server:
    arena/tournament/forkserver.py), fed one spec at a time. ``shares``: the cores each worker
    is held to, with its launcher and bots (``core_shares``); a worker started in place of a
    lost one takes the share it left."""

    def __init__(self, plan: WorkerPlan, workers: int, *, stop_grace: float = 3.0,
                 shares: Sequence[frozenset[int]] | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if shares is not None and len(shares) != workers:
            raise ValueError("one share of the cores per worker")
        self._plan = plan
        self._n = workers
        self._shares = shares
        self._grace = stop_grace
        self._workers: dict[str, _Worker] = {}
        self._ctx: Any = None
        self._serial = 0
        self._finished = False
        self._startup_deaths = 0

    def __enter__(self) -> LocalExecutor:
        from arena.tournament.forkserver import context

        # Not forks of this process: it runs a progress-bar thread (and the launcher client's),
        # and forking a threaded process can deadlock the child.
        self._ctx = context()
        return self

    @property
    def shares(self) -> Sequence[frozenset[int]] | None:
        """The cores each worker is held to (its own, in order), or None."""
        return self._shares

    def _spawn(self) -> None:
        worker_id = f"w{self._serial}"
        self._serial += 1
        share, cores = None, None
        if self._shares is not None:  # the first share no live worker holds (there is one: at most n live)
            taken = {w.share for w in self._workers.values()}
            share = next(i for i in range(len(self._shares)) if i not in taken)
            cores = self._shares[share]
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=_worker_main,
            args=(self._plan, worker_id, child_conn, cores),
            name=f"arena-{worker_id}",
            daemon=True,
        )
        proc.start()
        child_conn.close()
        self._workers[worker_id] = _Worker(worker_id, proc, parent_conn, share)

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]:
        return self.run_stream(specs)

    def run_stream(self, specs: Specs) -> Iterator[Completed]:
        for batch in self.run_batches(specs):
            yield from batch

    def run_batches(self, specs: Specs) -> Iterator[list[Completed]]:
        """Specs are taken from ``specs`` only as workers become free, so a schedule of any
        length is never held here whole; a match whose worker died waits in ``retry``. The
        matches whose results are waiting at one look come as one list."""
        from multiprocess.connection import wait

        source: Iterator[MatchSpec | Wait] | None = iter(specs)
        retry: deque[MatchSpec] = deque()
        # A few specs ahead, to start no more workers than there are matches to play.
        while source is not None and len(retry) < self._n:
            spec = next(source, None)
            if spec is None:
                source = None
            elif spec is NOT_YET:
                break
            else:
                retry.append(spec)
        while True:
            holding = sum(1 for w in self._workers.values() if w.holding)
            if source is None and not retry and not holding:
                break
            # Keep the pool full while there is work nobody holds.
            wanted = self._n if source is not None else min(self._n, len(retry) + holding)
            while len(self._workers) < wanted:
                self._spawn()
            for worker in list(self._workers.values()):
                source = self._dispatch(worker, retry, source)
            if source is not None and self._workers and all(w.ready and not w.holding
                                                            for w in self._workers.values()):
                raise ExecutorError("the schedule waits for a result while no match is in play (a bug)")
            by_handle = {}
            for worker in self._workers.values():
                by_handle[worker.conn] = worker
                by_handle[worker.proc.sentinel] = worker
            batch: list[Completed] = []
            for handle in wait(list(by_handle), timeout=_POLL):
                worker = by_handle[handle]
                if worker.id not in self._workers:
                    continue  # already handled through its other handle
                if handle is worker.conn:
                    try:
                        kind, match_id, payload, duration = pickle.loads(worker.conn.recv_bytes())
                    except (EOFError, OSError):
                        self._lost(worker, retry)
                        continue
                    if kind == _READY:
                        worker.ready = True
                        self._startup_deaths = 0
                    elif kind == _DONE:
                        spec = worker.holding.popleft() if worker.holding else None
                        # Next match first: the worker plays while the result is stored.
                        source = self._dispatch(worker, retry, source)
                        if spec is not None and spec.id == match_id:
                            batch.append(payload)
                    else:
                        if batch:
                            yield batch  # stored before the fault stops the run
                        raise ExecutorError(f"match {match_id} failed inside the arena (worker {worker.id})", payload)
                elif not worker.conn.poll():
                    self._lost(worker, retry)
            if batch:
                yield batch
        self._finished = True

    def _dispatch(
        self, worker: _Worker, retry: deque[MatchSpec], source: Iterator[MatchSpec | Wait] | None
    ) -> Iterator[MatchSpec | Wait] | None:
        """Hand the worker a match if it holds none, and a second one while every other worker
        (starting ones too) holds one; returns the source, None once it is exhausted. A source
        that says ``NOT_YET`` is asked again on the next pass, after the results that arrived
        meanwhile are stored."""
        while worker.ready and worker.id in self._workers and (
                not worker.holding or (len(worker.holding) < _HELD
                                       and all(w.holding for w in self._workers.values() if w is not worker))):
            spec = retry.popleft() if retry else next(source, None) if source is not None else None
            if spec is NOT_YET:
                return source
            if spec is None:
                return None
            worker.holding.append(spec)
            try:
                _send(worker.conn, spec.to_dict())
            except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
                self._lost(worker, retry)
        return source

    def _lost(self, worker: _Worker, pending: deque[MatchSpec]) -> None:
        """A worker died (OOM-killed, say): its match is played again from its seed, elsewhere."""
        self._workers.pop(worker.id, None)
        worker.proc.join(0.1)
        try:
            worker.conn.close()
        except OSError:
            pass
        pending.extendleft(reversed(worker.holding))  # played again first, in schedule order
        worker.holding.clear()
        if not worker.ready:
            self._startup_deaths += 1
            if self._startup_deaths >= _MAX_STARTUP_DEATHS:
                raise ExecutorError(
                    f"worker processes die while starting (exit code {worker.proc.exitcode}); "
                    "if you call the runner from a script, guard it with if __name__ == '__main__'"
                )

    def __exit__(self, *exc: object) -> None:
        workers = list(self._workers.values())
        self._workers.clear()
        if not workers:
            return
        if self._finished and exc[0] is None:
            for worker in workers:
                try:
                    _send(worker.conn, None)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass
        else:
            for worker in workers:
                if worker.proc.is_alive():
                    worker.proc.terminate()  # SIGTERM: the worker closes its bots on the way out
        deadline = time.monotonic() + self._grace
        for worker in workers:
            worker.proc.join(max(0.0, deadline - time.monotonic()))
        for worker in workers:
            if worker.proc.is_alive():
                worker.proc.kill()
                worker.proc.join(1.0)
            try:
                worker.conn.close()
            except OSError:
                pass
