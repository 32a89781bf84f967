"""What one seat may know of a hand: its own cards and everything public."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.core.cards import DECK, Card
from arena.core.events import Event
from arena.core.outcome import Phase
from arena.core.rules import Rules, Seating

_DECK_BITS: tuple[tuple[int, Card], ...] = tuple((c.bit, c) for c in DECK)  # the deck in order, each card with its bit


@dataclass(frozen=True)
class SeatView:
    """Exactly what one seat may know: its own hand and everything public. Never another
    seat's hand or the order of the stock."""

    seat: int
    side: int
    rules: Rules
    seating: Seating
    hand_number: int
    round: int
    dealer: int
    turn: int | None
    phase: Phase
    hand: tuple[Card, ...]
    table: tuple[Card, ...]
    stock_count: int
    hand_sizes: tuple[int, ...]
    piles: tuple[tuple[Card, ...], ...]
    escobas: tuple[int, ...]
    last_capturer: int | None
    pending: tuple[Card, tuple[tuple[Card, ...], ...]] | None
    options: tuple[tuple[Card, ...], ...]
    scores: tuple[int, ...]
    events: tuple[Event, ...]

    @property
    def unseen(self) -> tuple[Card, ...]:
        """Cards this seat has not seen: the other hands and the stock, in deck order."""
        # As card bits, not a set of cards: a bot may ask at every decision, and hashing a card
        # is a Python call (``Card.__hash__``), two or three per card here.
        seen = 0
        for c in self.hand:
            seen |= c.bit
        for c in self.table:
            seen |= c.bit
        for pile in self.piles:
            for c in pile:
                seen |= c.bit
        return tuple([c for bit, c in _DECK_BITS if not bit & seen])

    def to_dict(self, include_events: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "seat": self.seat, "side": self.side, "hand_number": self.hand_number, "round": self.round,
            "dealer": self.dealer, "turn": self.turn, "phase": self.phase,
            "hand": [str(c) for c in self.hand], "table": [str(c) for c in self.table],
            "stock": self.stock_count, "hand_sizes": list(self.hand_sizes),
            "piles": [[str(c) for c in p] for p in self.piles], "escobas": list(self.escobas),
            "last_capturer": self.last_capturer,
            "pending_renuncio": None if self.pending is None else str(self.pending[0]),
            "scores": list(self.scores),
        }
        if include_events:
            data["events"] = [e.to_dict() for e in self.events]
        return data
