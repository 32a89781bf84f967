"""The launcher: the one process that starts the bots of an arena process, and outlives it.

The arena (``arena.harness.containment``) starts one launcher per arena process and asks it, over a
Unix socket, to start bots (their pipes passed as file descriptors), to kill them, and how
much CPU and memory they used. The launcher:

- is a child subreaper (``PR_SET_CHILD_SUBREAPER``): a bot's descendant whose parent exits
  (double fork, ``setsid``, a crash) is re-parented to it, whatever its session or
  environment, and it kills every such orphan at once: a bot's processes stay in its tree;
- puts each bot in cgroups of its own where it can create them (cgroup v2, v1 controllers,
  or both), which cap its memory and its number of tasks and kill its whole tree at once;
- otherwise finds a bot's tree through ``/proc`` and kills it when the resident memory of
  the tree goes over the bot's limit (measured every ``SAMPLE_S``), and holds a sealed bot of
  an ordinary user to its task limit by ``RLIMIT_NPROC`` inside its own user namespace, set
  while bubblewrap waits before starting it (``_hold_tasks``);
- starts each bot in its own session, with ``PR_SET_PDEATHSIG`` towards itself and resource
  limits (open files, file size, no core dumps), sealed where the machine allows it: inside
  bubblewrap, in user, PID, IPC, UTS, network and mount namespaces of its own
  (``arena.harness.seal``); where it cannot be sealed, in a Landlock domain of its own where the
  kernel has Landlock (``arena.harness.sandbox``: no writes outside temporary folders, no signals
  or tracing out of its tree) and an empty network namespace unless it asked for the network;
- when the arena goes away (its socket ends: a normal exit, or ``kill -9`` of the arena)
  kills every process left, removes its cgroups, then exits.

It runs as a program of its own (``python -I -S launcher.py FD [--no-cgroups] [--no-landlock]
[--bwrap PATH]``) and imports only the standard library and the modules of this package that
do too: ``proctree`` (a tree through ``/proc``), ``cgroups`` (a bot's groups and counters),
``sandbox`` (Landlock) and ``seal`` (bubblewrap): it starts in
tens of milliseconds, single-threaded (so forking is safe), and nothing the arena imports can
disturb it. The arena imports it too, for the
clean-up of cgroups a lost launcher left behind.

Messages are JSON objects, one per ``SOCK_SEQPACKET`` packet. Requests carry ``seq``; the
reply carries the same ``seq``. ``exit`` is sent unasked when a bot's first process ends.
``usage`` and ``reset`` name one bot (``id``) or several at once (``ids``: the seats of a match).
"""

from __future__ import annotations

import array
import ctypes
import errno
import fcntl
import json
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any, NoReturn

try:
    from arena.harness import sandbox, seal
except ImportError:  # run as a program (python -I -S launcher.py): the package is not on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from arena.harness import sandbox, seal
from arena.harness.cgroups import HARD_KILL_S, KILL_POLL_S, MIB, PREFIX, BotGroup, Cgroups, hierarchies, oom_detail
from arena.harness.proctree import (
    alive,
    children,
    mount_bytes,
    process_cpu,
    signal_all,
    stat_fields,
    tree,
    tree_memory,
    write_text,
)

SAMPLE_S = 0.1  # how often memory is measured and orphans are looked for
BEAT_S = 1.0  # how often it tells the arena it is alive (a bot may SIGSTOP it)
MAX_MESSAGE = 1 << 20
# Room for the file descriptors of one message (a spawn passes the bot's three pipes).
_FDS_SPACE = socket.CMSG_SPACE(8 * array.array("i").itemsize)

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
# What a bot's signals must be on exec: Python (here) ignores SIGPIPE and SIGXFSZ, and the
# launcher catches the others; ignored signals would stay ignored across exec.
_RESET_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGCHLD", "SIGPIPE", "SIGXFSZ", "SIGXCPU", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
)


# --- the launcher ----------------------------------------------------------------------------


@dataclass
class Bot:
    """A bot the launcher started: its first process and all that it knows about its tree."""

    id: int
    pid: int
    group: BotGroup | None
    memory_limit: int  # bytes; 0: none
    status: int | None = None  # once the first process is reaped: exit code, or -signal
    reason: str = ""  # "memory" when the bot was killed for going over its memory limit
    detail: str = ""
    members: set[int] = field(default_factory=set)  # its tree when last looked at
    dead_user: float = 0.0  # CPU of its processes reaped here (without a cpu cgroup)
    dead_system: float = 0.0
    base_user: float = 0.0
    base_system: float = 0.0
    reset_at: float = field(default_factory=time.monotonic)
    peak: int = 0
    oom_base: int = 0
    kill_after: float | None = None  # SIGKILL from then on (a kill is in progress)
    asked: bool = False  # the arena asked for the kill (else it hears of the end by ``exit``)
    give_up_at: float = 0.0
    waiters: list[int] = field(default_factory=list)
    final: dict[str, Any] | None = None  # the report once it is completely gone
    # Its private TMPDIR (arena.harness.sandbox), which the arena removes once it is killed; this
    # launcher does when the arena is gone first.
    scratch: str | None = None


class Launcher:
    def __init__(self, sock: socket.socket, use_cgroups: bool, use_landlock: bool = True,
                 bwrap: str | None = None, unsealed_why: str = "no bubblewrap (bwrap) found") -> None:
        self.sock = sock
        # Messages are read into one buffer kept for the launcher's life: a fresh buffer of
        # MAX_MESSAGE bytes for each small message cost more than everything else a usage
        # question does.
        self.inbox = bytearray(MAX_MESSAGE)
        self.me = os.getpid()
        self.libc = sandbox.c_library()
        self.subreaper = sandbox.become_subreaper(self.libc)
        self.cgroups = Cgroups.create(f"{PREFIX}{self.me}", hierarchies()) if use_cgroups else Cgroups()
        self.bots: dict[int, Bot] = {}
        self.roots: dict[int, Bot] = {}  # pid of a first process not yet reaped -> its bot
        self.serial = 0
        self.stopping = False
        self.bye: int | None = None
        self.network_off = self._probe_network()
        self.landlock = sandbox.abi(self.libc) if use_landlock else 0
        # Sealed: every bot in namespaces of its own through bubblewrap (arena.harness.seal).
        self.bwrap = bwrap
        self.sealed, self.no_nested_userns, self.unsealed_why = (
            seal.probe(bwrap) if bwrap else (False, False, unsealed_why))
        # Without a pids cgroup, a sealed bot's task limit is RLIMIT_NPROC set inside its own user
        # namespace, where the kernel counts its tasks alone (seal.counts_tasks_per_userns); the
        # kernel never holds user id 0 to it, so root needs the cgroup.
        self.nproc_in_userns = (self.sealed and "pids" not in self.cgroups.roots and os.getuid() != 0
                                and seal.counts_tasks_per_userns())
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda s, f: None)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, self._on_stop)

    def _on_stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    # -- what it can do ---------------------------------------------------------------------

    def _probe_network(self) -> bool:
        """Can a bot get a network namespace of its own? Tried in a throw-away child."""
        if self.libc is None:
            return False
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                _isolate_network(self.libc)
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0

    def describe(self) -> str:
        groups = self.cgroups
        parts = ["subreaper launcher" if self.subreaper else "launcher (not a subreaper: escaped orphans are not caught)"]
        parts.append(groups.describe() if groups else "no cgroups (bot trees found through /proc)")
        if "memory" in groups.roots:
            parts.append("memory limit by cgroup")
        else:
            parts.append(f"memory limit by /proc every {int(SAMPLE_S * 1000)} ms")
        if "pids" in groups.roots:
            parts.append("task limit by cgroup")
        elif self.nproc_in_userns:
            parts.append("task limit by its user namespace (RLIMIT_NPROC)")
        else:
            parts.append("no task limit (needs the pids cgroup)")
        parts.append("CPU time per move by cgroup" if "cpu" in groups.roots else "CPU time per move by /proc")
        parts.append("cpus limit by cgroup" if "cpus" in groups.roots else "no cpus limit (needs the cpu controller)")
        if self.sealed:
            parts.append("sealed: each bot in its own user, PID, IPC, UTS, network and mount namespaces (bubblewrap)")
        else:
            parts.append("network off available" if self.network_off else "network off unavailable")
            parts.append(sandbox.describe(self.landlock))
        return "; ".join(parts)

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        self.send({"op": "hello", "pid": self.me, "containment": self.describe(),
                   "roots": sorted(set(self.cgroups.roots.values())), "subreaper": self.subreaper,
                   "cgroup_roles": sorted(self.cgroups.roots), "network_off": self.network_off,
                   "landlock": self.landlock, "sealed": self.sealed, "unsealed_why": self.unsealed_why,
                   "bwrap": self.bwrap if self.sealed else None, "no_nested_userns": self.no_nested_userns})
        self.sock.setblocking(False)
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        poller.register(self.wake_r, select.POLLIN)
        next_sample = time.monotonic() + SAMPLE_S
        next_beat = time.monotonic()
        while not self.stopping:
            now = time.monotonic()
            if now >= next_beat:
                self.send({"op": "beat"})
                next_beat = now + BEAT_S
            busy = any(b.kill_after is not None for b in self.bots.values())
            wait = KILL_POLL_S if busy else min(next_beat, next_sample if self.bots else next_beat) - now
            for fd, events in poller.poll(max(0.0, wait) * 1000):
                if fd == self.wake_r:
                    try:
                        while os.read(self.wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                elif events & select.POLLIN:
                    self.receive()
                else:
                    self.stopping = True  # the arena is gone
            self.reap()
            now = time.monotonic()
            if now >= next_sample:
                self.sample()
                self.kill_orphans()
                next_sample = now + SAMPLE_S
            self.progress()

    def receive(self) -> None:
        buf, view = self.inbox, memoryview(self.inbox)
        while True:
            try:
                size, ancillary, _, _ = self.sock.recvmsg_into([buf], _FDS_SPACE)
            except BlockingIOError:
                return
            except OSError:
                self.stopping = True
                return
            fds = _passed_fds(ancillary)
            if not size:
                for fd in fds:
                    os.close(fd)
                self.stopping = True
                return
            try:
                self.handle(json.loads(bytes(view[:size])), fds)
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode()
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self.sock.send(data)
                return
            except BlockingIOError:
                # The arena is not reading: wait for room a while, never for ever.
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                select.select([], [self.sock], [], remaining)
            except OSError:
                self.stopping = True
                return

    def handle(self, msg: dict[str, Any], fds: list[int]) -> None:
        op, seq = msg.get("op"), int(msg.get("seq") or 0)
        bot = self.bots.get(msg.get("id", -1))
        if op == "spawn":
            reply = self.spawn(msg, fds)
            # Closed before the reply: once the arena hears that the bot started, the bot alone
            # holds its pipes, and its end is the end of its output whatever becomes of this
            # process (a bot may stop it).
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            fds.clear()
            self.send({"seq": seq, **reply})
        elif op == "kill":
            if bot is None:
                self.send({"seq": seq, "op": "killed", "id": msg.get("id"), "status": None, "reason": "",
                           "detail": "", "usage": None, "survivors": 0})
                return
            bot.waiters.append(seq)
            bot.asked = True
            self.start_kill(bot, float(msg.get("grace", 0.0)))
        elif op == "usage":
            ids = msg.get("ids")
            if isinstance(ids, list):  # the seats of a match at once: one message, not one each
                measured = [self.bots.get(i) for i in ids]
                self.send({"seq": seq, "op": "usage", "usages": [self.usage(b) if b is not None else None
                                                                 for b in measured]})
            else:
                self.send({"seq": seq, "op": "usage", "usage": self.usage(bot) if bot is not None else None})
        elif op == "reset":
            ids = msg.get("ids")
            for one in [self.bots.get(i) for i in ids] if isinstance(ids, list) else [bot]:
                if one is not None:
                    self.reset(one)
        elif op == "ping":  # the arena's proof, at a match's end, that this launcher still runs
            self.send({"seq": seq, "op": "pong"})
        elif op == "shutdown":
            self.bye = seq
            self.stopping = True

    # -- starting a bot ---------------------------------------------------------------------

    def spawn(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        if len(fds) != 3:
            return {"op": "spawn_failed", "error": "expected 3 file descriptors"}
        self.serial += 1
        bot_id = self.serial
        limits = msg.get("limits") or {}
        memory = int(limits.get("memory_mb", 0)) * MIB
        group = None
        if self.cgroups:
            group = BotGroup(self.cgroups, f"bot-{bot_id}")
            try:
                group.create(memory, int(limits.get("processes", 0)), int(limits.get("cpus", 0)))
            except OSError as exc:
                return {"op": "spawn_failed", "error": f"cannot create its cgroup: {exc}"}
        tasks = int(limits.get("processes", 0))
        held = self.nproc_in_userns and tasks > 0  # sealed, by nproc_in_userns
        sealed: list[str] | None = None
        if self.sealed:
            try:
                sealed = self._seal(msg, limits, held=held)
            except OSError as exc:
                if group is not None:
                    group.remove()
                return {"op": "spawn_failed", "error": str(exc)}
        elif msg.get("network") is False and not self.network_off:
            if group is not None:
                group.remove()
            return {"op": "spawn_failed",
                    "error": "network: false needs network namespaces (unshare), which this system does not allow"}
        # Held: bubblewrap's report of the sandbox's first process, and its wait until that
        # process's task limit is set (_hold_tasks); the child's ends, then the launcher's.
        info, block = (os.pipe(), os.pipe()) if held else ((-1, -1), (-1, -1))
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child, until exec
            os.close(err_r)
            if held:
                os.close(info[0])
                os.close(block[1])
            self._exec(msg, limits, fds, err_w, group.procs_files if group else [], sealed,
                       (info[1], block[0]) if held else None)
        os.close(err_w)
        if held:
            os.close(info[1])
            os.close(block[0])
        error = _read_until_eof(err_r, 10.0)
        os.close(err_r)
        if held:
            if not error:
                error = _hold_tasks(info[0], block[1], tasks)
            os.close(info[0])
            os.close(block[1])
            if error:
                _kill_now(pid)
        if error:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            if group is not None:
                group.remove()
            return {"op": "spawn_failed", "error": error}
        bot = Bot(bot_id, pid, group, memory, members={pid}, scratch=msg.get("scratch"))
        oom = group.oom_file() if group else None
        bot.oom_base = int(oom["base"]) if oom else 0
        self.bots[bot_id] = bot
        self.roots[pid] = bot
        return {"op": "spawned", "id": bot_id, "pid": pid, "counters": group.counters() if group else None,
                "clock": group.clock_file() if group else None, "oom": oom}

    def _seal(self, msg: dict[str, Any], limits: dict[str, Any], *, held: bool = False) -> list[str]:
        """The bubblewrap command line of a bot (arena.harness.seal); OSError when its program
        or folder is missing, in the words an exec would have used."""
        cwd = str(msg.get("cwd") or os.getcwd())
        if not os.path.isdir(cwd):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
        memory = int(limits.get("memory_mb", 0))
        plan = seal.Plan(
            argv=tuple(str(a) for a in msg["argv"]), cwd=cwd,
            env=tuple((str(k), str(v)) for k, v in msg["env"].items()),
            writable=tuple(str(w) for w in msg.get("writable") or ()),
            readable=tuple(str(r) for r in msg.get("readable") or ()),
            hidden=tuple(str(h) for h in msg.get("hidden") or ()),
            network=msg.get("network") is True, tmp_mb=memory or seal.TMP_MB_DEFAULT)
        if self.bwrap is None:  # never: sealed means a bwrap that works
            raise OSError(errno.ENOSYS, "no bubblewrap")
        return seal.arguments(self.bwrap, plan, disable_userns=self.no_nested_userns, held=held)

    def _exec(self, msg: dict[str, Any], limits: dict[str, Any], fds: list[int], err: int, procs: list[str],
              sealed: list[str] | None = None, held: tuple[int, int] | None = None) -> NoReturn:
        stage = "setsid"
        try:
            os.setsid()
            stage = "prctl"
            if not sandbox.die_with_parent(self.me, libc=self.libc):  # the launcher died before it took hold
                os._exit(1)
            stage = "joining its cgroup"
            for path in procs:
                with open(path, "w") as f:
                    f.write(str(os.getpid()))
            stage = "resource limits"
            _set_rlimits(limits)
            signal.set_wakeup_fd(-1)
            for sig in _RESET_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            if sealed is None and (msg.get("network") is False or (msg.get("network") is None and self.network_off)):
                stage = "network namespace"
                _isolate_network(self.libc)
            if sealed is None and self.landlock:  # last: the network namespace writes /proc/self/uid_map
                stage = "landlock"
                env = {str(k): str(v) for k, v in msg["env"].items()}
                folders = sandbox.writable_folders(env, msg.get("writable") or ())
                sandbox.confine(self.landlock, folders, msg.get("hidden") or (), self.libc)
            if msg.get("cpus"):
                stage = "cpu affinity"
                os.sched_setaffinity(0, msg["cpus"])
            stage = "pipes"
            keep = 2
            if sealed is None:
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
            else:
                # bubblewrap's own processes keep their 0, 1 and 2 for the bot's life: the bot's
                # pipes go to it as 3, 4 and 5 (which they close) and seal.arguments' shim moves
                # them into place. Else a bot that closes its stdin would leave a reader. Held,
                # bubblewrap's report and wait go as INFO_FD and BLOCK_FD. Each is moved out of
                # the way first, so that no dup2 replaces one not yet placed.
                places = [*seal.PASSED_FDS, *((seal.INFO_FD, seal.BLOCK_FD) if held else ())]
                high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in [*fds, *(held or ())]]
                for fd, place in zip(high, places, strict=True):
                    os.dup2(fd, place)
                keep = max(places)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                os.dup2(high[2], 2)  # bubblewrap's own complaints go to the bot's log
            for entry in os.listdir("/proc/self/fd"):
                fd = int(entry)
                if fd > keep and fd != err:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            if msg.get("cwd"):
                stage = "cwd"
                os.chdir(msg["cwd"])
            stage = "exec"
            env = {str(k): str(v) for k, v in msg["env"].items()}
            if sealed is not None:
                os.execve(sealed[0], sealed, seal.environment(env))
            argv = [str(a) for a in msg["argv"]]
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:  # noqa: BLE001 - whatever happens, report it and leave
            text = str(exc) if stage in ("exec", "cwd") else f"{stage}: {exc}"
            try:
                os.write(err, (text or exc.__class__.__name__).encode("utf-8", "replace")[:4000])
            except OSError:
                pass
        os._exit(127)

    # -- watching ----------------------------------------------------------------------------

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            bot = self.roots.pop(pid, None)
            owner = bot or next((b for b in self.bots.values() if pid in b.members), None)
            if owner is not None:
                owner.dead_user += usage.ru_utime
                owner.dead_system += usage.ru_stime
                owner.members.discard(pid)
            if bot is not None:
                self.root_ended(bot, os.waitstatus_to_exitcode(status))

    def root_ended(self, bot: Bot, status: int) -> None:
        """The bot's first process is gone: the bot is over, whatever of it is left dies now."""
        bot.status = status
        if not bot.reason and bot.group is not None and bot.group.oom_kills() > bot.oom_base:
            bot.reason = "memory"
            bot.detail = oom_detail(bot.memory_limit // MIB)
        if not bot.asked:
            self.send({"op": "exit", "id": bot.id, "status": status, "reason": bot.reason, "detail": bot.detail,
                       "usage": self.usage(bot)})
        self.start_kill(bot, 0.0)

    def sample(self) -> None:
        """Measure every running bot's memory; kill those over their limit."""
        for bot in list(self.bots.values()):
            if bot.status is not None or bot.kill_after is not None:
                continue
            group = bot.group
            if group is not None and "memory" in group.dirs and (group.memory_limited or not bot.memory_limit):
                used = group.memory() or 0
                bot.peak = max(bot.peak, used, group.peak() or 0)
                bot.members = group.members() | {bot.pid}
                if group.oom_kills() > bot.oom_base:
                    self.over_memory(bot, oom_detail(bot.memory_limit // MIB))
                continue
            # Known pids stay until they are reaped: an orphan's CPU still counts for its bot.
            bot.members = (tree([bot.pid]) | (group.members() if group is not None else set())
                           | {pid for pid in bot.members if stat_fields(pid) is not None})
            # A sealed bot's private /tmp and /dev/shm hold memory that no RSS shows (a memory
            # cgroup charges it): seen through the root of bubblewrap's first process inside.
            files = mount_bytes(inside[0], seal.PRIVATE_TMPFS) if self.sealed and (inside := children(bot.pid)) else 0
            used = tree_memory(bot.members, bot.memory_limit, files)
            bot.peak = max(bot.peak, used)
            if bot.memory_limit and used > bot.memory_limit:
                what = "its processes and its private /tmp and /dev/shm" if files else "its processes"
                self.over_memory(bot, f"the memory of {what} reached {used / MIB:.0f} MB, "
                                      f"over its memory limit of {bot.memory_limit // MIB} MB")

    def over_memory(self, bot: Bot, detail: str) -> None:
        bot.reason, bot.detail = "memory", detail
        self.hard_kill(bot)

    def kill_orphans(self) -> None:
        """Every child of the launcher that is not a bot's first process is an orphan of some
        bot (its parent exited): it dies, with all it started."""
        orphans = [pid for pid in children(self.me) if pid not in self.roots and alive(pid)]
        if orphans:
            found = tree(orphans)
            for bot in self.bots.values():  # for the CPU account of the orphans reaped later
                if bot.group is not None:
                    bot.members |= found & bot.group.members()
            signal_all(found, signal.SIGKILL)

    # -- usage ---------------------------------------------------------------------------------

    def _cpu_now(self, bot: Bot) -> tuple[float, float, str]:
        if bot.group is not None:
            cpu = bot.group.cpu()
            if cpu is not None:
                return cpu[0], cpu[1], "cgroup"
        user, system = bot.dead_user, bot.dead_system
        if bot.status is None:
            for pid in tree([bot.pid]):
                u, s = process_cpu(pid)
                user += u
                system += s
        return user, system, "proc"

    def usage(self, bot: Bot) -> dict[str, Any]:
        if bot.final is not None:
            return dict(bot.final["usage"])
        total_user, total_system, source = self._cpu_now(bot)
        peak = bot.peak
        # An exact peak says it all, and is right even where the arena, not this launcher, reset
        # it (the samples then count from the bot's start).
        exact = bot.group.peak() if bot.group is not None else None
        if exact is not None:
            peak = exact
        elif bot.group is not None and bot.status is None:
            peak = max(peak, bot.group.memory() or 0)
        elif bot.status is None:
            peak = max(peak, tree_memory(tree([bot.pid]), bot.memory_limit))
        user, system = max(0.0, total_user - bot.base_user), max(0.0, total_system - bot.base_system)
        now = time.monotonic()
        return {"user": round(user, 6), "system": round(system, 6), "cpu": round(user + system, 6),
                "wall": round(now - bot.reset_at, 6), "peak": peak, "source": source,
                "total_user": round(total_user, 6), "total_system": round(total_system, 6), "at": round(now, 6)}

    def reset(self, bot: Bot) -> None:
        if bot.status is not None:
            return
        bot.base_user, bot.base_system, _ = self._cpu_now(bot)
        bot.reset_at = time.monotonic()
        bot.peak = 0
        if bot.group is not None:
            bot.group.reset_peak()

    # -- killing ---------------------------------------------------------------------------------

    def targets(self, bot: Bot) -> set[int]:
        found = tree([bot.pid]) if bot.status is None else set()
        if bot.group is not None:
            found |= bot.group.members()
        return found

    def start_kill(self, bot: Bot, grace: float) -> None:
        if bot.kill_after is not None:
            return
        now = time.monotonic()
        bot.kill_after = now + max(0.0, grace)
        bot.give_up_at = bot.kill_after + HARD_KILL_S
        if grace > 0:
            signal_all(self.targets(bot), signal.SIGTERM)
        else:
            self.hard_kill(bot)

    def hard_kill(self, bot: Bot) -> None:
        now = time.monotonic()
        if bot.kill_after is None or bot.kill_after > now:
            bot.kill_after = now
            bot.give_up_at = now + HARD_KILL_S
        if bot.group is not None:
            bot.group.kill()
        signal_all(self.targets(bot), signal.SIGKILL)

    def progress(self) -> None:
        """Move every kill in progress on; report those that are complete."""
        now = time.monotonic()
        orphans: list[int] | None = None
        for bot in list(self.bots.values()):
            if bot.kill_after is None:
                continue
            left = self.targets(bot)
            if left and now >= bot.kill_after and now < bot.give_up_at:
                self.hard_kill(bot)
                continue
            if orphans is None:
                orphans = [p for p in children(self.me) if p not in self.roots and alive(p)]
                if orphans:
                    signal_all(tree(orphans), signal.SIGKILL)
            done = (not left and bot.status is not None and not orphans) or now >= bot.give_up_at
            if done:
                self.finish(bot, len(left) + len(orphans), now >= bot.give_up_at)

    def finish(self, bot: Bot, survivors: int, late: bool) -> None:
        if bot.final is None:
            usage = self.usage(bot)
            bot.final = {"status": bot.status, "reason": bot.reason, "detail": bot.detail, "usage": usage}
        if bot.group is not None and not bot.group.remove() and not late:
            return  # the kernel is still tearing the group down: try again on the next round
        self.bots.pop(bot.id, None)
        self.roots.pop(bot.pid, None)
        for seq in bot.waiters:
            self.send({"seq": seq, "op": "killed", "id": bot.id, **bot.final, "survivors": survivors})
        bot.waiters.clear()

    def cleanup(self) -> None:
        """The arena is gone or says goodbye: nothing that any bot started may stay."""
        deadline = time.monotonic() + HARD_KILL_S
        while True:
            for bot in self.bots.values():
                if bot.group is not None:
                    bot.group.kill()
            left = tree(children(self.me))
            for bot in self.bots.values():
                if bot.group is not None:
                    left |= bot.group.members()
            signal_all(left, signal.SIGKILL)
            self.reap()
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        for bot in list(self.bots.values()):
            if bot.group is not None:
                bot.group.remove()
            if bot.scratch:
                shutil.rmtree(bot.scratch, ignore_errors=True)
        self.cgroups.remove()
        if self.bye is not None:
            self.send({"seq": self.bye, "op": "bye"})


def _passed_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The file descriptors a message carried (``SCM_RIGHTS``), as ``socket.recv_fds`` gives them."""
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    return list(fds)


def _read_until_eof(fd: int, timeout: float, late: str = "the bot's process did not reach exec in time") -> str:
    """What a starting child reported on its error pipe (empty: it reached exec); ``late`` when
    the pipe is not closed within ``timeout`` seconds."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return late
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            return b"".join(chunks).decode("utf-8", "replace")
        chunks.append(chunk)


def _hold_tasks(info: int, block: int, tasks: int) -> str:
    """Set the task limit of a sealed bot whose bubblewrap waits (seal.arguments' ``held``) on
    the sandbox's first process, which starts the bot and is one of its ``tasks + 1``; then let
    it go on. An error's words, or "" (also when bubblewrap ended before its report: the bot's
    end is then heard as any other)."""
    late = "bubblewrap did not report its sandbox in time"
    data = _read_until_eof(info, 10.0, late)  # bubblewrap closes it once it has reported
    if not data or data == late:
        return data
    try:
        first = int(json.loads(data)["child-pid"])
    except (ValueError, KeyError, TypeError):
        return f"cannot read bubblewrap's report: {data[:200]!r}"
    try:
        resource.prlimit(first, resource.RLIMIT_NPROC, (tasks + 1, tasks + 1))
    except ProcessLookupError:
        return ""  # gone already: nothing of it can run
    except OSError as exc:
        return f"cannot set its task limit: {exc}"
    try:
        os.write(block, b"1")
    except OSError:
        pass
    return ""


def _kill_now(pid: int) -> None:
    """Kill a child the launcher just started and could not hold, and reap it."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _set_rlimits(limits: dict[str, Any]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, which, unit in (("open_files", resource.RLIMIT_NOFILE, 1), ("file_size_mb", resource.RLIMIT_FSIZE, MIB)):
        value = int(limits.get(key, 0)) * unit
        if value <= 0:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


def _isolate_network(libc: Any) -> None:
    """Put the calling process in a new, empty network namespace (loopback only, down)."""
    if libc is None:
        raise OSError(errno.ENOSYS, "no C library to call unshare")
    if libc.unshare(_CLONE_NEWNET) == 0:
        return
    # Without the privilege: a user namespace of its own (where the process may make one)
    # that maps it to itself.
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"unshare: {os.strerror(code)}")
    write_text("/proc/self/setgroups", "deny")
    if not (write_text("/proc/self/uid_map", f"{uid} {uid} 1") and write_text("/proc/self/gid_map", f"{gid} {gid} 1")):
        raise OSError(errno.EPERM, "cannot map the user into its namespace")


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[1]))
    bwrap = argv[argv.index("--bwrap") + 1] if "--bwrap" in argv else None
    why = f"sealing switched off ({seal.SEAL_ENV}=off)" if "--no-seal" in argv else "no bubblewrap (bwrap) found"
    launcher = Launcher(sock, use_cgroups="--no-cgroups" not in argv, use_landlock="--no-landlock" not in argv,
                        bwrap=bwrap, unsealed_why=why)
    try:
        launcher.run()
    finally:
        launcher.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

