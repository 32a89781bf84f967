"""The Spanish 40-card deck: suits, cards and their canonical text form (``7o``, ``12c``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from typing import NamedTuple

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


class _CardFields(NamedTuple):
    # ``order`` comes first: two different cards differ there, so the tuple comparisons that
    # Card inherits (==, <, and so ``in`` and ``list.remove``) are decided at once, in C.
    order: int
    rank: int
    suit: Suit
    value: int
    index: int  # type: ignore[assignment]  # the position in the deck; shadows tuple.index on purpose
    primera: int
    oro: int
    seven: int
    text: str
    bit: int  # 1 << index: a set of cards as one integer


class Card(_CardFields):
    """One card. There are exactly 40 instances (interned): ``Card.parse`` and pickling give
    back the same object.

    ``index`` is the position in the unshuffled deck: suit by suit (oros, copas, espadas,
    bastos), rank by rank. Sorting (``order``) is by capture value, then suit. ``value`` is
    the capture value, ``primera`` the primera value, ``oro`` and ``seven`` are 1 or 0 (for
    counting by summing, in C), ``text`` the canonical text form, ``bit`` is ``1 << index``.

    A card is a named tuple of these fields, so comparing cards costs no Python call; the
    hash is ``index``, so sets of cards iterate in the same order on every run.
    """

    __slots__ = ()
    _text = _CardFields.text  # the same C-level field getter, under the name older callers use

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({self.text!r})"

    def __hash__(self) -> int:
        return self.index

    def __reduce__(self) -> tuple[Callable[[str], Card], tuple[str]]:
        # Unpickling must give back the interned instance, not a copy.
        return (Card.parse, (self.text,))

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


def _card(rank: int, suit: Suit, index: int) -> Card:
    value = _CAPTURE_VALUE[rank]
    # Tables and hands are shown and enumerated by capture value, then suit.
    return Card(order=value * 4 + SUITS.index(suit), rank=rank, suit=suit, value=value, index=index,
                primera=_PRIMERA_VALUE[rank], oro=int(suit is Suit.OROS), seven=int(rank == 7),
                text=f"{rank}{suit.value}", bit=1 << index)


DECK: tuple[Card, ...] = tuple(
    _card(rank, suit, i * len(RANKS) + j) for i, suit in enumerate(SUITS) for j, rank in enumerate(RANKS)
)
# The whole deck as a set of cards (``Card.bit``).
DECK_BITS = sum(c.bit for c in DECK)
_BY_TEXT: dict[str, Card] = {str(c): c for c in DECK}


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse ``"3b 5c 10e"`` (or a list of card texts) into cards."""
    parts = text.split() if isinstance(text, str) else list(text)
    return tuple(Card.parse(p) for p in parts)


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)
