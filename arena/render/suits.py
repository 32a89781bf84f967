"""How the four suits look, in one table: the terminal replay, the HTML pages and the command
line all draw cards from here (the pages get it in their JSON, so the script repeats none of it).

Cards are written in canonical Spanish notation (``7o``, ``12c``); the French style is for
display only (A 2-7 J Q K, ♦ ♥ ♠ ♣), and the colours are the same in both: oros yellow, copas
red, espadas blue, bastos green.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

from arena.core.cards import FIGURE_NAMES, Suit


class SuitStyle(str, Enum):
    """The card faces a replay is drawn with (``--suits``)."""

    SPANISH = "spanish"
    FRENCH = "french"

    @property
    def label(self) -> str:
        """The style's name in a menu."""
        return f"{self.value.capitalize()} suits"

    @property
    def ranks(self) -> Mapping[int, str]:
        """The ranks written otherwise than as their number."""
        return FRENCH_RANKS if self is SuitStyle.FRENCH else _NO_RANKS

    @property
    def figures(self) -> bool:
        """Whether a figure's card also shows its Spanish name (sota, caballo, rey)."""
        return self is SuitStyle.SPANISH

    @property
    def symbols(self) -> str:
        """The prefix of this style's suit pictures in ``web/suits.svg`` (``sp-o``, ``fr-o``)."""
        return "sp" if self is SuitStyle.SPANISH else "fr"

    @classmethod
    def parse(cls, text: str) -> SuitStyle:
        """The style named ``text``; a ValueError names the styles there are."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"suits: expected one of {', '.join(SUIT_STYLES)}, got {text!r}") from None


SUIT_STYLES: tuple[str, ...] = tuple(style.value for style in SuitStyle)


@dataclass(frozen=True)
class SuitLook:
    """One suit's name, terminal colour (an ANSI code) and French stand-in (symbol, and the
    letter a terminal without Unicode gets)."""

    name: str
    ansi: str
    french_symbol: str
    french_letter: str


SUIT_LOOKS: Mapping[Suit, SuitLook] = MappingProxyType({
    Suit.OROS: SuitLook("oros", "33", "♦", "d"),
    Suit.COPAS: SuitLook("copas", "31", "♥", "h"),
    Suit.ESPADAS: SuitLook("espadas", "34", "♠", "s"),
    Suit.BASTOS: SuitLook("bastos", "32", "♣", "c"),
})
FRENCH_RANKS: Mapping[int, str] = MappingProxyType({1: "A", 10: "J", 11: "Q", 12: "K"})
_NO_RANKS: Mapping[int, str] = MappingProxyType({})


def page_suits() -> dict[str, Any]:
    """The table as the replay page's JSON carries it (docs/REPLAY.md, "The replay page's data")."""
    return {
        "styles": [{"key": style.value, "label": style.label, "symbols": style.symbols, "figures": style.figures,
                    "ranks": {str(rank): text for rank, text in style.ranks.items()}} for style in SuitStyle],
        "figures": {str(rank): name for rank, name in FIGURE_NAMES.items()},
    }


__all__ = ["FRENCH_RANKS", "SUIT_LOOKS", "SUIT_STYLES", "SuitLook", "SuitStyle", "page_suits"]
