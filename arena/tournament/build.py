"""Builds: each bot's ``build:`` command, run before the first match, and skipped when
nothing it reads has changed.

- Bots from a ``source:`` revision are checked out first (sources.py); their builds run in
  the checkout.
- A build runs once per distinct build: bots with the same cwd, command, environment and
  inputs share it. Independent builds run side by side on a small thread pool.
- Its output (stdout and stderr) goes to ``<logs>/<bot>.build.log``. A build that fails,
  times out (``DEFAULT_BUILD_TIMEOUT_S``; its whole process group is killed) or leaves the
  bot's program missing raises ``BuildError``, one line naming the bot, the exit code and
  the log, before any match is played.
- The build cache (``<cache>/builds/<key>.json``, one record per distinct build) stores
  the SHA-256 of the build's inputs and outputs after its last success. The build is
  skipped when the inputs are unchanged and every output is still as the build left it.
  Inputs: the files matched by the bot's ``inputs:`` globs, else the files the build
  command names (``cc -o bot.bin bot.c``: ``bot.c``). Outputs: the files the bot's command
  names (``./bot.bin``, ``bot.py``, ``bot.jar``) and the build command's ``-o`` arguments;
  a deleted or replaced output forces a rebuild. A build with no known inputs (``make``,
  ``cargo build``) runs every time: the tool decides what is stale.

The cache folder is ``.arena-cache/`` beside the tournament file (``ARENA_CACHE_DIR``
overrides it): the records describe files of that project's own tree, so they live and die
with it, and two clones of a project never trust each other's records.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from arena.errors import ArenaError
from arena.harness import containment, seal
from arena.harness.botproc import expand_python, missing_program, split_command
from arena.safe_files import open_text_log
from arena.tournament.buildspec import BuildSpec, unmatched_text
from arena.tournament.buildspec import command_text as _command_text
from arena.tournament.config import BotConfig, TournamentConfig
from arena.tournament.grants import written_folders
from arena.tournament.identity import build_input_files, command_outputs, digest_files, digest_of, program_files
from arena.tournament.sources import SourceError, checkout, is_checked_out, locate
from arena.tournament.store import hidden_paths

# Compiling a C or Java bot takes seconds; a Rust release build from scratch, minutes.
DEFAULT_BUILD_TIMEOUT_S = 600
CACHE_DIR_ENV = "ARENA_CACHE_DIR"
CACHE_DIR_NAME = ".arena-cache"
_RECORD_VERSION = 1


class BuildError(ArenaError):
    """A bot's build failed, timed out, or did not leave the bot's program in place."""

    def __init__(self, bot: str, message: str, *, code: int | None = None, log: str | None = None) -> None:
        self.bot = bot
        self.code = code
        self.log = log
        self.message = message
        super().__init__(f"bot {bot!r}: {message}")


def default_cache_dir(config: TournamentConfig) -> str:
    """``$ARENA_CACHE_DIR``, else ``.arena-cache`` in the tournament file's folder."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return os.path.abspath(os.path.expanduser(override))
    first = config.bots[0]
    # A source bot's base_dir moves into its checkout; its source keeps the file's folder.
    folder = first.source.base_dir if first.source is not None else first.base_dir
    return os.path.join(os.path.abspath(folder), CACHE_DIR_NAME)


# --- checking out sources -----------------------------------------------------------


def _relocate(bot: BotConfig, folder: str, commit: str) -> BotConfig:
    if bot.source is None:
        return bot
    moved = replace(bot, base_dir=folder, source=replace(bot.source, commit=commit))
    if not os.path.isdir(moved.resolved_cwd):
        raise SourceError(bot.name, "cwd", f"expected a folder at revision {commit[:12]} of {bot.source.repo}, "
                                           f"but {bot.cwd!r} is not one in it")
    return moved


def checkout_sources(bots: Sequence[BotConfig], cache_dir: str) -> tuple[BotConfig, ...]:
    """The bots, each one with a ``source:`` checked out into the cache and run from there
    (its ``base_dir`` is the checkout, its ``source.commit`` the full commit id).
    Raises SourceError."""
    moved = []
    for bot in bots:
        if bot.source is not None:
            place = checkout(bot.name, bot.source, cache_dir)
            bot = _relocate(bot, place.folder, place.commit)
        moved.append(bot)
    return tuple(moved)


def _selected(config: TournamentConfig, names: Collection[str] | None) -> tuple[BotConfig, ...]:
    return tuple(bot for bot in config.bots if names is None or bot.name in names)


def _merged(config: TournamentConfig, bots: Sequence[BotConfig]) -> TournamentConfig:
    by_name = {bot.name: bot for bot in bots}
    return replace(config, bots=tuple(by_name.get(bot.name, bot) for bot in config.bots))


# --- distinct builds and their cache state ---------------------------------------------


@dataclass(frozen=True)
class _Build:
    """One distinct build, shared by the bots in ``bots``."""

    bots: tuple[str, ...]
    cwd: str
    cmd: str | tuple[str, ...]  # as written
    argv: tuple[str, ...]  # what runs ($PYTHON expanded)
    env: tuple[tuple[str, str], ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]  # relative to cwd
    commit: str | None
    programs: tuple[tuple[str, str | tuple[str, ...]], ...]  # (bot, its command, expanded): checked after the build
    network: bool = False  # a grant of the file (the bots' ``network: true``): else a sealed build has none
    hidden: tuple[str, ...] = ()  # what the build may not see (the tournament's secrets)
    written: tuple[str, ...] = ()  # the bots' writable folders: never the build's inputs

    @property
    def key(self) -> str:
        return digest_of([self.cwd, list(self.argv), [list(kv) for kv in self.env], list(self.inputs)])


def _distinct_builds(bots: Sequence[BotConfig], python: str, hidden: tuple[str, ...] = ()) -> list[_Build]:
    groups: dict[tuple[Any, ...], list[tuple[BotConfig, BuildSpec]]] = {}
    for bot in bots:
        if bot.build is None:
            continue
        argv = split_command(expand_python(bot.build.cmd, python))
        groups.setdefault((bot.resolved_cwd, argv, bot.env, bot.build.inputs), []).append((bot, bot.build))
    builds = []
    for (cwd, argv, env, inputs), members in groups.items():
        first, spec = members[0]
        outputs = [*command_outputs(spec.cmd)]
        for bot, _ in members:
            outputs += program_files(bot.cmd)
        builds.append(_Build(
            bots=tuple(b.name for b, _ in members),
            cwd=cwd,
            cmd=spec.cmd,
            argv=argv,
            env=env,
            inputs=inputs,
            outputs=tuple(dict.fromkeys(os.path.normpath(p) for p in outputs)),
            commit=first.source.commit if first.source is not None else None,
            programs=tuple((b.name, b.resolved_cmd(python)) for b, _ in members),
            network=any(dict(b.limits).get("network") is True for b, _ in members),
            hidden=hidden,
            written=tuple(dict.fromkeys(f for b, _ in members for f in written_folders(b))),
        ))
    return builds


@dataclass(frozen=True)
class _CacheState:
    fresh: bool  # the inputs and outputs are as the last successful build left them
    reason: str
    inputs: dict[str, str | None]


def _record_path(cache_dir: str, build: _Build, suffix: str = ".json") -> str:
    return os.path.join(cache_dir, "builds", f"{build.key}{suffix}")


def _write_cached_log(build: _Build, cache_dir: str, log: str, reason: str) -> None:
    """The bot's build log when the build is skipped: why, then the last build's output
    (kept in the cache), so every results folder has the whole story."""
    try:
        with open(_record_path(cache_dir, build, ".log"), encoding="utf-8", errors="replace") as f:
            last = f.read()
    except OSError:
        last = "(the last build's output is no longer in the cache)\n"
    with open_text_log(log) as out:  # a link planted as the log is replaced, never followed
        out.write(f"# build of {', '.join(build.bots)} not run: {reason}; the last build's output follows\n{last}")


def _read_record(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None  # no record, or a damaged one: build again
    return data if isinstance(data, dict) and data.get("version") == _RECORD_VERSION else None


def _inputs_now(build: _Build) -> dict[str, str | None]:
    paths, unmatched = build_input_files(build.cmd, build.inputs, build.cwd, build.outputs, build.written)
    if unmatched:
        raise BuildError(build.bots[0], f"key 'inputs': {unmatched_text(unmatched[0], build.cwd)}")
    return digest_files(build.cwd, paths)


def _cache_state(build: _Build, cache_dir: str) -> _CacheState:
    inputs = _inputs_now(build)
    if not inputs:
        return _CacheState(False, "its inputs are not known, so it runs every time (declare inputs: to skip it)", inputs)
    record = _read_record(_record_path(cache_dir, build))
    if record is None:
        return _CacheState(False, "no earlier build is recorded", inputs)
    old = record.get("inputs", {})
    changed = sorted(p for p in {*old, *inputs} if old.get(p) != inputs.get(p))
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return _CacheState(False, f"inputs changed: {', '.join(changed[:3])}{more}", inputs)
    built = record.get("outputs", {})
    for path, sha in digest_files(build.cwd, build.outputs).items():
        if sha is None:
            return _CacheState(False, f"output {path} is missing", inputs)
        if built.get(path) != sha:
            return _CacheState(False, f"output {path} changed since the last build", inputs)
    return _CacheState(True, f"inputs unchanged since {record.get('finished', 'the last build')}", inputs)


def _write_record(cache_dir: str, build: _Build, log: str) -> None:
    record = {
        "version": _RECORD_VERSION,
        "bots": list(build.bots),
        "cwd": build.cwd,
        "cmd": build.cmd if isinstance(build.cmd, str) else list(build.cmd),
        # Taken after the build: a build that writes into its own inputs' globs is not
        # stale on the next run.
        "inputs": _inputs_now(build),
        "outputs": digest_files(build.cwd, build.outputs),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "log": log,
    }
    path = _record_path(cache_dir, build)
    tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on ``path`` across processes: two arenas never build one thing at
    once (the second finds the first's record and skips its build)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# --- the plan (what --dry-run shows) ---------------------------------------------------


@dataclass(frozen=True)
class PlannedBuild:
    """What ``run_builds`` would do for one distinct build (``command`` set), or for a bot
    from a revision that has no build (``command`` None: only the checkout)."""

    bots: tuple[str, ...]
    cwd: str
    command: str | tuple[str, ...] | None
    commit: str | None
    will_run: bool  # the build runs (or the checkout is made); False: cached, nothing to do
    reason: str

    def describe(self) -> str:
        who = ", ".join(self.bots)
        at = f" at {self.commit[:12]}" if self.commit else ""
        if self.command is None:
            return f"{who}{at}: {self.reason}"
        verb = "build" if self.will_run else "cached"
        return f"{who}{at}: {verb}: {_command_text(self.command)} ({self.reason})"


def plan_builds(config: TournamentConfig, *, cache_dir: str | None = None, python: str = sys.executable,
                bots: Collection[str] | None = None) -> list[PlannedBuild]:
    """What ``run_builds`` would check out and build, and which builds are cached. Reads
    only: resolves revisions (SourceError for an unknown one), hashes inputs (BuildError
    for an ``inputs:`` pattern that matches nothing), runs nothing."""
    cache = cache_dir or default_cache_dir(config)
    plan: list[PlannedBuild] = []
    located: list[BotConfig] = []
    missing: set[str] = set()  # bots whose checkout is not made yet
    for bot in _selected(config, bots):
        source = bot.source
        if source is not None:
            place = locate(bot.name, source, cache)
            if is_checked_out(cache, place.commit):
                bot = _relocate(bot, place.folder, place.commit)
            else:
                bot = replace(bot, base_dir=place.folder, source=replace(source, commit=place.commit))
                missing.add(bot.name)
            if bot.build is None:
                todo = "to check out" if bot.name in missing else "checked out"
                plan.append(PlannedBuild((bot.name,), bot.resolved_cwd, None, place.commit, bot.name in missing,
                                         f"revision {source.rev!r} {todo}, no build"))
        located.append(bot)
    for build in _distinct_builds(located, python):
        if missing & set(build.bots):
            plan.append(PlannedBuild(build.bots, build.cwd, build.cmd, build.commit, True,
                                     "its revision is not checked out yet"))
            continue
        state = _cache_state(build, cache)
        plan.append(PlannedBuild(build.bots, build.cwd, build.cmd, build.commit, not state.fresh, state.reason))
    return plan


# --- running builds -------------------------------------------------------------------


@dataclass(frozen=True)
class BuildResult:
    bots: tuple[str, ...]
    cwd: str
    command: str | tuple[str, ...]
    commit: str | None
    built: bool  # False: cached, not run
    reason: str  # why it ran, or why it was skipped
    log: str
    seconds: float

    def describe(self) -> str:
        who = ", ".join(self.bots)
        at = f" at {self.commit[:12]}" if self.commit else ""
        if not self.built:
            return f"{who}{at}: cached ({self.reason})"
        return f"{who}{at}: built in {self.seconds:.1f} s ({self.reason}); log {self.log}"


@dataclass(frozen=True)
class BuildReport:
    """What ``run_builds`` did. ``config`` is the tournament to play: every bot from a
    revision runs from its checkout (pass it to the runner, and to ``identify_bot``)."""

    config: TournamentConfig
    builds: tuple[BuildResult, ...]

    def lines(self) -> list[str]:
        return [build.describe() for build in self.builds]


class _Running:
    """The process groups of the builds in progress, to kill them all on Ctrl-C."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def kill_all(self) -> None:
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            _kill_group(pgid)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _sealing() -> tuple[str, bool] | None:
    """bubblewrap's path and whether it can refuse nested user namespaces, where this machine
    seals its bots (this process's launcher found out); None where it does not, and builds then
    run as the user, as any command would."""
    try:
        shared = containment.launcher()
    except containment.LauncherError:
        return None
    return (shared.bwrap, shared.no_nested_userns) if shared.bwrap is not None else None


def sealed_argv(build: _Build, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The build's command line and environment: sealed like a bot (arena.harness.seal) where
    the machine can, with its folder writable, no network unless its bots were granted it, and
    the tournament's secrets hidden; as it is elsewhere. OSError when its program is missing."""
    sealing = _sealing()
    if sealing is None:
        return list(build.argv), env
    bwrap, no_nested = sealing
    plan = seal.Plan(argv=build.argv, cwd=build.cwd, env=tuple(env.items()), writable=(build.cwd,),
                     readable=seal.ARENA_READABLE, hidden=build.hidden, network=build.network)
    return seal.arguments(bwrap, plan, disable_userns=no_nested, pipes=False), seal.environment(env)


def _execute(build: _Build, log: str, reason: str, timeout_s: float, running: _Running) -> tuple[int | None, float]:
    """Run the build with its output in ``log``: (exit code or None on timeout, seconds)."""
    env = {**os.environ, **dict(build.env)}
    t0 = time.monotonic()
    with open_text_log(log) as out:  # a link planted as the log is replaced, never followed
        out.write(f"# build of {', '.join(build.bots)} in {build.cwd}\n# $ {_command_text(build.cmd)}\n# why: {reason}\n")
        out.flush()
        try:
            argv, env = sealed_argv(build, env)
            proc = subprocess.Popen(argv, cwd=build.cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            out.write(f"# cannot start: {exc}\n")
            what = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc)
            raise BuildError(build.bots[0], f"cannot start the build ({what}); log {log}", log=log) from None
        running.add(proc.pid)
        try:
            code: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            # A timed-out build, and anything a build left running in its group on Ctrl-C.
            if proc.poll() is None:
                _kill_group(proc.pid)
                proc.wait()
            running.discard(proc.pid)
        seconds = time.monotonic() - t0
        out.write(f"\n# {'timed out, killed' if code is None else f'exit code {code}'} after {seconds:.1f} s\n")
    return code, seconds


def _run_one(build: _Build, log: str, cache_dir: str, timeout_s: float, running: _Running) -> BuildResult:
    who = build.bots[0]
    try:
        os.makedirs(os.path.join(cache_dir, "builds"), exist_ok=True)
        lock = os.path.join(cache_dir, "builds", f"{build.key}.lock")
        with _locked(lock):
            state = _cache_state(build, cache_dir)
            if state.fresh:
                _write_cached_log(build, cache_dir, log, state.reason)
                return BuildResult(build.bots, build.cwd, build.cmd, build.commit, False, state.reason, log, 0.0)
            code, seconds = _execute(build, log, state.reason, timeout_s, running)
            if code is None:
                raise BuildError(who, f"build did not finish within {timeout_s:g} s and was killed; log {log}", log=log)
            if code != 0:
                raise BuildError(who, f"build failed with exit code {code}; log {log}", code=code, log=log)
            for name, cmd in build.programs:
                missing = missing_program(cmd, build.cwd, dict(build.env))
                if missing:
                    raise BuildError(name, f"the build succeeded but the bot cannot start: {missing}; log {log}",
                                     code=code, log=log)
            _write_record(cache_dir, build, log)
            shutil.copyfile(log, _record_path(cache_dir, build, ".log"))
    except OSError as exc:
        raise BuildError(who, f"cannot run the build or record it in {cache_dir}: {exc}") from None
    return BuildResult(build.bots, build.cwd, build.cmd, build.commit, True, state.reason, log, seconds)


def run_builds(
    config: TournamentConfig,
    logs_dir: str,
    jobs: int = 2,
    *,
    cache_dir: str | None = None,
    timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    python: str = sys.executable,
    bots: Collection[str] | None = None,
) -> BuildReport:
    """Check out every bot from a revision, then run every build that is not up to date,
    ``jobs`` at a time. Raises SourceError or BuildError (the first failing build in the
    file's order, once the builds running beside it have finished); on Ctrl-C every
    build's process group is killed. ``bots``: only these bots (default: all)."""
    cache = cache_dir or default_cache_dir(config)
    ready, results = prepare_bots(_selected(config, bots), logs_dir, jobs, cache_dir=cache, timeout_s=timeout_s,
                                  python=python, hidden=hidden_paths(config))
    return BuildReport(_merged(config, ready), results)


def prepare_bots(
    bots: Sequence[BotConfig],
    logs_dir: str,
    jobs: int = 2,
    *,
    cache_dir: str,
    timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    python: str = sys.executable,
    hidden: tuple[str, ...] = (),
) -> tuple[tuple[BotConfig, ...], tuple[BuildResult, ...]]:
    """``run_builds`` for bots that are not in a tournament file (``arena sprt``): the bots
    ready to run (from their checkouts), and what was built."""
    ready = checkout_sources(bots, cache_dir)
    builds = _distinct_builds(ready, python, hidden)
    os.makedirs(logs_dir, exist_ok=True)
    results: dict[int, BuildResult] = {}
    errors: dict[int, BuildError] = {}
    running = _Running()
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(builds) or 1))) as pool:
        futures: dict[Future[BuildResult], int] = {}
        try:
            for i, build in enumerate(builds):
                log = os.path.join(logs_dir, f"{build.bots[0]}.build.log")
                futures[pool.submit(_run_one, build, log, cache_dir, timeout_s, running)] = i
            for future in as_completed(futures):
                i = futures[future]
                if future.cancelled():
                    continue
                try:
                    results[i] = future.result()
                except BuildError as exc:
                    errors[i] = exc
                    for other in futures:
                        other.cancel()
        except BaseException:
            for other in futures:
                other.cancel()
            running.kill_all()
            raise
    if errors:
        raise errors[min(errors)]
    # A bot from a revision without a build: its program must be in the checkout.
    for bot in ready:
        if bot.source is not None and bot.build is None:
            missing = missing_program(bot.resolved_cmd(python), bot.resolved_cwd, dict(bot.env))
            if missing:
                raise SourceError(bot.name, "cmd", f"{missing} (at revision {bot.source.commit})")
    return ready, tuple(results[i] for i in sorted(results))
