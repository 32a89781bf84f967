"""The playout policy: every seat choosing as bots/greedy_bot.py does, fast."""

from __future__ import annotations

from arena.core.cards import Card
from arena.core.game import OVER, PLAY, HandState
from arena.core.moves import Move, MoveKind

_PLAY = MoveKind.PLAY
_PLAY_PHASE = PLAY

# What wary_move weighs, in points of the hand: the velo and an escoba are a point each; a
# seven is about a third of the sevens' point, an oro a tenth of the oros', a card a
# twentieth of the cards'. A sweep left to the other side costs its escoba and a little more
# (the cards it takes).
_VELO_W = 1.0
_SEVEN_W = 0.3
_ORO_W = 0.1
_CARD_W = 0.04
_ESCOBA_W = 1.2
_GIVEN_W = 0.5  # a trailed card's worth is lost only when the other side takes it


def _sweep_odds(need: int, public: list[int], hand: list[Card], played: Card, unseen: int, holds: int) -> float:
    """The odds that the other side, holding ``holds`` of the ``unseen`` cards the mover has
    not seen, holds a card of value ``need`` (which takes the whole table)."""
    if holds <= 0 or not 1 <= need <= 10:
        return 0.0
    r = 4 - public[need]
    for h in hand:
        if h.value == need and h is not played:
            r -= 1
    if r <= 0:
        return 0.0
    miss = 1.0
    for i in range(holds):
        if unseen - i <= 0:
            return 1.0
        miss *= max(0.0, (unseen - r - i) / (unseen - i))
    return 1.0 - miss


def wary_move(state: HandState, legal: list[Move], public: list[int]) -> Move:
    """Greedy made wary, for a seat of a 2-player hand: every play weighed in points, what it takes now
    against the odds of leaving the other side a sweep (and, for a trail, of giving away the
    card trailed), so that it may trail rather than take a card or two and leave the table
    open, and capture what leaves the table safe rather than one card more."""
    seat = state.turn
    hand = state.hands[seat]
    table = state.table
    ntable = len(table)
    total = 0
    for c in table:
        total += c.value
    seen = ntable + len(hand)
    for pile in state.piles:
        seen += len(pile)
    unseen = 40 - seen
    other = state.hands[1 - seat]
    # The other side's cards once this one is played: all it holds, else a fresh round's three.
    holds = len(other) if other else (3 if state.stock_pos < 40 else 0)
    best = legal[0]
    best_score = -1e9
    for move in legal:
        kind, card, take = move
        if kind is not _PLAY or card is None:
            continue
        if take:
            left = total
            velo = card.seven and card.oro
            sevens, oros = card.seven, card.oro
            for c in take:
                left -= c.value
                sevens += c.seven
                oros += c.oro
                if c.seven and c.oro:
                    velo = 1
            swept = len(take) == ntable
            score = (velo * _VELO_W + sevens * _SEVEN_W + oros * _ORO_W + (1 + len(take)) * _CARD_W
                     + swept * _ESCOBA_W)
            if not swept:
                score -= _ESCOBA_W * _sweep_odds(15 - left, public, hand, card, unseen, holds)
        else:
            odds = _sweep_odds(15 - total - card.value, public, hand, card, unseen, holds)
            given = (card.seven and card.oro) * _VELO_W + card.seven * _SEVEN_W + card.oro * _ORO_W
            score = -_ESCOBA_W * odds - _GIVEN_W * given - 0.001 * card.value
        if score > best_score:
            best_score = score
            best = move
    return best


def greedy_move(state: HandState, legal: list[Move], public: list[int]) -> Move:
    """The move bots/greedy_bot.py chooses among ``legal`` (more than one), ``public[v]``
    being the cards of capture value ``v`` on the table or in a pile."""
    best = legal[0]
    hand = state.hands[state.turn]
    table = state.table
    ntable = len(table)
    total = 0
    for c in table:
        total += c.value
    best_score = -10 ** 9
    for move in legal:
        kind, card, take = move
        if take:
            if kind is _PLAY and card is not None:  # a play always names its card
                left = total
                velo = card.seven and card.oro
                sevens, oros, n = card.seven, card.oro, 1 + len(take)
                swept = len(take) == ntable
            elif card is not None:  # a renuncio claim
                velo, sevens, oros, n = card.seven and card.oro, card.seven, card.oro, 1 + len(take)
                left = total - card.value
                swept = len(take) + 1 == ntable
            else:  # the dealer's initial-table capture
                velo, sevens, oros, n = 0, 0, 0, len(take)
                swept = len(take) == ntable
                left = total
            for c in take:
                left -= c.value
                sevens += c.seven
                oros += c.oro
                if c.seven and c.oro:
                    velo = 1
            risk = 0
            need = 15 - left
            if not swept and 1 <= need <= 10:
                risk = 4 - public[need] - (card is not None and card.value == need)
                for h in hand:
                    if h.value == need and h is not card:
                        risk -= 1
            score = swept * 1_000_000 + velo * 100_000 + sevens * 10_000 + oros * 1_000 + n * 10 - risk
        elif kind is _PLAY and card is not None:
            need = 15 - total - card.value
            risk = 0
            if 1 <= need <= 10:
                risk = 4 - public[need] - (card.value == need)
                for h in hand:
                    if h.value == need and h is not card:
                        risk -= 1
            score = -10_000_000 - (risk * 100_000 + (card.seven and card.oro) * 10_000
                                   + card.seven * 1_000 + card.oro * 100 + card.value)
        else:
            score = -10 ** 8  # pass
        if score > best_score:
            best_score = score
            best = move
    return best


def public_counts(state: HandState) -> list[int]:
    """Per capture value (1-10), the cards everyone has seen: on the table or in a pile. What
    ``greedy_move`` and ``wary_move`` count the sweep risk with."""
    public = [0] * 11
    for c in state.table:
        public[c.value] += 1
    for pile in state.piles:
        for c in pile:
            public[c.value] += 1
    return public


def playout(state: HandState, last_round: int = 99, wary: int = -1, after: int = 1) -> None:
    """Play on with every seat choosing exactly as bots/greedy_bot.py does (the best capture by
    escoba, velo, sevens, oros, cards, then the least sweep risk left; else the trail with the
    least sweep risk, counting the cards the mover has not seen), to the end of the hand, or
    through round ``last_round`` and the first move of the next one (which shows whether the
    table left at the end of the round is swept at once).

    ``wary``: a seat of a 2-player hand that chooses by ``wary_move`` instead: greedy's model
    of the other seat stays exact, while the searching seat's own later moves, which it will
    really choose by search, are played by a policy nearer to how it plays. ``after``: the
    moves played past round ``last_round`` (one by default: the first of the next round)."""
    public = public_counts(state)
    extra = after
    while state.phase != OVER:
        if state.round > last_round:
            if not extra:
                return
            extra -= 1
        legal = state.legal_moves()
        best = legal[0]
        if wary >= 0 and len(legal) > 1 and state.turn == wary and state.phase is _PLAY_PHASE:
            best = wary_move(state, legal, public)
        elif len(legal) > 1:
            best = greedy_move(state, legal, public)
        kind, card, take = best
        if kind is _PLAY and card is not None:
            public[card.value] += 1
        state.apply(best)

