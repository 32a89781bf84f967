"""An expert Escoba bot: determinized Monte-Carlo search over the cards it has not seen.

For each decision it deals the unseen cards at random into the other hands and the stock,
consistently with what it knows (a "determinization"), plays every candidate move in that
deal followed by a fast greedy playout to the end of the hand, and scores the hand's point
difference for its side. The same deals are used for every candidate (common random
numbers), so candidates are compared on equal luck. It keeps dealing until its time budget
(default 60 ms) or its deal cap is reached and plays the best average.

Deterministic: the deals come from the kit's seeded rng, and with the default settings the
deal cap, not the clock, ends the search on an ordinary machine.

Needs the ``arena`` package (the rules core) for the simulation:
    pip install -e .          (from the repository root), then
    python3 bots/expert_bot.py [--ms 60] [--playouts 240]
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any, Dict, List, Sequence, Tuple

from arena.cards import Card
from arena.game import CLAIM, OVER, PLAY, TAKE, HandState, SeatView
from arena.moves import Move, MoveKind
from arena.rules import Rules, Seating
from arena.seeding import Rng

if __package__:
    from .kit import escoba_kit as kit
else:  # run as a script: its directory, bots/, is first on sys.path
    from kit import escoba_kit as kit  # type: ignore[no-redef]

DEFAULT_MS = 60.0
DEFAULT_PLAYOUTS = 240

_PLAY = MoveKind.PLAY
_CORE = {c.text: Card.parse(c.text) for c in kit.DECK}
_PHASE = {kit.PLAY: PLAY, kit.CLAIM: CLAIM, kit.TAKE: TAKE}

# Playout weights, in hundredths of a point: what a capture is worth beyond its cards.
W_ESCOBA, W_VELO, W_SEVEN, W_ORO, W_CARD = 100, 70, 25, 8, 4
# A trail that leaves a table adding to 5..14 can be swept by one card.
W_EXPOSED = 60


def _core(cards: Sequence[kit.Card]) -> Tuple[Card, ...]:
    return tuple(sorted((_CORE[c.text] for c in cards), key=_order))


def _order(c: Card) -> int:
    return c.order


def seat_view(game: kit.Game, request: kit.Request, rules: Rules, seating: Seating) -> SeatView:
    """The rules core's view of this seat, rebuilt from the kit's tracked state."""
    pending = None
    options: Tuple[Tuple[Card, ...], ...] = ()
    if request.phase == kit.CLAIM:
        claims = [m for m in request.legal if m.kind == kit.CLAIM]
        pending = (_CORE[claims[0].card.text], tuple(_core(m.take) for m in claims))
    elif request.phase == kit.TAKE:
        options = tuple(_core(m.take) for m in request.legal if m.kind == kit.TAKE)
    return SeatView(
        seat=game.seat, side=game.side, rules=rules, seating=seating, hand_number=game.hand_number,
        round=game.round, dealer=game.dealer, turn=game.seat, phase=_PHASE[request.phase],
        hand=_core(game.hand), table=_core(game.table), stock_count=game.stock,
        hand_sizes=tuple(game.hand_sizes), piles=tuple(_core(p) for p in game.piles),
        escobas=tuple(game.escobas), last_capturer=game.last_capturer, pending=pending, options=options,
        scores=tuple(game.scores), events=())


def playout(state: HandState, rng: Rng, epsilon: float = 0.0) -> None:
    """Finish the hand with every seat playing a cheap greedy policy (weights above)."""
    while state.phase != OVER:
        legal = state.legal_moves()
        if len(legal) == 1:
            state.apply(legal[0])
            continue
        if epsilon and rng.random() < epsilon:
            state.apply(legal[rng.below(len(legal))])
            continue
        table = state.table
        ntable = len(table)
        total = 0
        for c in table:
            total += c.value
        best = legal[0]
        best_score = -1_000_000
        for move in legal:
            kind, card, take = move
            if take:
                score = W_CARD
                for c in take:
                    score += W_CARD + c.oro * W_ORO + c.seven * W_SEVEN
                    if c.seven and c.oro:
                        score += W_VELO
                if kind is _PLAY:
                    score += card.oro * W_ORO + card.seven * W_SEVEN + (W_VELO if card.seven and card.oro else 0)
                    if len(take) == ntable:
                        score += W_ESCOBA
                    else:
                        rest = total
                        for c in take:
                            rest -= c.value
                        if 5 <= rest <= 14:
                            score -= W_EXPOSED
                else:
                    score += 1000  # a claim or the dealer's initial capture: take it
            elif kind is _PLAY:
                left = total + card.value
                score = -card.oro * W_ORO - card.seven * W_SEVEN - card.value
                if card.seven and card.oro:
                    score -= W_VELO
                if 5 <= left <= 14:
                    score -= W_EXPOSED
            else:
                score = 0  # pass
            if score > best_score:
                best_score = score
                best = move
        state.apply(best)


def margin(points: Sequence[int], side: int) -> float:
    """This side's points minus the average of the other sides'."""
    others = [p for s, p in enumerate(points) if s != side]
    return points[side] - sum(others) / len(others)


def search(view: SeatView, candidates: List[Move], rng: Rng, budget_s: float, max_playouts: int,
           epsilon: float = 0.0) -> Tuple[int, List[float], int]:
    """(index of the best candidate, total margin per candidate, deals played).

    Every deal is played out once per candidate. The search stops once ``max_playouts``
    playouts are done or, at the end of a deal, the time budget is spent; a deal cut short
    by the clock is not counted, so every candidate has seen the same deals."""
    n = len(candidates)
    totals = [0.0] * n
    if n == 1:
        return 0, totals, 0
    perf = time.perf_counter
    deadline = perf() + budget_s
    side = view.side
    deals = 0
    max_deals = max(1, max_playouts // n)
    scratch = [0.0] * n
    while deals < max_deals:
        world = HandState.determinize(view, rng)
        for i, move in enumerate(candidates):
            state = world.copy()
            state.apply(move)
            playout(state, rng, epsilon)
            scratch[i] = margin(state.points(), side)
            if deals and perf() > deadline:
                break
        else:
            for i in range(n):
                totals[i] += scratch[i]
            deals += 1
            continue
        break
    best = max(range(n), key=totals.__getitem__)
    return best, totals, deals


class Expert:
    """The expert policy with its settings: ``Expert(ms=60, playouts=240)(game, request, rng)``."""

    def __init__(self, ms: float = DEFAULT_MS, playouts: int = DEFAULT_PLAYOUTS, epsilon: float = 0.0) -> None:
        self.ms = ms
        self.playouts = playouts
        self.epsilon = epsilon
        self._cache: Dict[Any, Tuple[Rules, Seating]] = {}

    def _setup(self, game: kit.Game) -> Tuple[Rules, Seating]:
        key = (repr(sorted(game.rules.items())), repr(game.teams), game.players)
        got = self._cache.get(key)
        if got is None:
            got = (Rules.from_dict(game.rules), Seating(game.players, tuple(tuple(t) for t in game.teams)))
            self._cache = {key: got}
        return got

    def __call__(self, game: kit.Game, request: kit.Request, rng: random.Random) -> kit.Move:
        legal = request.legal
        if len(legal) == 1:
            return legal[0]
        rules, seating = self._setup(game)
        view = seat_view(game, request, rules, seating)
        candidates = [Move.parse(m.text) for m in legal]
        budget = max(0.0, min(self.ms, request.time_ms * 0.5 if request.time_ms else self.ms)) / 1000
        best, _, _ = search(view, candidates, Rng(rng.getrandbits(63)), budget, self.playouts, self.epsilon)
        return legal[best]


choose = Expert()


def main(argv: Sequence[str]) -> None:
    ms, playouts = DEFAULT_MS, DEFAULT_PLAYOUTS
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--ms" and args:
            ms = float(args.pop(0))
        elif flag == "--playouts" and args:
            playouts = int(args.pop(0))
        else:
            sys.exit(f"usage: expert_bot.py [--ms MS] [--playouts N] (unknown argument {flag!r})")
    kit.run(Expert(ms, playouts), name="expert")


if __name__ == "__main__":
    main(sys.argv[1:])
