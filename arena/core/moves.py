"""Moves: small immutable values with one canonical text form.

Text forms::

    5e              trail: the 5 of espadas is left on the table
    5e+4b+6o        capture: play 5e, take 4b and 6o (taken cards in table order)
    renuncio 5e+4b  claim (option renuncio): take the card the previous player trailed, with 4b
    pass            decline a renuncio claim
    mesa 3b+12c     the dealer's choice of initial-table capture (initial_table: subset15)
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from arena.core.cards import Card
from arena.errors import CardParseError, MoveParseError


class MoveKind(Enum):
    PLAY = "play"
    CLAIM = "claim"
    PASS = "pass"
    TAKE = "take"


class Move(NamedTuple):
    kind: MoveKind
    card: Card | None
    take: tuple[Card, ...]

    def __str__(self) -> str:
        kind = self.kind
        if kind is MoveKind.PLAY:
            if not self.take:
                return str(self.card)
            return "+".join([str(self.card), *map(str, self.take)])
        if kind is MoveKind.PASS:
            return "pass"
        if kind is MoveKind.CLAIM:
            return "renuncio " + "+".join([str(self.card), *map(str, self.take)])
        return "mesa " + "+".join(map(str, self.take))

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @property
    def is_capture(self) -> bool:
        return bool(self.take) or self.kind is MoveKind.CLAIM

    @staticmethod
    def play(card: Card, take: tuple[Card, ...] = ()) -> Move:
        return Move(MoveKind.PLAY, card, tuple(sorted(take)))

    @staticmethod
    def parse(text: str) -> Move:
        if not isinstance(text, str):
            raise MoveParseError(f"invalid move {text!r}: expected a string such as '5e' or '5e+4b+6o'")
        known = _PARSED.get(text)
        if known is not None:
            return known
        move = Move._parse(text)
        if len(_PARSED) >= _PARSED_MOST:
            _PARSED.clear()
        _PARSED[text] = move
        return move

    @staticmethod
    def _parse(text: str) -> Move:
        raw = text.strip()
        try:
            if raw == "pass":
                return Move(MoveKind.PASS, None, ())
            for prefix, kind in (("renuncio ", MoveKind.CLAIM), ("mesa ", MoveKind.TAKE)):
                if raw.startswith(prefix):
                    cards = [Card.parse(p) for p in raw[len(prefix):].split("+")]
                    if kind is MoveKind.TAKE:
                        return Move(kind, None, tuple(sorted(cards)))
                    return Move(kind, cards[0], tuple(sorted(cards[1:])))
            parts = raw.split("+")
            cards = [Card.parse(p) for p in parts]
        except CardParseError as exc:
            raise MoveParseError(f"invalid move {text!r}: {exc}") from None
        if len(set(cards)) != len(cards):
            raise MoveParseError(f"invalid move {text!r}: a card appears twice")
        return Move(MoveKind.PLAY, cards[0], tuple(sorted(cards[1:])))


PASS = Move(MoveKind.PASS, None, ())

# Moves already parsed, by their text: a replay, a verification and the referee parse the same
# few thousand texts again and again (a move is an immutable value, so one can be shared).
# Bounded: records are untrusted, and their texts need not repeat.
_PARSED: dict[str, Move] = {}
_PARSED_MOST = 1 << 15
