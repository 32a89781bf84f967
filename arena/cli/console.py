"""The one way a line reaches the console: every line the arena prints goes through here.

Bots control much of what the arena shows (a failure's detail quotes their replies and the end
of their stderr, a ready name, a move), and so does whoever wrote a results folder or a CSV. So
each line is escaped by ``arena.printable`` on its way out, whoever built it: a caller cannot
forget to. Escaping is idempotent on escaped text (the escapes are printable), so text already
escaped where it was rendered is unchanged.

Two kinds of output are not escaped, each by name: ``styled`` is the terminal replay's screen,
whose colours and cursor moves are the arena's own, added after its data was escaped
(``arena.render.text``); ``data`` is an export written to a pipe or a file, which must stay
byte for byte what the store holds (escaped when it is a terminal).

Nothing else in ``arena/cli`` writes to stdout or stderr (tests/cli/test_console.py checks).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import typer

from arena.printable import printable_lines


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """``text`` on stdout (or stderr, with ``err``), escaped: ``typer.echo``'s signature."""
    typer.echo(printable_lines(text), err=err, nl=nl)


def out(text: str = "") -> None:
    """``text`` on stdout, escaped."""
    echo(text)


def err(text: str) -> None:
    """``text`` on stderr, escaped."""
    echo(text, err=True)


def say(text: str) -> None:
    """``err``, and nothing when stderr is gone (the terminal closed: SIGHUP)."""
    try:
        err(text)
    except (OSError, ValueError):
        pass


def above_bar(console: Any, text: str) -> None:
    """``text`` on the live progress bar's console (rich), above the bar, escaped."""
    console.print(printable_lines(text), markup=False, highlight=False, soft_wrap=True)


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal as rich sees it (where a live bar is drawn). Rich, a tenth
    of a second to import, is asked only where it may be one: a run whose output goes to a file
    or a pipe never loads it."""
    import os

    if not (sys.stderr.isatty() or os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE")):
        return False
    from rich.console import Console

    return bool(Console(stderr=True).is_terminal)


def bar_field(text: str) -> str:
    """A field shown inside the progress bar (a leader's name, a test's state): escaped, and
    its rich markup brackets made literal, since the bar's columns are rich templates."""
    from rich.markup import escape

    return escape(printable_lines(text))


def styled(text: str) -> None:
    """The terminal replay's own screen on stdout, unescaped: its data was escaped where it was
    rendered, and its control sequences (colours, the alternate screen) are the arena's."""
    sys.stdout.write(text)


def flush() -> None:
    sys.stdout.flush()


def data(lines: Iterable[str]) -> None:
    """Lines of an export on stdout: as they are to a pipe or a file, escaped to a terminal."""
    escape = sys.stdout.isatty()
    for line in lines:
        sys.stdout.write(printable_lines(line) if escape else line)
        sys.stdout.write("\n")
    sys.stdout.flush()


__all__ = ["above_bar", "bar_field", "data", "echo", "err", "flush", "out", "say", "styled"]
