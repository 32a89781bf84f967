"""The playout policy: every seat choosing as bots/greedy_bot.py does, fast."""

from __future__ import annotations

from arena.core.game import OVER, HandState
from arena.core.moves import MoveKind

_PLAY = MoveKind.PLAY


def playout(state: HandState, last_round: int = 99) -> None:
    """Play on with every seat choosing exactly as bots/greedy_bot.py does (the best capture by
    escoba, velo, sevens, oros, cards, then the least sweep risk left; else the trail with the
    least sweep risk, counting the cards the mover has not seen), to the end of the hand, or
    through round ``last_round`` and the first move of the next one (which shows whether the
    table left at the end of the round is swept at once)."""
    public = [0] * 11  # per capture value: cards on the table or in a pile
    for c in state.table:
        public[c.value] += 1
    for pile in state.piles:
        for c in pile:
            public[c.value] += 1
    extra = 1
    while state.phase != OVER:
        if state.round > last_round:
            if not extra:
                return
            extra -= 1
        legal = state.legal_moves()
        best = legal[0]
        if len(legal) > 1:
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
        kind, card, take = best
        if kind is _PLAY and card is not None:
            public[card.value] += 1
        state.apply(best)

