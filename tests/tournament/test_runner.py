"""Real tournaments with real bot processes: results, resume, concurrency, kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from process_helpers import as_from_a_terminal
from typer.testing import CliRunner

from arena.cli import app
from arena.cli.tournament import cpu_list
from arena.tournament import runner as tr
from arena.tournament.config import load_config
from arena.tournament.executors import core_shares
from arena.tournament.store import ResultStore, StoreError

pytestmark = pytest.mark.slow  # real tournaments with worker processes, kills and resumes

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()
SHORT = "rules: {target: 5}\n"  # matches to 5 points: a hand or two each, the checks the same as to 21


# A sealed bot gets no variable of the arena's environment but those its file passes: a test
# that slows the bots of one run (POLICYBOT_SLEEP_MS in that run's environment) passes it.
SLOWED = ", pass_env: [POLICYBOT_SLEEP_MS]"


def write_tournament(
    folder: Path, *, name: str = "tiny", extra: str = "", policies=("first", "greedy", "hash"), env: str = ""
) -> Path:
    bots = "\n".join(f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}"{env}}}' for p in policies)
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 2024\noutput: {folder / 'out' / name}\n{extra}\nbots:\n{bots}\n")
    return path


def outcomes(folder: str) -> list[tuple]:
    with ResultStore.open_existing(folder) as store:
        return [row.outcome() for row in store.results()]


def records_without_times(folder: str) -> dict[str, dict]:
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("ms", "t_ms", "duration_ms", "usage")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    with ResultStore.open_existing(folder) as store:
        return {row.id: strip(store.record(row.id)) for row in store.results()}


def test_a_tiny_tournament_end_to_end_through_the_cli(tmp_path: Path):
    path = write_tournament(tmp_path, extra="concurrency: 2\nmatches_per_pairing: 2")
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "tiny"
    assert "greedy" in result.stdout and "w-d-l" in result.stdout
    shares = core_shares(2, os.sched_getaffinity(0))  # the run's header says where its workers run
    if shares:
        held = f"{cpu_list(shares[0])} | {cpu_list(shares[1])}"
        assert f"cores: each worker and its bots on cores of their own: {held} (pin_workers)" in result.stderr
    else:
        assert "cores:" not in result.stderr
    for name in ("standings", "crosstable"):
        for ext in ("txt", "csv", "json"):
            assert (out / f"{name}.{ext}").is_file()
    assert sorted(os.listdir(out / "logs")) == ["first.stderr.log", "greedy.stderr.log", "hash.stderr.log"]
    with ResultStore.open_existing(str(out)) as store:
        rows = store.results()
        assert len(rows) == 6
        record = store.record(rows[0].id)
        assert record["seed"] == rows[0].seed and record["seats"] == list(rows[0].seats)
    table = cli.invoke(app, ["table", str(out), "--format", "json"])
    assert table.exit_code == 0
    data = json.loads(table.stdout)
    assert [set(d) >= {"name", "elo", "ci95", "matches", "wins", "losses"} for d in data] == [True] * 3
    assert sum(d["matches"] for d in data) == 12
    assert json.loads((out / "standings.json").read_text()) == data
    for fmt in ("plain", "github", "csv"):
        assert cli.invoke(app, ["table", str(out), "--format", fmt]).exit_code == 0
    with_prior = json.loads(cli.invoke(app, ["table", str(out), "--format", "json", "--prior", "2"]).stdout)
    assert all(d["elo"] is not None for d in with_prior)
    assert cli.invoke(app, ["table", str(tmp_path / "nowhere")]).exit_code == 2
    # Running it again plays nothing more.
    again = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert again.exit_code == 0 and "resuming: 6 of 6" in again.stderr
    assert len(outcomes(str(out))) == 6


def test_same_results_at_concurrency_1_and_2(tmp_path: Path):
    path = write_tournament(tmp_path, extra=SHORT + "matches_per_pairing: 4")
    one = tr.run_tournament(load_config(path), concurrency=1)
    config = load_config(path)
    from dataclasses import replace

    two_cfg = replace(config, output=str(tmp_path / "out" / "two"))
    two = tr.run_tournament(two_cfg, concurrency=2)
    assert one["played"] == two["played"] == 12
    assert outcomes(one["folder"]) == outcomes(two["folder"])
    assert records_without_times(one["folder"]) == records_without_times(two["folder"])


def test_interrupted_run_resumes_without_losing_or_repeating(tmp_path: Path):
    path = write_tournament(tmp_path, extra=SHORT + "matches_per_pairing: 4")
    config = load_config(path)
    seen: list[str] = []

    def stop_after_three(row, done):
        seen.append(row.id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tr.run_tournament(config, concurrency=2, on_match=stop_after_three)
    # Matches that finished together are stored together, then reported one by one: the
    # interrupt in the third report may leave one stored and not yet reported, never the reverse.
    stored = {outcome[0] for outcome in outcomes(config.output)}
    assert set(seen) <= stored and len(stored) <= len(seen) + 1, (sorted(stored), seen)
    replayed: list[str] = []
    summary = tr.run_tournament(config, concurrency=2, on_match=lambda row, done: replayed.append(row.id))
    assert summary["played"] == 12 - len(stored)
    assert not set(replayed) & stored and len(replayed) == 12 - len(stored)
    from dataclasses import replace

    fresh = tr.run_tournament(replace(config, output=str(tmp_path / "fresh")), concurrency=1)
    assert fresh["played"] == 12
    assert outcomes(config.output) == outcomes(fresh["folder"])


def test_a_changed_file_is_refused_on_resume(tmp_path: Path):
    path = write_tournament(tmp_path)
    assert cli.invoke(app, ["run", str(path), "--no-progress", "-j", "1"]).exit_code == 0
    path.write_text(path.read_text().replace("seed: 2024", "seed: 7"))
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 2
    assert "changed: seed" in result.stderr and "Traceback" not in result.output
    dry = cli.invoke(app, ["run", str(path), "--dry-run"])
    assert dry.exit_code == 2 and "changed: seed" in dry.stderr


def test_dry_run_writes_nothing_and_shows_progress(tmp_path: Path):
    path = write_tournament(tmp_path)
    result = cli.invoke(app, ["run", str(path), "--dry-run"])
    assert result.exit_code == 0
    assert "nothing played yet" in result.stdout and "00002.1" in result.stdout
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "extra, bots",
    [
        ("mode: pairs", ("first", "greedy", "hash")),
        ("mode: pairs\nteams: rotating", ("first", "greedy", "hash", "last")),
        ("players: 3", ("first", "greedy", "hash")),
        ("players: 4", ("first", "greedy", "hash", "last")),
    ],
    ids=["pairs-clones", "pairs-rotating", "three-alone", "four-alone"],
)
def test_pairs_and_multi_player_tournaments(tmp_path: Path, extra: str, bots):
    path = write_tournament(tmp_path, extra=extra + "\nconcurrency: 2", policies=bots)
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "tiny"
    data = json.loads((out / "standings.json").read_text())
    assert sorted(d["name"] for d in data) == sorted(bots)
    assert all(d["matches"] > 0 for d in data)
    config = load_config(path)
    assert len(outcomes(str(out))) == len(tr.build_schedule(config))


def test_bot_failures_are_recorded_not_fatal(tmp_path: Path):
    path = write_tournament(
        tmp_path, extra="concurrency: 1", policies=("first", "greedy"), env=", env: {POLICYBOT_CRASH_AFTER: 4}"
    )
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "tiny"
    with ResultStore.open_existing(str(out)) as store:
        rows = store.results()
    assert all(row.reason == "forfeit" for row in rows)
    data = {d["name"]: d for d in json.loads((out / "standings.json").read_text())}
    assert data["first"]["failures"].get("crash", 0) + data["greedy"]["failures"].get("crash", 0) == len(rows)
    assert (
        "crashing on purpose"
        in (out / "logs" / "first.stderr.log").read_text() + (out / "logs" / "greedy.stderr.log").read_text()
    )


def _tagged_processes(tag: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if tag.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_kill_9_at_random_moments_then_resume_gives_the_uninterrupted_results(tmp_path: Path):
    """A few trials here; benchmarks/killresume.py runs the full 20."""
    import random

    path = write_tournament(tmp_path, extra="concurrency: 2\nmatches_per_pairing: 2", env=SLOWED)
    config = load_config(path)
    from dataclasses import replace

    # The reference and the last resume play at full speed; the runs to kill have 1 ms moves
    # (POLICYBOT_SLEEP_MS in the arena's environment, which its bots get through the file's
    # pass_env: it changes no move, policybot.py, and the file is the same for every run, so
    # every run resumes the same one).
    reference = tr.run_tournament(replace(config, output=str(tmp_path / "ref")), concurrency=2)
    expected = outcomes(reference["folder"])
    rng = random.Random(5)
    tag = f"ARENA_KILL_TEST={uuid.uuid4().hex}"
    env = dict(os.environ, ARENA_KILL_TEST=tag.split("=", 1)[1])
    slow_env = dict(env, POLICYBOT_SLEEP_MS="1")
    kills = 0
    for _ in range(3):
        # The kill moment is random in the run's progress, not in wall-clock time (a fast machine
        # could finish first): a number of stored matches while at least three are still to play
        # (each takes hundreds of 1 ms moves), then up to 0.1 s more. 0 stored: before or just
        # after the store is created.
        stored = _stored(config.output)
        wait_for = rng.randint(stored, len(expected) - 3) if stored <= len(expected) - 3 else len(expected)
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"],
            env=slow_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while proc.poll() is None and _stored(config.output) < wait_for:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.1))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        if proc.returncode == 0:
            break
        try:
            got = outcomes(config.output)
        except StoreError:
            got = []  # killed before the store was created: nothing there, nothing lost
        # Whatever is stored is exactly what the uninterrupted run has, never twice.
        assert len({o[0] for o in got}) == len(got)
        assert set(got) <= set(expected)
    else:
        final = subprocess.run(
            [sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"], env=env, capture_output=True, timeout=120
        )
        assert final.returncode == 0, final.stderr
    assert kills >= 1
    assert outcomes(config.output) == expected
    # Nothing the killed arenas started outlives them (workers notice, bots get PDEATHSIG).
    deadline = time.monotonic() + 5
    while _tagged_processes(tag.split("=", 1)[1]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tagged_processes(tag.split("=", 1)[1]) == []


def _stored(folder: str) -> int:
    """How many matches a (possibly running) tournament has stored; 0 before its store exists."""
    try:
        with ResultStore.open_existing(folder) as store:
            return store.count()
    except (StoreError, sqlite3.Error):
        return 0


def _worker_pids() -> list[int]:
    """This test's worker processes: named arena-wN, forks of a fork server this process started."""
    me = str(os.getpid())
    parents, names = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                parents[pid] = fh.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/comm") as fh:
                names[pid] = fh.read().strip()
        except OSError:
            continue
    return [int(pid) for pid, name in names.items()
            if name.startswith("arena-w") and parents.get(parents.get(pid, ""), "") == me]


def test_a_worker_killed_mid_run_is_replaced_and_nothing_is_lost(tmp_path: Path):
    path = write_tournament(tmp_path, extra=SHORT + "matches_per_pairing: 4")
    config = load_config(path)
    killed: list[int] = []

    def kill_a_worker(row, done):
        if not killed:
            pids = _worker_pids()
            assert pids
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    summary = tr.run_tournament(config, concurrency=2, on_match=kill_a_worker)
    assert killed and summary["played"] == 12
    from dataclasses import replace

    reference = tr.run_tournament(replace(config, output=str(tmp_path / "ref")), concurrency=2)
    assert outcomes(config.output) == outcomes(reference["folder"])


def _signal_masks(pid: int) -> tuple[int, int]:
    """(blocked, ignored) signals of a process, as bit masks (bit n-1 for signal n)."""
    with open(f"/proc/{pid}/status") as fh:
        fields = dict(line.split(":", 1) for line in fh if ":" in line)
    return int(fields["SigBlk"], 16), int(fields["SigIgn"], 16)


def test_the_fork_server_starts_deaf_to_ctrl_c_and_its_workers_do_not_pass_that_on(tmp_path: Path):
    # A Ctrl-C while the fork server's new Python starts printed Python's traceback under the
    # arena's one line (it ignores the signal only once its imports are done): it is started with
    # the signal blocked. Its workers must not keep that mask: their launchers and bots inherit it.
    path = write_tournament(tmp_path, extra=SHORT + "matches_per_pairing: 4")
    config = load_config(path)
    seen: list[tuple[int, int, int, int]] = []
    ctrl_c = 1 << (signal.SIGINT - 1)

    def look(row, done):
        for pid in _worker_pids():
            with open(f"/proc/{pid}/stat") as fh:
                server = int(fh.read().rsplit(")", 1)[1].split()[1])
            seen.append((*_signal_masks(pid), *_signal_masks(server)))

    tr.run_tournament(config, concurrency=2, on_match=look)
    # A worker seen starting a process blocks every signal for that moment (the standard library's
    # vfork); the mask it keeps blocks SIGINT alone, so those moments are told apart by SIGTERM.
    settled = [masks for masks in seen if not masks[0] & 1 << (signal.SIGTERM - 1)]
    assert settled
    for worker_blocked, worker_ignored, server_blocked, server_ignored in settled:
        assert server_blocked & ctrl_c and server_ignored & ctrl_c
        assert not worker_blocked & ctrl_c and worker_ignored & ctrl_c
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the arena's own mask as it was


def test_ctrl_c_stops_cleanly_and_prints_the_resume_command(tmp_path: Path):
    path = write_tournament(tmp_path, extra=SHORT + "concurrency: 2\nmatches_per_pairing: 4", env=SLOWED)
    config = load_config(path)
    # Slow enough moves that the run is still playing when the Ctrl-C lands, even on a busy machine:
    # the bots get the arena's variable through the file's pass_env, so only the run to interrupt
    # has the sleep (it changes no move, policybot.py), and the resume below plays the same games
    # at full speed.
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
        env=dict(os.environ, POLICYBOT_SLEEP_MS="20"),
    )
    store_file = Path(config.output) / "results.sqlite"
    deadline = time.monotonic() + 60
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if store_file.exists():
            try:
                stored = len(outcomes(config.output))
            except StoreError:
                stored = 0
            if stored >= 1:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    text = err.decode()
    assert "Traceback" not in text
    assert f"resume with: arena run {path}" in text
    kept = len(outcomes(config.output))
    assert 1 <= kept < 12 and f"interrupted: {kept} of 12 matches" in text
    again = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert again.exit_code == 0 and f"resuming: {kept} of 12" in again.stderr
    assert len(outcomes(config.output)) == 12


def cpu_tournament(folder: Path, name: str, extra: str) -> Path:
    """A tiny tournament of bots that say, as they start, the CPUs they may run on (cpubot.py)."""
    path = write_tournament(folder, name=name, extra=SHORT + extra)
    path.write_text(path.read_text().replace("policybot.py", "cpubot.py"))
    return path


def _bots_cpus(folder: str) -> list[frozenset[int]]:
    """The CPUs each bot process of a run said it may run on, as it started (its stderr log)."""
    seen = []
    for log in Path(folder, tr.LOGS_DIR).glob("*.stderr.log"):
        for line in log.read_text().splitlines():
            if line.startswith("cpus: "):
                seen.append(frozenset(int(c) for c in line[6:].split(",")))
    return seen


def test_each_worker_and_its_bots_hold_a_share_of_the_cores_of_its_own(tmp_path: Path):
    cores = frozenset(os.sched_getaffinity(0))
    shares = core_shares(2, cores)
    config = load_config(cpu_tournament(tmp_path, "shares", "matches_per_pairing: 4"))
    workers: list[list[frozenset[int]]] = []
    killed: list[int] = []

    def look(row, done):
        held = []
        for pid in _worker_pids():
            try:
                held.append(frozenset(os.sched_getaffinity(pid)))
            except ProcessLookupError:
                continue
        workers.append(held)
        if len(workers) == 3 and not killed:  # its replacement takes the share it leaves
            pid = _worker_pids()[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    assert tr.run_tournament(config, concurrency=2, on_match=look)["played"] == 12
    bots = _bots_cpus(config.output)
    assert killed and len(bots) >= 6  # 3 bots on each worker, and again on the replacement
    if shares is None:  # a single core: nothing to share out
        assert set(bots) == {cores} and all(set(held) <= {cores} for held in workers)
        return
    assert len(shares) == 2 and not shares[0] & shares[1] and all(len(s) == len(cores) // 2 for s in shares)
    assert set(bots) == set(shares)  # every bot on its worker's share, both shares in use
    for held in workers:
        assert set(held) <= set(shares) and len(held) == len(set(held))  # never two workers on one share
    assert any(len(held) == 2 for held in workers[3:])  # the replacement is held too


def test_workers_not_pinned_when_asked_or_when_a_bot_may_use_more_cores_than_a_share(tmp_path: Path):
    cores = frozenset(os.sched_getaffinity(0))
    off = load_config(cpu_tournament(tmp_path, "unpinned", "pin_workers: false"))
    tr.run_tournament(off, concurrency=2)
    assert set(_bots_cpus(off.output)) == {cores}
    wide = load_config(cpu_tournament(tmp_path, "wide", "limits: {cpus: 2}"))
    tr.run_tournament(wide, concurrency=2)
    shares = core_shares(2, cores, least=2)  # none on fewer than 4 cores
    assert set(_bots_cpus(wide.output)) == ({cores} if shares is None else set(shares))


def test_cpu_lists_read_as_linux_writes_them():
    assert cpu_list({0}) == "0" and cpu_list([3, 1, 2, 0]) == "0-3" and cpu_list({0, 1, 2, 8, 10, 11}) == "0-2,8,10-11"


def test_core_shares_are_equal_disjoint_and_only_where_there_is_something_to_share():
    assert core_shares(2, {1, 0}) == [frozenset({0}), frozenset({1})]
    assert core_shares(2, [5, 3, 9]) == [frozenset({3}), frozenset({5})]  # the remainder to none
    assert core_shares(3, range(8)) == [frozenset({0, 1}), frozenset({2, 3}), frozenset({4, 5})]
    assert core_shares(4, range(4)) == [frozenset({c}) for c in range(4)]
    assert core_shares(1, range(8)) is None  # one worker: the whole machine, as it was
    assert core_shares(3, range(2)) is None  # more workers than cores: the scheduler shares them
    assert core_shares(2, range(2), least=2) is None  # a bot allowed 2 CPUs at once is not cut to 1
    assert core_shares(2, range(4), least=2) == [frozenset({0, 1}), frozenset({2, 3})]
