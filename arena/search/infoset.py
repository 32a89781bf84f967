"""The rest of the round searched over the seat's own moves, on many determinized deals at once.

Against a seat that plays as greedy does, the other seat's moves are fixed by the cards it
holds: in one deal of the hidden cards (a "determinization") the rest of the round is a
search over the searching seat's own moves alone. Searching each deal by itself and
averaging the best of each ("perfect-information Monte Carlo") would let every later choice
of the seat see the hidden cards of its deal ("strategy fusion"). Here the deals are
searched together, in a tree of what the seat sees: a node is the history of the round as
the seat observes it (its own moves, then the other seat's replies, which differ from deal
to deal); at its own turn it takes one move for every deal that reaches the node (the best
on their total), never one per deal. The round's end (and the first move of the next round,
which shows whether the table left is swept at once) is the playout's, valued as the flat
search values it (``evaluate``).
"""

from __future__ import annotations

from arena.core.game import PLAY, HandState
from arena.core.moves import Move
from arena.search.evaluation import evaluate
from arena.search.playout import greedy_move, playout, public_counts


class Node:
    """What the seat has seen so far this round, over every deal that showed it: ``total``,
    the sum of the values of the deals whose round ended here; ``children`` by the next move
    (``own``: the seat's own choice, else what another seat played)."""

    __slots__ = ("total", "halves", "own", "children")

    def __init__(self) -> None:
        self.total = 0.0
        self.halves = [0.0, 0.0]  # ``total`` split by the parity of the deal (``split_value``)
        self.own = False
        self.children: dict[Move, Node] = {}

    def value(self) -> float:
        """The total over the deals that reach this node, the seat choosing at each of its own
        nodes the move best on the total of the deals there (every deal there plays every move)."""
        children = self.children
        if not children:
            return self.total
        if self.own:
            best = -1e300
            for child in children.values():
                v = child.value()
                if v > best:
                    best = v
            return self.total + best
        total = self.total
        for child in children.values():
            total += child.value()
        return total


    def split_value(self) -> tuple[float, float]:
        """``value`` on the even and the odd deals, each half's own moves chosen on the other
        half's totals. The best of several noisy totals is biased up, the more so the more
        moves and the fewer deals a node has (a trail leaves more choices later than a
        capture); a move chosen on other deals than those it is valued on is not."""
        even, odd = self.halves
        children = self.children
        if not children:
            return even, odd
        if self.own:
            best_even = best_odd = -1e300
            even_by_odd = odd_by_even = 0.0
            for child in children.values():
                e, o = child.split_value()
                if o > best_odd:  # chosen on the odd deals, valued on the even
                    best_odd, even_by_odd = o, e
                if e > best_even:
                    best_even, odd_by_even = e, o
            return even + even_by_odd, odd + odd_by_even
        for child in children.values():
            e, o = child.split_value()
            even += e
            odd += o
        return even, odd


def _kind(move: Move) -> tuple[int, int, int, tuple[tuple[int, int, int], ...]]:
    card = move.card
    assert card is not None
    return (card.value, card.oro, card.seven, tuple(sorted((c.value, c.oro, c.seven) for c in move.take)))


def distinct(legal: list[Move], same_suits: bool) -> list[Move]:
    """``legal`` with one of each set of plays that differ only by copas, espadas or bastos
    (``same_suits``: those suits score alike, unless sevens count by primera)."""
    if not same_suits or len(legal) < 2:
        return legal
    seen: set[tuple[int, int, int, tuple[tuple[int, int, int], ...]]] = set()
    out: list[Move] = []
    for m in legal:
        key = _kind(m)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


def grow(node: Node, state: HandState, seat: int, side: int, stop: int, wary: int, same_suits: bool,
         half: int = 0, after: int = 1) -> int:
    """Add one deal, ``state`` (changed), to the tree below ``node``: the other seats play as
    greedy does; at each of ``seat``'s own turns until the end of round ``stop`` every distinct
    move is tried. The round's end is played out (``playout``, ``wary`` as there) and valued
    for ``side``, into the ``half`` (0 or 1) of each total the deal counts in (``split_value``).
    ``after``: the moves played past the round's end (``playout``'s). Returns the playouts
    ended (the leaves this deal added)."""
    while True:
        if state.is_over or state.round > stop:
            playout(state, stop, wary, after)
            value = evaluate(state, side)
            node.total += value
            node.halves[half] += value
            return 1
        legal = state.legal_moves()
        if state.turn == seat and state.phase is PLAY:
            moves = distinct(legal, same_suits)
            if len(moves) > 1:
                node.own = True
                leaves = 0
                children = node.children
                for move in moves:
                    child = children.get(move)
                    if child is None:
                        child = children[move] = Node()
                    next_state = state.copy()
                    next_state.apply(move)
                    leaves += grow(child, next_state, seat, side, stop, wary, same_suits, half, after)
                return leaves
            move = moves[0]
        elif len(legal) == 1:
            move = legal[0]
        else:
            move = greedy_move(state, legal, public_counts(state))
        state.apply(move)
        child = node.children.get(move)
        if child is None:
            child = node.children[move] = Node()
        node = child
