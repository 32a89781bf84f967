"""Typed errors, and the exit code each one ends a command with.

Every error the arena raises on purpose is an ``ArenaError``; its class says which exit code
the command line ends with (``exit_code``), so the code is the same for the same error in
every command. The command line catches them once, at its edge (``arena/cli/edge.py``).

Rule errors are ``ValueError`` subclasses: they mean "this text, option or move is not valid
under the rules", never "the program is broken". Bot failures are not exceptions that reach
the user at all: the referee records them as values.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The exit codes of every ``arena`` command (the README lists them)."""

    OK = 0
    CHECK_FAILED = 1  # the command ran and its answer is no: a record refused, a bot that fails check-bot
    BAD_INPUT = 2  # a file, option or results folder given to the arena cannot be used
    FAULT = 3  # the arena could not finish: a full disk, an unwritable file, a worker or cluster fault
    INTERNAL = 4  # a bug in the arena: one line, and the traceback saved to a file
    # Stopped by a signal: 128 + its number, as shells report it.
    HANGUP = 129  # SIGHUP (the terminal closed)
    INTERRUPTED = 130  # SIGINT (Ctrl-C)
    OUTPUT_CLOSED = 141  # SIGPIPE: its reader stopped (a pipe to head)
    TERMINATED = 143  # SIGTERM


class ArenaError(Exception):
    """Base of every error the arena raises on purpose. Unless a subclass says otherwise,
    it is about something the arena was given: a file, an option, a results folder."""

    exit_code: ExitCode = ExitCode.BAD_INPUT
    # A second line for the user, set by whoever knows what to do next (``arena run``: how to resume).
    hint: str | None = None


class InputError(ArenaError):
    """A path, id or option given on the command line does not lead to something usable."""


class WriteError(ArenaError):
    """A file the arena must write cannot be written (a full disk, no permission)."""

    exit_code = ExitCode.FAULT


class RuleError(ArenaError, ValueError):
    """Something is not valid under the rules of Escoba."""


class CardParseError(RuleError):
    """A card's text form is not valid (expected e.g. ``7o``, ``12c``)."""


class MoveParseError(RuleError):
    """A move's text form is not valid (expected e.g. ``5e+4b+6o``)."""


class IllegalMoveError(RuleError):
    """A move that the rules do not allow in the current position."""

    def __init__(self, move: str, reason: str) -> None:
        super().__init__(f"illegal move {move!r}: {reason}")
        self.move = move
        self.reason = reason


class OptionError(RuleError):
    """An unknown rule option or a value the option does not allow."""

    def __init__(self, key: str, expected: str) -> None:
        super().__init__(f"{key}: {expected}")
        self.key = key
        self.expected = expected


class SeatingError(RuleError):
    """A table shape the rules do not allow (5 players, partners side by side, ...)."""
