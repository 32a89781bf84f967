"""An expert Escoba bot: determinized Monte-Carlo search over the cards it has not seen.

For each decision it deals the cards it has not seen at random into the other hands and the
stock, consistently with what it knows and has inferred (a "determinization"), plays every
candidate move in that deal followed by a greedy playout (every seat choosing as
bots/greedy_bot.py does) to the end of the round and one move into the next, and scores the
outcome for its side: the real points if the hand is over, else the escobas and the velo as
they stand and the odds of each majority (cards, oros, sevens). Every candidate is tried on
the same deals (common random numbers); sequential halving drops the worse half of the
candidates as evidence accumulates, and it plays the best mean.

Its budget is a number of playouts (default DEFAULT_PLAYOUTS), not time, so a busy machine
makes it slower but not weaker, and it is deterministic: the deals come from the kit's seeded
rng and the same match replays the same way. Two caps guard the rare position where the
playouts would take long: the CPU time of the search (default DEFAULT_MS ms, measured with
``time.thread_time``, which time spent waiting for a core does not count) and, against the
arena's deadline only, half the wall-clock time the arena gives for the decision. The
playouts, not the caps, end ordinary searches (see docs/BOTS.md for the CPU time per move).

Needs the ``arena`` package (the rules core) for the simulation:
    pip install -e .          (from the repository root), then
    python3 bots/expert_bot.py [--playouts N] [--ms CPU_MS] [--timed]

On the arena's cpu clock (``clock: cpu``) and without ``--playouts`` it budgets by CPU time
instead (``Expert``): the arena then counts only what it spent, so a loaded machine takes
nothing from it. ``--playouts N`` keeps it on playouts, and deterministic, on either clock.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.game import CLAIM, OVER, PLAY, TAKE, Card, HandState, Move, MoveKind, SeatView
from arena.rules import Rules, Seating
from arena.seeding import Rng

if __package__:
    from .kit import escoba_kit as kit
else:  # run as a script: its directory, bots/, is first on sys.path
    from kit import escoba_kit as kit  # type: ignore[no-redef, import-not-found]  # the script's own folder

DEFAULT_MS = 90.0
DEFAULT_PLAYOUTS = 1000

_PLAY = MoveKind.PLAY
_CORE = {c.text: Card.parse(c.text) for c in kit.DECK}
_PHASE = {kit.PLAY: PLAY, kit.CLAIM: CLAIM, kit.TAKE: TAKE}


def _core(cards: Sequence[kit.Card]) -> tuple[Card, ...]:
    return tuple(sorted((_CORE[c.text] for c in cards), key=_order))


def _order(c: Card) -> int:
    return c.order


@dataclass(frozen=True)
class _View(SeatView):
    """A SeatView whose unseen cards are worked out once, not at every determinization."""

    unseen_cards: tuple[Card, ...] = ()

    @property
    def unseen(self) -> tuple[Card, ...]:
        return self.unseen_cards


def fast_view(view: SeatView) -> SeatView:
    fields = {f: getattr(view, f) for f in view.__dataclass_fields__ if f != "unseen_cards"}
    return _View(**fields, unseen_cards=tuple(view.unseen))


def seat_view(game: kit.Game, request: kit.Request, rules: Rules, seating: Seating) -> SeatView:
    """The rules core's view of this seat, rebuilt from the kit's tracked state."""
    pending = None
    options: tuple[tuple[Card, ...], ...] = ()
    if request.phase == kit.CLAIM:
        claims = [m for m in request.legal if m.kind == kit.CLAIM]
        claimed = [m.card for m in claims if m.card is not None]  # every claim names the trailed card
        pending = (_CORE[claimed[0].text], tuple(_core(m.take) for m in claims))
    elif request.phase == kit.TAKE:
        options = tuple(_core(m.take) for m in request.legal if m.kind == kit.TAKE)
    return SeatView(
        seat=game.seat, side=game.side, rules=rules, seating=seating, hand_number=game.hand_number,
        round=game.round, dealer=game.dealer, turn=game.seat, phase=_PHASE[request.phase],
        hand=_core(game.hand), table=_core(game.table), stock_count=game.stock,
        hand_sizes=tuple(game.hand_sizes), piles=tuple(_core(p) for p in game.piles),
        escobas=tuple(game.escobas), last_capturer=game.last_capturer, pending=pending, options=options,
        scores=tuple(game.scores), events=())


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


def margin(points: Sequence[int], side: int) -> float:
    """This side's points minus the average of the other sides'."""
    others = [p for s, p in enumerate(points) if s != side]
    return points[side] - sum(others) / len(others)


def _edge_table(size: int, lump: float) -> list[list[float]]:
    """EDGE[r][d + 40]: P(ahead) - P(behind) at the end for a lead of ``d`` with ``r`` cards of
    a kind (of at most ``size``) still to share.

    The cards are not shared one by one at even odds: captures take them in lumps, so the
    share of one side varies about ``lump`` times as much as if each card went its own way.
    The share is beta-binomial, each side's odds at one half, with that variance (a
    correlation of (lump - 1) / (r - 1) between any two cards): exact at the bounds (a lead
    larger than the cards left is certain) and at ties (an even split scores nobody)."""
    table = []
    for r in range(size + 1):
        rho = min(0.99, (lump - 1) / (r - 1)) if r > 1 else 0.0
        if rho > 0:
            a = (1 / rho - 1) / 2  # both beta parameters: mean one half, correlation rho
            probs = [math.exp(math.lgamma(r + 1) - math.lgamma(x + 1) - math.lgamma(r - x + 1)
                              + math.lgamma(x + a) + math.lgamma(r - x + a) - math.lgamma(r + 2 * a)
                              - 2 * math.lgamma(a) + math.lgamma(2 * a))
                     for x in range(r + 1)]
        else:
            probs = [math.comb(r, x) / 2 ** r for x in range(r + 1)]
        below = [0.0]  # below[x]: the odds of fewer than x cards to this side
        for p in probs:
            below.append(below[-1] + p)
        row = []
        for d in range(-40, 41):
            # Ahead with x > (r - d) / 2 of them, behind with x < (r - d) / 2.
            tie = r - d
            first_ahead = min(r + 1, max(0, tie // 2 + 1))
            last_behind = min(r + 1, max(0, (tie + 1) // 2))
            row.append((1.0 - below[first_ahead]) - below[last_behind])
        table.append(row)
    return table


# How lumpy each majority's sharing is, fitted to where greedy self-play really ends (100,000
# hands, the lead and the cards left at every point where a playout stops: the squared error
# of the odds fell from 0.085 to 0.003 for the cards, 0.008 to 0.0004 for the oros and
# 0.0007 to 0.0001 for the sevens against sharing card by card at even odds). Cards go
# to the piles in lumps (a capture takes several), oros and sevens mostly one at a time.
_CARDS = _edge_table(40, 4.5)
_OROS = _edge_table(10, 1.5)
_SEVENS = _edge_table(4, 1.25)
_VELO = Card.parse("7o")


def estimate(state: HandState, side: int) -> float:
    """Expected point margin of ``side`` in an unfinished 2-side hand, from the piles so far:
    escobas and the velo as they stand, each majority by the odds of keeping the lead when
    the cards not yet captured are shared (see ``_edge_table``)."""
    mine, theirs = state.piles[side], state.piles[1 - side]
    value = float(state.escobas[side] - state.escobas[1 - side])
    if _VELO in mine:
        value += 1
    elif _VELO in theirs:
        value -= 1
    n_m, n_t = len(mine), len(theirs)
    o_m = o_t = s_m = s_t = 0
    for c in mine:
        o_m += c.oro
        s_m += c.seven
    for c in theirs:
        o_t += c.oro
        s_t += c.seven
    value += _CARDS[40 - n_m - n_t][n_m - n_t + 40]
    value += _OROS[10 - o_m - o_t][o_m - o_t + 40]
    value += _SEVENS[4 - s_m - s_t][s_m - s_t + 40]
    return value


def evaluate(state: HandState, side: int) -> float:
    if state.phase == OVER:
        return margin(state.points(), side)
    return estimate(state, side)


def capturing_values(table: Sequence[kit.Card]) -> set[int]:
    """The card values that could have captured something on ``table``."""
    sums = {0}
    for c in table:
        sums |= {x + c.value for x in sums if x + c.value <= 14}
    return {15 - x for x in sums if 5 <= x <= 14}


def inferred_voids(game: kit.Game) -> dict[int, set[int]]:
    """Per other seat: card values it cannot be holding, if players capture when they can.

    A seat that trailed this round, when one of its cards could have captured, would have
    taken instead (always so under forced_capture, and so for most bots), so every card still
    in its hand, held since the deal, has none of the values that could have captured then."""
    voids: dict[int, set[int]] = {}
    for p in game.played:
        if p.round == game.round and not p.take and p.seat != game.seat:
            voids.setdefault(p.seat, set()).update(capturing_values(p.table))
    return voids


def constrain(world: HandState, voids: dict[int, set[int]], rng: Rng) -> None:
    """Swap the cards a seat cannot hold (``voids``) for random stock cards it can hold.

    Among the cards a seat may hold all are exchangeable, so its hand stays uniform over the
    hands that fit. When the stock lacks enough such cards the deal is left as it is."""
    for seat, values in voids.items():
        hand = world.hands[seat]
        bad = [i for i, c in enumerate(hand) if c.value in values]
        if not bad:
            continue
        pos = world.stock_pos
        stock = list(world.deck[pos:])
        fits = [i for i, c in enumerate(stock) if c.value not in values]
        if len(fits) < len(bad):
            continue
        for i in bad:
            j = fits.pop(rng.below(len(fits)))
            hand[i], stock[j] = stock[j], hand[i]
        hand.sort(key=_order)
        world.deck = world.deck[:pos] + tuple(stock)


def search(view: SeatView, candidates: list[Move], rng: Rng, cpu_s: float, max_playouts: int,
           voids: dict[int, set[int]] | None = None, horizon: int = 0,
           wall_s: float | None = None, by_time: bool = False,
           clock: Any = None, ranked: bool = False) -> tuple[int, list[float], list[int]]:
    """(index of the best candidate, total margin per candidate, deals per candidate).

    Sequential halving: the budget of ``max_playouts`` is split over rounds; in each round
    every surviving candidate plays out the same fresh deals (so they are compared on equal
    luck), then the worse half is dropped. The caps are checked after every playout: ``cpu_s``
    seconds on ``clock`` (this thread's CPU time) and, if given, ``wall_s`` seconds of the wall
    clock. A deal cut short by a cap is not counted, and the best survivor by its mean so far
    is chosen. ``by_time``: the budget is the ``cpu_s`` alone, split evenly over the rounds
    (a round ends with the first whole deal past its share), and playouts do not count.
    ``ranked``: the candidates come best first (``shortlist``), so a cap may stop the search
    even before its first whole deal (else it plays that deal out whatever the cap)."""
    n = len(candidates)
    totals = [0.0] * n
    deals = [0] * n
    if n == 1:
        return 0, totals, deals
    cpu = clock or time.thread_time
    wall = time.perf_counter
    start = wall()
    cpu_start = cpu()
    wall_deadline = start + wall_s if wall_s is not None else float("inf")
    # A thread's CPU time never runs ahead of the wall clock, so until the wall clock has moved
    # on by the CPU time still left, the cap cannot have been reached: the CPU clock, a system
    # call costing microseconds, is read only then, with the same verdict as after every playout.
    cpu_check = start + cpu_s
    side = view.side
    view = fast_view(view)
    alive = list(range(n))
    rounds = max(1, (n - 1).bit_length())
    scratch = [0.0] * n
    out_of_time = False
    # Playouts stop ``horizon`` rounds after this one and estimate the rest (2 sides only).
    last_round = view.round + horizon if view.seating.sides == 2 else 99
    round_end = math.inf  # by_time: the CPU time (since the start) at which this round ends
    for r in range(rounds):
        per_round = 1 << 40 if by_time else max(1, (max_playouts // rounds) // len(alive))
        if by_time:
            round_end = cpu_s * (r + 1) / rounds
            cpu_check = min(cpu_check, wall() + round_end - (cpu() - cpu_start))
        round_over = False
        for _ in range(per_round):
            world = HandState.determinize(view, rng)
            if voids:
                constrain(world, voids, rng)
            world.legal_moves()  # once a deal: every candidate's copy keeps them for its apply
            for i in alive:
                state = world.copy()
                state.apply(candidates[i])
                playout(state, last_round)
                scratch[i] = evaluate(state, side)
                now = wall()
                over = now > wall_deadline
                if now >= cpu_check:
                    used = cpu() - cpu_start
                    left = cpu_s - used
                    over = over or left < 0
                    round_over = used >= round_end
                    cpu_check = now + min(left, round_end - used)
                if over and (deals[alive[0]] or ranked):
                    out_of_time = True
                    break
            else:
                for i in alive:
                    totals[i] += scratch[i]
                    deals[i] += 1
                if round_over:
                    break
                continue
            break
        if out_of_time or len(alive) <= 2 and r == rounds - 1:
            break
        alive.sort(key=lambda i: -totals[i] / max(1, deals[i]))
        alive = alive[:max(1, (len(alive) + 1) // 2)]
    best = max(alive, key=lambda i: totals[i] / max(1, deals[i]))
    return best, totals, deals


# Above this many distinct moves (a table nobody has cleared for long: thousands of captures),
# only the best by one look ahead are searched: a whole deal of playouts for each would take
# seconds, past any move time.
MAX_CANDIDATES = 48


def shortlist(view: SeatView, candidates: list[Move], rng: Rng, keep: int = MAX_CANDIDATES) -> list[int]:
    """The indexes of the ``keep`` best candidates, best first, each judged by the position
    it leaves in one deal of the hidden cards (no playout)."""
    world = HandState.determinize(fast_view(view), rng)
    world.legal_moves()  # once: each copy below keeps them, so applying a candidate does not redo them
    side = view.side
    two = view.seating.sides == 2
    score = []
    for i, move in enumerate(candidates):
        state = world.copy()
        state.apply(move)
        # Two sides: the margin estimate; more: what the move takes (cards, an escoba weighs most).
        value = estimate(state, side) if two else len(state.piles[side]) + 5 * state.escobas[side]
        score.append((-value, i))
    return [i for _, i in sorted(score)[:keep]]


def _kind(c: kit.Card) -> tuple[int, int, int]:
    return (c.value, c.oro, c.seven)


def distinct_moves(legal: list[kit.Move], rules: Rules) -> list[kit.Move]:
    """The legal moves, keeping one of each set that differ only by copas/espadas/bastos.

    Those three suits score alike (unless sevens are counted by primera, which looks at
    every suit), so such moves lead to games that differ only by names: searching one of
    them is enough, and the budget goes to moves that really differ."""
    if rules.sevens == "primera":
        return list(legal)
    seen = set()
    out = []
    for m in legal:
        key = (m.kind, None if m.card is None else _kind(m.card), tuple(sorted(map(_kind, m.take))))
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


class Expert:
    """The expert policy with its settings: ``Expert(playouts=1000, ms=90)(game, request, rng)``:
    ``playouts`` is the budget, ``ms`` a cap on the CPU time of one search (see the module doc).

    Without ``playouts`` (None), on the arena's cpu clock (``request.clock``) the budget is CPU
    time instead: ``ms``, at most half the request's ``time_ms``, on its own CPU clock
    (``time.process_time``, which the arena's count of its CPU time matches), however many
    playouts that makes; on the wall clock it is DEFAULT_PLAYOUTS. Given ``playouts``, it is
    them on either clock (deterministic). ``timed=True`` budgets by time on the wall clock
    too, by wall time: what a bot that thinks "until its time is up" does, and what a loaded
    machine then takes from it (benchmarks/clocks.py)."""

    def __init__(self, ms: float = DEFAULT_MS, playouts: int | None = None, infer: bool = True,
                 horizon: int = 0, timed: bool = False) -> None:
        self.ms = ms
        self.playouts = playouts
        self.timed = timed
        self.infer = infer
        self.horizon = horizon
        self._cache: dict[Any, tuple[Rules, Seating]] = {}

    def _setup(self, game: kit.Game) -> tuple[Rules, Seating]:
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
        distinct = distinct_moves(legal, rules)
        if len(distinct) == 1:
            return distinct[0]
        candidates = [Move.parse(m.text) for m in distinct]
        voids = inferred_voids(game) if self.infer else None
        seed = Rng(rng.getrandbits(63))
        ranked = len(candidates) > MAX_CANDIDATES
        if ranked:
            keep = shortlist(view, candidates, seed)
            distinct, candidates = [distinct[i] for i in keep], [candidates[i] for i in keep]
        on_cpu = request.clock == "cpu"
        if self.timed or (on_cpu and self.playouts is None):
            budget = kit.Budget(request, 0.5) if request.time_ms else None
            seconds = min(self.ms / 1000, budget.seconds) if budget is not None else self.ms / 1000
            best, _, _ = search(view, candidates, seed, seconds, 0, voids, self.horizon, None, by_time=True,
                                clock=time.process_time if on_cpu else time.perf_counter, ranked=ranked)
            return distinct[best]
        # Against the arena's deadline only: half its time is far more than the search needs.
        wall_s = request.time_ms * 0.5 / 1000 if request.time_ms else None
        playouts = DEFAULT_PLAYOUTS if self.playouts is None else self.playouts
        best, _, _ = search(view, candidates, seed, self.ms / 1000, playouts, voids, self.horizon, wall_s,
                            ranked=ranked)
        return distinct[best]


choose = Expert()


def main(argv: Sequence[str]) -> None:
    ms, timed = DEFAULT_MS, False
    playouts: int | None = None
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--ms" and args:
            ms = float(args.pop(0))
        elif flag == "--playouts" and args:
            playouts = int(args.pop(0))
        elif flag == "--timed":
            timed = True
        else:
            sys.exit(f"usage: expert_bot.py [--playouts N] [--ms CPU_MS] [--timed] (unknown argument {flag!r})")
    kit.run(Expert(ms, playouts, timed=timed), name="expert")


if __name__ == "__main__":
    main(sys.argv[1:])
