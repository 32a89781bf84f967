"""What each candidate of one decision is worth, on the same determinized deals: the analyst's
engine (``arena analyze``, arena/analysis/; its budget: arena/analysis/budget.py).

Both value functions play exactly what the expert's search plays
(``arena.search.determinized``: ``deal`` and ``last_round``): each deal of the cards the seat has
not seen (fitted to the inferred voids and, given ``seen``, to the other seats' plays this
round), every candidate applied to a copy of it, a greedy playout to the end of the round and
one move into the next, and the outcome scored for the seat's side (the real points of a
finished hand, else the estimate), without the search's halving, so that every value is
comparable with every other; given ``endgame``, the last round against a seat that plays as
greedy does is solved exactly instead (``solve_end``), on its one deal. Deals use the ``rng``
alone and candidates draw nothing: the same seed gives the same deals whatever the candidates,
so values of a few of them (``category_values`` of the best and the played move) match the
values of all (the solve is exact, so it does too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from arena.core.cards import Card
from arena.core.events import Claim, Deal, InitialCapture, Play, Sweep
from arena.core.game import HandState, SeatView
from arena.core.moves import Move
from arena.core.rules import Rules
from arena.core.seeding import Rng
from arena.search.determinized import (
    capturing_values,
    deal,
    dealer,
    fast_view,
    last_round,
    solvable,
    solved_ends,
    wary_seat,
)
from arena.search.evaluation import evaluate, evaluate_terms
from arena.search.inference import Round, Shown, other_plays
from arena.search.playout import playout

T = TypeVar("T")


def trail_voids(trails: Iterable[tuple[int, Sequence[Card]]]) -> dict[int, set[int]]:
    """Per seat of ``trails`` (each a seat that trailed this round and the table it met): the
    card values it cannot be holding, if players capture when they can.

    A seat that trailed when one of its cards could have captured would have taken instead
    (always so under forced_capture, and so for most bots), so every card still in its hand,
    held since the deal, has none of the values that could have captured then. The expert
    (bots/expert_bot.py, from the kit's record of the plays) and the analyst (``inferred_voids``,
    from a view's events) both infer so."""
    voids: dict[int, set[int]] = {}
    for seat, table in trails:
        voids.setdefault(seat, set()).update(capturing_values(table))
    return voids


def inferred_voids(view: SeatView, plays: Sequence[Shown] | None = None) -> dict[int, set[int]]:
    """``trail_voids`` of the other seats' trails this round, the table each met rebuilt from the
    view's public events of this hand (or given: ``plays``, its ``shown_plays``)."""
    return trail_voids((p.seat, p.table) for p in (shown_plays(view) if plays is None else plays)
                       if not p.take and p.seat != view.seat and p.round == view.round)


def inferred_round(view: SeatView, plays: Sequence[Shown] | None = None) -> Round | None:
    """The other seats' plays this round, to hold the deals to, where they played as greedy does
    in the rounds already shown (``arena.search.inference.other_plays``): from the view's events,
    or from ``plays``, its ``shown_plays`` worked out already."""
    return other_plays(shown_plays(view) if plays is None else plays, view.seat, view.round, view.piles, view.rules)


def shown_plays(view: SeatView) -> list[Shown]:
    """Every card played from a hand this hand, with the table it met, from the view's public
    events (``Shown``)."""
    plays: list[Shown] = []
    table: list[Card] = []
    round_ = 0
    for event in _this_hand(view):
        if isinstance(event, Deal):
            round_ = event.round
            if event.round == 0:
                table = list(event.table)
        elif isinstance(event, InitialCapture):
            table = [c for c in table if c not in event.cards]
        elif isinstance(event, Play):
            plays.append(Shown(event.seat, event.card, tuple(event.take), tuple(table), round_))
            table = [c for c in table if c not in event.take] if event.take else table + [event.card]
        elif isinstance(event, Claim):
            table = [c for c in table if c not in event.take and c != event.card]
        elif isinstance(event, Sweep):
            table = []
    return plays


def _this_hand(view: SeatView) -> Sequence[object]:
    """The view's events from the deal of its hand (round 0) on."""
    events = view.events
    for i in range(len(events) - 1, -1, -1):
        event = events[i]
        if isinstance(event, Deal) and event.round == 0 and event.hand == view.hand_number:
            return events[i:]
    return ()


def _kind(card: Card) -> tuple[int, int, int]:
    return (card.value, card.oro, card.seven)


def representatives(moves: Sequence[Move], rules: Rules) -> list[int]:
    """Per move, the index of the first move that differs from it only by copas, espadas and
    bastos (itself if none): those suits score alike (unless sevens count by primera, which
    looks at every suit), so such moves are worth the same, and only one of them is searched
    (as the expert does, bots/expert_bot.py's distinct_moves)."""
    if rules.sevens == "primera":
        return list(range(len(moves)))
    first: dict[object, int] = {}
    out = []
    for i, m in enumerate(moves):
        key = (m.kind, None if m.card is None else _kind(m.card), tuple(sorted(map(_kind, m.take))))
        out.append(first.setdefault(key, i))
    return out


def _outcomes(view: SeatView, candidates: Sequence[Move], rng: Rng, playouts: int,
              voids: dict[int, set[int]] | None, seen: Round | None,
              score: Callable[[HandState, int], T], wary: bool, endgame: bool) -> Iterator[list[T]]:
    """Per deal, ``score`` of each candidate's playout, as the expert's search plays it; with
    ``endgame``, in the hand's last round against a seat that plays as greedy does (``seen``),
    one deal, the only one (the cards the seat has not seen are the other seat's hand), and each
    candidate's end of the hand with the seat's best replies (``solve_end``)."""
    side = view.side
    view = fast_view(view)
    if endgame and seen is not None and solvable(view):
        # Exact, and never too wide: the other seat's turns do not branch (against a seat of
        # unknown play the expert takes the worst case; a value of another kind, left out here).
        yield [score(end, side) for end in solved_ends(deal(view, rng), candidates, view.seat, True)]
        return
    stop = last_round(view)
    me = wary_seat(view, wary)
    draw = dealer(view, rng, voids, seen)
    for _ in range(playouts):
        world = draw()
        scores: list[T] = []
        for move in candidates:
            state = world.copy()
            state.apply(move)
            playout(state, stop, me)
            scores.append(score(state, side))
        yield scores


def move_values(view: SeatView, candidates: list[Move], rng: Rng, playouts: int,
                voids: dict[int, set[int]] | None = None, seen: Round | None = None,
                wary: bool = False, endgame: bool = False) -> list[float]:
    """The expected point margin for ``view.side`` of each candidate (its points minus the
    other sides' average at the end of the hand, as the expert's search scores it): its mean
    over the same ``playouts`` determinized deals (common random numbers: differences between
    candidates are far less noisy than the values). ``voids``: per other seat, the card values
    it cannot hold; ``seen``: the other seats' plays this round, which every deal's hands must
    explain (``arena.search.inference``); ``wary``: the seat's own later moves played as the
    expert's playouts play them (``arena.search.determinized.wary_seat``); ``endgame``: the
    last round against a seat that plays as greedy does solved exactly, as the expert does."""
    totals = [0.0] * len(candidates)
    deals = 0
    for scores in _outcomes(view, candidates, rng, playouts, voids, seen, evaluate, wary, endgame):
        deals += 1
        for i, value in enumerate(scores):
            totals[i] += value
    return [t / max(1, deals) for t in totals]


def category_values(view: SeatView, candidates: list[Move], rng: Rng, playouts: int,
                    voids: dict[int, set[int]] | None = None, seen: Round | None = None,
                    wary: bool = False, endgame: bool = False) -> list[tuple[float, ...]]:
    """``move_values`` by category (``arena.search.evaluation.TERMS``: escobas, velo, oros,
    cards, sevens), on the same deals for the same seed; each candidate's terms add up to its
    value (to rounding)."""
    totals = [[0.0] * 5 for _ in candidates]
    deals = 0
    for scores in _outcomes(view, candidates, rng, playouts, voids, seen, evaluate_terms, wary, endgame):
        deals += 1
        for total, terms in zip(totals, scores, strict=True):
            for k, term in enumerate(terms):
                total[k] += term
    return [tuple(t / max(1, deals) for t in total) for total in totals]


__all__ = ["category_values", "inferred_round", "inferred_voids", "move_values", "representatives", "shown_plays",
           "trail_voids"]
