"""The analyst's measure: every candidate's value on the same deals, no field dropped."""

from __future__ import annotations

from arena.core.game import HandState, SeatView
from arena.core.moves import Move
from arena.core.seeding import Rng
from arena.search.determinized import deal, fast_view, play_out
from arena.search.inference import Round

# The analyst's budget (``arena analyze``): deals per position, every candidate on each. A
# difference between two candidates varies by about 0.7 points from deal to deal (median of
# twelve positions, at most 2.3), so at this many deals its 95% interval is about +-0.04
# points, +-0.14 at worst: enough to tell a mistake of a tenth of a point. It costs about
# 40 us of CPU a candidate a deal on the compiled build: some 0.2 s for a position of five
# candidates, where the expert spends about 25 ms on a move.
ANALYST_PLAYOUTS = 1000


def move_values(view: SeatView, candidates: list[Move], rng: Rng, playouts: int,
                voids: dict[int, set[int]] | None = None, seen: Round | None = None) -> list[float]:
    """The expected point margin for ``view.side`` of each candidate (its points minus the
    other sides' average at the end of the hand, as the expert's search scores it), each the
    mean over the same ``playouts`` determinized deals of the hidden cards (common random
    numbers: differences between candidates are far less noisy than the values). ``voids``:
    per other seat, the card values it cannot hold (as ``search`` takes them). The same
    deals, playout and evaluation as the expert's search, without its halving, so every
    value is comparable with every other. ``seen``: the other seats' plays this round, which
    the hands of every deal must explain (``arena.search.inference``)."""
    n = len(candidates)
    totals = [0.0] * n
    if n == 0 or playouts < 1:
        return totals
    view = fast_view(view)
    for _ in range(playouts):
        world: HandState = deal(view, rng, voids, seen)
        for i, move in enumerate(candidates):
            totals[i] += play_out(world, move, view)
    return [t / playouts for t in totals]
