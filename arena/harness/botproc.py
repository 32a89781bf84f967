"""Bot processes: start, talk lines with deadlines, capture stderr, and end every descendant.

A bot is untrusted. Everything here is built so that no bot can hang, flood, exhaust or
outlive the arena:

- bots are started by this process's launcher (``arena.harness.containment``, ``arena.harness.launcher``): a
  child subreaper that keeps each bot in cgroups where it can, applies its resource limits
  (``arena.harness.resources.ResourceLimits``), measures its CPU time and memory, kills every orphan
  a bot leaves, and everything when the arena ends, even by ``kill -9``;
- stdout is read non-blocking with ``poll`` on the raw fd (a reply already there when its
  request is written is read without the wait), in lines at most ``max_line_bytes`` long
  (``arena.harness.framing``: a 100 MB line is refused after the first chunk past the cap,
  never held in memory);
- every wait has a deadline on ``time.monotonic()``, checked whatever the bot sends: blank
  lines, late replies to abandoned requests and unfinished lines do not push it back;
- stderr is drained continuously by a thread into a file capped per bot (the cap counts what
  the file already holds, so it holds over restarts and over the workers of a tournament);
  past the cap the bytes are read and dropped, so a flood neither blocks the bot nor fills
  the disk. The same thread keeps what the bot writes during a match, with the time it was
  read, for the match's record (``match_stderr``), capped per match and per bot.

Failures are raised as ``BotFailure`` (a ``Termination`` plus a detail) for the referee to
record; nothing else escapes for anything a bot can do.
"""

from __future__ import annotations

import atexit
import os
import re
import select
import shlex
import shutil
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import IO, Any

from arena.errors import ArenaError
from arena.harness import containment
from arena.harness.cgroups import oom_detail
from arena.harness.containment import Child, LauncherClient, LauncherError, SpawnError
from arena.harness.framing import READ_CHUNK, LineReader
from arena.harness.protocol import (
    DEFAULT_MAX_LINE_BYTES,
    GOODBYE_LINE,
    BotFailure,
    Clock,
    ClockOut,
    Info,
    MoveReply,
    Ready,
    Termination,
    TimeLimits,
    encode,
    parse_move,
    parse_ready,
    quick_reply,
    request_line,
    timeout_line,
    wall_backstop_ms,
)
from arena.harness.resources import ResourceLimits, Usage
from arena.safe_files import open_log

_REPLY_CHUNK = 256  # a reply fits; so small a read costs less to allocate than a whole chunk
# After a read that found no reply yet, the next decisions wait (poll) before reading first
# again: twice as many as after the last such read, up to this many; each read that finds its
# reply halves them. A bot that shares the arena's CPU is then nearly always read at once, and
# one that answers from another CPU costs a vain read every this many decisions at most.
_EAGER_RETRY = 32
_monotonic = time.monotonic
_SHELL_CHARS = set("|&;<>()$`*?~\n")
_LOGGED_BLANKS = 10  # blank lines written to the conversation log per reply, the rest counted
# How long a bot's closed stdout waits for the news of its exit (it comes at once, but a sealed
# bot's news waits for bubblewrap's two processes to end too, on a machine that may be busy). The
# news says why it ended: a bot the kernel killed for its memory waited 1-5 ms for it here, and
# more than a second once in a CI run of the whole suite, where it was then recorded as a
# crash. Only a bot that closes its stdout and lives on waits this long, once.
_EXIT_NEWS_S = 3.0
_STDERR_DRAIN_S = 0.2  # and then for the last of its stderr
_SETTLE_S = 0.05  # at a match's end, how long its stderr may take to be read (a flood: the cap)

# Signals a bot may die of because of a limit, said in its failure.
_SIGNAL_NOTES = {
    int(signal.SIGKILL): "SIGKILL",
    int(signal.SIGXFSZ): "SIGXFSZ: it wrote a file over its file_size_mb limit",
    int(signal.SIGXCPU): "SIGXCPU: CPU time limit",
    int(signal.SIGSEGV): "SIGSEGV",
    int(signal.SIGABRT): "SIGABRT",
    int(signal.SIGTERM): "SIGTERM",
}


class BotSpecError(ArenaError, ValueError):
    """A bot's configuration is invalid (empty command, negative limit, unknown key...)."""


@dataclass(frozen=True)
class Limits:
    """Time and size limits for one bot. Times in milliseconds; ``move_ms`` and ``bank_ms``
    on ``clock`` (``protocol.Clock``: the bot's CPU time, or the wall clock)."""

    startup_ms: int = 10000
    move_ms: int = 2000
    bank_ms: int = 0
    grace_ms: int = 200
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    stderr_bytes: int = 1_000_000
    kill_grace_ms: int = 200
    clock: Clock = Clock.WALL

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "clock":
                if not isinstance(value, Clock):
                    try:
                        object.__setattr__(self, "clock", Clock(value))
                    except ValueError:
                        raise BotSpecError(f"clock: expected cpu or wall, got {value!r}") from None
            elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise BotSpecError(f"{f.name}: expected an integer >= 0, got {value!r}")
        if self.max_line_bytes < 256:
            raise BotSpecError(f"max_line_bytes: expected at least 256, got {self.max_line_bytes}")

    @property
    def time(self) -> TimeLimits:
        return TimeLimits(self.startup_ms, self.move_ms, self.bank_ms, self.grace_ms, self.clock)

    def to_dict(self) -> dict[str, Any]:
        """For a record: the wall clock is left out, as records made before the cpu clock
        were all on it (and read back so)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "clock"}
        if self.clock is not Clock.WALL:
            out["clock"] = self.clock.value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Limits:
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BotSpecError(f"unknown limit {unknown[0]!r} (allowed: {', '.join(sorted(known))})")
        return cls(**{k: v for k, v in data.items() if v is not None})


# A bot's command may name the interpreter running the arena, so a tournament file (or a command
# line) works the same inside any virtualenv.
PYTHON_PLACEHOLDER = "$PYTHON"


# As a word, as a shell reads a variable's name: $PYTHONPATH is another variable, the shell's.
_PYTHON_WORD = re.compile(r"\$(?:PYTHON(?![A-Za-z0-9_])|\{PYTHON\})")


def expand_python(cmd: str | tuple[str, ...], python: str) -> str | tuple[str, ...]:
    """Replace $PYTHON (or ${PYTHON}) by the interpreter running the arena (quoted for a command
    string)."""
    if isinstance(cmd, str):
        quoted = shlex.quote(python)
        return _PYTHON_WORD.sub(lambda _: quoted, cmd)
    return tuple(_PYTHON_WORD.sub(lambda _: python, part) for part in cmd)


def split_command(cmd: str | Sequence[str]) -> tuple[str, ...]:
    """The argv to execute. A string with shell syntax runs under ``/bin/sh -c``; a plain one
    is split like a shell would (``~/bot``: the arena user's home), so ``"./bot --fast"`` execs
    the bot itself (no shell between the arena and the bot)."""
    if isinstance(cmd, str):
        if not cmd.strip():
            raise BotSpecError("empty bot command")
        shell = _SHELL_CHARS & set(cmd)
        if shell and shell != {"~"}:
            return ("/bin/sh", "-c", cmd)
        try:
            words = shlex.split(cmd)
        except ValueError as exc:
            raise BotSpecError(f"cannot split bot command {cmd!r}: {exc}") from None
        # A word's leading ~ is the home of the user running the arena, as their shell reads it:
        # a sealed bot's own HOME is a private /tmp, where ~/mybot/mybot is not.
        return tuple(os.path.expanduser(word) if word.startswith("~") else word for word in words)
    argv = tuple(str(part) for part in cmd)
    if not argv or not argv[0]:
        raise BotSpecError("empty bot command")
    return argv


# Arguments with these endings name a program file for an interpreter (python3 bot.py, ...).
_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".pl", ".rb", ".java", ".jar", ".lua", ".tcl", ".php", ".sh")


def search_path(env: Mapping[str, str]) -> str:
    """Where a command's program is looked for: the PATH of the environment it runs in."""
    return env.get("PATH", os.environ.get("PATH", os.defpath))


def missing_program(cmd: str | tuple[str, ...], cwd: str, env: dict[str, str]) -> str | None:
    """Why ``cmd`` cannot start from ``cwd`` (its program, or the script it names, is not
    there), or None. A shell command line is left to the shell."""
    argv = split_command(cmd)
    if argv[:2] == ("/bin/sh", "-c"):
        return None
    program = argv[0]
    if os.sep in program:
        path = os.path.join(cwd, os.path.expanduser(program))
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"expected a command that exists, but {path} is not an executable file"
    elif shutil.which(program, path=search_path(env)) is None:
        return f"expected a command that exists, but {program!r} is not on the PATH"
    for arg in argv[1:]:
        if arg.endswith(_SOURCE_SUFFIXES) and not arg.startswith("-"):
            path = os.path.join(cwd, os.path.expanduser(arg))
            if not os.path.exists(path):
                return f"expected the bot's program file to exist, but {path} does not"
    return None


# The shells a command runs through (split_command's /bin/sh -c, or one the command names).
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "busybox"})
# What a shell says of a program (or the folder to run it in) it cannot find, before anything
# of the bot ran:
# dash "/bin/sh: 1: prog: not found" (and "sh: 1: exec: prog: not found"), bash "bash: line 1:
# prog: command not found" or "...: ./prog: No such file or directory", zsh "zsh:1: command not
# found: prog".
_SHELL_NOT_FOUND = (
    re.compile(r"(?P<shell>[^\s:]+)(?::(?: line)? ?\d+)?: (?:exec: )?(?P<prog>[^:]+): "
               r"(?:command not found|not found|No such file or directory)"),
    re.compile(r"(?P<shell>[^\s:]+):\d+: (?:command not found|no such file or directory): (?P<prog>.+)"),
)
# The folder a command changes to first (cd sub && ./bot): dash "can't cd to sub", bash "cd: sub: No such ...".
_SHELL_CANNOT_CD = re.compile(r"(?P<shell>[^\s:]+)(?::(?: line)? ?\d+)?: cd: (?:can't cd to (?P<prog>.+)|"
                              r"(?P<folder>[^:]+): No such file or directory)")


class _Named(Enum):
    """What a command names: a program it runs, a folder it changes to, or a script it gives an
    interpreter (python's, node's, java's jar or source file), each read in its own words
    (``_NO_SCRIPT``) and found missing in its own way (``_missing``)."""

    PROGRAM = "program"
    FOLDER = "folder"
    PYTHON = "python"
    NODE = "node"
    JAR = "jar"
    JAVA = "java"


# An interpreter's words for the script it is given and cannot find (python3 missing.py | tee log),
# by its full path (python, node) or as given (java): "/usr/bin/python3: can't open file
# '/home/me/bot/missing.py': [Errno 2] ...", node's "Error: Cannot find module '/home/me/bot/missing.js'",
# java's "Error: Unable to access jarfile missing.jar" and, for a source file it is given (java
# Bot.java; missing, java takes the word for a class), "Error: Could not find or load main class
# Bot.java". Java's words for a class name (java -cp classes Bot) are not read: the class is
# looked for along a class path (folders, jars, CLASSPATH), and one there that fails to load (a
# wrong package) gets the same words, so the arena cannot check the claim as a file's.
_NO_SCRIPT = {
    _Named.PYTHON: re.compile(r"\S*python[^\s:]*: can't open file '(?P<prog>[^']+)': \[Errno 2\] No such file or directory"),
    _Named.NODE: re.compile(r"Error: Cannot find module '(?P<prog>[^']+)'"),
    _Named.JAR: re.compile(r"Error: Unable to access jarfile (?P<prog>.+)"),
    _Named.JAVA: re.compile(r"Error: Could not find or load main class (?P<prog>\S+\.java)"),
}
# The interpreters whose script is read, by their program's name (python3.11 is a python): the
# options after which no script file follows (a module, a line of code), and those that take a value.
_INTERPRETERS = {
    _Named.PYTHON: (frozenset({"-m", "-c"}), frozenset({"-W", "-X"})),
    _Named.NODE: (frozenset({"-e", "--eval", "-p", "--print", "-"}), frozenset({"-r", "--require", "--import", "--loader"})),
    _Named.JAVA: (frozenset({"-m", "--module", "-version", "--version"}),
                  frozenset({"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules", "--source"})),
}
_INTERPRETER_NAMES = {"node": _Named.NODE, "nodejs": _Named.NODE, "java": _Named.JAVA}  # nodejs: Debian's old name
# What node adds to a script's name it cannot find as it is (node bot loads bot.js).
_NODE_ENDINGS = (".js", ".json", ".node")


@dataclass(frozen=True)
class StartFailure:
    """A bot command that cannot start, found as it ran: its shell could not find the program
    or folder, or its interpreter the script (``missing_program`` finds the others before
    anything runs). ``command`` as the bot's spec runs it (the shell's line itself, for one run
    through ``/bin/sh -c``), ``message`` the shell's or the interpreter's line."""

    command: str
    message: str


class CommandCannotStartError(ArenaError):
    """A bot's command cannot start: a problem of the file or command line that gives it, not
    of the bot (whose failures are recorded), so the run, match or check stops here."""

    def __init__(self, bot: str, failure: StartFailure) -> None:
        super().__init__(f"bot {bot!r}: its command {failure.command!r} cannot start: {failure.message}")
        self.bot = bot
        self.failure = failure


def command_text(argv: Sequence[str]) -> str:
    """A bot's argv as its user wrote it: the shell line of ``/bin/sh -c LINE``, else the words."""
    return argv[2] if tuple(argv[:2]) == ("/bin/sh", "-c") and len(argv) > 2 else shlex.join(argv)


def start_failure(argv: Sequence[str], stderr: str, cwd: str | None = None,
                  path: str | None = None) -> StartFailure | None:
    """The ``StartFailure`` of a command (``argv`` as ``split_command`` gives it) whose stderr
    holds its shell's "not found" for a program the command runs, or a folder it changes to, or
    its interpreter's (python, node, java) for the script the command gives it, that is indeed
    missing from ``cwd`` and the ``path`` it searches; None otherwise. A program that started
    and then failed is the bot's failure, as a script that misses a program of its own is (its
    line begins with the script's name, not a shell's).

    Why each check: the line is only the bot's stderr, which the bot writes. A bot that prints a
    shell's "not found" and exits could pass for a command that cannot start, and stop the run
    (CommandCannotStartError); it may only name what the command runs, and only what the arena
    finds missing, so the claim is true whoever made it."""
    if not argv:
        return None
    text = command_text(argv)
    runs = _commands_run(list(argv))
    shell = len(argv) > 1 and os.path.basename(argv[0]) in _SHELLS
    here = cwd or os.getcwd()
    # A script given to an interpreter, by the path its interpreter names it (from the cwd).
    scripts = {(kind, os.path.realpath(os.path.join(here, os.path.expanduser(word)))): word
               for kind, word in runs if kind in _NO_SCRIPT}
    for line in stderr.splitlines():
        line = line.strip()
        for pattern in (*_SHELL_NOT_FOUND, _SHELL_CANNOT_CD) if shell else ():
            found = pattern.fullmatch(line)
            if found is None or os.path.basename(found["shell"]) not in _SHELLS:
                continue
            kind = _Named.FOLDER if pattern is _SHELL_CANNOT_CD else _Named.PROGRAM
            named = (found["prog"] or found.groupdict().get("folder") or "").strip()
            if (kind, named) in runs and _missing(named, kind, cwd, path):
                return StartFailure(text, line)
        for kind, pattern in _NO_SCRIPT.items():
            found = pattern.fullmatch(line)
            word = scripts.get((kind, os.path.realpath(os.path.join(here, found["prog"])))) if found else None
            if word is not None and _missing(word, kind, cwd, path):
                return StartFailure(text, line)
    return None


def _missing(named: str, kind: _Named, cwd: str | None, path: str | None) -> bool:
    """Whether a program, folder or script a command names is missing where it is looked for."""
    where = os.path.join(cwd or os.getcwd(), os.path.expanduser(named))
    if kind is _Named.FOLDER:
        return not os.path.isdir(where)
    if kind in _NO_SCRIPT:  # from the cwd, never the PATH; node's is there under an ending it adds too
        endings = ("", *_NODE_ENDINGS) if kind is _Named.NODE else ("",)
        return not any(os.path.exists(where + ending) for ending in endings)
    if os.sep in named:
        return not os.path.exists(where)
    return shutil.which(named, path=path if path is not None else search_path({})) is None


# What separates one command of a shell line from the next: the next word is a program.
_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", "(", ")", "|&", ";;", "!", "{", "}"})
# Words that run the word after them: exec, command and the like.
_RUNS_NEXT = frozenset({"exec", "command", "nohup", "time"})


def _commands_run(argv: list[str], depth: int = 3) -> set[tuple[_Named, str]]:
    """What a shell command names: the first word of each command in its line (``a | b``:
    ``a``, ``b``; ``exec a``: ``a``; ``X=1 a``: ``a``), the folder a ``cd`` changes to, the
    script an interpreter is given (``python3 -u bot.py``, ``node bot.js``, ``java -jar
    bot.jar``, ``java Bot.java``; not a java class name), and the same in the line a shell word
    runs (``bash -c 'cd sub && ./bot'``), a few levels down. A command run without a shell is one command of its own."""
    runs: set[tuple[_Named, str]] = set()
    first, after_cd, line_next, shell, value_next = True, False, False, False, False
    interpreter: _Named | None = None
    jar_next = False
    for word in argv:
        if line_next:
            line_next = False
            if depth > 1:
                runs |= _commands_run(_line_words(word), depth - 1)
            continue
        if word in _SHELL_OPERATORS:
            first, after_cd, interpreter, value_next, jar_next = True, False, None, False, False
            continue
        if first:
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word) or word in _RUNS_NEXT:
                continue
            runs.add((_Named.PROGRAM, word))
            first, after_cd = False, word == "cd"
            name = os.path.basename(word)
            shell = name in _SHELLS
            interpreter = _Named.PYTHON if name.startswith("python") else _INTERPRETER_NAMES.get(name)
            continue
        if after_cd and not word.startswith("-"):
            runs.add((_Named.FOLDER, word))
            after_cd = False
        elif word == "-c" and shell:
            line_next = True
        elif interpreter is not None:
            ends, take_value = _INTERPRETERS[interpreter]
            if value_next:
                value_next = False
            elif word in ends:  # a module or a line, not a script file
                interpreter = None
            elif word in take_value:
                value_next = True
            elif word == "-jar" and interpreter is _Named.JAVA:
                jar_next = True
            elif not word.startswith("-"):
                kind = _Named.JAR if jar_next else interpreter
                if kind is not _Named.JAVA or word.endswith(".java"):  # java's class names are not read
                    runs.add((kind, word))
                interpreter = None
    return runs


def _line_words(text: str) -> list[str]:
    """The words of a shell line, its operators apart (``a|b`` -> ``a``, ``|``, ``b``)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the shell said so itself
        return text.split()


# What a bot's environment takes of the arena's (docs/PROTOCOL.md, "Your environment is not the
# user's"): what a program needs to find its tools and its language's runtime, and the user's
# locale, never the rest (tokens, keys, credentials): a bot may say what it reads, in its notes,
# which go into the records and the report, or on its stderr.
PASSED_ENV = frozenset({"PATH", "TMPDIR", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "LD_LIBRARY_PATH",
                        "JAVA_HOME", "NODE_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "GOROOT", "GOPATH"})
PASSED_ENV_PREFIXES = ("LC_", "PYTHON")


def bot_environment(arena_env: Mapping[str, str], pass_env: Sequence[str] = ()) -> dict[str, str]:
    """The part of ``arena_env`` a bot is given: ``PASSED_ENV``, the ``LC_`` and ``PYTHON``
    variables, and the names in ``pass_env`` (a bot's ``pass_env:``)."""
    extra = set(pass_env)
    return {name: value for name, value in arena_env.items()
            if name in PASSED_ENV or name in extra or name.startswith(PASSED_ENV_PREFIXES)}


@dataclass(frozen=True)
class BotSpec:
    """How to start a bot: a plain, picklable value the tournament code can pass around.

    ``cmd`` is an argv tuple or a command string (see ``split_command``); ``env`` adds to the
    part of the arena's environment a bot is given (``bot_environment``, with the names in
    ``pass_env``), or with ``inherit_env=False`` is all of it. ``limits`` are the time
    and line limits (recorded in every game record); ``resources`` what its processes may use;
    ``hidden`` the paths it may not read, the arena's choice (a tournament's secrets, see
    ``arena.harness.sandbox``), not the bot's; ``readable`` the folders a sealed bot may read
    besides its own (those of the files its ``inputs:`` name outside its folder).
    """

    name: str
    cmd: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    inherit_env: bool = True
    limits: Limits = field(default_factory=Limits)
    resources: ResourceLimits = field(default_factory=ResourceLimits)
    hidden: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmd", split_command(self.cmd))
        object.__setattr__(self, "pass_env", tuple(self.pass_env))
        object.__setattr__(self, "readable", tuple(self.readable))
        env = self.env.items() if isinstance(self.env, Mapping) else self.env
        object.__setattr__(self, "env", tuple(sorted((str(k), str(v)) for k, v in env)))
        if not self.name:
            raise BotSpecError("a bot needs a name")

    @classmethod
    def from_command(cls, cmd: str | Sequence[str], name: str | None = None, **kwargs: Any) -> BotSpec:
        argv = split_command(cmd)
        if name is None:
            word = argv[-1].split()[0] if argv[:2] == ("/bin/sh", "-c") else argv[0]
            # "python3 bots/x.py" is better named after the script than the interpreter.
            if os.path.basename(word).startswith(("python", "perl", "node", "ruby")) and len(argv) > 1:
                word = argv[1]
            name = os.path.basename(word) or word
        return cls(name=name, cmd=argv, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "cmd": list(self.cmd), "cwd": self.cwd, "env": dict(self.env),
                "inherit_env": self.inherit_env, "limits": self.limits.to_dict(),
                "resources": self.resources.to_dict(), "hidden": list(self.hidden), "pass_env": list(self.pass_env)}


class ConversationLog:
    """Every line exchanged with bots: time, direction (``>>`` to the bot, ``<<`` from it),
    seat and pid. Long lines are cut so the log stays readable and bounded."""

    def __init__(self, sink: IO[str], max_chars: int = 2000) -> None:
        self._sink = sink
        self._max = max_chars
        self._t0 = time.monotonic()

    def write(self, direction: str, seat: int | None, pid: int | None, data: bytes | str) -> None:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        # One protocol line may hold any control character: only newlines split it.
        for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
            if len(line) > self._max:
                line = f"{line[:self._max]}... [{len(line)} chars]"
            seat_text = "-" if seat is None else str(seat)
            self._sink.write(f"{time.monotonic() - self._t0:10.4f} seat {seat_text} pid {pid} {direction} {line}\n")

    def note(self, seat: int | None, pid: int | None, text: str) -> None:
        self.write("##", seat, pid, text)


# --- stderr -----------------------------------------------------------------------------------


def _open_log(path: Path | None) -> int:
    """The stderr log opened for appending, never written through a link (a symbolic or hard
    link planted at its name is replaced; a linked logs folder is refused); -1 if it cannot
    be opened, and the bot's stderr is then read and dropped."""
    if path is None:
        return -1
    try:
        with open_log(path) as log:
            return os.dup(log.fileno())
    except (OSError, ArenaError):
        return -1


# What a match's record keeps of each seat's stderr (docs/TOURNAMENTS.md, "Logs per match").
MATCH_STDERR_BYTES = 16_384


class _StderrPump(threading.Thread):
    """Drains a bot's stderr into its log, keeping a short tail in memory for reports.

    The log is capped at ``cap`` bytes counting what the file already holds: every process of
    the bot (restarts, other workers of the tournament) appends to the same file, and once it
    is full the bytes are read and dropped. What it reads is also kept for the match in play
    (``take_match``), with the time it was read: at most ``MATCH_STDERR_BYTES`` a match and
    ``kept_room`` in all, the rest counted."""

    def __init__(self, fd: int, path: Path | None, cap: int, kept_room: int) -> None:
        super().__init__(daemon=True, name=f"stderr-{fd}")
        self._fd = fd
        self._path = path
        self._cap = cap
        self._halt = threading.Event()
        self.written = 0
        self.dropped = 0
        self.tail = b""
        self._lock = threading.Lock()  # the match's chunks are taken by the referee's thread
        self._match: list[tuple[float, bytes]] = []
        self._match_room = MATCH_STDERR_BYTES
        self._match_dropped = 0
        self._kept_room = kept_room
        self.waiting = False  # True while it waits for more: all it has read is kept

    def run(self) -> None:
        sink = _open_log(self._path)
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            while not self._halt.is_set():
                self.waiting = True
                if not poller.poll(200):
                    continue
                self.waiting = False
                try:
                    chunk = os.read(self._fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self.tail = (self.tail + chunk)[-2048:]
                self._keep(chunk)
                self._store(sink, chunk)
        finally:
            if sink >= 0:
                os.close(sink)

    def _keep(self, chunk: bytes) -> None:
        now = _monotonic()
        with self._lock:
            room = min(self._match_room, self._kept_room)
            kept = chunk[:room] if room > 0 else b""
            if kept:
                self._match.append((now, kept))
                self._match_room -= len(kept)
                self._kept_room -= len(kept)
            self._match_dropped += len(chunk) - len(kept)

    def settle(self, within_s: float = _SETTLE_S) -> None:
        """Wait, at most ``within_s``, until it has kept everything in the pipe now: a bot's
        last lines of a match then go with it even when this thread is slow to run."""
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        deadline = _monotonic() + within_s
        # The pipe is looked at before the thread: once the pipe is empty, what the thread read
        # from it is kept by the time it waits again.
        while (poller.poll(0) or not self.waiting) and self.is_alive() and _monotonic() < deadline:
            time.sleep(0.001)

    def take_match(self) -> tuple[list[tuple[float, bytes]], int]:
        """What was kept since the last call, as (monotonic time read, bytes), and how many
        bytes were dropped; the next match starts with its whole room."""
        with self._lock:
            taken, dropped = self._match, self._match_dropped
            self._match, self._match_dropped, self._match_room = [], 0, MATCH_STDERR_BYTES
        return taken, dropped

    def _store(self, sink: int, chunk: bytes) -> None:
        if sink < 0:
            self.dropped += len(chunk)
            return
        try:
            size = os.fstat(sink).st_size
        except OSError:
            size = self._cap + 1
        room = self._cap - size
        try:
            if room > 0:
                os.write(sink, chunk[:room])
                self.written += min(room, len(chunk))
            if len(chunk) > room:
                self.dropped += len(chunk) - max(room, 0)
                if room >= 0:  # this write reached the cap: say so once (the file is then past it)
                    os.write(sink, f"\n[arena: stderr cut at {self._cap} bytes for this bot; what follows is dropped]\n"
                             .encode())
        except OSError:  # disk full, say: the bot must not notice
            self.dropped += len(chunk)

    def stop(self) -> None:
        self._halt.set()


# --- the bot process --------------------------------------------------------------------------

# Live bots, so that an arena exiting normally (even on an exception, or after dropping a
# BotProcess without closing it) leaves no process behind. Strong references on purpose.
_LIVE: set[BotProcess] = set()


def _at_exit() -> None:
    for bot in list(_LIVE):
        bot.kill()
    containment.shutdown()


atexit.register(_at_exit)


class BotProcess:
    """One running bot, reusable across matches and restarted after it dies.

    The referee drives it: ``send_hello`` and ``await_ready`` (or ``begin_match``) for the
    handshake, ``queue`` for events, ``decide`` for each move, ``flush`` at the end. Lines queued
    for the bot go out with the next write, so a decision costs one
    write and one read. ``usage()`` says what its process tree used since the match began.
    Use it as a context manager, or call ``close()``; either way every process of the bot is
    gone afterwards.
    """

    def __init__(
        self,
        spec: BotSpec,
        *,
        stderr_dir: str | Path | None = None,
        log: ConversationLog | None = None,
        cpus: Sequence[int] | None = None,
        launcher: LauncherClient | None = None,
    ) -> None:
        """``cpus``: pin the bot (and what it starts) to these CPUs. Pinning the arena and the
        bots of a match to one CPU makes each hand-over a local context switch instead of a
        cross-CPU wake-up, about twice as fast per decision on small VMs; but a bot then
        cannot use more than those CPUs. Off by default (a tournament's workers hold
        themselves, and so every bot they start, to shares of the cores instead:
        ``arena.tournament.executors.core_shares``). ``launcher``: the launcher to start it
        with (default: this process's)."""
        self.spec = spec
        self.cpus = frozenset(cpus) if cpus else None
        self.limits = spec.limits
        self.log = log
        self.seat: int | None = None
        self.ready_name: str | None = None
        # Set when the last handshake failed because the command cannot start (its shell could
        # not find the program, or its interpreter the script): the caller's to stop on, not the
        # bot's failure (StartFailure).
        self.cannot_start: StartFailure | None = None
        self._search_path: str | None = None  # the PATH of its environment, set as it starts
        self.starts = 0
        self.matches = 0  # matches begun on the current process
        self._stderr_dir = Path(stderr_dir) if stderr_dir is not None else None
        self._launcher = launcher
        self._child: Child | None = None
        self._in_fd = -1
        self._err_fd = -1
        self._reader: LineReader | None = None  # its stdout, while its pipes are open
        self._write_poll: select.poll | None = None
        self._pump: _StderrPump | None = None
        self._pending: list[bytes] = []
        # Lines for the bot, sent with the next write (events need no reply): the pending
        # list's own append, so that queueing an event costs no Python call. The list is
        # emptied in place, never replaced.
        self.queue: Callable[[bytes], None] = self._pending.append
        self._next_id = 1
        self.last_request_id = 0
        self.last_info: Info | None = None  # the notes of the reply ``decide`` last returned
        self._abandoned: set[int] = set()
        # Read the reply without a wait first: right for a bot that answers while the request is
        # being written (on the arena's CPU, the write wakes it and it runs first). A read that
        # finds nothing costs twice a wait, so after one the next decisions wait (_EAGER_RETRY).
        self._eager = True
        self._eager_in = 0
        self._eager_gap = 1
        self._hello_deadline = 0.0
        # On the cpu clock: its tree's CPU seconds now (``Child.cpu_seconds``), read at each
        # request and reply; None on the wall clock.
        self._cpu_clock: Callable[[], float | None] | None = None
        # How many CPUs it may use at once: the wall time in which it can spend its CPU budget.
        self._cpu_width = max(1, min(spec.resources.cpus or os.cpu_count() or 1, len(self.cpus or ()) or 1 << 20))
        self._dead_reason: str | None = None
        self._killed = False
        self.exited_on_goodbye = False
        self._stderr_kept = 0  # what its matches' records hold of its stderr, all its processes together

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def resources(self) -> ResourceLimits:
        return self.spec.resources

    @property
    def process(self) -> BotProcess:
        """Itself: the referee's ``Player.process``, what it starts and measures with the
        match's other processes."""
        return self

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    @property
    def alive(self) -> bool:
        return self._child is not None and self._dead_reason is None and self._child.running

    @property
    def stderr_path(self) -> Path | None:
        if self._stderr_dir is None:
            return None
        return self._stderr_dir / f"{_safe(self.spec.name)}.stderr.log"

    @property
    def stderr_tail(self) -> str:
        return self._pump.tail.decode("utf-8", "replace") if self._pump is not None else ""

    def start(self) -> None:
        """Spawn the bot. Raises ``BotFailure(NO_HANDSHAKE)`` if it cannot be started."""
        if self._child is not None:
            self.kill()
        spec = self.spec
        env = bot_environment(os.environ, spec.pass_env) if spec.inherit_env else {}
        env.update(spec.env)
        self._search_path = search_path(env)  # where its shell looks for programs (_failed_to_start)
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        cannot = f"cannot start {list(spec.cmd)!r}"
        pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr; (read end, write end)
        theirs = (pipes[0][0], pipes[1][1], pipes[2][1])
        ours = (pipes[0][1], pipes[1][0], pipes[2][0])
        try:
            launcher = self._launcher if self._launcher is not None else containment.launcher()
            child = launcher.spawn(spec.cmd, env, spec.cwd, spec.resources, theirs, cpus=sorted(self.cpus or ()),
                                   hidden=spec.hidden, readable=spec.readable)
        except (SpawnError, LauncherError) as exc:
            for fd in ours:
                os.close(fd)
            self._child = None
            raise BotFailure(Termination.NO_HANDSHAKE, f"{cannot}: {exc}") from None
        finally:
            for fd in theirs:
                os.close(fd)
        self._child = child
        self._cpu_clock = child.cpu_seconds if self.limits.clock is Clock.CPU else None
        self._killed = False
        self.cannot_start = None
        self.starts += 1
        self.matches = 0
        self._dead_reason = None
        self._pending.clear()
        self._abandoned = set()
        self._in_fd, out_fd, self._err_fd = ours
        os.set_blocking(self._in_fd, False)
        os.set_blocking(out_fd, False)
        self._reader = LineReader(out_fd, self.limits.max_line_bytes, self._gone)
        self._write_poll = select.poll()
        self._write_poll.register(self._in_fd, select.POLLOUT)
        self._pump = _StderrPump(self._err_fd, self.stderr_path, self.limits.stderr_bytes,
                                 self.limits.stderr_bytes - self._stderr_kept)
        self._pump.start()
        _LIVE.add(self)
        if self.log is not None:
            self.log.note(self.seat, child.pid, f"started {spec.name}: {list(spec.cmd)!r}")

    def ensure_started(self) -> None:
        if not self.alive:
            self.start()

    def kill(self) -> None:
        """End the bot and every process it started: SIGTERM to all of them, a short grace,
        then SIGKILL until none is left (the launcher does it, cgroup and all). Idempotent;
        never raises for anything the bot did."""
        child = self._child
        if child is None or self._killed:
            return
        if self._dead_reason is None:
            # A line it was refused for is why it is gone, said in what it is asked next.
            self._dead_reason = (self._reader.refused if self._reader is not None else None) or "killed"
        child.launcher.kill(child, self.limits.kill_grace_ms / 1000)
        child.release()  # what it used is in its exit report now; a closed bot keeps no files
        self._close_pipes()
        self._killed = True
        _LIVE.discard(self)

    def close(self) -> None:
        """Say goodbye, give the bot its grace to exit, then make sure everything is gone."""
        child = self._child
        if child is None or self._killed:
            return
        self.exited_on_goodbye = False
        if self.alive:
            try:
                self._write(b"".join(self._pending) + GOODBYE_LINE, time.monotonic() + self.limits.grace_ms / 1000)
            except BotFailure:
                pass
            self._pending.clear()
            self.exited_on_goodbye = child.wait(max(self.limits.grace_ms, 100) / 1000) is not None
        self.kill()

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _close_pipes(self) -> None:
        if self._pump is not None:
            self._pump.stop()
            self._pump.join(timeout=1.0)
        for fd in (self._in_fd, self._err_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._in_fd = self._err_fd = -1
        self._write_poll = None

    # -- what it used ------------------------------------------------------------------------

    def usage(self) -> Usage:
        """CPU time (user + system, whole process tree, exited processes included) and peak
        memory since the last reset: the start of the current match (``send_hello``). For a
        bot killed during the match, what it had used until then."""
        child = self._child
        if child is None:
            return Usage()
        return child.launcher.usage(child)

    def reset_usage(self) -> None:
        """Count CPU time and peak memory from now on (``send_hello`` does it)."""
        child = self._child
        if child is not None and child.running:
            child.launcher.reset(child)

    def match_stderr(self, t0: float) -> tuple[list[tuple[float, str]], int]:
        """The lines it wrote on stderr since its match began (``send_hello``), each with its
        time in milliseconds since ``t0`` (a ``time.monotonic()``), and the bytes dropped past
        the caps. A line is timed by the read that ended it; an unfinished one ends the list."""
        if self._pump is None:
            return [], 0
        self._pump.settle()
        chunks, dropped = self._pump.take_match()
        self._stderr_kept += sum(len(chunk) for _, chunk in chunks)
        lines: list[tuple[float, str]] = []
        partial = b""
        for when, chunk in chunks:
            *done, partial = (partial + chunk).split(b"\n")
            t_ms = max(0.0, int((when - t0) * 1e6) / 1000)
            lines.extend((t_ms, line.decode("utf-8", "replace")) for line in done)
        if partial:
            lines.append((max(0.0, int((chunks[-1][0] - t0) * 1e6) / 1000), partial.decode("utf-8", "replace")))
        return lines, dropped

    def _gone(self, when: str) -> BotFailure:
        """The failure for a bot whose output ended: how it ended and its last stderr words."""
        child = self._child
        ended = child.wait(_EXIT_NEWS_S) if child is not None else None
        # Killed for its memory, as the launcher's news says, or, where that news is late, as
        # its memory group says.
        memory = None
        if ended is not None and ended.reason == "memory":
            memory = ended.detail
        elif ended is None and child is not None and child.killed_for_memory():
            memory = oom_detail(self.resources.memory_mb)
        if memory is not None:
            self._dead_reason = "over its memory limit"
            return BotFailure(Termination.MEMORY, f"bot killed: {memory}")
        if ended is None:
            what = "closed its stdout"
        elif ended.status is None:
            what = f"was lost ({ended.detail})"
        elif ended.status < 0:
            note = _SIGNAL_NOTES.get(-ended.status)
            what = f"was killed by signal {-ended.status}" + (f" ({note})" if note else "")
        else:
            what = f"exited with code {ended.status}"
        self._dead_reason = what
        if ended is not None and self._pump is not None:
            # Its last words may still be in the pipe: the pump stops at the end of its stderr,
            # which comes with its exit unless a process it started still holds it.
            self._pump.join(_STDERR_DRAIN_S)
        tail = self.stderr_tail.strip().splitlines()[-3:]
        detail = " ".join(filter(None, ("bot", what, when))) + (f"; stderr ends: {' | '.join(tail)[-300:]}" if tail else "")
        return BotFailure(Termination.CRASH, detail)

    # -- lines -----------------------------------------------------------------------------

    def _write(self, data: bytes, deadline: float) -> None:
        child = self._child
        if self._dead_reason is not None or child is None or self._write_poll is None:
            raise BotFailure(Termination.CRASH, f"bot is gone ({self._dead_reason or 'not started'})")
        if child.exit is not None:
            # Its launcher said it ended, or was lost (its bots die with it): it is over even if
            # it still answers (its pipes may outlive it in an escaped child, its death signal
            # may not have landed yet), so no more requests.
            raise self._gone("")
        if self.log is not None:
            self.log.write(">>", self.seat, child.pid, data)
        self._send(data, 0, deadline)

    def _send(self, data: bytes, sent: int, deadline: float) -> None:
        """Write ``data[sent:]`` to the bot's stdin by ``deadline`` (``_write`` once it has
        checked the bot may be written to)."""
        view = memoryview(data)[sent:]
        while view:
            try:
                view = view[os.write(self._in_fd, view):]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                raise self._gone("(its stdin is closed)") from None
            # The pipe is full: the bot is not reading. Wait for room, within the deadline.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BotFailure(Termination.TIMEOUT, "bot stopped reading its input (pipe full)")
            self._write_poll.poll(remaining * 1000.0 + 0.5)  # type: ignore[union-attr]  # set while the pipes are open

    def _read_line(self, deadline: float) -> bytes:
        """The next line from the bot (without its newline), by ``deadline``."""
        reader = self._reader
        if reader is None or (not reader.lines and self._dead_reason is not None):
            raise BotFailure(Termination.CRASH, f"bot is gone ({self._dead_reason})")
        return reader.line(deadline)

    def _next_reply(self, deadline: float) -> bytes:
        """The next line that is not blank, by ``deadline``. Blank lines (spaces, ``\\r``) are
        allowed between replies, but a bot that streams them still loses on its deadline."""
        line = self._read_line(deadline)
        if line.strip():  # the usual case: no blank line
            if self.log is not None:
                self.log.write("<<", self.seat, self.pid, line)
            return line
        blanks = 0
        while not line.strip():
            blanks += 1
            if self.log is not None and blanks <= _LOGGED_BLANKS:
                self.log.write("<<", self.seat, self.pid, line)
            if time.monotonic() > deadline:
                raise BotFailure(Termination.TIMEOUT, f"no reply before the deadline (after {blanks} blank lines)")
            line = self._read_line(deadline)
        if self.log is not None:
            if blanks > _LOGGED_BLANKS:
                self.log.note(self.seat, self.pid, f"{blanks - _LOGGED_BLANKS} more blank lines skipped")
            self.log.write("<<", self.seat, self.pid, line)
        return line

    # -- the protocol ----------------------------------------------------------------------

    def prepare(self) -> None:
        """Start (or restart) the bot if needed, for a match: what ``send_hello`` does first.
        Raises ``BotFailure(NO_HANDSHAKE)``."""
        if self._child is not None:
            self._child.launcher.check()  # a stuck launcher is replaced now, bots and all
        self.ensure_started()

    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None:
        """Start (or restart) the bot if needed and send the match start.

        ``hello`` is ``protocol.match_start(...)``; this picks ``hello`` (first match of the
        process) or ``new_match`` and the match number. Raises ``BotFailure(NO_HANDSHAKE)``.
        The bot's usage (``usage()``) counts from here; with ``reset=False`` from the caller's
        ``reset_usages``, which the referee does for all its bots at once after ``prepare``.
        """
        self.prepare()
        if reset:
            self.reset_usage()
        if self._pump is not None:
            self._pump.take_match()  # what it wrote between matches is no match's
        first = self.matches == 0
        self.matches += 1
        message = dict(hello, type="hello" if first else "new_match", match=self.matches)
        self._hello_deadline = time.monotonic() + (self.limits.startup_ms + self.limits.grace_ms) / 1000
        try:
            self._write(b"".join(self._pending) + encode(message), self._hello_deadline)
        except BotFailure as exc:
            self._failed_to_start()
            raise _handshake_failure(exc) from None
        finally:
            self._pending.clear()

    def await_ready(self) -> Ready:
        """Wait for ``ready`` (by the start-up deadline set by ``send_hello``)."""
        deadline = self._hello_deadline
        try:
            while True:
                line = self._next_reply(deadline)
                if self._abandoned and b'"move"' in line:
                    # A late answer to a request that timed out in the last match.
                    try:
                        if parse_move(line).id in self._abandoned:
                            if time.monotonic() > deadline:
                                raise BotFailure(Termination.TIMEOUT, "late replies until the deadline")
                            continue
                    except BotFailure as exc:
                        if exc.termination is Termination.TIMEOUT:
                            raise
                ready = parse_ready(line)
                break
        except BotFailure as exc:
            if exc.termination is Termination.TIMEOUT:
                limits = self.limits
                exc = BotFailure(exc.termination, f"no ready within {limits.startup_ms} ms (+{limits.grace_ms} ms grace)")
            self._failed_to_start()
            raise _handshake_failure(exc) from None
        self.ready_name = ready.name
        return ready

    def _failed_to_start(self) -> None:
        """After a failed handshake: stop the process, and note whether its command could not
        start (``cannot_start``): a process that ended before its first ``ready`` with its shell's
        "not found" or its interpreter's words for a missing script (``start_failure``)."""
        if self.matches <= 1 and self._dead_reason is not None:  # gone (its last words read: _gone)
            self.cannot_start = start_failure(self.spec.cmd, self.stderr_tail, self.spec.cwd, self._search_path)
        self.kill()

    def begin_match(self, hello: dict[str, Any]) -> Ready:
        """The whole handshake: ``send_hello`` then ``await_ready``."""
        self.send_hello(hello)
        return self.await_ready()

    def decide(
        self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int, idle: Callable[[], None] | None = None
    ) -> tuple[int, str, float]:
        """Send a request (after any queued lines) and wait for its reply; ``view`` is a dict
        or its JSON text. ``idle`` is called once the request is written, before waiting: the
        caller's bookkeeping then overlaps the bot's thinking.

        Returns (request id, move text, elapsed seconds: on the cpu clock, the CPU seconds its
        tree spent from the request to the reply); the reply's notes are ``last_info``. Only the reply's shape and id are
        checked here. A late reply to an abandoned (timed-out) request is skipped; any other
        id is ``wrong_id``. On timeout the request is abandoned.
        """
        request_id = self.last_request_id = self._next_id
        self._next_id = request_id + 1
        self.last_info = None
        time_ms = move_ms + bank_ms
        clock = self._cpu_clock
        data = request_line(request_id, time_ms, bank_ms, view, legal, self.limits.clock)
        pending = self._pending
        if pending:
            pending.append(data)
            data = b"".join(pending)
            pending.clear()
        read = clock() if clock is not None else None
        cpu0 = read or 0.0
        start = _monotonic()
        if read is None:
            clock = None  # the wall clock (or a tree already gone: the read below says how)
            deadline = start + (time_ms + self.limits.grace_ms) / 1000
        else:
            # The first look at its CPU time: when it could have spent all of it, at the
            # fastest. A reply before then costs one read more, and nothing else.
            deadline = start + (time_ms + self.limits.grace_ms) / 1000 / self._cpu_width
        try:
            reader = self._reader
            child = self._child
            if (reader is None or self.log is not None or reader.lines or reader.buf or self._dead_reason is not None
                    or child is None or child.exit is not None):
                # The general path: a log to write, lines already read, or a bot that may be
                # gone (``_write`` says how).
                self._write(data, deadline)
                if idle is not None:
                    idle()
            else:
                # The usual case, written and read here at once: a bot that is running, with
                # no log, and whose only output since the request is one line in the canonical
                # shape with this request's id and a legal move. Anything else (blank lines,
                # several lines, a late reply, a line in pieces, the end of its output) goes
                # through the general path below.
                try:
                    sent = os.write(self._in_fd, data)
                except OSError:  # ``_send`` tries again, and says what is wrong
                    sent = 0
                if sent != len(data):
                    self._send(data, sent, deadline)
                if idle is not None:
                    idle()
                chunk: bytes | None = None
                if self._eager:
                    try:
                        chunk = os.read(reader.fd, _REPLY_CHUNK)
                    except BlockingIOError:  # not there yet: wait for it
                        self._eager = False
                        self._eager_in = self._eager_gap = min(2 * self._eager_gap, _EAGER_RETRY)
                    except OSError:  # an error: the general path says which
                        chunk = b""
                    else:
                        if self._eager_gap > 1:
                            self._eager_gap >>= 1
                elif self._eager_in > 1:
                    self._eager_in -= 1
                else:
                    self._eager = True
                if chunk is None:
                    remaining = deadline - _monotonic()
                    if reader.poll.poll(remaining * 1000.0 + 0.5 if remaining > 0 else 0):
                        try:
                            chunk = os.read(reader.fd, _REPLY_CHUNK)
                        except OSError:  # nothing after all, or an error: the general path says which
                            chunk = b""
                if chunk:
                    move = quick_reply(chunk, request_id, legal)
                    if move is not None:
                        if clock is None:
                            return request_id, move, _monotonic() - start
                        return request_id, move, self._cpu_charge(clock, cpu0, request_id, time_ms)
                    reader.take(chunk, deadline)
            while True:
                reply: MoveReply = parse_move(self._next_reply(deadline))
                if reply.id == request_id:
                    self.last_info = reply.info
                    if clock is None:
                        return request_id, reply.move, _monotonic() - start
                    return request_id, reply.move, self._cpu_charge(clock, cpu0, request_id, time_ms)
                if reply.id in self._abandoned:
                    # The late answer to a request that timed out: harmless, unless the bot
                    # streams them to hold the arena past the deadline.
                    if _monotonic() > deadline:
                        raise BotFailure(Termination.TIMEOUT, "late replies until the deadline")
                    continue
                raise BotFailure(Termination.WRONG_ID, f"reply id {reply.id}, expected {request_id} (move {reply.move!r})")
        except ClockOut:
            raise
        except BotFailure as exc:
            if exc.termination is Termination.TIMEOUT:
                if clock is not None:
                    return self._overtime(clock, cpu0, request_id, time_ms, start)
                self._abandoned.add(request_id)
                raise BotFailure(
                    Termination.TIMEOUT, f"request {request_id}: no reply within {time_ms} ms (+{self.limits.grace_ms} ms grace)"
                ) from None
            if exc.termination.kills_bot:
                self.kill()
            raise

    def _cpu_charge(self, clock: Callable[[], float | None], cpu0: float, request_id: int, time_ms: int) -> float:
        """The CPU seconds a reply on the cpu clock cost; over its time (and grace), a timeout
        that says how much."""
        now = clock()
        used = 0.0 if now is None else max(0.0, now - cpu0)
        if used * 1000 > time_ms + self.limits.grace_ms:
            raise ClockOut(Termination.TIMEOUT, f"cpu {used * 1000:.0f} ms > {time_ms} ms (request {request_id})")
        return used

    def _overtime(self, clock: Callable[[], float | None], cpu0: float, request_id: int, time_ms: int,
                  start: float) -> tuple[int, str, float]:
        """The rest of a request on the cpu clock once the wall clock has passed the first look
        (``decide``): its CPU time is read each time it could have spent what it has left,
        until it replies, goes over, or reaches the wall-clock backstop (a bot that sleeps or
        blocks spends no CPU)."""
        grace = self.limits.grace_ms
        budget = (time_ms + grace) / 1000
        backstop_ms = wall_backstop_ms(time_ms) + grace
        backstop = start + backstop_ms / 1000
        try:
            while True:
                now_cpu = clock()
                used = 0.0 if now_cpu is None else max(0.0, now_cpu - cpu0)
                if used > budget:
                    raise ClockOut(Termination.TIMEOUT, f"cpu {used * 1000:.0f} ms > {time_ms} ms (request {request_id})")
                now = _monotonic()
                if now >= backstop:
                    raise ClockOut(Termination.TIMEOUT, f"wall backstop {backstop_ms / 1000:.1f} s (request {request_id}: "
                                                         f"cpu {used * 1000:.0f} ms of {time_ms} ms)")
                look = min(backstop, now + max((budget - used) / self._cpu_width, 0.002))
                try:
                    while _monotonic() <= look:
                        reply = parse_move(self._next_reply(look))
                        if reply.id == request_id:
                            self.last_info = reply.info
                            return request_id, reply.move, self._cpu_charge(clock, cpu0, request_id, time_ms)
                        if reply.id not in self._abandoned:
                            raise BotFailure(Termination.WRONG_ID,
                                             f"reply id {reply.id}, expected {request_id} (move {reply.move!r})")
                except ClockOut:
                    raise
                except BotFailure as exc:
                    if exc.termination is not Termination.TIMEOUT:
                        raise
        except BotFailure as exc:
            if exc.termination is Termination.TIMEOUT:
                self._abandoned.add(request_id)
            elif exc.termination.kills_bot:
                self.kill()
            raise

    def abandon(self, view: Any, legal: Sequence[str], move: str) -> int:
        """Send a request and give it up at once, telling the bot which move was played for it
        (what the arena does after a timeout under the substitute policy). For conformance
        checks: a correct bot carries on, and its reply to this id, if any, is ignored."""
        request_id = self._next_id
        self._next_id += 1
        self.last_request_id = request_id
        self._abandoned.add(request_id)
        data = (b"".join(self._pending) + request_line(request_id, 0, 0, view, legal, self.limits.clock)
                + timeout_line(request_id, move))
        self._pending.clear()
        self._write(data, time.monotonic() + (self.limits.move_ms + self.limits.grace_ms) / 1000)
        return request_id

    def flush(self) -> None:
        """Send queued lines now (match_over); a bot that is gone or stuck just misses them."""
        if self._pending and self.alive:
            data = b"".join(self._pending)
            self._pending.clear()
            try:
                self._write(data, time.monotonic() + self.limits.grace_ms / 1000)
            except BotFailure:
                pass
        self._pending.clear()


def _by_launcher(bots: Sequence[BotProcess]) -> list[tuple[LauncherClient, list[tuple[int, Child]]]]:
    """The bots that have a process, by launcher: each launcher with the index and process of
    each of its bots, so that a match's seats cost each launcher one message, not one each."""
    groups: dict[int, tuple[LauncherClient, list[tuple[int, Child]]]] = {}
    for i, bot in enumerate(bots):
        child = bot._child
        if child is not None:
            groups.setdefault(id(child.launcher), (child.launcher, []))[1].append((i, child))
    return list(groups.values())


def usages(bots: Sequence[BotProcess]) -> list[Usage]:
    """``usage()`` of each bot, asking each launcher once for all its bots (the seats of a
    match): what the referee records at the end of every match."""
    out = [Usage()] * len(bots)
    for launcher, members in _by_launcher(bots):
        for (i, _), usage in zip(members, launcher.usages([child for _, child in members]), strict=True):
            out[i] = usage
    return out


def lost_with_their_launcher(bots: Sequence[BotProcess]) -> dict[int, BotFailure]:
    """The failures of the bots (by index) whose launcher is gone, asking each launcher once.

    What the referee asks at a match's end. A bot may kill its launcher where the kernel lets
    it signal it (Landlock before ABI 6): every bot of that launcher dies with it, so every one
    of them loses, not only the first one the arena happens to write to next. The question
    makes that deterministic: a launcher killed before a bot's last reply cannot answer it,
    even if its death has not reached the arena yet."""
    return {i: bots[i]._gone("") for launcher, members in _by_launcher(bots) if not launcher.confirm()
            for i, _ in members}


def reset_usages(bots: Sequence[BotProcess]) -> None:
    """``reset_usage()`` of each bot, in one message to each launcher for all its bots (the
    seats of a match): each message costs the launcher a wake-up."""
    for launcher, members in _by_launcher(bots):
        running = [child for _, child in members if child.running]
        if running:
            launcher.reset_many(running)


def _handshake_failure(exc: BotFailure) -> BotFailure:
    """A failure before ``ready`` is a failed handshake, except going over the memory limit,
    which says more."""
    if exc.termination is Termination.MEMORY:
        return exc
    return BotFailure(Termination.NO_HANDSHAKE, exc.detail)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in name) or "bot"
