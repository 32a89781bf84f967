"""The rules core's front door for bot authors and simulations (README, "The rules core"): a
match, a seat's view, a hand, and the cards and moves they are made of. The code lives in
``arena.core``; this module keeps the import that bots and tools were written against.
"""

from arena.core.cards import DECK, Card, Suit, format_cards, parse_cards
from arena.core.game import (
                             CLAIM,
                             OVER,
                             PLAY,
                             TAKE,
                             EndReason,
                             HandState,
                             MatchResult,
                             MatchState,
                             Phase,
                             SeatView,
                             captures_for,
                             hand_view,
)
from arena.core.moves import PASS, Move, MoveKind

__all__ = ["CLAIM", "DECK", "OVER", "PASS", "PLAY", "TAKE", "Card", "EndReason", "HandState", "MatchResult", "MatchState",
           "Move", "MoveKind", "Phase", "SeatView", "Suit", "captures_for", "format_cards", "hand_view", "parse_cards"]
