"""Typed errors of the rules core.

Rule errors are ``ValueError`` subclasses: they mean "this text, option or move is not valid
under the rules", never "the program is broken". Bot failures are not exceptions at all: the
referee records them as values.
"""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena raises on purpose."""


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
