"""Deals of the cards a seat of a 2-player hand has not seen, fast: the search's determinizations.

A deal is the other seat's hand and the order of the stock. Building each as a fresh
position (``HandState.determinize``: the view read, every card checked) cost more than two
playouts, and a deal held to the other seat's plays this round was drawn whole again until it
fitted (1.8 draws a deal on average). Here the position is built once per search and each
deal copies it with a new hand and stock: the hand is drawn alone (three draws of the rng,
not a shuffle of the deck) until it fits, and past TRIES misses it is drawn from every hand
that fits (worked out once), so that even a rare hand is dealt only as often as it should
be. Only the front of the stock is shuffled: the cards the playouts will deal (``front``);
the rest is never dealt before a playout ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from arena.core.cards import DECK, Card
from arena.core.game import HandState, SeatView
from arena.core.seeding import Rng
from arena.search.inference import Round

# Hands drawn, at most, before the hand is drawn from all that fit instead.
TRIES = 24
# More hands than this are never worked out one by one: past TRIES misses the last draw is kept.
# Each is checked against the plays of the round (tens of us on a wide table), once per search,
# outside the CPU cap's reach: 300 (a hand of two from 25 cards) keeps that to milliseconds,
# where 4,060 (three from 30) took a move against a random bot to 1.9 s of CPU.
MAX_POOL = 300


class Dealer:
    """Deals of ``view`` (a seat of a 2-player hand) from ``rng``: the other seat's hand uniform
    over the hands with no value of ``voids`` (if any fits) that explain its plays this round
    (``seen``, if any does), the first ``front`` cards of the stock in a uniform order."""

    def __init__(self, view: SeatView, rng: Rng, voids: dict[int, set[int]] | None, seen: Round | None,
                 front: int = 40) -> None:
        self.rng = rng
        self.template = template = HandState.determinize(view, rng)
        template.legal_moves()  # once: every deal's copy keeps them (the seat's own moves alike in all)
        self.seat = view.seat
        self.other = other = 1 - view.seat
        self.mine = list(template.hands[view.seat])
        self.unseen = list(view.unseen)
        self.size = view.hand_sizes[other]
        self.banned: set[int] = set(voids.get(other, ())) if voids else set()
        self.seen = seen if seen is not None and seen.plays else None
        self.front = front
        # The deck a deal holds: the cards already dealt (the seen ones, the other hand), then the stock.
        unseen = 0
        for c in self.unseen:
            unseen |= c.bit
        self.known = tuple(c for c in DECK if not c.bit & unseen)
        self.pool: list[tuple[Card, ...]] | None = None

    def fits(self, hand: Sequence[Card], voids: bool = True, plays: bool = True) -> bool:
        """Whether the other seat may hold ``hand``: none of its banned values (``voids``), and
        every play of this round one greedy could have made (``plays``)."""
        if voids and self.banned:
            for c in hand:
                if c.value in self.banned:
                    return False
        seen = self.seen
        if plays and seen is not None:
            hands: list[Sequence[Card]] = [self.mine, hand] if self.other == 1 else [hand, self.mine]
            return seen.consistent(hands)
        return True

    def _pool(self) -> list[tuple[Card, ...]]:
        """Every hand that fits; if none does, every hand that fits the plays; then every hand
        that fits the voids; then all (a seat that does not play as greedy does). Each hand is
        checked against the plays once."""
        both: list[tuple[Card, ...]] = []
        plays: list[tuple[Card, ...]] = []
        voids: list[tuple[Card, ...]] = []
        hands = list(combinations(self.unseen, self.size))
        for hand in hands:
            by_voids = self.fits(hand, True, False)
            by_plays = self.fits(hand, False, True)
            if by_plays:
                plays.append(hand)
                if by_voids:
                    both.append(hand)
            if by_voids:
                voids.append(hand)
        return both or plays or voids or hands

    def deal(self) -> HandState:
        """One deal: a copy of the position with a fresh hand for the other seat and a stock."""
        rng = self.rng
        cards = self.unseen[:]
        n = len(cards)
        k = self.size
        constrained = bool(self.banned) or self.seen is not None
        pool = self.pool
        hand: Sequence[Card] = ()
        if pool is None:
            for _ in range(TRIES if constrained else 1):
                for i in range(k):  # the front of a Fisher-Yates shuffle: k cards drawn uniformly
                    j = i + rng.below(n - i)
                    cards[i], cards[j] = cards[j], cards[i]
                hand = cards[:k]
                if not constrained or self.fits(hand):
                    break
            else:
                if _combinations(n, k) <= MAX_POOL:
                    pool = self.pool = self._pool()
        if pool is not None:
            hand = pool[rng.below(len(pool))]
            held = 0
            for c in hand:
                held |= c.bit
            cards = [c for c in self.unseen if not c.bit & held]
        else:
            cards = cards[k:]
        m = len(cards)
        for i in range(min(self.front, m - 1)):
            j = i + rng.below(m - i)
            cards[i], cards[j] = cards[j], cards[i]
        world = self.template.copy()
        world.hands[self.other] = sorted(hand)
        world.deck = (*self.known, *hand, *cards)
        return world


def _combinations(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out = out * (n - i) // (i + 1)
    return out
