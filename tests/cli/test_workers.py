"""The command line's worker processes (arena/cli/workers.py): answers in order, and a worker
that dies (killed, out of memory) ends the command with one line and exit code 3, never a wait
for ever (multiprocess's Pool, used before, started another worker and waited for the lost
work: ``arena report`` hung when a worker was killed)."""

import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arena.cli.replay as cli_replay
import arena.render.report as report_module
from arena.cli import app
from arena.cli.workers import WorkerLost, worker_pool
from arena.errors import ExitCode
from arena.match import collector

cli = CliRunner()
BOTS = Path(__file__).resolve().parents[1] / "data" / "tournament_bots"


def _square(x: int) -> int:
    return x * x


def _die_on_five(x: int) -> int:
    if x == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def _slow(x: int) -> int:
    time.sleep(0.2)
    return os.getpid()


def test_answers_come_in_order():
    with worker_pool(2, "squaring") as pool:
        assert list(pool.imap(_square, range(50), chunksize=4)) == [x * x for x in range(50)]
        assert pool.call(_square, 7)() == 49


def test_a_killed_worker_ends_the_map_with_one_error_not_a_wait():
    start = time.monotonic()
    with pytest.raises(WorkerLost, match="worker process counting died"):
        with worker_pool(2, "counting") as pool:
            list(pool.imap(_die_on_five, range(40), chunksize=2))
    assert time.monotonic() - start < 30
    with pytest.raises(WorkerLost):
        with worker_pool(2, "counting") as pool:
            pool.call(_die_on_five, 5)()


def test_an_error_in_the_command_stops_the_workers_at_once():
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(2, "sleeping") as pool:
            answers = pool.imap(_slow, range(40))
            pids = {next(answers)}
            raise KeyboardInterrupt
    time.sleep(0.2)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _kill_self(match_id: str):
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_report_whose_worker_is_killed_fails_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    out = tmp_path / "out"
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 5\nrules: {{target: 3}}\noutput: {out}\nmatches_per_pairing: 2\nbots:\n"
                    f'  - {{name: a, cmd: "$PYTHON policybot.py first", cwd: "{BOTS}"}}\n'
                    f'  - {{name: b, cmd: "$PYTHON policybot.py greedy", cwd: "{BOTS}"}}\n')
    done = cli.invoke(app, ["run", str(path), "--no-progress", "--no-report"])
    assert done.exit_code == 0, done.output
    monkeypatch.setattr(cli_replay, "REPORT_POOL_FROM", 1)  # a pool even for a few matches
    monkeypatch.setattr(report_module, "worker_check", _kill_self)
    result = cli.invoke(app, ["report", str(out), "--html", str(tmp_path / "page" / "r.html")])
    assert result.exit_code == ExitCode.FAULT, result.output
    assert "worker process checking the records died" in result.stderr
    assert "Traceback" not in result.output


_ORPHAN_SCRIPT = """
import os, sys, time
from arena.cli.workers import worker_pool

def pid(_):
    time.sleep(0.3)
    return os.getpid()

with worker_pool(2, "waiting") as pool:
    print(" ".join(str(p) for p in set(pool.imap(pid, range(4)))), flush=True)
    pool.call(time.sleep, 600)
    time.sleep(600)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended: a dead one may linger as a zombie of a
    subreaper (this test process is one once an in-process ``arena run`` has sealed a bot)."""
    try:
        os.waitpid(pid, os.WNOHANG)  # reaped here if it is this process's orphan
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_the_workers_die_with_a_command_killed_by_kill_9():
    import subprocess
    import sys

    command = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in command.stdout.readline().split()]
        assert pids and command.pid not in pids
        command.kill()
        command.wait(10)
        deadline = time.monotonic() + 10
        alive = set(pids)
        while alive and time.monotonic() < deadline:
            alive = {pid for pid in alive if _running(pid)}
            time.sleep(0.05)
        assert not alive, f"workers outlived their command: {alive}"
    finally:
        command.kill()


def test_a_worker_collects_cycles_less_often_than_python_by_default():
    import gc

    # Each item's objects (a record's few thousand) are garbage once answered; at Python's
    # default first threshold (700) the collector took a sixth of a report worker's CPU.
    with worker_pool(2, "asking") as pool:
        first, *_ = pool.call(gc.get_threshold)()
    assert first >= collector.YOUNG >= 10 * 700
    assert gc.isenabled()
