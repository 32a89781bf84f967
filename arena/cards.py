"""The Spanish 40-card deck: suits, cards and their canonical text form (``7o``, ``12c``)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from arena.errors import CardParseError


class Suit(Enum):
    OROS = "o"
    COPAS = "c"
    ESPADAS = "e"
    BASTOS = "b"

    @property
    def letter(self) -> str:
        return self.value


SUITS: tuple[Suit, ...] = (Suit.OROS, Suit.COPAS, Suit.ESPADAS, Suit.BASTOS)
RANKS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
FIGURE_NAMES = {10: "sota", 11: "caballo", 12: "rey"}

# Figures fill the gap left by the missing 8 and 9: a sota is worth 8, not 10.
_CAPTURE_VALUE = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 10: 8, 11: 9, 12: 10}
# Primera values (seed 000): 7=21, 6=18, 1=16, 5=15, 4=14, 3=13, 2=12, figures 10.
_PRIMERA_VALUE = {7: 21, 6: 18, 1: 16, 5: 15, 4: 14, 3: 13, 2: 12, 10: 10, 11: 10, 12: 10}


class Card:
    """One card. There are exactly 40 instances (interned), so identity equals equality.

    ``index`` is the position in the unshuffled deck: suit by suit (oros, copas, espadas,
    bastos), rank by rank. Sorting (``order``) is by capture value, then suit.
    """

    __slots__ = ("rank", "suit", "value", "index", "order", "primera", "oro", "seven", "_text")

    rank: int
    suit: Suit
    value: int
    index: int
    order: int
    primera: int
    oro: int  # 1 for an oros card, else 0: counted by summing, in C
    seven: int  # 1 for a seven, else 0

    def __init__(self, rank: int, suit: Suit, index: int) -> None:
        set_ = object.__setattr__
        set_(self, "rank", rank)
        set_(self, "suit", suit)
        set_(self, "value", _CAPTURE_VALUE[rank])
        set_(self, "index", index)
        # Tables and hands are shown and enumerated by capture value, then suit.
        set_(self, "order", _CAPTURE_VALUE[rank] * 4 + SUITS.index(suit))
        set_(self, "primera", _PRIMERA_VALUE[rank])
        set_(self, "oro", int(suit is Suit.OROS))
        set_(self, "seven", int(rank == 7))
        set_(self, "_text", f"{rank}{suit.value}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.parse({self._text!r})"

    def __lt__(self, other: Card) -> bool:
        return self.order < other.order

    def __hash__(self) -> int:
        return self.index

    def __reduce__(self) -> tuple:
        # Unpickling must give back the interned instance, not a copy.
        return (Card.parse, (self._text,))

    @property
    def is_oros(self) -> bool:
        return self.suit is Suit.OROS

    @property
    def is_velo(self) -> bool:
        return self.rank == 7 and self.suit is Suit.OROS

    @staticmethod
    def parse(text: str) -> Card:
        try:
            return _BY_TEXT[text.strip().lower()]
        except (KeyError, AttributeError):
            raise CardParseError(
                f"invalid card {text!r}: expected a rank (1-7, 10, 11, 12) then a suit letter "
                "(o, c, e, b), e.g. 7o or 12c"
            ) from None


DECK: tuple[Card, ...] = tuple(
    Card(rank, suit, i * len(RANKS) + j) for i, suit in enumerate(SUITS) for j, rank in enumerate(RANKS)
)
_BY_TEXT: dict[str, Card] = {str(c): c for c in DECK}


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse ``"3b 5c 10e"`` (or a list of card texts) into cards."""
    parts = text.split() if isinstance(text, str) else list(text)
    return tuple(Card.parse(p) for p in parts)


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)
