"""The edge of the command line: where every error becomes one line and an exit code.

``ArenaGroup`` is the ``arena`` command group. Around whichever command runs it

- turns SIGTERM and SIGHUP into ``Interrupted``, a ``KeyboardInterrupt``, so every command
  stops on them exactly as on Ctrl-C: through its ``finally`` blocks (bots killed, the
  results store closed) and its ``except KeyboardInterrupt`` handler (``arena run`` prints
  how to resume);
- catches every ``ArenaError`` once and prints ``error: ...`` on one line, ending the command
  with the error class's ``exit_code`` (``arena/errors.py`` lists them);
- catches anything else (a bug) and prints one line naming it and the file its traceback was
  saved to, never the traceback itself.

``ArenaCommand`` is the class of every command: it shows boolean flags as flags in ``--help``.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

import arena.cli.console as console
from arena.errors import ArenaError, ExitCode
from arena.printable import printable, printable_lines

# Signals that stop a command as Ctrl-C does.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_MAX_LINE = 300


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: raised where the program was, as Ctrl-C raises KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupt_exit_code(interrupt: BaseException) -> int:
    """128 + the signal's number, as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    signum = interrupt.signum if isinstance(interrupt, Interrupted) else int(signal.SIGINT)
    return 128 + signum


def interrupt_name(interrupt: BaseException) -> str:
    return signal.Signals(interrupt.signum).name if isinstance(interrupt, Interrupted) else "Ctrl-C"


@contextmanager
def stop_signals_as_interrupts() -> Iterator[None]:
    """While the command runs, SIGTERM and SIGHUP raise ``Interrupted`` (SIGHUP unless it was
    ignored when the program started, as under ``nohup``); the handlers in place before come
    back after. Only the first such signal raises: the ones after it are ignored, so a second
    SIGTERM from a process manager cannot cut the clean-up of the first short."""
    if sys.platform == "win32":  # pragma: no cover - no SIGHUP there
        yield
        return
    stopping = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise Interrupted(signum)

    # A SIGHUP ignored before we started is a request (nohup, a daemon's supervisor): the run
    # must outlive its terminal, so it stays ignored.
    wanted = [sig for sig in STOP_SIGNALS if not (sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN)]
    try:
        previous = {sig: signal.signal(sig, handler) for sig in wanted}
    except ValueError:  # not the main thread (a test harness): leave the signals alone
        yield
        return
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def on_the_way_out() -> None:
    """The command is done and its exit code chosen: what is left is the interpreter's exit,
    where the bots, their launchers and the workers are cleaned up. A stop signal then (a
    Ctrl-C just after the last line) would cut that clean-up short with a traceback and
    change nothing of the run, so from here on they are ignored; the clean-ups are bounded."""
    if sys.platform == "win32":  # pragma: no cover - no SIGHUP there
        return
    try:
        for sig in (signal.SIGINT, *STOP_SIGNALS):
            signal.signal(sig, signal.SIG_IGN)
    except ValueError:  # not the main thread (a test harness): leave the signals alone
        pass


def quiet_worker() -> None:
    """What a command's forked pool worker runs first. It inherits the command's handlers,
    which turn the first stop signal into an exception and ignore the next: a worker blocked
    on its pool's queue would then outlive the pool's ``terminate`` and hang the command in
    its ``join``. The pool's end must stop it at once and silently, and Ctrl-C, which the whole
    process group gets, is the command's to handle."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def one_line(text: str, limit: int = _MAX_LINE) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def say(line: str) -> None:
    """A line on stderr; nothing if stderr is gone (the terminal closed: SIGHUP)."""
    console.say(line)


def crash_folder() -> Path:
    """Where tracebacks of internal errors are saved: $XDG_STATE_HOME/escoba-arena
    (by default ~/.local/state/escoba-arena)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "escoba-arena"


def save_traceback(text: str) -> Path | None:
    """Write ``text`` (a traceback and what led to it) to a new file in ``crash_folder()``,
    else in the temporary folder; returns its path, or None if neither can be written."""
    header = (
        f"arena {_version()} on Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
        f"command: {' '.join(sys.argv)}\n\n"
    )
    prefix = time.strftime("crash-%Y%m%d-%H%M%S-")
    for folder, name_prefix in ((crash_folder(), prefix), (Path(tempfile.gettempdir()), "escoba-arena-" + prefix)):
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            # mkstemp: a new file of our own, never one planted under a guessable name.
            fd, name = tempfile.mkstemp(prefix=name_prefix, suffix=".txt", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(header + text)
            return Path(name)
        except OSError:
            continue
    return None


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("escoba-arena")
    except Exception:  # noqa: BLE001 - the version is only a courtesy in a crash report
        return "?"


def _saved_at(path: Path | None) -> str:
    return f"the traceback is in {path}" if path is not None else "the traceback could not be saved"


def report_arena_error(exc: ArenaError) -> int:
    """Print ``exc`` as ``error: ...`` (and its hint, when it has one); returns its exit code."""
    # Escaped: the message may quote a bot's name or move, a file's text (arena/printable.py).
    line = f"error: {printable(one_line(str(exc), 2000))}"
    remote = getattr(exc, "remote_traceback", None)
    if remote:
        line += f" ({_saved_at(save_traceback(remote))})"
    say(line)
    if exc.hint:
        say(printable_lines(exc.hint))
    return int(exc.exit_code)


def report_usage_error(exc: Any, command: str | None = None) -> int:
    """A command line typer refused (an unknown option, a missing argument, a value not among
    the choices): one line, as every other error, and where the help is (``command``'s, where
    the error does not say which command refused it)."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else command or "arena"
    say(f"error: {printable(one_line(exc.format_message())).rstrip('.')} (see {command} --help)")
    return int(exc.exit_code)


def _is_usage_error(exc: BaseException) -> bool:
    # By name: typer raises click's UsageError, or that of the copy of click it ships (typer._click).
    return _belongs_to_typer(exc) and any(kind.__name__ == "UsageError" for kind in type(exc).__mro__)


def report_internal_error(exc: BaseException) -> int:
    """A bug: one line naming it, and the file its traceback went to."""
    path = save_traceback("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    say(f"error: internal error: {type(exc).__name__}: {printable(one_line(str(exc)))}; this is a bug in the arena, "
        f"please report it; {_saved_at(path)}")
    return int(ExitCode.INTERNAL)


def _output_closed() -> int:
    """Whoever read the output stopped (``arena table ... | head``): nothing more to say to
    anyone, and the exit status a program killed by SIGPIPE has (the shell's 141), not a failed
    check's 1. What is left in the buffer goes nowhere instead of failing again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return int(ExitCode.OUTPUT_CLOSED)


def _belongs_to_typer(exc: BaseException) -> bool:
    """typer's own exceptions (usage errors, Exit, Abort): typer reports them."""
    if isinstance(exc, (typer.Exit, typer.Abort)):
        return True
    return type(exc).__module__.split(".")[0] in ("typer", "click")


class ArenaGroup(TyperGroup):
    """The ``arena`` group: one place where errors, signals and exit codes are handled.

    Its commands are ``lazy_commands`` (``arena.cli.app.COMMANDS``: name, ``"module:function"``,
    summary): a command's module is imported when the command is resolved to run, never to be
    listed in ``arena --help``, which shows each summary from the table."""

    lazy_commands: tuple[Any, ...] = ()
    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(c.name for c in self.lazy_commands)]

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # The group's own options (``arena --bogus``) are parsed before ``invoke``: refused
        # in one line as every other error, not in click's usage block.
        try:
            return list(super().parse_args(ctx, args))
        except Exception as exc:
            # ``arena`` alone shows the help (click's NoArgsIsHelpError, a usage error too).
            if _is_usage_error(exc) and type(exc).__name__ != "NoArgsIsHelpError":
                raise typer.Exit(report_usage_error(exc)) from None
            raise

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        known = super().get_command(ctx, cmd_name)
        entry = next((c for c in self.lazy_commands if c.name == cmd_name), None)
        if known is not None or entry is None:
            return known
        if self._listing:  # the group's help: the name and summary are all it shows
            return TyperCommand(cmd_name, short_help=entry.summary)
        return _load_command(entry.name, entry.target, entry.summary)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx: Any) -> Any:
        with stop_signals_as_interrupts():
            try:
                return super().invoke(ctx)
            except ArenaError as exc:
                code = report_arena_error(exc)
            except KeyboardInterrupt as exc:
                say(f"interrupted ({interrupt_name(exc)})")
                code = interrupt_exit_code(exc)
            except BrokenPipeError:
                code = _output_closed()
            except Exception as exc:
                if _is_usage_error(exc):
                    sub = ctx.invoked_subcommand
                    code = report_usage_error(exc, f"{ctx.command_path} {sub}" if sub else None)
                    raise typer.Exit(code) from None
                if _belongs_to_typer(exc):
                    raise
                code = report_internal_error(exc)
        raise typer.Exit(code)

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_type(super().get_params(ctx))


def _load_command(name: str, target: str, summary: str) -> Any:
    """The click command typer makes of ``target``'s function, as a one-command app would."""
    from importlib import import_module

    module, function = target.split(":")
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    single.command(name, cls=ArenaCommand, short_help=summary)(getattr(import_module(module), function))
    return typer.main.get_command(single)


class ArenaCommand(TyperCommand):
    """Every ``arena`` command: boolean flags show as flags in ``--help``."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_type(super().get_params(ctx))


def _flags_without_type(params: list[Any]) -> list[Any]:
    # typer's rich help prints each option's type from display_type_rich(), and for a flag that
    # is "<bool>" (its plain help checks is_flag; the rich panel does not). A flag takes no value,
    # so it gets an empty metavar, which display_type_rich() returns first.
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


__all__ = [
    "ArenaCommand",
    "ArenaGroup",
    "Interrupted",
    "STOP_SIGNALS",
    "crash_folder",
    "interrupt_exit_code",
    "interrupt_name",
    "one_line",
    "save_traceback",
    "say",
    "stop_signals_as_interrupts",
]
