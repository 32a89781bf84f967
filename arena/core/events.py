"""What happens in a game, as a stream of immutable events.

Every event is public except ``Cards`` (a seat's own dealt cards), whose ``audience`` is that
seat. A game log is the full stream; a seat's view holds the public events and its own.

Each event is a named tuple of its fields (``_DealFields`` ...) with the class-level constants
``kind`` (its type in the log) and ``audience`` added by a subclass: a NamedTuple body may only
declare fields.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from arena.core.cards import Card
from arena.core.outcome import EndReason


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [c.text for c in cards]


class _DealFields(NamedTuple):
    hand: int
    round: int
    dealer: int
    table: tuple[Card, ...]
    stock: int


class Deal(_DealFields):
    """A deal of 3 cards to each player; round 0 also lays the table."""

    __slots__ = ()
    kind: ClassVar[str] = "deal"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "hand": self.hand, "round": self.round, "dealer": self.dealer,
                "table": _cards(self.table), "stock": self.stock}


class _SeatCardsFields(NamedTuple):
    seat: int
    cards: tuple[Card, ...]


class Cards(_SeatCardsFields):
    """The cards one seat was dealt: private to that seat."""

    __slots__ = ()
    kind: ClassVar[str] = "cards"
    audience = _SeatCardsFields.seat  # the seat's own field getter (in C), under the name every event has

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "cards": _cards(self.cards)}


class _InitialCaptureFields(NamedTuple):
    seat: int
    cards: tuple[Card, ...]
    escobas: int


class InitialCapture(_InitialCaptureFields):
    """The dealer takes table cards at the deal (option initial_table)."""

    __slots__ = ()
    kind: ClassVar[str] = "initial_capture"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "cards": _cards(self.cards), "escobas": self.escobas}


class EscobaEnMano(_SeatCardsFields):
    """A seat shows three freshly dealt cards that add to 15 and sits out the round."""

    __slots__ = ()
    kind: ClassVar[str] = "escoba_en_mano"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "cards": _cards(self.cards)}


class _PlayFields(NamedTuple):
    seat: int
    card: Card
    take: tuple[Card, ...]


class Play(_PlayFields):
    """A card played from hand; with ``take`` non-empty it is a capture, else a trail."""

    __slots__ = ()
    kind: ClassVar[str] = "play"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "card": self.card.text, "take": _cards(self.take)}


class Claim(_PlayFields):
    """A renuncio: the seat takes the card the previous player trailed, with ``take``."""

    __slots__ = ()
    kind: ClassVar[str] = "renuncio"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "card": self.card.text, "take": _cards(self.take)}


class _EscobaFields(NamedTuple):
    seat: int
    side: int
    source: str


class Escoba(_EscobaFields):
    """One escoba scored; ``source`` is play, renuncio, initial_table or en_mano."""

    __slots__ = ()
    kind: ClassVar[str] = "escoba"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "side": self.side, "source": self.source}


class _SweepFields(NamedTuple):
    side: int | None
    cards: tuple[Card, ...]


class Sweep(_SweepFields):
    """End of hand: the cards left on the table go to the last side that captured (or nobody)."""

    __slots__ = ()
    kind: ClassVar[str] = "sweep"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "side": self.side, "cards": _cards(self.cards)}


class _HandScoreFields(NamedTuple):
    hand: int
    breakdown: tuple[dict[str, int], ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]


class HandScore(_HandScoreFields):
    """A hand's points per side with the breakdown, and the match totals after it."""

    __slots__ = ()
    kind: ClassVar[str] = "hand_score"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "hand": self.hand, "breakdown": [dict(b) for b in self.breakdown],
                "points": list(self.points), "totals": list(self.totals)}


class _MatchEndFields(NamedTuple):
    winner: int | None
    scores: tuple[int, ...]
    reason: EndReason
    hands: int


class MatchEnd(_MatchEndFields):
    """The match is over; ``winner`` is a side, or None for a draw."""

    __slots__ = ()
    kind: ClassVar[str] = "match_end"
    audience: ClassVar[int | None] = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "winner": self.winner, "scores": list(self.scores),
                "reason": self.reason.value, "hands": self.hands}


Event = Deal | Cards | InitialCapture | EscobaEnMano | Play | Claim | Escoba | Sweep | HandScore | MatchEnd

_EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls for cls in (Deal, Cards, InitialCapture, EscobaEnMano, Play, Claim, Escoba, Sweep, HandScore, MatchEnd)
}
_CARD_FIELDS = {"table", "cards", "take"}
_REASONS = {m.value: m for m in EndReason}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of ``to_dict``; raises ``ValueError`` (``KeyError`` wrapped) on a malformed event."""
    try:
        cls = _EVENT_TYPES[data["type"]]
        values: dict[str, Any] = {}
        for name in cls._fields:
            value = data[name]
            if name in _CARD_FIELDS:
                value = tuple(Card.parse(c) for c in value)
            elif name == "card":
                value = Card.parse(value)
            elif name == "breakdown":
                value = tuple(dict(b) for b in value)
            elif name in ("points", "totals", "scores"):
                value = tuple(value)
            elif name == "reason":
                value = _REASONS[value]  # a KeyError, hence a malformed event, for an unknown reason
            values[name] = value
        return cls(**values)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed event {data!r}: {exc}") from None
