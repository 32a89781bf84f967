"""The search: candidates compared on the same determinized deals, by sequential halving."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.core.cards import Card
from arena.core.game import OVER, PLAY, HandState, SeatView
from arena.core.moves import Move
from arena.core.seeding import Rng
from arena.search.dealing import Dealer
from arena.search.evaluation import estimate, evaluate, margin
from arena.search.inference import Round
from arena.search.infoset import Node, grow
from arena.search.playout import greedy_move, playout, public_counts


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


def capturing_values(table: Sequence[Card]) -> set[int]:
    """The card values that could have captured something on ``table``."""
    sums = {0}
    for c in table:
        sums |= {x + c.value for x in sums if x + c.value <= 14}
    return {15 - x for x in sums if 5 <= x <= 14}



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



# How many deals are drawn, at most, for one that fits what the other seats played this round:
# past it (a seat that plays unlike greedy, a rare hand), the last one drawn is kept.
TRIES = 24


def deal(view: SeatView, rng: Rng, voids: dict[int, set[int]] | None = None,
         seen: Round | None = None) -> HandState:
    """One determinization of ``view`` (a ``fast_view``), its legal moves worked out once: every
    candidate's copy keeps them for its apply. ``voids``: the values a seat cannot hold;
    ``seen``: plays of this round the other seats' hands must explain."""
    for _ in range(TRIES if seen is not None and seen.plays else 1):
        world = HandState.determinize(view, rng)
        if voids:
            constrain(world, voids, rng)
        if seen is None or seen.consistent(world.hands):
            break
    world.legal_moves()
    return world


def dealer(view: SeatView, rng: Rng, voids: dict[int, set[int]] | None = None, seen: Round | None = None,
           horizon: int = 0) -> Callable[[], HandState]:
    """Deals of ``view`` (a ``fast_view``) as ``deal`` draws them, one a call: in a 2-player hand by a
    ``Dealer`` (the position built once, the stock shuffled as far as the playouts to round
    ``last_round(view, horizon)`` and one move on deal from it), else by ``deal`` itself."""
    if view.seating.players == 2:
        return Dealer(view, rng, voids, seen, front=6 * (horizon + 1)).deal
    return lambda: deal(view, rng, voids, seen)


def last_round(view: SeatView, horizon: int = 0) -> int:
    """Playouts stop ``horizon`` rounds after this one and estimate the rest (2 sides only)."""
    return view.round + horizon if view.seating.sides == 2 else 99


def wary_seat(view: SeatView, wary: bool) -> int:
    """The seat the playouts play by ``wary_move`` (``playout``'s ``wary``): the view's own,
    given ``wary`` in a 2-player hand; else none (-1)."""
    return view.seat if wary and view.seating.players == 2 else -1


def play_out(world: HandState, move: Move, view: SeatView, horizon: int = 0, wary: int = -1,
             after: int = 1, tail: bool = False) -> float:
    """The value for ``view.side`` of ``move`` in the deal ``world`` (left as it is); ``wary``
    and ``after``: as ``playout``'s. ``tail``: in the penultimate round of a 2-player hand
    (``penultimate``), the playout stops at the round's end and the last round is solved
    (``solve``, the other seat as greedy): the exact value of the position the round leaves,
    in place of the estimate."""
    state = world.copy()
    state.apply(move)
    if tail and penultimate(view):
        playout(state, view.round, wary, 0)
        return solve(state, view.seat, True)  # of a hand already over: its margin, as evaluate gives
    playout(state, last_round(view, horizon), wary, after)
    return evaluate(state, view.side)


def penultimate(view: SeatView) -> bool:
    """Whether a 2-player hand has one round left to deal after this one (its stock holds that round's cards)."""
    return view.seating.players == 2 and view.stock_count == 3 * view.seating.players


class TooWide(Exception):
    """A solve that met more positions than it was allowed (``solve``'s ``budget``)."""


def solve(state: HandState, side: int, greedy: bool, budget: list[int] | None = None) -> float:
    """The margin for ``side`` at the end of a hand whose cards are all known (2 players, the
    stock spent): the seat of ``side`` choosing the best at every turn, the other choosing as
    greedy does (``greedy``: the other seat is known to play so) or the worst for ``side``.
    ``budget``: a one-item list of the positions it may still branch at, counted down;
    ``TooWide`` when they run out. (``state`` is played on.)"""
    return margin(solve_end(state, side, greedy, budget).points(), side)


def solve_end(state: HandState, side: int, greedy: bool, budget: list[int] | None = None) -> HandState:
    """The finished hand ``solve`` values: the end of the line both seats play as it says (of
    equal moves, the first in the core's order)."""
    legal = state.legal_moves() if state.phase is not OVER else []
    mine = state.turn == side
    while len(legal) == 1 or (legal and greedy and not mine):  # no choice to weigh: played on
        state.apply(legal[0] if len(legal) == 1 else greedy_move(state, legal, public_counts(state)))
        legal = state.legal_moves() if state.phase is not OVER else []
        mine = state.turn == side
    if not legal:
        return state
    if budget is not None:
        budget[0] -= len(legal)
        if budget[0] < 0:
            raise TooWide
    ends = []
    for move in legal:
        after = state.copy()
        after.apply(move)
        ends.append(solve_end(after, side, greedy, budget))
    values = [margin(end.points(), side) for end in ends]
    best = max(values) if mine else min(values)
    return ends[values.index(best)]  # the first of equals


def solved_ends(world: HandState, candidates: Sequence[Move], seat: int, greedy: bool,
                budget: list[int] | None = None) -> list[HandState]:
    """Each candidate played in ``world`` (a deal of a hand whose stock is spent), and the
    finished hand ``solve_end`` plays on from it; ``budget`` shared by all of them."""
    ends = []
    for move in candidates:
        state = world.copy()
        state.apply(move)
        ends.append(solve_end(state, seat, greedy, budget))
    return ends


# The positions a last-round solve may branch to, all candidates together, before the sampled
# search takes over (with the CPU left). Against greedy the solve branches at its own turns
# alone and stays far below; against a seat of unknown play (min at its turns too) it met
# 360-5,300 in twelve greedy-played last rounds, and 29,000 on a 7-card table a random bot
# left, where it took a move to 1.9 s of CPU. At some 15 us a position, 5,000 fit the cap.
SOLVE_POSITIONS = 5000


SOLVED_TABLE = 8


def solvable(view: SeatView) -> bool:
    """Whether the hand left is a game of known cards: 2 players and the stock spent, so that the
    cards the seat has not seen are the other seat's hand."""
    # A table nobody has cleared (random play) makes the tree of captures explode (1.4 s of CPU
    # once against random): past SOLVED_TABLE cards the sampled search keeps its CPU cap.
    return (view.seating.players == 2 and view.stock_count == 0 and view.phase is PLAY
            and len(view.table) <= SOLVED_TABLE)


def search(view: SeatView, candidates: list[Move], rng: Rng, cpu_s: float, max_playouts: int,
           voids: dict[int, set[int]] | None = None, horizon: int = 0,
           wall_s: float | None = None, by_time: bool = False,
           clock: Callable[[], float] | None = None, ranked: bool = False,
           seen: Round | None = None, wary: bool = False,
           endgame: bool = False, tree: bool = False, extra: int = 0,
           split: bool = False, after: int = 1, tail: bool = False) -> tuple[int, list[float], list[int]]:
    """(index of the best candidate, total margin per candidate, deals per candidate).

    Sequential halving: the budget of ``max_playouts`` is split over rounds; in each round
    every surviving candidate plays out the same fresh deals (so they are compared on equal
    luck), then the worse half is dropped. The caps are checked after every playout: ``cpu_s``
    seconds on ``clock`` (this thread's CPU time) and, if given, ``wall_s`` seconds of the wall
    clock. A deal cut short by a cap is not counted, and the best survivor by its mean so far
    is chosen. ``by_time``: the budget is the ``cpu_s`` alone, split evenly over the rounds
    (a round ends with the first whole deal past its share), and playouts do not count.
    ``ranked``: the candidates come best first (``shortlist``), so a cap may stop the search
    even before its first whole deal (else it plays that deal out whatever the cap). ``seen``:
    the other seats' plays this round, which every deal's hands must explain (``deal``).
    ``wary``: the seat's own later moves in the playouts are played by ``wary_move``
    (``wary_seat``). ``endgame``: in the hand's last round (``solvable``), every candidate is
    valued exactly instead (``solve``: the other seat as greedy if ``seen`` says it plays so),
    one "deal" each. ``tree``: in a 2-player hand, budgeted by playouts, the rest of the round
    is searched over the seat's own moves (``search_tree``; ``split`` as there). ``extra``: playouts more, at most,
    for the two best candidates while their difference is within the noise (``close``).
    ``after``: the playouts' moves past the round's end (``playout``'s). ``tail``: the last round
    solved at the playouts' end in the penultimate one (``play_out``'s)."""
    n = len(candidates)
    totals = [0.0] * n
    deals = [0] * n
    if n == 1:
        return 0, totals, deals
    if endgame and solvable(view):
        solve_start = (clock or time.thread_time)()
        world = deal(fast_view(view), rng)
        budget = [SOLVE_POSITIONS]
        try:
            ends = solved_ends(world, candidates, view.seat, seen is not None, budget)
            totals = [margin(end.points(), view.seat) for end in ends]
            deals = [1] * n
            return max(range(n), key=lambda i: totals[i]), totals, deals
        except TooWide:
            totals, deals = [0.0] * n, [0] * n
            cpu_s = max(0.0, cpu_s - ((clock or time.thread_time)() - solve_start))
    if tree and not by_time and view.seating.players == 2:
        return search_tree(view, candidates, rng, cpu_s, max_playouts, voids, wall_s, clock, ranked, seen, wary,
                           split, after)
    cpu = clock or time.thread_time
    wall = time.perf_counter
    start = wall()
    cpu_start = cpu()
    wall_deadline = start + wall_s if wall_s is not None else float("inf")
    # A thread's CPU time never runs ahead of the wall clock, so until the wall clock has moved
    # on by the CPU time still left, the cap cannot have been reached: the CPU clock, a system
    # call costing microseconds, is read only then, with the same verdict as after every playout.
    cpu_check = start + cpu_s
    view = fast_view(view)
    me = wary_seat(view, wary)
    draw = dealer(view, rng, voids, seen, horizon)
    alive = list(range(n))
    rounds = max(1, (n - 1).bit_length())
    scratch = [0.0] * n
    # Each candidate's value deal by deal (whole deals only): two candidates alive to the end
    # were played on the same deals, so their differences pair up (``close``).
    values: list[list[float]] = [[] for _ in range(n)]
    out_of_time = False
    round_end = math.inf  # by_time: the CPU time (since the start) at which this round ends
    for r in range(rounds):
        per_round = 1 << 40 if by_time else max(1, (max_playouts // rounds) // len(alive))
        if by_time:
            round_end = cpu_s * (r + 1) / rounds
            cpu_check = min(cpu_check, wall() + round_end - (cpu() - cpu_start))
        round_over = False
        for _ in range(per_round):
            world = draw()
            for i in alive:
                scratch[i] = play_out(world, candidates[i], view, horizon, me, after, tail)
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
                    values[i].append(scratch[i])
                if round_over:
                    break
                continue
            break
        if out_of_time or len(alive) <= 2 and r == rounds - 1:
            break
        alive.sort(key=lambda i: -totals[i] / max(1, deals[i]))
        alive = alive[:max(1, (len(alive) + 1) // 2)]
    if extra and not out_of_time and not by_time and len(alive) >= 2:
        alive.sort(key=lambda i: -totals[i] / max(1, deals[i]))
        a, b = alive[0], alive[1]
        spent = 0
        while spent < extra and close(values[a], values[b]):
            for _ in range(CLOSE_BATCH):
                world = draw()
                va = play_out(world, candidates[a], view, horizon, me, after, tail)
                vb = play_out(world, candidates[b], view, horizon, me, after, tail)
                now = wall()
                if now > wall_deadline or now >= cpu_check and cpu() - cpu_start > cpu_s:
                    spent = extra
                    break
                for i, v in ((a, va), (b, vb)):
                    totals[i] += v
                    deals[i] += 1
                    values[i].append(v)
                spent += 2
        alive = [a, b]
    best = max(alive, key=lambda i: totals[i] / max(1, deals[i]))
    return best, totals, deals


# ``extra`` playouts go to the two best candidates in batches of this many deals, while their
# mean difference is within CLOSE_Z standard errors of nothing.
CLOSE_BATCH = 50
CLOSE_Z = 2.0


def close(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether two candidates' values on the same deals differ by less than CLOSE_Z standard
    errors of their mean difference (or are too few to say)."""
    n = len(a)
    if n < 2:
        return True
    mean = 0.0
    for x, y in zip(a, b, strict=True):
        mean += x - y
    mean /= n
    var = 0.0
    for x, y in zip(a, b, strict=True):
        d = x - y - mean
        var += d * d
    var /= n - 1
    return mean * mean < CLOSE_Z * CLOSE_Z * var / n


def search_tree(view: SeatView, candidates: list[Move], rng: Rng, cpu_s: float, max_playouts: int,
                voids: dict[int, set[int]] | None = None, wall_s: float | None = None,
                clock: Callable[[], float] | None = None, ranked: bool = False,
                seen: Round | None = None, wary: bool = False, split: bool = False,
                after: int = 1) -> tuple[int, list[float], list[int]]:
    """``search`` with the rest of the round searched over the seat's own moves
    (``arena.search.infoset``) instead of played out by a fixed policy: each candidate grows a
    tree of what the seat will see, over the same deals. The budget, ``max_playouts``, counts
    the playouts that end the round at the tree's leaves (a deal costs a candidate as many as
    its own later choices make), split evenly over sequential halving's rounds. The caps as
    ``search``'s; a deal cut short by one leaves some candidates a deal ahead, so candidates
    are compared by their means. ``split``: the seat's later moves chosen on the other half of
    the deals than they are valued on (``Node.split_value``), else on the same."""
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
    cpu_check = start + cpu_s  # as in ``search``: the CPU clock is read only once it may have run out
    view = fast_view(view)
    seat, side = view.seat, view.side
    stop = last_round(view)
    me = wary_seat(view, wary)
    same_suits = view.rules.sevens != "primera"
    draw = dealer(view, rng, voids, seen)
    roots = [Node() for _ in range(n)]
    alive = list(range(n))
    rounds = max(1, (n - 1).bit_length())
    share = max(1, max_playouts // rounds)
    out_of_time = False
    # One candidate's deal can be long (hundreds of leaves on a wide table), and cannot be cut
    # short (the tree needs every own move of every deal): the caps stop the search once the
    # longest so far would no longer fit, not once they are passed.
    longest = 0.0
    dealt = 0
    for r in range(rounds):
        spent = 0
        while spent < share and not out_of_time:
            world = draw()
            dealt += 1
            for i in alive:
                before = wall()
                state = world.copy()
                state.apply(candidates[i])
                spent += grow(roots[i], state, seat, side, stop, me, same_suits, dealt & 1, after)
                deals[i] += 1
                now = wall()
                longest = max(longest, now - before)
                over = now + longest > wall_deadline
                if now + longest >= cpu_check:
                    left = cpu_s - (cpu() - cpu_start)
                    over = over or left < longest
                    cpu_check = now + left - longest
                if over and (deals[alive[0]] > 1 or ranked):
                    out_of_time = True
                    break
        for i in alive:
            totals[i] = sum(roots[i].split_value()) if split else roots[i].value()
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
