"""The rules core's named values: the phases of a hand and the reasons a match ends.

Each is an enum whose value is its text in the protocol, the records and the messages. The
members subclass ``str`` so that ``json`` writes them as that text (the golden records stay
byte-identical) and bots comparing a phase with its text keep working; the code of the arena
itself compares and stores members, never the text.
"""

from __future__ import annotations

from enum import Enum


class TextEnum(str, Enum):
    """An enum written as its value: in JSON, in ``str()`` and in f-strings (where a plain
    ``str`` mixin would print ``Class.MEMBER`` on some Pythons and its value on others)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Phase(TextEnum):
    """What the seat to move must do: play a card, answer a pending renuncio claim, or (the
    dealer, once) choose which initial table cards to take; OVER once the hand is scored."""

    PLAY = "play"
    CLAIM = "claim"
    TAKE = "take"
    OVER = "over"


class EndReason(TextEnum):
    """How a match ended: a side reached the target, the hand limit made it a draw, or a bot
    failure lost it for its side."""

    TARGET = "target"
    MAX_HANDS = "max_hands"
    FORFEIT = "forfeit"
