"""The numerical core of the rating fit: compact match data, the likelihood, Newton's method,
the covariance, and the search for results that make the plain fit unbounded.

Pure numerics on integer-indexed arrays (names, tables and notes live in ``arena.rating.table``).
Built for leagues: memory grows with the number of results, plus one dense bots x bots
matrix per rated group for the intervals.

The likelihood (see docs/RATINGS.md): a side's strength is the sum of its members'; the
finishing order of a match's sides is Plackett-Luce (the winner is picked from all sides
with probability proportional to exp(strength), the second from the rest, and so on); sides
that tie are averaged over their possible orders. Every match thereby becomes a few
"choice events" (a set of sides, how much weight each one got of being picked, the total
weight), each a multinomial-logit term. A two-sided match is one event: exactly the
Bradley-Terry game, a draw counting half each way.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from arena.errors import ArenaError
from arena.rating.linalg import (
    Membership,
    SparseMatrix,
    connected_components,
    inverse_factor,
    solve_positive,
    strong_components,
)

if TYPE_CHECKING:
    from scipy import sparse

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]

MAX_NEWTON_STEPS = 200
DENSE_SOLVE_MAX = 1000
"""Newton steps solve a dense system up to this many bots, and use conjugate gradients above."""

INTERVAL_MAX = 10_000
"""Largest rated group that gets intervals: they need a dense bots x bots matrix (800 MB here)."""

# Eigenvalues of the information matrix below this fraction of the largest one are
# treated as zero: those directions are not determined by the data.
_NULL_TOL = 1e-9
# A margin the separation LP pushes above this (in a unit box) counts as separated.
_SEPARATION_TOL = 1e-7
_CG_RTOL = 1e-11


class FitError(ArenaError, ValueError):
    """The numerical fit failed (should not happen on checked input)."""


# --------------------------------------------------------------------------- compact data


@dataclass(frozen=True)
class Block:
    """All matches with the same number of sides ``k``: ``sides`` and ``places`` are
    (matches, k); ``places`` are 0-based competition ranks (how many sides finished ahead)."""

    sides: Ints
    places: Ints

    @property
    def k(self) -> int:
        return int(self.sides.shape[1])

    def __len__(self) -> int:
        return int(self.sides.shape[0])


@dataclass(frozen=True)
class MatchData:
    """Every match, with bots and sides interned as integers.

    Side ``s`` has members ``side_bots[side_ptr[s]:side_ptr[s + 1]]`` (bot ids).
    """

    names: tuple[str, ...]
    side_ptr: Ints
    side_bots: Ints
    blocks: tuple[Block, ...]

    @property
    def n_bots(self) -> int:
        return len(self.names)

    @property
    def n_sides(self) -> int:
        return len(self.side_ptr) - 1

    @property
    def solo(self) -> bool:
        """Every side is a single bot."""
        return bool(np.all(np.diff(self.side_ptr) == 1))

    @property
    def max_sides(self) -> int:
        return max((b.k for b in self.blocks), default=0)

    def membership(self) -> Membership:
        """Sides x bots, 1 where the bot plays in the side."""
        return Membership(self.side_ptr, self.side_bots, self.n_bots)

    def first_member(self) -> Ints:
        return self.side_bots[self.side_ptr[:-1]]


class MatchBuilder:
    """Collects checked matches into flat arrays; bots and sides are interned as integers."""

    def __init__(self) -> None:
        self.bot_index: dict[str, int] = {}
        self._solo: dict[str, int] = {}  # bot name -> id of the side made of that bot alone
        self._teams: dict[tuple[int, ...], int] = {}  # sorted member ids -> side id
        self._side_members: list[tuple[int, ...]] = []
        self._sizes = array("q")
        self._slot_side = array("q")
        self._slot_place = array("q")

    def bot(self, name: str) -> int:
        index = self.bot_index.get(name)
        if index is None:
            index = self.bot_index[name] = len(self.bot_index)
        return index

    def side(self, members: Sequence[str]) -> int:
        if len(members) == 1:
            sid = self._solo.get(members[0])
            if sid is None:
                sid = self._solo[members[0]] = len(self._side_members)
                self._side_members.append((self.bot(members[0]),))
            return sid
        key = tuple(sorted(self.bot(m) for m in members))
        sid = self._teams.get(key)
        if sid is None:
            sid = self._teams[key] = len(self._side_members)
            self._side_members.append(key)
        return sid

    def add(self, sides: Sequence[Sequence[str]], places: Sequence[int]) -> None:
        """One match: its sides and their finishing places (lower is better; equal is a tie)."""
        self._sizes.append(len(sides))
        if len(sides) == 2:
            a, b = sides
            solo = self._solo
            # Most results are one bot against one bot, seen before: two dictionary lookups.
            sa = solo.get(a[0]) if len(a) == 1 else None
            sb = solo.get(b[0]) if len(b) == 1 else None
            self._slot_side.extend((self.side(a) if sa is None else sa, self.side(b) if sb is None else sb))
            self._slot_place.extend(places)
            return
        for members, place in zip(sides, places, strict=True):
            self._slot_side.append(self.side(members))
            self._slot_place.append(place)

    def build(self) -> MatchData:
        sizes = np.frombuffer(self._sizes, dtype=np.int64) if len(self._sizes) else np.zeros(0, dtype=np.int64)
        slot_side = np.frombuffer(self._slot_side, dtype=np.int64) if len(self._slot_side) else np.zeros(0, dtype=np.int64)
        slot_place = np.frombuffer(self._slot_place, dtype=np.int64) if len(self._slot_place) else np.zeros(0, dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if len(sizes) else sizes
        blocks = []
        for k in np.unique(sizes):
            first = starts[sizes == k]
            cols = first[:, None] + np.arange(k)[None, :]
            places = slot_place[cols]
            # 0-based competition rank: how many sides of the match finished strictly ahead.
            ranks = (places[:, None, :] < places[:, :, None]).sum(axis=2).astype(np.int64)
            blocks.append(Block(np.ascontiguousarray(slot_side[cols]), ranks))
        lengths = np.array([len(m) for m in self._side_members], dtype=np.int64)
        side_ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        side_bots = np.fromiter(itertools.chain.from_iterable(self._side_members), dtype=np.int64, count=int(lengths.sum()))
        names = tuple(self.bot_index)
        return MatchData(names, side_ptr, side_bots, tuple(blocks))


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Records:
    """Per bot: matches played, W-D-L over two-sided matches, and finishing places over
    matches of three or more sides (``places[i, p]``: times bot ``i``'s side finished
    ``p + 1``-th, ties sharing the better place)."""

    matches: Ints
    wins: Ints
    draws: Ints
    losses: Ints
    places: Ints


def records(data: MatchData) -> Records:
    n_sides = data.n_sides
    membership = data.membership()
    width = max(data.max_sides, 2)
    per_side = {key: np.zeros(n_sides) for key in ("matches", "wins", "draws", "losses")}
    side_places = np.zeros((n_sides, width))
    for block in data.blocks:
        sides, ranks = block.sides.ravel(), block.places
        per_side["matches"] += np.bincount(sides, minlength=n_sides)
        if block.k == 2:
            a, b = ranks[:, 0], ranks[:, 1]
            for key, left, right in (("wins", a < b, b < a), ("draws", a == b, a == b), ("losses", a > b, b > a)):
                outcome = np.stack([left, right], axis=1).ravel().astype(float)
                per_side[key] += np.bincount(sides, weights=outcome, minlength=n_sides)
        else:
            flat = ranks.ravel()
            for p in range(block.k):
                side_places[:, p] += np.bincount(sides, weights=(flat == p).astype(float), minlength=n_sides)
    out = {key: np.rint(membership.bot_sums(value)).astype(np.int64) for key, value in per_side.items()}
    places = np.rint(membership.bot_sums(side_places)).astype(np.int64)
    return Records(out["matches"], out["wins"], out["draws"], out["losses"], places)


# --------------------------------------------------------------------------- structure


def components(data: MatchData) -> Ints:
    """Connected component of every bot: bots that met, directly or through common opponents."""
    firsts = data.first_member()
    rows = [np.repeat(firsts, np.diff(data.side_ptr)), *(firsts[b.sides[:, 0]].repeat(b.k) for b in data.blocks)]
    cols = [data.side_bots, *(firsts[b.sides].ravel() for b in data.blocks)]
    return connected_components(data.n_bots, np.concatenate(rows), np.concatenate(cols))


def _pairs(block: Block) -> tuple[Ints, Ints, Ints, Ints]:
    """Every pair of sides in every match of the block: (side i, side j, rank i, rank j)."""
    i, j = np.triu_indices(block.k, 1)
    return (block.sides[:, i].ravel(), block.sides[:, j].ravel(), block.places[:, i].ravel(), block.places[:, j].ravel())


@dataclass(frozen=True)
class Separation:
    """Where the plain maximum-likelihood fit is finite.

    ``part[i]``: the bot's part; within a part the fit is finite, between parts some results
    are perfectly ordered. ``level[i]``: orders the parts (a part that beat another has a
    higher level). ``beat[i]`` / ``beaten[i]``: the bot finished ahead of / behind some
    opponent. ``separated``: (side, side) pairs, smaller id first, whose results are all
    perfectly ordered across parts (only filled when teams need the linear programme).
    """

    part: Ints
    level: Floats
    beat: NDArray[np.bool_]
    beaten: NDArray[np.bool_]
    separated: frozenset[tuple[int, int]]


def separation(data: MatchData, component: Ints) -> Separation:
    n = data.n_bots
    beat = np.zeros(n, dtype=bool)
    beaten = np.zeros(n, dtype=bool)
    membership = data.membership()
    win_side = np.zeros(data.n_sides)
    lose_side = np.zeros(data.n_sides)
    for block in data.blocks:
        si, sj, ri, rj = _pairs(block)
        win_side += np.bincount(si, weights=(ri < rj), minlength=data.n_sides)
        win_side += np.bincount(sj, weights=(rj < ri), minlength=data.n_sides)
        lose_side += np.bincount(si, weights=(ri > rj), minlength=data.n_sides)
        lose_side += np.bincount(sj, weights=(rj > ri), minlength=data.n_sides)
    beat = membership.bot_sums(win_side) > 0
    beaten = membership.bot_sums(lose_side) > 0
    if data.solo:
        part, level = _strong_parts(data)
        return Separation(part, level, beat, beaten, frozenset())
    part, level, separated = _lp_parts(data, component)
    return Separation(part, level, beat, beaten, separated)


def _strong_parts(data: MatchData) -> tuple[Ints, Floats]:
    """One bot per side: the fit is finite exactly within the strongly connected components of
    the graph "a finished ahead of b" (a tie links both ways); between them the condensation
    is acyclic, and a part's level is its longest chain of parts it finished ahead of."""
    n = data.n_bots
    bot_of_side = data.first_member()
    src, dst = [], []
    for block in data.blocks:
        si, sj, ri, rj = _pairs(block)
        a, b = bot_of_side[si], bot_of_side[sj]
        # Edge loser -> winner: from b one can climb to a.
        for keep, lo, hi in ((ri <= rj, b, a), (rj <= ri, a, b)):
            src.append(lo[keep])
            dst.append(hi[keep])
    s, d = (np.concatenate(src), np.concatenate(dst)) if src else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    count, labels = strong_components(n, s, d)
    level = np.zeros(count)
    across = labels[s] != labels[d]
    if across.any():
        edges = np.unique(np.stack([labels[d][across], labels[s][across]], axis=1), axis=0)  # winner part -> loser part
        below: dict[int, list[int]] = defaultdict(list)
        indegree = np.zeros(count, dtype=np.int64)
        for hi, lo in edges.tolist():
            below[hi].append(lo)
            indegree[lo] += 1
        order = [int(v) for v in np.flatnonzero(indegree == 0)]
        for v in order:  # Kahn's topological order, top parts first
            for w in below[v]:
                indegree[w] -= 1
                if indegree[w] == 0:
                    order.append(w)
        for v in reversed(order):
            if below[v]:
                level[v] = 1.0 + max(level[w] for w in below[v])
    return labels, level[labels]


def _lp_parts(data: MatchData, component: Ints) -> tuple[Ints, Floats, frozenset[tuple[int, int]]]:
    """Teams: find the separated comparisons with a linear programme, per component."""
    # Here, not at the top: only teams' records without a prior need the programme.
    from scipy import sparse

    games: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for block in data.blocks:
        si, sj, ri, rj = _pairs(block)
        for a, b, x, y in zip(si.tolist(), sj.tolist(), ri.tolist(), rj.tolist(), strict=True):
            score = 1.0 if x < y else 0.0 if x > y else 0.5
            if b < a:
                a, b, score = b, a, 1.0 - score
            entry = games[a, b]
            entry[0] += 1.0
            entry[1] += score
    keys = list(games)
    membership = data.membership()
    firsts = data.first_member()
    level = np.zeros(data.n_bots)
    separated: set[tuple[int, int]] = set()
    by_component: dict[int, list[int]] = defaultdict(list)
    for k, (a, _b) in enumerate(keys):
        by_component[int(component[firsts[a]])].append(k)
    for rows in by_component.values():
        bots = np.unique(np.concatenate([np.concatenate((membership.of(keys[k][0]), membership.of(keys[k][1]))) for k in rows]))
        local = {int(b): i for i, b in enumerate(bots)}
        design = sparse.lil_matrix((len(rows), len(bots)))
        points = np.zeros(len(rows))
        total = np.zeros(len(rows))
        for r, k in enumerate(rows):
            a, b = keys[k]
            for bot in membership.of(a):
                design[r, local[int(bot)]] = 1.0
            for bot in membership.of(b):
                design[r, local[int(bot)]] = -1.0
            total[r], points[r] = games[keys[k]]
        moved, direction = _separated_lp(design.tocsr(), points, total)
        separated.update(keys[rows[r]] for r in moved)
        level[bots] = direction
    # Parts: bots joined by the comparisons that are not separated.
    src: list[int] = []
    dst: list[int] = []
    for a, b in keys:
        if (a, b) not in separated:
            for bot in (*membership.of(a).tolist(), *membership.of(b).tolist()):
                src.append(int(firsts[a]))
                dst.append(int(bot))
    labels = connected_components(data.n_bots, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64))
    # A part's level: the mean of its members' positions along the separating direction.
    sums = np.bincount(labels, weights=level)
    counts = np.bincount(labels)
    return labels, (sums / counts)[labels], frozenset(separated)


def _separated_lp(x: sparse.csr_matrix, points: Floats, games: Floats) -> tuple[set[int], Floats]:
    """Find the comparisons whose outcome the maximum-likelihood fit can make certain.

    A direction ``v`` in rating space along which the likelihood never decreases keeps every
    unanimous comparison's margin ``z_k . v`` non-negative (``z_k`` is the design row signed
    by the winner) and every mixed comparison's margin at zero. The linear programme looks
    for such a ``v`` (in a box) that maximises the total margin; the comparisons it pushes
    apart are separated. Dropping them and asking again until nothing more moves yields all
    of them (a large multiple of the first direction plus the next one keeps the earlier
    margins positive). Returns their row indices and the combined direction.
    """
    # Here, not at the top: only teams' records (not one bot a side, the common case) need it.
    from scipy import sparse
    from scipy.optimize import linprog

    n = x.shape[1]
    unanimous_mask = (points == 0.0) | (points == games)
    unanimous = np.flatnonzero(unanimous_mask)
    mixed = np.flatnonzero(~unanimous_mask)
    separated: set[int] = set()
    combined = np.zeros(n)
    if not len(unanimous):
        return separated, combined
    sign = np.where(points > 0, 1.0, -1.0)
    z = sparse.diags(sign) @ x
    a_eq = x[mixed] if len(mixed) else None
    b_eq = np.zeros(len(mixed)) if len(mixed) else None
    open_rows = unanimous
    while len(open_rows):
        zo = z[open_rows]
        res = linprog(
            c=-np.asarray(zo.sum(axis=0)).ravel(),
            A_ub=-zo,
            b_ub=np.zeros(len(open_rows)),
            A_eq=a_eq,
            b_eq=b_eq,
            bounds=[(-1.0, 1.0)] * n,
            method="highs",
        )
        if res.status != 0:
            raise FitError(f"separation check failed: {res.message}")
        v = np.asarray(res.x, dtype=float)
        margins = zo @ v
        moved = margins > _SEPARATION_TOL
        if not moved.any():
            break
        if separated:
            old = np.array(sorted(separated), dtype=np.int64)
            old_m, new_m = z[old] @ combined, z[old] @ v
            scale = 1.0 + float(np.max(np.maximum(-new_m, 0.0) / old_m))
            combined = scale * combined + v
        else:
            combined = v
        separated.update(int(k) for k in open_rows[moved])
        open_rows = open_rows[~moved]
    return separated, combined


def side_parts(data: MatchData, part: Ints) -> Ints:
    """The part of every side, or -1 when its members are not all in one part."""
    first = part[data.first_member()]
    member_part = part[data.side_bots]
    owner = np.repeat(np.arange(data.n_sides), np.diff(data.side_ptr))
    mixed = np.zeros(data.n_sides, dtype=bool)
    np.logical_or.at(mixed, owner, member_part != first[owner])
    return np.where(mixed, -1, first)


def restrict(
    blocks: Sequence[Block], side_part: Ints, target: int, separated: frozenset[tuple[int, int]] = frozenset()
) -> list[Block]:
    """The matches as seen within one part: each keeps the sides of that part (at least two),
    in their finishing order among themselves (the Plackett-Luce order of a subset of the
    sides is again Plackett-Luce). A match in which two of the part's sides are separated
    from each other is left out (it can only happen with teams and no prior)."""
    out: dict[int, list[tuple[Ints, Ints]]] = defaultdict(list)
    for block in blocks:
        inside = side_part[block.sides] == target
        if inside.all():
            out[block.k].append((block.sides, block.places))
            continue
        count = inside.sum(axis=1)
        for k in range(2, block.k + 1):
            rows = np.flatnonzero(count == k)
            if not len(rows):
                continue
            order = np.argsort(~inside[rows], axis=1, kind="stable")[:, :k]
            sides = np.take_along_axis(block.sides[rows], order, axis=1)
            places = np.take_along_axis(block.places[rows], order, axis=1)
            ranks = (places[:, None, :] < places[:, :, None]).sum(axis=2).astype(np.int64)
            out[k].append((sides, ranks))
    blocks_out = []
    for k in sorted(out):
        sides = np.concatenate([s for s, _ in out[k]])
        places = np.concatenate([p for _, p in out[k]])
        if separated:
            i, j = np.triu_indices(k, 1)
            keep = [
                not any((min(a, b), max(a, b)) in separated for a, b in zip(row[i].tolist(), row[j].tolist(), strict=True))
                for row in sides
            ]
            sides, places = sides[keep], places[keep]
        if len(sides):
            blocks_out.append(Block(sides, places))
    return blocks_out


# --------------------------------------------------------------------------- choice events


@cache
def _template(ranks: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], tuple[float, ...], float], ...]:
    """The choice events of one finishing order, by position in the match.

    Each linear order consistent with the ranks (tied sides in every order, each order with
    equal weight) is a sequence of picks: the first from all sides, the next from the rest,
    and so on. Picks from the same set of sides are merged into one event:
    (positions, weight picked per position, total weight).
    """
    groups: dict[int, list[int]] = defaultdict(list)
    for pos, rank in enumerate(ranks):
        groups[rank].append(pos)
    tiers = [groups[r] for r in sorted(groups)]
    orders = [list(itertools.chain.from_iterable(p)) for p in itertools.product(*(itertools.permutations(t) for t in tiers))]
    weight = 1.0 / len(orders)
    events: dict[tuple[int, ...], dict[int, float]] = {}
    for order in orders:
        for t in range(len(order) - 1):
            key = tuple(sorted(order[t:]))
            picked = events.setdefault(key, dict.fromkeys(key, 0.0))
            picked[order[t]] += weight
    return tuple((key, tuple(events[key][p] for p in key), sum(events[key].values())) for key in sorted(events))


@dataclass(frozen=True)
class Events:
    """Choice events of one size ``s``: ``cols`` (events, s) index the strength vector,
    ``y`` (events, s) the weight each member was picked, ``w`` (events,) the total weight."""

    cols: Ints
    y: Floats
    w: Floats


def choice_events(blocks: Sequence[Block], column_of_side: Ints) -> list[Events]:
    """All matches as choice events over strength columns, identical events merged."""
    parts: dict[int, list[tuple[Ints, Floats, Floats]]] = defaultdict(list)
    for block in blocks:
        cols = column_of_side[block.sides]
        if block.k == 2:
            a, b = block.places[:, 0], block.places[:, 1]
            ya = np.where(a < b, 1.0, np.where(a == b, 0.5, 0.0))
            parts[2].append((cols, np.stack([ya, 1.0 - ya], axis=1), np.ones(len(block))))
            continue
        patterns, inverse = np.unique(block.places, axis=0, return_inverse=True)
        inverse = np.asarray(inverse).ravel()
        for p, pattern in enumerate(patterns):
            rows = np.flatnonzero(inverse == p)
            for positions, picked, weight in _template(tuple(int(v) for v in pattern)):
                size = len(positions)
                parts[size].append(
                    (cols[rows][:, list(positions)], np.tile(np.array(picked), (len(rows), 1)), np.full(len(rows), weight))
                )
    out = []
    for size in sorted(parts):
        cols = np.concatenate([c for c, _, _ in parts[size]])
        y = np.concatenate([v for _, v, _ in parts[size]])
        w = np.concatenate([v for _, _, v in parts[size]])
        out.append(_merge(Events(cols, y, w)))
    return out


def _merge(ev: Events) -> Events:
    """Events over the same set of columns add up (the likelihood is linear in y and w)."""
    if ev.cols.shape[1] == 2:
        swap = ev.cols[:, 0] > ev.cols[:, 1]
        cols = np.where(swap[:, None], ev.cols[:, ::-1], ev.cols)
        y = np.where(swap[:, None], ev.y[:, ::-1], ev.y)
        top = int(cols.max(initial=0)) + 1
        keys, inverse = np.unique(cols[:, 0] * top + cols[:, 1], return_inverse=True)
        uniq = np.stack([keys // top, keys % top], axis=1)
    else:
        order = np.argsort(ev.cols, axis=1, kind="stable")
        cols = np.take_along_axis(ev.cols, order, axis=1)
        y = np.take_along_axis(ev.y, order, axis=1)
        uniq, inverse = np.unique(cols, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    if len(uniq) == len(cols):
        return Events(cols, y, ev.w)
    m = len(uniq)
    y_sum = np.stack([np.bincount(inverse, weights=y[:, j], minlength=m) for j in range(cols.shape[1])], axis=1)
    w_sum = np.bincount(inverse, weights=ev.w, minlength=m)
    return Events(uniq.astype(np.int64), y_sum.astype(np.float64), w_sum.astype(np.float64))


# --------------------------------------------------------------------------- the objective


class Objective:
    """Log-posterior of the strengths of one part, with its gradient and information matrix.

    ``events`` index the columns of ``u = S r`` (side strengths; ``S`` is ``membership``, or
    the identity when ``membership`` is None); ``precision`` is the Gaussian prior's.
    """

    def __init__(self, events: Sequence[Events], n_cols: int, membership: Membership | None, n: int, precision: float):
        self.events = list(events)
        self.n_cols = n_cols
        self.s = membership
        self.n = n
        self.precision = precision
        self.total_weight = float(sum(ev.w.sum() for ev in self.events))
        # The sparsity pattern of the information matrix over columns, found once.
        keys = []
        for ev in self.events:
            size = ev.cols.shape[1]
            a, b = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
            keys.append((ev.cols[:, a.ravel()] * n_cols + ev.cols[:, b.ravel()]).ravel())
        uniq, inverse = np.unique(np.concatenate(keys) if keys else np.zeros(0, np.int64), return_inverse=True)
        self._slot = np.asarray(inverse).ravel()
        rows, cols = uniq // n_cols, uniq % n_cols
        self._indices = cols.astype(np.int64)
        self._indptr = np.searchsorted(rows, np.arange(n_cols + 1)).astype(np.int64)
        self._nnz = len(uniq)

    def strengths(self, r: Floats) -> Floats:
        return self.s.side_sums(r) if self.s is not None else r

    def value(self, r: Floats) -> float:
        u = self.strengths(r)
        ll = 0.0
        for ev in self.events:
            if ev.cols.shape[1] == 2:
                a, b = u[ev.cols[:, 0]], u[ev.cols[:, 1]]
                ll += float(ev.y[:, 0] @ a + ev.y[:, 1] @ b - ev.w @ np.logaddexp(a, b))
                continue
            x = u[ev.cols]
            top = x.max(axis=1)
            lse = top + np.log(np.exp(x - top[:, None]).sum(axis=1))
            ll += float((ev.y * x).sum() - (ev.w * lse).sum())
        return ll - 0.5 * self.precision * float(r @ r)

    def full(self, r: Floats) -> tuple[float, Floats, SparseMatrix]:
        """Log-posterior, its gradient, and the likelihood's information matrix (no prior)."""
        u = self.strengths(r)
        ll = 0.0
        grad_u = np.zeros(self.n_cols)
        values = []
        for ev in self.events:
            if ev.cols.shape[1] == 2:
                c0, c1 = ev.cols[:, 0], ev.cols[:, 1]
                a, b = u[c0], u[c1]
                p = 0.5 * (1.0 + np.tanh(0.5 * (a - b)))  # the logistic function, without overflow
                ll += float(ev.y[:, 0] @ a + ev.y[:, 1] @ b - ev.w @ np.logaddexp(a, b))
                g = ev.y[:, 0] - ev.w * p  # d/da; d/db is its negative (y0 + y1 = w)
                grad_u += np.bincount(c0, weights=g, minlength=self.n_cols) - np.bincount(c1, weights=g, minlength=self.n_cols)
                h = ev.w * p * (1.0 - p)
                values.append(np.stack([h, -h, -h, h], axis=1).ravel())
                continue
            x = u[ev.cols]
            top = x.max(axis=1)
            e = np.exp(x - top[:, None])
            tot = e.sum(axis=1)
            pi = e / tot[:, None]
            ll += float((ev.y * x).sum() - (ev.w * (top + np.log(tot))).sum())
            grad_u += np.bincount(ev.cols.ravel(), weights=(ev.y - ev.w[:, None] * pi).ravel(), minlength=self.n_cols)
            size = ev.cols.shape[1]
            # w * (diag(pi) - pi pi^T), row-major over (a, b) as in the sparsity pattern.
            block = -ev.w[:, None, None] * pi[:, :, None] * pi[:, None, :]
            block[:, np.arange(size), np.arange(size)] += ev.w[:, None] * pi
            values.append(block.reshape(len(ev.w), size * size).ravel())
        data = np.bincount(self._slot, weights=np.concatenate(values) if values else None, minlength=self._nnz)
        info = SparseMatrix(np.asarray(data, dtype=np.float64), self._indices, self._indptr, (self.n_cols, self.n_cols))
        if self.s is not None:
            grad = self.s.bot_sums(grad_u)
            info = self.s.project(info)
        else:
            grad = grad_u
        return ll - 0.5 * self.precision * float(r @ r), grad - self.precision * r, info


def objective_for(blocks: Sequence[Block], data: MatchData, bots: Ints, precision: float) -> Objective:
    """The objective of one part: ``bots`` (global ids, sorted) and its restricted matches."""
    local = np.full(data.n_bots, -1, dtype=np.int64)
    local[bots] = np.arange(len(bots))
    if data.solo:
        column_of_side = local[data.first_member()]
        return Objective(choice_events(blocks, column_of_side), len(bots), None, len(bots), precision)
    used = np.unique(np.concatenate([b.sides.ravel() for b in blocks]))
    column_of_side = np.full(data.n_sides, -1, dtype=np.int64)
    column_of_side[used] = np.arange(len(used))
    membership = data.membership().select(used, local, len(bots))
    return Objective(choice_events(blocks, column_of_side), len(used), membership, len(bots), precision)


# --------------------------------------------------------------------------- Newton


@dataclass(frozen=True)
class Fit:
    strengths: Floats  # natural-log units
    info: SparseMatrix  # the likelihood's information matrix at the fit (no prior)


def newton(obj: Objective, *, level_free: bool) -> Fit:
    """Maximise the log-posterior by Newton's method with a backtracking line search.

    ``level_free``: no prior, so adding a constant to every strength changes nothing; the
    steps are then taken orthogonal to that direction (the minimum-norm Newton step).
    """
    n = obj.n
    r = np.zeros(n)
    ll, grad, info = obj.full(r)
    for _ in range(MAX_NEWTON_STEPS):
        if np.max(np.abs(grad), initial=0.0) < 1e-12 * max(1.0, obj.total_weight):
            break
        step = _solve(info, grad, obj.precision, level_free)
        t = 1.0
        while True:
            candidate = r + t * step
            new_ll = obj.value(candidate)
            if new_ll >= ll - 1e-12 * (1.0 + abs(ll)) or t < 1e-10:
                break
            t *= 0.5
        r = candidate
        ll, grad, info = obj.full(r)
        if np.max(np.abs(t * step), initial=0.0) < 1e-11:
            break
    else:
        raise FitError(f"no convergence after {MAX_NEWTON_STEPS} Newton steps")
    return Fit(r, info)


def _solve(info: SparseMatrix, grad: Floats, precision: float, level_free: bool) -> Floats:
    n = len(grad)
    if n <= DENSE_SOLVE_MAX:
        a = info.toarray()
        a[np.diag_indices(n)] += precision
        if level_free:
            a += _level_weight(a) / n
        x = solve_positive(a, grad, _NULL_TOL)
        if x is not None:
            return x
        # Directions the data do not determine beyond the common level (team-mates who
        # always play together): the minimum-norm step leaves them at their even split.
        a = info.toarray()
        a[np.diag_indices(n)] += precision
        return np.asarray(np.linalg.lstsq(a, grad, rcond=None)[0], dtype=float)
    return _pcg(info, grad, precision, level_free)


def _level_weight(a: Floats) -> float:
    return max(float(np.mean(np.diag(a))), 1e-12)


def _pcg(info: SparseMatrix, b: Floats, precision: float, level_free: bool) -> Floats:
    """Solve (info + precision I [+ c 11^T / n]) x = b by conjugate gradients, Jacobi-preconditioned."""
    n = len(b)
    diag = info.diagonal() + precision
    c = max(float(diag.mean()), 1e-12)
    if level_free:
        diag = diag + c / n

    def apply(v: Floats) -> Floats:
        out = info.dot(v) + precision * v
        if level_free:
            out += c * v.mean()
        return out

    inv = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    x = np.zeros(n)
    res = b.copy()
    z = inv * res
    p = z.copy()
    rz = float(res @ z)
    target = _CG_RTOL * float(np.linalg.norm(b))
    for _ in range(10 * n + 100):
        if float(np.linalg.norm(res)) <= target:
            break
        q = apply(p)
        pq = float(p @ q)
        if pq <= 0.0:
            break
        alpha = rz / pq
        x += alpha * p
        res -= alpha * q
        z = inv * res
        rz_new = float(res @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x


# --------------------------------------------------------------------------- covariance


class Covariance:
    """Covariance (nats^2) of the contrasts "strength minus reference" of one part.

    The reference is the part's mean strength, or one anchor bot. Built from the inverse of
    the information matrix ``V``: ``cov(i, j) = V_ij - h_i - h_j + c`` with ``h = V 1 / n``,
    ``c = 1'V1 / n^2`` (mean) or ``h = V e_a``, ``c = V_aa`` (anchor ``a``). ``V`` is kept as
    ``W`` with ``V = W'W`` (``W`` the inverse Cholesky factor) or, after an eigen-
    decomposition, as itself.
    """

    def __init__(self, factor: Floats | None, full: Floats | None, anchor: int | None) -> None:
        self._w = factor
        self._v = full
        if factor is not None:
            n = factor.shape[0]
        elif full is not None:
            n = full.shape[0]
        else:
            raise ValueError("a covariance needs the inverse's factor or the inverse itself")
        if anchor is None:
            h = self._vdot(np.full(n, 1.0 / n))
            self._c = float(h.mean())
        else:
            unit = np.zeros(n)
            unit[anchor] = 1.0
            h = self._vdot(unit)
            self._c = float(h[anchor])
        self._h = h

    def _vdot(self, x: Floats) -> Floats:
        if self._w is not None:
            return np.asarray(self._w.T @ (self._w @ x))
        return np.asarray(self._full() @ x)

    def _full(self) -> Floats:
        # Only called when there is no factor, and __init__ refused having neither.
        if self._v is None:
            raise ValueError("no full inverse kept")
        return self._v

    def variances(self) -> Floats:
        if self._w is not None:
            diag = np.einsum("ij,ij->j", self._w, self._w)
        else:
            diag = np.diag(self._full()).copy()
        return np.asarray(diag - 2.0 * self._h + self._c)

    def cov(self, i: int, j: int) -> float:
        if self._w is not None:
            raw = float(self._w[:, i] @ self._w[:, j])
        else:
            raw = float(self._full()[i, j])
        return raw - float(self._h[i]) - float(self._h[j]) + self._c


@dataclass(frozen=True)
class Inverse:
    """The information matrix's (generalised) inverse and the directions it leaves undetermined."""

    factor: Floats | None  # W with V = W'W, when the Cholesky factorisation worked
    full: Floats | None  # V itself, from an eigendecomposition otherwise
    null: Floats  # (n, q) orthonormal basis of the undetermined directions (besides the level)

    def covariance(self, anchor: int | None) -> Covariance:
        return Covariance(self.factor, self.full, anchor)

    def log_det(self) -> float | None:
        """log det of the inverted matrix, from its Cholesky factor (None when it had none)."""
        if self.factor is None:
            return None
        return float(-2.0 * np.log(np.abs(np.diag(self.factor))).sum())

    def identified(self) -> NDArray[np.bool_]:
        """Bots whose own strength (minus the mean) the data determine."""
        if not self.null.shape[1]:
            return np.ones(self.null.shape[0], dtype=bool)
        centred = self.null - self.null.mean(axis=0)
        return np.asarray((centred**2).sum(axis=1) < 1e-8)


def invert(info: SparseMatrix, precision: float, level_free: bool) -> Inverse:
    """Invert the information matrix (plus the prior's precision).

    Without a prior the common level is undetermined; adding ``c 11'/n`` makes the matrix
    invertible without changing any contrast's variance. If that is still singular (team-mates
    who always play together), fall back to the eigendecomposition's pseudo-inverse.
    """
    n = info.shape[0]
    a = info.toarray()
    a[np.diag_indices(n)] += precision
    if level_free:
        a += _level_weight(a) / n
    w = inverse_factor(a, _NULL_TOL)
    del a
    if w is not None:
        return Inverse(w, None, np.zeros((n, 0)))
    b = info.toarray()
    b[np.diag_indices(n)] += precision
    eigval, eigvec = np.linalg.eigh(b)
    cutoff = _NULL_TOL * max(float(eigval.max(initial=0.0)), 1e-300)
    keep = eigval > cutoff
    full = (eigvec[:, keep] / eigval[keep]) @ eigvec[:, keep].T
    null = eigvec[:, ~keep]
    if level_free:
        # The common level is a convention, not a gap in the data: leave it out of ``null``.
        ones = np.full(n, 1.0 / math.sqrt(n))
        null = null - np.outer(ones, ones @ null)
        u, s, _vt = np.linalg.svd(null, full_matrices=False)
        null = u[:, s > 1e-6]
    return Inverse(None, full, null)


def min_norm(strengths: Floats, null: Floats) -> Floats:
    """The fit with its undetermined directions removed (team-mates at their even split)."""
    if not null.shape[1]:
        return strengths
    return np.asarray(strengths - null @ (null.T @ strengths))
