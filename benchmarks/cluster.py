"""Throughput of a tournament on a loopback Dask cluster with one worker process, then two.

Acceptance (issue 7): on this 2-core machine, two worker processes (one thread each) play at
least 1.6 times as many matches per second as one. Prints both, the machine's load
(``/proc/loadavg``) around each measurement, and, last, the ratio.

    .venv/bin/python benchmarks/cluster.py [--matches-per-pairing N] [--rounds R] [--playouts P]

Each measurement starts a real ``dask scheduler`` and N real ``dask worker --nthreads 1``
processes on 127.0.0.1, waits until the workers are connected, then times the whole play
phase of ``arena run --cluster`` (the library path it uses: connect, submit, workers start
their bots, records stream back and are stored one transaction each). Starting the cluster
itself is not timed: a user's cluster is already up.

The bots are the bundled expert bot (bots/expert_bot.py, a Monte-Carlo search, the kind of
slow bot a cluster is for) with a deal cap so the cap, not the clock, ends each search, and
the bundled greedy bot. With ``--rounds R`` the two measurements alternate R times and the
best of each is compared (a shared machine's load comes and goes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DASK = str(Path(sys.executable).with_name("dask"))


def write_tournament(folder: Path, matches: int, playouts: int) -> Path:
    expert = f"$PYTHON bots/expert_bot.py --playouts {playouts} --ms 10000"
    lines = [
        "name: cluster-bench",
        "seed: 20260107",
        f"matches_per_pairing: {matches}",
        f"output: {folder / 'unused'}",
        "bots:",
        f'  - {{name: expert1, cmd: "{expert}", cwd: "{ROOT}", move_ms: 20000}}',
        f'  - {{name: expert2, cmd: "{expert}", cwd: "{ROOT}", move_ms: 20000}}',
        f'  - {{name: greedy, cmd: "$PYTHON bots/greedy_bot.py", cwd: "{ROOT}"}}',
    ]
    path = folder / "cluster-bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


class LoopbackCluster:
    """A scheduler and ``workers`` worker processes; every process is killed on exit."""

    def __init__(self, folder: Path, workers: int) -> None:
        self.folder = folder
        self.n = workers
        self.procs: list[subprocess.Popen] = []
        self.address = ""

    def _start(self, args: list[str], log: str) -> subprocess.Popen:
        proc = subprocess.Popen(args, stdout=open(self.folder / log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> LoopbackCluster:
        import distributed

        sched_file = self.folder / f"scheduler-{self.n}.json"
        try:
            scheduler = self._start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                     "--scheduler-file", str(sched_file)], f"scheduler-{self.n}.log")
            deadline = time.monotonic() + 60
            while not sched_file.is_file() or not sched_file.read_text().strip():
                if scheduler.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"dask scheduler did not start; see {self.folder}/scheduler-{self.n}.log")
                time.sleep(0.1)
            self.address = json.loads(sched_file.read_text())["address"]
            for i in range(self.n):
                self._start([DASK, "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                             "--host", "127.0.0.1", "--name", f"w{i + 1}"], f"worker-{self.n}-{i + 1}.log")
            with distributed.Client(self.address, set_as_default=False, timeout=30) as client:
                client.wait_for_workers(self.n, timeout=90)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.procs):
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)


def measure(path: Path, folder: Path, workers: int, tag: str) -> tuple[float, int, float]:
    """(matches per second, matches, seconds) with ``workers`` worker processes."""
    from arena.tournament import runner
    from arena.tournament.config import load_config
    from arena.tournament.dask_executor import make_dask_executor

    with LoopbackCluster(folder, workers) as cluster:
        config = replace(load_config(path), output=str(folder / f"out-{tag}"))
        with runner.open_store(config) as store:
            plan = runner.plan_run(config, store)
            start = time.perf_counter()
            played = runner.play(store, plan, make_dask_executor(config, cluster.address))
            elapsed = time.perf_counter() - start
            failures = sum(len(row.failures) for row in store.results())
    if failures:
        # Forfeits are quick: a bot that fails makes any rate meaningless.
        raise SystemExit(
            f"{failures} bot failures with {workers} worker(s); see the bots' logs in {config.output}/logs (use --keep)"
        )
    return played / elapsed, played, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches-per-pairing", type=int, default=8, help="even; 3 pairings (default 8: 24 matches)")
    parser.add_argument("--playouts", type=int, default=150, help="the expert bot's playout cap per decision (default 150)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="alternate the two measurements this many times; compare the best of each"
    )
    parser.add_argument("--keep", action="store_true", help="keep the results folders and logs")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="arena-cluster-bench-"))
    best: dict[int, float] = {}
    try:
        path = write_tournament(folder, args.matches_per_pairing, args.playouts)
        print(
            f"cores: {os.cpu_count()}; 3 bots (2 expert --playouts {args.playouts}, greedy), "
            f"3 pairings x {args.matches_per_pairing} = {3 * args.matches_per_pairing} matches; loopback dask cluster"
        )
        for r in range(args.rounds):
            for workers in (1, 2):
                before = load()
                rate, played, elapsed = measure(path, folder, workers, f"{workers}w-r{r}")
                best[workers] = max(best.get(workers, 0.0), rate)
                print(
                    f"{workers} worker process{'es' if workers > 1 else ''}: {played} matches in {elapsed:.2f} s = "
                    f"{rate:.3f} matches/s  (load before {before}, after {load()})",
                    flush=True,
                )
        if args.rounds > 1:
            print(f"best: 1 worker {best[1]:.3f} matches/s, 2 workers {best[2]:.3f} matches/s")
        print(f"ratio (2 workers / 1 worker): {best[2] / best[1]:.2f}")
    finally:
        if args.keep:
            print(f"kept: {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
