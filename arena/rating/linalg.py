"""The few sparse-matrix, graph and factorisation steps the rating fit needs, on numpy alone.

scipy has all of them, but importing its sparse matrices or its LAPACK wrappers costs about
0.4 s of CPU (its array-API layer loads numpy.testing and f2py), more than a whole
tournament's fit: every ``arena run``, ``table``, ``rate`` and ``report`` paid it. What numpy
cannot do as well stays with scipy, imported where it is needed: the teams' separation
programme (``linprog``, in ``arena.rating.engine``) and the inverse factor of a group of more
than ``NUMPY_FACTOR_MAX`` bots, where LAPACK's in-place routines hold one n x n array instead
of numpy's three.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]

NUMPY_FACTOR_MAX = 400
"""Largest matrix numpy factorises: its solve costs about three times LAPACK's Cholesky steps
(no triangular solve), a few milliseconds at this size; above it the 0.4 s import is small
beside the fit."""


def _sums(index: Ints, weights: Floats, length: int) -> Floats:
    """The total of ``weights`` at each of ``length`` positions (numpy's typing calls it integers)."""
    return np.asarray(np.bincount(index, weights=weights, minlength=length), dtype=np.float64)


@dataclass(frozen=True)
class SparseMatrix:
    """Compressed rows: row ``i`` holds ``data[indptr[i]:indptr[i + 1]]`` at the columns
    ``indices[indptr[i]:indptr[i + 1]]``, each column at most once."""

    data: Floats
    indices: Ints
    indptr: Ints
    shape: tuple[int, int]

    @classmethod
    def from_entries(cls, rows: Ints, cols: Ints, values: Floats, shape: tuple[int, int]) -> SparseMatrix:
        """The matrix with ``values`` at (``rows``, ``cols``); repeated positions add up."""
        n_rows, n_cols = shape
        keys, inverse = np.unique(rows * n_cols + cols, return_inverse=True)
        data = _sums(np.asarray(inverse).ravel(), values, len(keys))
        indptr = np.searchsorted(keys // max(n_cols, 1), np.arange(n_rows + 1)).astype(np.int64)
        return cls(data, (keys % max(n_cols, 1)).astype(np.int64), indptr, shape)

    @cached_property
    def entry_rows(self) -> Ints:
        """The row of every stored entry (conjugate gradients multiply by the matrix at every step)."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def dot(self, v: Floats) -> Floats:
        return _sums(self.entry_rows, self.data * v[self.indices], self.shape[0])

    def toarray(self) -> Floats:
        n_rows, n_cols = self.shape
        flat = _sums(self.entry_rows * n_cols + self.indices, self.data, n_rows * n_cols)
        return flat.reshape(n_rows, n_cols)

    def diagonal(self) -> Floats:
        rows = self.entry_rows
        on = rows == self.indices
        return _sums(rows[on], self.data[on], min(self.shape))


@dataclass(frozen=True)
class Membership:
    """Which bots play in which side: a 0/1 sides x bots matrix ``S``, side ``s`` made of
    ``members[ptr[s]:ptr[s + 1]]`` (bot columns)."""

    ptr: Ints
    members: Ints
    n_bots: int

    @property
    def n_sides(self) -> int:
        return len(self.ptr) - 1

    def _owner(self) -> Ints:
        return np.repeat(np.arange(self.n_sides, dtype=np.int64), np.diff(self.ptr))

    def of(self, side: int) -> Ints:
        return self.members[self.ptr[side] : self.ptr[side + 1]]

    def side_sums(self, r: Floats) -> Floats:
        """``S r``: each side's total of its members' values."""
        return _sums(self._owner(), r[self.members], self.n_sides)

    def bot_sums(self, x: Floats) -> Floats:
        """``S' x``: each bot's total over the sides it plays in (``x`` per side, or sides x k)."""
        owner = self._owner()
        if x.ndim == 1:
            return _sums(self.members, x[owner], self.n_bots)
        return np.stack([_sums(self.members, x[owner, j], self.n_bots) for j in range(x.shape[1])], axis=1)

    def select(self, sides: Ints, column: Ints, n_bots: int) -> Membership:
        """The rows ``sides``, with every member's column renumbered by ``column``."""
        sizes = np.diff(self.ptr)[sides]
        ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        picked = _expand(self.ptr[sides], sizes)
        return Membership(ptr, column[self.members[picked]].astype(np.int64), n_bots)

    def project(self, a: SparseMatrix) -> SparseMatrix:
        """``S' A S``: a sides x sides matrix as bots x bots."""
        rows = a.entry_rows
        sizes = np.diff(self.ptr)
        first = np.repeat(np.arange(len(rows), dtype=np.int64), sizes[rows])
        bot_i = self.members[_expand(self.ptr[rows], sizes[rows])]
        cols = a.indices[first]
        second = np.repeat(np.arange(len(first), dtype=np.int64), sizes[cols])
        bot_j = self.members[_expand(self.ptr[cols], sizes[cols])]
        return SparseMatrix.from_entries(bot_i[second], bot_j, a.data[first][second], (self.n_bots, self.n_bots))


def _expand(starts: Ints, sizes: Ints) -> Ints:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, sizes)])``, without the loop."""
    total = int(sizes.sum())
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.repeat(starts, sizes) + offsets


# --------------------------------------------------------------------------- graphs


def connected_components(n: int, src: Ints, dst: Ints) -> Ints:
    """Component labels of an undirected graph, numbered in the order of each one's lowest node."""
    parent = list(range(n))

    def root(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]  # path halving keeps the trees shallow
            v = parent[v]
        return v

    for a, b in _distinct_edges(n, src, dst):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = np.array([root(v) for v in range(n)], dtype=np.int64)
    return _first_seen_order(roots)


def strong_components(n: int, src: Ints, dst: Ints) -> tuple[int, Ints]:
    """Strongly connected components of a directed graph (Tarjan's, without recursion, so that a
    long chain of bots cannot overflow the stack): their count and every node's label."""
    out: list[list[int]] = [[] for _ in range(n)]
    for a, b in _distinct_edges(n, src, dst):
        out[a].append(b)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    label = [-1] * n
    count = 0
    counter = 0
    for start in range(n):
        if index[start] >= 0:
            continue
        work = [(start, 0)]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        while work:
            v, i = work[-1]
            edges = out[v]
            if i < len(edges):
                work[-1] = (v, i + 1)
                w = edges[i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    label[w] = count
                    if w == v:
                        break
                count += 1
    return count, np.array(label, dtype=np.int64)


def _distinct_edges(n: int, src: Ints, dst: Ints) -> list[tuple[int, int]]:
    # A league repeats each pairing many times: the graph walk sees each edge once.
    keys = np.unique(np.asarray(src, dtype=np.int64) * n + np.asarray(dst, dtype=np.int64))
    return list(zip((keys // n).tolist(), (keys % n).tolist(), strict=True)) if n else []


def _first_seen_order(labels: Ints) -> Ints:
    _values, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[np.asarray(inverse).ravel()]


# --------------------------------------------------------------------------- factorisations


def solve_positive(a: Floats, b: Floats, tol: float) -> Floats | None:
    """``x`` with ``a x = b`` for a symmetric positive definite ``a``, or None where ``a`` is not
    safely so (a Cholesky pivot below ``tol`` of its largest diagonal entry)."""
    top = float(np.diag(a).max(initial=0.0))
    if a.shape[0] > NUMPY_FACTOR_MAX:
        from scipy.linalg import lapack

        chol, status = lapack.dpotrf(a, lower=1, clean=1, overwrite_a=0)
        if status != 0 or not _well_pivoted(chol, top, tol):
            return None
        x, status = lapack.dpotrs(chol, b, lower=1)
        return np.asarray(x, dtype=float) if status == 0 else None
    chol = _numpy_cholesky(a)
    if chol is None or not _well_pivoted(chol, top, tol):
        return None
    # numpy has no triangular solve: one LU solve of ``a`` costs about what two of the factor would.
    return np.asarray(np.linalg.solve(a, b), dtype=float)


def inverse_factor(a: Floats, tol: float) -> Floats | None:
    """``W`` with ``inv(a) = W'W`` (the inverse of ``a``'s lower Cholesky factor), or None where
    ``a`` is not safely positive definite (as in ``solve_positive``).

    ``a`` may be overwritten: above ``NUMPY_FACTOR_MAX`` LAPACK factorises and inverts it in
    place, the one n x n array a 10,000-bot group can afford."""
    n = a.shape[0]
    top = float(np.diag(a).max(initial=0.0))
    if n > NUMPY_FACTOR_MAX:
        from scipy.linalg import lapack

        # The matrix is symmetric, so its transpose (a Fortran-ordered view) is itself.
        chol, status = lapack.dpotrf(a.T, lower=1, clean=1, overwrite_a=1)
        if status != 0 or not _well_pivoted(chol, top, tol):
            return None
        w, status = lapack.dtrtri(chol, lower=1, overwrite_c=1)
        return np.asarray(w) if status == 0 else None
    chol = _numpy_cholesky(a)
    if chol is None or not _well_pivoted(chol, top, tol):
        return None
    return np.asarray(np.linalg.solve(chol, np.eye(n)), dtype=np.float64)


def _numpy_cholesky(a: Floats) -> Floats | None:
    try:
        return np.asarray(np.linalg.cholesky(a), dtype=np.float64)
    except np.linalg.LinAlgError:
        return None


def _well_pivoted(chol: Floats, top: float, tol: float) -> bool:
    pivots = np.diag(chol) ** 2
    return bool(pivots.min(initial=np.inf) > tol * max(top, 1e-300))
