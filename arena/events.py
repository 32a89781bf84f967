"""What happens in a game, as a stream of immutable events.

Every event is public except ``Cards`` (a seat's own dealt cards), whose ``audience`` is that
seat. A game log is the full stream; a seat's view holds the public events and its own.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from arena.cards import Card


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in cards]


class Deal(NamedTuple):
    """A deal of 3 cards to each player; round 0 also lays the table."""

    hand: int
    round: int
    dealer: int
    table: tuple[Card, ...]
    stock: int
    kind = "deal"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "hand": self.hand, "round": self.round, "dealer": self.dealer,
                "table": _cards(self.table), "stock": self.stock}


class Cards(NamedTuple):
    """The cards one seat was dealt: private to that seat."""

    seat: int
    cards: tuple[Card, ...]
    kind = "cards"

    @property
    def audience(self) -> int:
        return self.seat

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "cards": _cards(self.cards)}


class InitialCapture(NamedTuple):
    """The dealer takes table cards at the deal (option initial_table)."""

    seat: int
    cards: tuple[Card, ...]
    escobas: int
    kind = "initial_capture"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "cards": _cards(self.cards), "escobas": self.escobas}


class EscobaEnMano(NamedTuple):
    """A seat shows three freshly dealt cards that add to 15 and sits out the round."""

    seat: int
    cards: tuple[Card, ...]
    kind = "escoba_en_mano"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "cards": _cards(self.cards)}


class Play(NamedTuple):
    """A card played from hand; with ``take`` non-empty it is a capture, else a trail."""

    seat: int
    card: Card
    take: tuple[Card, ...]
    kind = "play"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "card": str(self.card), "take": _cards(self.take)}


class Claim(NamedTuple):
    """A renuncio: the seat takes the card the previous player trailed, with ``take``."""

    seat: int
    card: Card
    take: tuple[Card, ...]
    kind = "renuncio"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "card": str(self.card), "take": _cards(self.take)}


class Escoba(NamedTuple):
    """One escoba scored; ``source`` is play, renuncio, initial_table or en_mano."""

    seat: int
    side: int
    source: str
    kind = "escoba"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "seat": self.seat, "side": self.side, "source": self.source}


class Sweep(NamedTuple):
    """End of hand: the cards left on the table go to the last side that captured (or nobody)."""

    side: int | None
    cards: tuple[Card, ...]
    kind = "sweep"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "side": self.side, "cards": _cards(self.cards)}


class HandScore(NamedTuple):
    """A hand's points per side with the breakdown, and the match totals after it."""

    hand: int
    breakdown: tuple[dict[str, int], ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
    kind = "hand_score"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "hand": self.hand, "breakdown": [dict(b) for b in self.breakdown],
                "points": list(self.points), "totals": list(self.totals)}


class MatchEnd(NamedTuple):
    """The match is over; ``winner`` is a side, or None for a draw."""

    winner: int | None
    scores: tuple[int, ...]
    reason: str
    hands: int
    kind = "match_end"
    audience = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "winner": self.winner, "scores": list(self.scores),
                "reason": self.reason, "hands": self.hands}


Event = Deal | Cards | InitialCapture | EscobaEnMano | Play | Claim | Escoba | Sweep | HandScore | MatchEnd

_EVENT_TYPES = {cls.kind: cls for cls in (Deal, Cards, InitialCapture, EscobaEnMano, Play, Claim,
                                          Escoba, Sweep, HandScore, MatchEnd)}
_CARD_FIELDS = {"table", "cards", "take"}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of ``to_dict``; raises ``ValueError`` (``KeyError`` wrapped) on a malformed event."""
    try:
        cls = _EVENT_TYPES[data["type"]]
        values = {}
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
            values[name] = value
        return cls(**values)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed event {data!r}: {exc}") from None
