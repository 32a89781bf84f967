"""Temporary folders named after their maker (arena/harness/scratch.py): the next arena removes
those of a dead maker, and only those: a live maker's (another arena running now), another
user's, a link, a maker it cannot look up (another pid namespace) are kept.

The last tests kill real arenas with SIGKILL mid-run (a worker and its launcher; then every
process of a run) and start another: what the dead left is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from arena.harness import scratch
from arena.harness.scratch import PREFIX, Owner

ROOT = Path(__file__).resolve().parents[2]
POLICYBOT = ROOT / "tests" / "data" / "tournament_bots"


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _named(base: Path, owner: Owner, label: str = "x") -> Path:
    path = base / f"{PREFIX}{owner.tag}-{label}"
    path.mkdir()
    (path / "left.txt").write_text("a bot's file")
    return path


def test_a_dead_makers_folder_is_swept_and_a_live_ones_kept(tmp_path: Path):
    me = Owner.me()
    mine = Path(scratch.make_folder(str(tmp_path)))
    assert mine.name.startswith(f"{PREFIX}{me.tag}-") and oct(mine.stat().st_mode & 0o777) == "0o700"
    dead = _named(tmp_path, replace(me, pid=_dead_pid()), "dead")
    reused = _named(tmp_path, replace(me, start=me.start - 1), "reused")  # my pid, an earlier process's start
    rebooted = _named(tmp_path, replace(me, boot="ffffffff" if me.boot != "ffffffff" else "eeeeeeee"), "boot")
    elsewhere = _named(tmp_path, replace(me, pidns=me.pidns + 1, pid=_dead_pid()), "ns")
    unknown = _named(tmp_path, replace(me, pid=_dead_pid(), start=0), "unknown")
    old_style = tmp_path / "escoba-arena-abc123"
    old_style.mkdir()
    removed = scratch.sweep(str(tmp_path))
    assert sorted(removed) == sorted(p.name for p in (dead, reused, rebooted))
    assert not dead.exists() and not reused.exists() and not rebooted.exists()
    for kept in (mine, elsewhere, unknown, old_style):
        assert kept.is_dir(), kept


def test_the_sweep_follows_no_link_and_leaves_another_users_folder(tmp_path: Path):
    dead = replace(Owner.me(), pid=_dead_pid())
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("someone's data")
    link = tmp_path / f"{PREFIX}{dead.tag}-link"
    link.symlink_to(target)
    theirs = _named(tmp_path, dead, "theirs")
    if os.geteuid() == 0:
        import pwd

        nobody = pwd.getpwnam("nobody")
        os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    inner = _named(tmp_path, dead, "inner")
    (inner / "escape").symlink_to(target)  # a link inside a swept folder is removed, not followed
    removed = scratch.sweep(str(tmp_path))
    assert (target / "keep.txt").read_text() == "someone's data" and link.is_symlink()
    if os.geteuid() == 0:
        assert removed == [inner.name] and theirs.is_dir()
    else:  # without root the other user's folder is one of ours
        assert sorted(removed) == sorted([inner.name, theirs.name])


def test_a_live_arenas_folder_survives_another_arenas_sweep_until_it_is_killed(tmp_path: Path):
    code = ("import sys, time; from arena.harness import scratch; print(scratch.make_folder(sys.argv[1]), flush=True); "
            "time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        folder = Path(other.stdout.readline().strip())  # type: ignore[union-attr]
        assert folder.is_dir() and Owner.parse(folder.name) is not None
        assert scratch.sweep(str(tmp_path)) == [] and folder.is_dir()
    finally:
        other.kill()
        other.wait()
    assert scratch.sweep(str(tmp_path)) == [folder.name] and not folder.exists()


def test_a_source_checkout_cut_short_is_removed_by_the_next_checkout(tmp_path: Path):
    from arena.tournament import sources

    parent = tmp_path / "cache" / "checkouts"
    parent.mkdir(parents=True)
    left = _named(parent, replace(Owner.me(), pid=_dead_pid()), "0123456789ab-half")
    sources.sweep_once(str(parent))
    assert not left.exists()


# --- real arenas killed with SIGKILL -------------------------------------------------------------


def _tournament(folder: Path, name: str, sleep_ms: int, matches: int = 2, concurrency: int = 2, target: int = 21) -> Path:
    path = folder / f"{name}.yaml"
    bots = "".join(f'  - {{name: {b}, cmd: "$PYTHON policybot.py first", cwd: "{POLICYBOT}", '
                   f'env: {{POLICYBOT_SLEEP_MS: {sleep_ms}}}}}\n' for b in ("a", "b", "c"))
    path.write_text(f"name: {name}\nseed: 3\nrules: {{target: {target}}}\noutput: {folder / name}\n"
                    f"concurrency: {concurrency}\nmatches_per_pairing: {matches}\nbots:\n{bots}")
    return path


def _env(tmp: Path) -> dict[str, str]:
    # Unsealed, so that each bot process gets a folder of its own in TMPDIR (a sealed bot's /tmp
    # is a tmpfs that dies with it); a TMPDIR of this test's, so that only its arenas count.
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CACHE_DIR"}
    return {**env, "ESCOBA_ARENA_SEAL": "off", "TMPDIR": str(tmp)}


def _arena(path: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress", "--no-report"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _folders(tmp: Path) -> set[str]:
    return {name for name in os.listdir(tmp) if name.startswith(PREFIX)}


def _wait_for(what, timeout: float = 120.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("waited in vain")


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        out.setdefault(ppid, []).append(int(entry))
    return out


def _tree(pid: int) -> list[int]:
    kids, out, todo = _children(), [], [pid]
    while todo:
        here = todo.pop()
        out.append(here)
        todo.extend(kids.get(here, []))
    return out


def _is_worker(pid: int) -> bool:
    # Workers are forks of the run's fork server, each named after itself.
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().startswith("arena-w")
    except OSError:
        return False


def _is_launcher(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"launcher" in fh.read()
    except OSError:
        return False


def _kill_all(pids: list[int]) -> None:
    # Launchers first: one left alive would remove its bots' folders itself.
    for pid in sorted(pids, key=lambda p: not _is_launcher(p)):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _freeze(pid: int) -> list[int]:
    """Stops the tree under ``pid``, parents first, until no new process appears in it."""
    stopped: list[int] = []
    while True:
        fresh = [p for p in _tree(pid) if p not in stopped]
        if not fresh:
            return stopped
        for p in fresh:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        stopped += fresh


def _kill_holding_folders(pid: int, tmp: Path) -> bool:
    """Kills the whole tree if, frozen, it holds bot folders; else lets it go on."""
    frozen = _freeze(pid)
    if _folders(tmp):
        _kill_all(frozen)
        return True
    for p in frozen:
        try:
            os.kill(p, signal.SIGCONT)
        except ProcessLookupError:
            pass
    return False


@pytest.mark.slow
def test_what_a_killed_worker_and_a_killed_arena_leave_is_gone_after_the_next_start(tmp_path: Path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = _env(tmp)
    path = _tournament(tmp_path, "t", sleep_ms=5, matches=4)
    run = _arena(path, env)
    try:
        def worker_with_folders() -> tuple[int, set[str]] | None:
            # A worker that holds bot folders now (the other one may be between its matches).
            folders = _folders(tmp)
            for p in filter(_is_worker, _tree(run.pid)):
                mine = {n for n in folders if Owner.parse(n).pid == p}  # type: ignore[union-attr]
                if mine and any(_is_launcher(c) for c in _tree(p)[1:]):
                    return p, mine
            return None

        # A worker and its launcher, killed: the run replaces the worker, whose first bot sweeps.
        worker, left_by_worker = _wait_for(worker_with_folders)
        _kill_all([p for p in _tree(worker) if p == worker or _is_launcher(p)])
        _wait_for(lambda: not left_by_worker & _folders(tmp))
        # The whole run, killed while it holds folders: frozen first, so that no match can end
        # (and remove its folders) between the look and the kill.
        _wait_for(lambda: _kill_holding_folders(run.pid, tmp))
        run.wait()
        time.sleep(0.5)
        left = _folders(tmp)
        assert left, "the killed run left no folder: nothing was tested"
    finally:
        _kill_all(_tree(run.pid))
        run.wait()
    # The next start: another arena on the same TMPDIR (the sweep is the place's, whichever
    # tournament starts there), a short one, not the rest of the killed run's twelve matches.
    again = _arena(_tournament(tmp_path, "next", sleep_ms=0, matches=2, target=5), env)
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert _folders(tmp) == set(), _folders(tmp)  # the dead run's (swept) and its own (removed)


@pytest.mark.slow
def test_a_live_arenas_folders_survive_another_arenas_start(tmp_path: Path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = _env(tmp)
    slow = _arena(_tournament(tmp_path, "slow", sleep_ms=300, matches=2, concurrency=1), env)
    try:
        # One match at a time, 0.3 s a move: its two bots' folders live through the other run.
        theirs = _wait_for(lambda: _folders(tmp) if len(_folders(tmp)) == 2 else None)
        quick = _arena(_tournament(tmp_path, "quick", sleep_ms=0, matches=2), env)
        _, err = quick.communicate(timeout=600)
        assert quick.returncode == 0, err
        assert slow.poll() is None and theirs <= _folders(tmp)
    finally:
        slow.terminate()
        slow.wait(timeout=60)
    assert _folders(tmp) == set()  # stopped cleanly, it removed its own
