"""What the other seats' own choices say about the cards they still hold.

A seat that plays as the greedy bot does (bots/greedy_bot.py: the best capture now, else the
trail that leaves the table hardest to sweep) shows something of its hand with every card it
plays: it held nothing that made a better capture, and nothing safer to trail. The deals the
search samples can then be held to that: a deal that gives a seat a hand with which it would
have played otherwise this round is drawn again. A seat's earlier rounds, whose cards have all
been shown, say whether it does play so; a seat that does not is left to uniform deals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import NamedTuple

from arena.core.cards import Card
from arena.core.rules import Rules

# A capture's rank as greedy orders them, bigger better: (escoba, velo, sevens, oros, cards, -risk).
Key = tuple[int, int, int, int, int, int]


def _risk(total: int, unseen: Sequence[int]) -> int:
    need = 15 - total
    return unseen[need] if 1 <= need <= 10 else 0


class Decision:
    """One card a seat played from its hand: ``take`` (empty: a trail) from ``table``, when
    ``public[v]`` cards of capture value ``v`` were on the table or in a pile."""

    __slots__ = ("seat", "card", "take", "table", "public", "_total", "_sets")

    def __init__(self, seat: int, card: Card, take: Sequence[Card], table: Sequence[Card],
                 public: Sequence[int], rules: Rules) -> None:
        self.seat = seat
        self.card = card
        self.take = tuple(sorted(take, key=_order))
        self.table = tuple(table)
        self.public = tuple(public)
        self._total = sum(c.value for c in table)
        # Per capture value, every set of table cards it could take (as the rules allow).
        sets: dict[int, list[tuple[Card, ...]]] = {}
        for k in range(1, len(self.table) + 1):
            for subset in combinations(self.table, k):
                need = 15 - sum(c.value for c in subset)
                if 1 <= need <= 10:
                    sets.setdefault(need, []).append(tuple(sorted(subset, key=_order)))
        if rules.single_capture_priority:
            for need, found in sets.items():
                singles: list[tuple[Card, ...]] = [s for s in found if len(s) == 1]
                if singles:
                    sets[need] = singles
        self._sets = sets

    def _capture_key(self, card: Card, take: tuple[Card, ...], unseen: Sequence[int]) -> Key:
        left = self._total
        velo, sevens, oros = card.seven and card.oro, card.seven, card.oro
        for c in take:
            left -= c.value
            sevens += c.seven
            oros += c.oro
            velo = velo or (c.seven and c.oro)
        escoba = int(len(take) == len(self.table))
        return (escoba, int(velo), sevens, oros, 1 + len(take), -_risk(left, unseen))

    def _trail_key(self, card: Card, unseen: Sequence[int]) -> tuple[int, int, int, int, int]:
        return (_risk(self._total + card.value, unseen), int(card.seven and card.oro), card.seven, card.oro,
                card.value)

    def greedy_would(self, hand: Sequence[Card]) -> bool:
        """Whether a greedy seat holding ``hand`` (``card`` among it) could have played this:
        it is among greedy's equal-best choices with that hand."""
        unseen = list(self.public)
        for i in range(11):
            unseen[i] = 4 - unseen[i]
        for c in hand:
            unseen[c.value] -= 1
        best: Key | None = None
        for c in hand:
            for take in self._sets.get(c.value, ()):
                key = self._capture_key(c, take, unseen)
                if best is None or key > best:
                    best = key
        if self.take:
            return best is not None and self._capture_key(self.card, self.take, unseen) == best
        if best is not None:
            return False
        mine = self._trail_key(self.card, unseen)
        return all(self._trail_key(c, unseen) >= mine for c in hand)


def _order(c: Card) -> int:
    return c.order


class Round:
    """The other seats' plays of this round, to hold sampled hands to (``consistent``)."""

    __slots__ = ("plays",)

    def __init__(self, plays: Sequence[Decision]) -> None:
        self.plays = tuple(plays)

    def consistent(self, hands: Sequence[Sequence[Card]]) -> bool:
        """Whether every play of this round is one greedy could have made, each seat holding
        ``hands[seat]`` now and, before each play, the cards it has played since."""
        held: dict[int, list[Card]] = {}
        for d in reversed(self.plays):
            hand = held.get(d.seat)
            if hand is None:
                hand = held[d.seat] = list(hands[d.seat])
            hand.append(d.card)
            if not d.greedy_would(hand):
                return False
        return True


class Shown(NamedTuple):
    """A card played from a hand this hand, as every seat saw it: by ``seat`` in ``round``,
    taking ``take`` (empty: a trail) from ``table``, the table just before."""

    seat: int
    card: Card
    take: tuple[Card, ...]
    table: tuple[Card, ...]
    round: int


# Past this many cards on a table a play met, no play is explained: what it could have taken
# there is every subset of the table (2 ** n of them), seconds of work on a table nobody has cleared.
INFERRED_TABLE = 12


def other_plays(played: Sequence[Shown], seat: int, round_: int, piles: Iterable[Iterable[Card]],
                rules: Rules) -> Round | None:
    """The plays of the seats other than ``seat`` in round ``round_`` of a hand whose plays so
    far are ``played`` (in order) and whose piles are now ``piles``, to hold sampled hands to
    (``Round``), if every other seat played as greedy does in the rounds already shown (the
    cards a seat played in a finished round are the whole hand it held then); else None. None
    too past INFERRED_TABLE cards on a table. The expert (bots/expert_bot.py, from its kit's
    record of the plays) and the analyst (``arena.search.analysis``, from a view's events) both
    infer so."""
    if any(len(p.table) > INFERRED_TABLE for p in played):
        return None
    piled = [0] * 11
    for pile in piles:
        for c in pile:
            piled[c.value] += 1
    back: list[tuple[Decision, int]] = []  # the other seats' plays, from now back, with their rounds
    for p in reversed(played):  # the piles as each play found them
        if p.take:
            for c in (p.card, *p.take):
                piled[c.value] -= 1
        if p.seat == seat:
            continue
        public = list(piled)
        for c in p.table:
            public[c.value] += 1
        back.append((Decision(p.seat, p.card, p.take, p.table, public, rules), p.round))
    # A seat's hand at a play of a finished round: that card and those it played after it.
    held: dict[tuple[int, int], list[Card]] = {}
    for d, r in back:
        if r >= round_:
            continue
        hand = held.setdefault((d.seat, r), [])
        hand.append(d.card)
        if not d.greedy_would(hand):
            return None
    return Round([d for d, r in reversed(back) if r == round_])
