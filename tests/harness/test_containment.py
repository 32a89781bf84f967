"""The hostile zoo (tests/zoo/hostile.py) against the arena: floods end on their deadline,
nothing a bot starts outlives its match, the arena, or ``kill -9`` of the arena, and the
resource limits hold, with cgroups and without them (the launcher then works from /proc).

Survivors are found by scanning /proc for the test's token, which every hostile process
carries in its command line, even one that escaped its session and cleared its environment.
"""

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from zoo.helpers import FAST, ROOT, hello, hostile_spec, new_token, running, survivors, wait_until, with_environ

from arena.core.rules import Rules, Seating
from arena.harness import containment, sandbox
from arena.harness.botproc import BotProcess, BotSpec, Limits
from arena.harness.containment import LauncherClient
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import BotFailure, Termination
from arena.harness.resources import ResourceLimits
from arena.match.record import EndReason
from arena.match.referee import FailurePolicy, play_match

# Slow: starts launchers, cgroups and escaping process trees. Unsealed: these test the
# containment of a bot the machine cannot seal (tests/conftest.py, ``unsealed``).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("unsealed")]



RULES = Rules(target=6)
LOSS = FailurePolicy("loss")
# Short move deadlines: every flood must end on one. Start-up stays generous (a loaded box).
FLOOD = Limits(startup_ms=20000, move_ms=300, grace_ms=100, kill_grace_ms=100)
HOSTILE = Path(__file__).parents[1] / "zoo" / "hostile.py"


@pytest.fixture(scope="module")
def proc_launcher():
    """A launcher without cgroups: what a machine without them gets."""
    launcher = LauncherClient(cgroups=False, sealed=False)
    yield launcher
    launcher.close()


@pytest.fixture
def unconfined(monkeypatch):
    """This process's launcher without Landlock, as on a kernel without it: a bot may then
    signal its launcher, and the arena must survive that too."""
    containment.shutdown()
    monkeypatch.setenv(containment.LANDLOCK_ENV, "off")
    yield
    containment.shutdown()


@pytest.fixture(params=["cgroups", "proc"])
def launcher(request, proc_launcher):
    """Both ways of containing: this machine's (cgroups where it can make them) and /proc only."""
    return containment.launcher() if request.param == "cgroups" else proc_launcher


def play_hostile(mode, token, *, n=1, policy=LOSS, limits=FLOOD, resources=None, env=None, launcher=None,
                 stderr_dir=None):
    """One short match of the hostile bot (seat 0) against an in-process bot; returns the record,
    the wall time it took and the bot's usage for the match."""
    bot = BotProcess(hostile_spec(mode, token, n=n, limits=limits, env=env, resources=resources),
                     launcher=launcher, stderr_dir=stderr_dir)
    start = time.monotonic()
    try:
        record = play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=3, policy=policy)
        usage = bot.usage()
    finally:
        bot.close()
    return record, time.monotonic() - start, usage


def budget(limits: Limits) -> float:
    """A generous bound on a match that waits out one deadline: proof of no hang, not a speed target."""
    return (limits.startup_ms + limits.move_ms + limits.grace_ms + limits.kill_grace_ms) / 1000 + 20


# --- every wait has a deadline ------------------------------------------------------------------

FLOODS = [
    ("blank_flood", Termination.TIMEOUT, "no reply within"),
    ("space_flood", Termination.TIMEOUT, "no reply within"),
    ("crlf_flood", Termination.TIMEOUT, "no reply within"),
    ("cr_flood", Termination.OVERSIZED_LINE, "the limit is 65536"),
    ("partial_line", Termination.TIMEOUT, "no reply within"),
    ("trickle", Termination.TIMEOUT, "no reply within"),
    ("stop_self", Termination.TIMEOUT, "no reply within"),
    ("close_stdout", Termination.CRASH, "closed its stdout"),
]


@pytest.mark.parametrize("mode,termination,fragment", FLOODS, ids=[f[0] for f in FLOODS])
def test_a_flood_or_stall_ends_on_the_deadline(mode, termination, fragment):
    token = new_token()
    tracemalloc.start()
    try:
        record, took, _ = play_hostile(mode, token, n=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # the arena's own memory stays small, however much came in
    outcome = record.outcomes[0]
    assert outcome.termination is termination, outcome
    assert fragment in outcome.detail
    assert record.result.reason == "forfeit" and record.result.winner == 1
    assert took < budget(FLOOD)
    assert wait_until(lambda: not survivors(token)), survivors(token)


def test_a_handshake_answered_with_blank_lines_ends_on_the_startup_deadline():
    token = new_token()
    limits = Limits(startup_ms=1500, move_ms=300, grace_ms=100, kill_grace_ms=100)
    record, took, _ = play_hostile("hello_flood", token, limits=limits)
    outcome = record.outcomes[0]
    assert outcome.termination is Termination.NO_HANDSHAKE and "no ready within 1500 ms" in outcome.detail
    assert took < budget(limits)


def test_late_replies_streamed_to_an_abandoned_request_do_not_hold_the_next_one():
    token = new_token()
    policy = FailurePolicy("substitute", strikes=1)
    record, took, _ = play_hostile("late_flood", token, policy=policy, env={"ZOO_SLOW_MS": "600"})
    assert [f.termination.value for f in record.failures] == ["timeout", "timeout"]
    assert [f.action.value for f in record.failures] == ["substitute", "forfeit"]
    assert took < 2 * budget(FLOOD)


# --- nothing outlives its match -------------------------------------------------------------------


@pytest.mark.parametrize("mode,termination", [
    ("escape_daemon", Termination.OK),
    ("escape_crash", Termination.CRASH),
    ("escape_pgid", Termination.OK),
    ("respawner", Termination.OK),
])
def test_no_escape_trick_survives_the_match(launcher, mode, termination):
    token = new_token()
    record, _, _ = play_hostile(mode, token, n=3, limits=FAST, launcher=launcher)
    assert record.outcomes[0].termination is termination, record.outcomes[0]
    assert survivors(token) == []


def test_an_escaped_daemon_is_killed_while_its_bot_plays_on(launcher):
    """Double fork, setsid, empty environment, exec /bin/sh: the sleeps it leaves are orphans
    of the launcher (the subreaper), which kills them at once; the bot itself plays on."""
    token = new_token()
    with BotProcess(hostile_spec("escape_daemon", token), launcher=launcher) as bot:
        record = play_match([bot, LocalBot("local", seed=2)], RULES, Seating.alone(2), seed=5)
        assert record.outcomes[0].termination is Termination.OK
        assert wait_until(lambda: survivors(token) == [bot.pid])


def test_a_child_in_its_own_group_lives_until_the_bot_is_closed(launcher):
    token = new_token()
    bot = BotProcess(hostile_spec("escape_pgid", token), launcher=launcher)
    play_match([bot, LocalBot("local", seed=2)], RULES, Seating.alone(2), seed=5)
    assert len(survivors(token)) == 2  # the bot and its child: in the tree, so not killed early
    bot.close()
    assert survivors(token) == []


def test_a_fork_bomb_is_capped_by_the_pids_cgroup_and_killed_whole(tmp_path):
    launcher = containment.launcher()
    if "pids" not in launcher.info["cgroup_roles"]:
        pytest.skip(f"no pids cgroup here ({launcher.containment})")
    token = new_token()
    out = tmp_path / "forks"
    resources = ResourceLimits(processes=64)
    record, _, _ = play_hostile("fork_bomb", token, limits=FAST, resources=resources,
                                env={"ZOO_OUT": str(out), "ZOO_FORKS": "500"})
    made = int(out.read_text().split()[0])
    assert made < 64  # the bot itself is one of the 64 tasks
    assert record.outcomes[0].termination is Termination.OK
    assert survivors(token) == []


def test_hundreds_of_children_die_with_their_bot_without_cgroups(tmp_path, proc_launcher):
    token = new_token()
    out = tmp_path / "forks"
    record, _, _ = play_hostile("fork_bomb", token, limits=FAST, launcher=proc_launcher,
                                env={"ZOO_OUT": str(out), "ZOO_FORKS": "200"})
    assert int(out.read_text().split()[0]) == 200
    assert survivors(token) == []


def test_a_bot_that_kills_the_launcher_takes_only_itself_down():
    """The launcher is the bots' parent: they die with it (PR_SET_PDEATHSIG), the arena
    empties its cgroups, and the next match gets a new launcher."""
    token = new_token()
    bot = BotProcess(hostile_spec("escape_pgid", token))
    bot.begin_match(hello())
    old = containment.launcher()
    os.kill(old.pid, signal.SIGKILL)
    assert wait_until(lambda: not old.alive)
    assert wait_until(lambda: survivors(token) == [])
    assert bot.begin_match(hello()).name == "hostile-escape_pgid"  # restarted
    assert containment.launcher() is not old
    bot.close()
    assert survivors(token) == []


def test_a_bot_that_kills_its_launcher_loses_and_leaves_nothing(unconfined):
    """Every time, however fast the rest of the match goes: the launcher's death may reach the
    arena after the last move (a loaded machine), but it cannot answer the referee's question
    at the match's end."""
    for _ in range(5):
        token = new_token()
        record, _, _ = play_hostile("kill_launcher", token, n=2, limits=FAST)
        outcome = record.outcomes[0]
        assert outcome.termination is Termination.CRASH and "launcher" in outcome.detail, outcome
        assert record.result.reason is EndReason.FORFEIT and record.result.winner == 1
        assert wait_until(lambda token=token: survivors(token) == [])


def test_every_bot_of_a_killed_launcher_loses_not_only_the_next_one_asked(unconfined):
    """Its bots all die with it and the arena cannot tell which one killed it: none may win
    by it, whoever the arena happened to ask next."""
    for attacker_seat in (0, 1):
        specs = [hostile_spec("victim", new_token(), limits=FAST)] * 2
        specs[attacker_seat] = hostile_spec("kill_launcher", new_token(), n=2, limits=FAST)
        bots = [BotProcess(spec) for spec in specs]
        try:
            record = play_match(bots, RULES, Seating.alone(2), seed=3, policy=LOSS)
        finally:
            for bot in bots:
                bot.close()
        assert [o.termination for o in record.outcomes] == [Termination.CRASH] * 2, record.outcomes
        assert all("launcher" in o.detail for o in record.outcomes), record.outcomes
        assert record.result.reason is EndReason.FORFEIT and record.result.winner is None


def test_a_bot_that_stops_its_launcher_costs_a_bounded_wait_and_leaves_nothing(unconfined, monkeypatch):
    """The arena's next question to a stopped launcher times out; it then kills the launcher
    (its bots die with it) and empties its cgroups. The wait is the reply timeout, 10 s, made
    2 s here: the same path, a shorter bound."""
    monkeypatch.setattr(containment, "_REPLY_TIMEOUT", 2.0)
    token = new_token()
    bot = BotProcess(hostile_spec("stop_launcher", token, n=2, limits=FAST))
    start = time.monotonic()
    # The referee's question at the match's end gets no answer: the launcher is killed, and
    # its bot loses with it.
    record = play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=3)
    assert time.monotonic() - start < 30  # bounded: the reply timeout (2 s here), not for ever
    outcome = record.outcomes[0]
    assert outcome.termination is Termination.CRASH and "launcher" in outcome.detail, outcome
    bot.close()
    assert wait_until(lambda: survivors(token) == [])
    again = BotProcess(hostile_spec("escape_pgid", new_token(), limits=FAST))
    assert play_match([again, LocalBot("l", seed=1)], RULES, Seating.alone(2), seed=3).outcomes[0].termination \
        is Termination.OK  # a new launcher
    again.close()


def test_a_silent_launcher_is_replaced_at_the_next_match(monkeypatch):
    token = new_token()
    monkeypatch.setattr(containment, "_SILENCE_S", 1.0)
    bot = BotProcess(hostile_spec("escape_pgid", token, limits=FAST))
    bot.begin_match(hello())
    old = containment.launcher()
    os.kill(old.pid, signal.SIGSTOP)  # what a hostile bot can do to its parent
    time.sleep(1.5)
    ready = bot.begin_match(hello())  # the check at the match start gives the old one up
    assert ready.name == "hostile-escape_pgid" and bot.starts == 2
    assert not old.alive and containment.launcher() is not old
    bot.close()
    assert wait_until(lambda: survivors(token) == [])


# --- resource limits -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["memory_hog", "memory_child"])
def test_a_tree_over_its_memory_limit_fails_with_memory(launcher, mode, tmp_path):
    token = new_token()
    resources = ResourceLimits(memory_mb=128)
    record, _, _ = play_hostile(mode, token, n=2, limits=FAST, resources=resources, launcher=launcher,
                                env={"ZOO_HOG_MB": "640", "ZOO_HOG_STEP_MB": "64", "ZOO_OUT": str(tmp_path / "held")})
    outcome = record.outcomes[0]
    assert outcome.termination is Termination.MEMORY, outcome
    assert "memory limit of 128 MB" in outcome.detail
    assert record.result.reason == "forfeit"
    assert survivors(token) == []


def test_cpu_time_counts_the_whole_tree_and_restarts_at_each_match(launcher, tmp_path):
    token = new_token()
    out = tmp_path / "cpu"
    spec = hostile_spec("cpu_hog", token, limits=FAST, env={"ZOO_OUT": str(out), "ZOO_SPIN_S": "1.5"})
    with BotProcess(spec, launcher=launcher) as bot:
        record = play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=3)
        assert record.outcomes[0].termination is Termination.OK
        # Each child writes its own CPU time as it spins and exits after 1.5 s.
        assert wait_until(lambda: len(survivors(token)) == 1)
        children = sum(float((tmp_path / f"cpu.{i}").read_text()) for i in range(3))
        first = bot.usage()
        assert first.cpu_s >= 0.95 * children > 0, (first, children)
        assert first.wall_s > 0 and first.peak_memory_bytes > 0
        # This machine's launcher counts by cgroup where it could make them (as root, or in a
        # delegated systemd session), else through /proc as the other one always does.
        assert first.source == ("cgroup" if launcher.info.get("roots") else "proc")
        play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=4)
        second = bot.usage()
        assert second.cpu_s < first.cpu_s  # counted from the second match's start
    assert survivors(token) == []


def test_the_arena_counts_a_bot_from_its_cgroup_counters_as_the_launcher_would(launcher, tmp_path):
    """Where a bot's cgroups count its CPU and its exact peak memory, the arena keeps its
    starting point and reads them itself, while it runs and from the launcher's report once it
    has ended; elsewhere the launcher is asked."""
    token = new_token()
    out = tmp_path / "cpu"
    spec = hostile_spec("cpu_hog", token, limits=FAST, env={"ZOO_OUT": str(out), "ZOO_SPIN_S": "0.5"})
    exact_peak = "cpu" in launcher.info["cgroup_roles"] and "cgroup v1 (memory" in launcher.containment
    with BotProcess(spec, launcher=launcher) as bot:
        play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=3)
        assert wait_until(lambda: len(survivors(token)) == 1)  # the spinners are done: the bot idles
        child = bot._child
        assert child.counting == (child.counters is not None) == exact_peak
        read = child.counted()
        answered = launcher._request("usage", ids=[child.id])["usages"][0]
        if not exact_peak:
            assert read is None  # nothing to read: the launcher is asked
            return
        spun = sum(float((tmp_path / f"cpu.{i}").read_text()) for i in range(3))  # each child's own count
        assert read is not None and read.source == answered["source"] == "cgroup"
        assert read.cpu_s >= 0.95 * spun > 0, (read, spun)
        # The launcher's account runs from the bot's start (its greeting included), the arena's
        # from the match's; the peak is the same file's. Both are rounded to the microsecond
        # and may be equal (a greeting that took no measurable CPU): one rounding step allowed.
        assert answered["total_user"] + answered["total_system"] >= read.cpu_s - 2e-6
        assert read.peak_memory_bytes == answered["peak"] > 0
        assert bot.usage().cpu_s == pytest.approx(read.cpu_s, abs=0.01)  # what BotProcess gives
        bot.kill()
        # Once it has ended its counters are gone: the launcher's last measure, counted from
        # the arena's starting point.
        assert child.counted() is None or child.exit is not None
        ended = bot.usage()
        assert ended.source == "cgroup" and ended.cpu_s == pytest.approx(read.cpu_s, abs=0.02)
        assert ended.wall_s >= read.wall_s and ended.peak_memory_bytes >= read.peak_memory_bytes
    assert survivors(token) == []


def test_a_bot_restarted_many_times_leaves_no_counter_files_open_in_the_arena(launcher):
    """The arena keeps a bot's counter files open while it counts it (``Child.restart_count``):
    a bot that ends, or is started afresh, gives them back."""
    token = new_token()
    spec = hostile_spec("escape_pgid", token, limits=FAST)

    def open_files() -> list[str]:
        found = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                found.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:  # the listing's own descriptor, closed by now
                pass
        return found

    def counter_files() -> int:
        return sum(path.startswith("/sys/fs/cgroup/") for path in open_files())

    with BotProcess(spec, launcher=launcher) as bot:
        play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=3)
        before, counting = len(open_files()), counter_files()
        kept = bot._child._files
        assert (kept is not None) == (bot._child.counters is not None)
        for seed in range(6):
            bot.kill()
            record = play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=seed)
            assert record.outcomes[0].termination is Termination.OK
        assert bot.starts == 7
        # Exactly the running bot's counter files; and nothing else kept from the six bots
        # before it (at least one file each). The total may have shrunk: what earlier tests
        # left to the garbage collector or to threads may close meanwhile, never open.
        assert counter_files() == counting
        assert len(open_files()) <= before
        last = bot._child._files
    if kept is not None:
        assert kept.read() is None  # the first bot's files were closed when it was replaced
        assert last is not None and last._closed  # and the last one's when it was closed
    assert survivors(token) == []


def test_open_files_are_limited(launcher, tmp_path):
    out = tmp_path / "fds"
    play_hostile("fd_hog", new_token(), limits=FAST, launcher=launcher, resources=ResourceLimits(open_files=64),
                 env={"ZOO_OUT": str(out)})
    assert int(out.read_text().split()[0]) < 64


def test_file_size_is_limited(launcher, tmp_path):
    out = tmp_path / "big"
    record, _, _ = play_hostile("big_file", new_token(), limits=FAST, launcher=launcher,
                                resources=ResourceLimits(file_size_mb=2), env={"ZOO_OUT": str(out)})
    assert record.outcomes[0].termination is Termination.OK
    assert (tmp_path / "big.data").stat().st_size <= 2 << 20
    assert "File too large" in out.read_text()


def test_a_process_killed_for_file_size_is_a_crash_that_says_so(tmp_path):
    record, _, _ = play_hostile("big_file_die", new_token(), n=1, limits=FAST,
                                resources=ResourceLimits(file_size_mb=1), env={"ZOO_OUT": str(tmp_path / "big")})
    outcome = record.outcomes[0]
    assert outcome.termination is Termination.NO_HANDSHAKE and "SIGXFSZ" in outcome.detail, outcome


@pytest.mark.parametrize("landlock", ["on", "off"])
def test_the_temporary_files_of_a_killed_bot_are_removed_with_it(tmp_path, monkeypatch, landlock):
    """Each bot process gets a TMPDIR of its own: a bot killed on its deadline leaves nothing."""
    if landlock == "off":
        containment.shutdown()
        monkeypatch.setenv(containment.LANDLOCK_ENV, "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the arena's, and so the bots' temporary folder
    report = tmp_path / "report"
    try:
        record, _, _ = play_hostile("litter", new_token(), n=2, env={"ZOO_OUT": str(report)})
    finally:
        containment.shutdown()
    assert record.outcomes[0].termination is Termination.TIMEOUT
    made = Path(report.read_text())
    assert made.parent.parent == tmp_path and made.parent.name.startswith("escoba-arena-"), made
    assert not made.parent.exists()
    assert list(tmp_path.iterdir()) == [report]


@pytest.mark.parametrize("network", [True, False])
def test_network_off_leaves_a_bot_no_way_out(launcher, tmp_path, network):
    if not network and not launcher.info["network_off"]:
        pytest.skip(f"no network namespaces here ({launcher.containment})")
    server = socket.create_server(("127.0.0.1", 0))
    out = tmp_path / "net"
    try:
        port = server.getsockname()[1]
        record, _, _ = play_hostile("network", new_token(), limits=FAST, launcher=launcher,
                                    resources=ResourceLimits(network=network),
                                    env={"ZOO_OUT": str(out), "ZOO_CONNECT": f"127.0.0.1:{port}"})
    finally:
        server.close()
    assert record.outcomes[0].termination is Termination.OK
    assert out.read_text().startswith("connected" if network else "refused")


def test_the_stderr_log_is_capped_per_bot_over_restarts_and_workers(tmp_path):
    limits = Limits(startup_ms=20000, move_ms=1000, grace_ms=200, stderr_bytes=100_000, kill_grace_ms=100)
    spec = hostile_spec("stderr_crash", new_token(), limits=limits, env={"ZOO_STDERR_KB": "300"})
    # Two processes of the same bot writing to the same log, as two workers would; each
    # crashes (and restarts) in every match.
    bots = [BotProcess(spec, stderr_dir=tmp_path) for _ in range(2)]
    try:
        for seed in range(3):
            for bot in bots:
                record = play_match([bot, LocalBot("l", seed=seed)], RULES, Seating.alone(2), seed=seed)
                assert record.outcomes[0].termination is Termination.CRASH
    finally:
        for bot in bots:
            bot.close()
    assert bots[0].starts == 3
    log = (tmp_path / "hostile-stderr_crash.stderr.log").read_bytes()
    assert 100_000 <= len(log) < 100_000 + 200
    assert log.count(b"stderr cut at 100000 bytes") == 1


@pytest.mark.parametrize("language", ["java", "node"])
def test_jvm_and_v8_bots_play_under_the_default_limits(launcher, language):
    tool = {"java": "java", "node": "node"}[language]
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed: the JVM/V8 bots cannot be checked under the limits")
    program = ROOT / "bots" / ("java/EscobaBot.java" if language == "java" else "js/bot.js")
    limits = Limits(startup_ms=60000, move_ms=10000, grace_ms=1000, kill_grace_ms=200)
    spec = BotSpec.from_command(f"{tool} {shlex.quote(str(program))}", limits=limits)
    assert spec.resources == ResourceLimits()  # the defaults: 1 GiB of memory and the rest
    with BotProcess(spec, launcher=launcher) as bot:
        record = play_match([bot, LocalBot("local", seed=1)], Rules(target=11), Seating.alone(2), seed=11)
        usage = bot.usage()
    assert [o.termination for o in record.outcomes] == [Termination.OK] * 2, record.failures
    assert 0 < usage.peak_memory_bytes < ResourceLimits().memory_bytes


def test_the_containment_line_says_what_is_in_force(proc_launcher):
    line = containment.containment_line()
    assert "subreaper launcher" in line and "\n" not in line
    assert "memory limit by" in line
    assert "no cgroups" in proc_launcher.containment and "memory limit by /proc" in proc_launcher.containment


# --- nothing outlives the arena ------------------------------------------------------------------------


def _arena(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kwargs)


def _cmd(mode: str, token: str, n: int = 2) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(HOSTILE))} {mode} {token} {n}"


def test_nothing_survives_arena_play():
    token = new_token()
    done = _arena("play", _cmd("escape_daemon", token), _cmd("escape_pgid", token), "--target", "6",
                  "--move-ms", "2000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result:" in done.stdout
    assert survivors(token) == []


def test_arena_play_and_check_bot_end_against_a_blank_line_flood():
    # A flood uses little CPU (it waits on the pipe), so on the cpu clock its request ends on
    # the wall backstop, max(10 x move_ms, move_ms + 2 s): 2.5 s at 250 ms, not 5 s at 500.
    token = new_token()
    done = _arena("play", _cmd("blank_flood", token), f"{shlex.quote(sys.executable)} bots/random_bot.py",
                  "--move-ms", "250", "--target", "6")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "forfeit" in done.stdout and "timeout" in done.stdout
    checked = _arena("check-bot", _cmd("blank_flood", token, 3), "--move-ms", "250")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "result: FAIL (first problem: timeout" in checked.stdout
    assert survivors(token) == []


def _tournament(folder: Path, token: str, modes: list[str], move_ms: int = 2000) -> Path:
    bots = "\n".join(
        f'  - {{name: {mode.replace("_", "-")}, cmd: "$PYTHON {HOSTILE} {mode} {token} 2", cwd: "{ROOT}", move_ms: {move_ms}}}'
        for mode in modes
    )
    path = folder / "hostile.yaml"
    path.write_text(f"""\
name: hostile-test
seed: 5
rules: {{target: 6}}
concurrency: 2
bots:
  - {{name: greedy, cmd: "$PYTHON bots/greedy_bot.py", cwd: "{ROOT}"}}
{bots}
""")
    return path


def test_nothing_survives_arena_run(tmp_path):
    token = new_token()
    path = _tournament(tmp_path, token, ["escape_daemon", "escape_crash", "escape_pgid", "respawner"])
    done = _arena("run", str(path), "--no-progress", "--output", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert survivors(token) == []


def test_nothing_survives_kill_9_of_arena_run(tmp_path):
    token = new_token()
    tag = f"ARENA_CONTAINMENT_TEST={token}"
    # A bot that holds its move (half a reply, then sleep) for as long as it may: ten minutes.
    # Nothing waits for that: every process of the run goes as soon as the arena has.
    path = _tournament(tmp_path, token, ["escape_pgid", "respawner", "escape_daemon", "partial_line"], move_ms=600_000)
    # The results are inside TMPDIR: with Landlock, each bot gets a TMPDIR of its own there.
    env = dict(os.environ, ARENA_CONTAINMENT_TEST=token, TMPDIR=str(tmp_path))
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress", "--output",
                            str(tmp_path / "out")], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        # Wait until bots and their children run (two bots, each with a child, at the least).
        assert wait_until(lambda: len(survivors(token)) >= 4, timeout=60), "the bots never started"
        time.sleep(2)  # each worker is soon waiting on the partial line
        scratch = list(tmp_path.glob("escoba-arena-*"))
        assert bool(scratch) == ("Landlock ABI" in containment.containment_line()), scratch
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert wait_until(lambda: not survivors(token)), survivors(token)
    assert wait_until(lambda: not _tagged(tag)), _tagged(tag)  # workers and launchers too
    assert not list(tmp_path.glob("escoba-arena-*"))  # the launchers removed the bots' TMPDIRs


def _tagged(tag: str) -> list[int]:
    """Processes whose environment carries ``tag`` (the arena's workers and launchers)."""
    return with_environ(tag)


DEATHLESS_BOT = """\
import ctypes, json, sys


ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0: it outlives its launcher
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_match"):
        print(json.dumps({"type": "ready", "name": "deathless", "protocol": 1}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
"""


def test_a_bot_whose_launcher_is_lost_fails_at_its_next_request_even_if_it_still_answers(tmp_path):
    """Its launcher gone, the bot is over (its bots die with it, or are killed with its cgroups
    or as orphans): once the arena knows, the bot gets no more requests, however long it takes
    to die, even one that cleared its parent-death signal."""
    script = tmp_path / "deathless.py"
    script.write_text(DEATHLESS_BOT)
    launcher = LauncherClient(cgroups=False, sealed=False)  # nothing else kills a bot that outlives it
    bot = BotProcess(BotSpec(name="deathless", cmd=(sys.executable, str(script)), limits=FAST), launcher=launcher)
    try:
        bot.begin_match(hello())
        assert bot.decide({"hand": ["7o"]}, ["7o"], FAST.move_ms, 0)[1] == "7o"
        pid = bot.pid
        assert pid is not None
        os.kill(launcher.pid, signal.SIGKILL)
        assert wait_until(lambda: not launcher.alive)
        with pytest.raises(BotFailure) as info:
            bot.decide({"hand": ["7o"]}, ["7o"], FAST.move_ms, 0)
        assert info.value.termination is Termination.CRASH and "launcher was lost" in info.value.detail
        # Nor does it outlive its launcher: it came to this process (their subreaper) as an
        # orphan, and was killed there.
        assert wait_until(lambda: not running(pid))
    finally:
        if bot.pid is not None and running(bot.pid):
            os.kill(bot.pid, signal.SIGKILL)
        bot.close()


@pytest.mark.parametrize("landlock", ["on", "off"])
@pytest.mark.parametrize("resettable", [True, False], ids=["counters", "counters-not-resettable"])
def test_a_match_tells_the_launcher_at_most_once_to_count_and_asks_at_most_once_what_its_bots_used(
        monkeypatch, resettable, landlock):
    """Each message costs the launcher a wake-up: a match's seats are reset at once and measured
    at once. Counters the arena cannot reset (its peak file not writable to it) are left to the
    launcher from then on. Where the bots could signal the launcher, it is asked once more, at
    the end, whether it still runs (a bot may have killed it)."""
    if landlock == "off":
        containment.shutdown()
        monkeypatch.setenv(containment.LANDLOCK_ENV, "off")
    if not resettable:
        monkeypatch.setattr(containment.cgroups.CounterFiles, "reset_peak", lambda self: False)
    said: list[tuple[str, dict]] = []
    request, notify = LauncherClient._request, LauncherClient._notify

    def counting_request(self, op, fds=(), timeout=10.0, **fields):
        said.append((op, fields))
        return request(self, op, fds, timeout, **fields)

    def counting_notify(self, op, **fields):
        said.append((op, fields))
        notify(self, op, **fields)

    bots = [BotProcess(hostile_spec("escape_pgid", new_token(), limits=FAST)) for _ in range(2)]
    try:
        play_match(bots, RULES, Seating.alone(2), seed=3)  # starts them
        monkeypatch.setattr(LauncherClient, "_request", counting_request)
        monkeypatch.setattr(LauncherClient, "_notify", counting_notify)
        record = play_match(bots, RULES, Seating.alone(2), seed=4)
        messages = list(said)
        counting = all(bot._child is not None and bot._child.counting for bot in bots)
        if not resettable:
            assert all(bot._child is not None and bot._child.counters is None for bot in bots)
    finally:
        for bot in bots:
            bot.close()
        if landlock == "off":
            containment.shutdown()
    # Where their cgroups count what they use, the arena resets and reads those counters itself.
    confined = sandbox.confines_signals(sandbox.abi()) and landlock == "on"
    asked = ([] if counting else ["reset"]) + ([] if confined else ["ping"]) + ([] if counting else ["usage"])
    assert [op for op, _ in messages] == asked
    assert all(len(fields["ids"]) == 2 for op, fields in messages if op != "ping")
    assert [u.seat for u in record.usage] == [0, 1]
    assert all(u.source in ("cgroup", "proc") and u.wall_ms > 0 and u.peak_memory_mb > 0 for u in record.usage)


def test_the_launcher_keeps_no_descriptor_of_a_bot_that_is_gone():
    launcher = LauncherClient()
    try:
        def open_fds() -> int:
            return len(os.listdir(f"/proc/{launcher.pid}/fd"))

        def one_match() -> None:
            bot = BotProcess(hostile_spec("escape_pgid", new_token(), limits=FAST), launcher=launcher)
            play_match([bot, LocalBot("local", seed=1)], RULES, Seating.alone(2), seed=3)
            assert bot.usage().source in ("cgroup", "proc")
            bot.close()

        one_match()
        before = open_fds()
        for _ in range(3):
            one_match()
        assert open_fds() == before
    finally:
        launcher.close()
