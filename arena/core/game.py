"""The rules core's front door: a match, a seat's view of it, and the hand it plays.

Pure: no I/O, no clock, no global random. A ``HandState`` (``arena.core.hand``) is one deal from
shuffle to score; a ``MatchState`` chains hands until a side wins, and answers for a move as
a hand does (``check``, ``is_legal``, ``apply``). ``hand_view`` gives exactly what one seat may
know (``arena.core.view``). Bots and tools import all of it from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.core.events import Event, HandScore, MatchEnd
from arena.core.hand import CLAIM, OVER, PLAY, TAKE, HandState, captures_for
from arena.core.moves import Move
from arena.core.outcome import EndReason, Phase
from arena.core.rules import Rules, Seating
from arena.core.seeding import derive_seed
from arena.core.view import SeatView
from arena.errors import IllegalMoveError

__all__ = ["CLAIM", "OVER", "PLAY", "TAKE", "EndReason", "HandState", "MatchResult", "MatchState", "Phase", "SeatView",
           "captures_for", "hand_view"]


def hand_view(hand: HandState, seat: int, scores: Sequence[int], events: Sequence[Event]) -> SeatView:
    return SeatView(
        seat=seat, side=hand.seating.side_of(seat), rules=hand.rules, seating=hand.seating,
        hand_number=hand.number, round=hand.round, dealer=hand.dealer, turn=hand.current_seat,
        phase=hand.phase, hand=tuple(hand.hands[seat]), table=tuple(hand.table),
        stock_count=hand.stock_count, hand_sizes=tuple(map(len, hand.hands)),
        piles=tuple(map(tuple, hand.piles)), escobas=tuple(hand.escobas),
        last_capturer=hand.last_capturer, pending=hand.pending,
        options=tuple(hand._options or ()), scores=tuple(scores),
        # A list comprehension, then a tuple: about half the cost of a generator, over every event of the hand.
        events=tuple([e for e in events if e.audience is None or e.audience == seat]),
    )


# --- a match ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchResult:
    winner: int | None  # a side, or None for a draw
    scores: tuple[int, ...]
    reason: EndReason  # TARGET or MAX_HANDS: a forfeit is the referee's, not the rules'
    hands: int


class MatchState:
    """Hands until, at the end of one, a side has reached the target with the highest total."""

    __slots__ = ("rules", "seating", "seed", "scores", "hand", "events", "result", "first_dealer")

    def __init__(self, rules: Rules, seating: Seating, seed: int) -> None:
        self.rules = rules
        self.seating = seating
        self.seed = int(seed)
        self.scores = [0] * seating.sides
        self.events: list[Event] = []
        self.result: MatchResult | None = None
        self.first_dealer = derive_seed(self.seed, "dealer") % seating.players
        self.hand = self._new_hand(0)

    @classmethod
    def new(cls, rules: Rules, seating: Seating, seed: int) -> MatchState:
        return cls(rules, seating, seed)

    def _new_hand(self, number: int) -> HandState:
        dealer = (self.first_dealer + number) % self.seating.players
        return HandState.shuffled(self.rules, self.seating, dealer, derive_seed(self.seed, "hand", number),
                                  number, self.events)

    @property
    def hand_number(self) -> int:
        return self.hand.number

    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def current_seat(self) -> int | None:
        return None if self.result is not None else self.hand.current_seat

    def legal_moves(self) -> list[Move]:
        return [] if self.result is not None else self.hand.legal_moves()

    def check(self, move: object) -> Move:
        """``HandState.check`` for the hand in play: the legal move, or ``IllegalMoveError``
        with the reason (a finished match accepts no move). Changes nothing."""
        if self.result is not None:
            raise IllegalMoveError(str(move), "the match is over")
        return self.hand.check(move)

    def is_legal(self, move: object) -> bool:
        """Whether ``check`` would accept ``move``."""
        return self.result is None and self.hand.is_legal(move)

    def apply(self, move: object) -> None:
        """Play ``move`` (see ``HandState.apply``); refused as ``check`` refuses it."""
        if self.result is not None:
            raise IllegalMoveError(str(move), "the match is over")
        hand = self.hand
        hand.apply(move)
        if hand.phase is OVER:
            self._end_hand()

    def _end_hand(self) -> None:
        hand = self.hand
        points = hand.points()
        for side, p in enumerate(points):
            self.scores[side] += p
        totals = tuple(self.scores)
        self.events.append(HandScore(hand.number, hand.breakdown, points, totals))  # type: ignore[arg-type]  # breakdown and points: the tuples HandScore stores, typed loosely in HandState
        played = hand.number + 1
        best = max(totals)
        leaders = [s for s, t in enumerate(totals) if t == best]
        if best >= self.rules.target and len(leaders) == 1:
            self._finish(MatchResult(leaders[0], totals, EndReason.TARGET, played))
        elif played >= self.rules.max_hands:
            self._finish(MatchResult(None, totals, EndReason.MAX_HANDS, played))
        else:
            self.hand = self._new_hand(played)

    def _finish(self, result: MatchResult) -> None:
        self.result = result
        self.events.append(MatchEnd(result.winner, result.scores, result.reason, result.hands))

    def view(self, seat: int) -> SeatView:
        return hand_view(self.hand, seat, self.scores, self.events)

    def copy(self) -> MatchState:
        other = MatchState.__new__(MatchState)
        other.rules, other.seating, other.seed = self.rules, self.seating, self.seed
        other.scores = self.scores[:]
        other.result = self.result
        other.first_dealer = self.first_dealer
        other.hand = self.hand.copy()
        other.events = other.hand.events  # the hand appends to the match's log
        return other
