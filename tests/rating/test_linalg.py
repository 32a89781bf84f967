"""The fit's own sparse matrices, graph components and factorisations against plain references:
dense products, reachability by brute force, and numpy's inverse."""

import random

import numpy as np
import pytest

from arena.rating.linalg import (
    NUMPY_FACTOR_MAX,
    Membership,
    SparseMatrix,
    connected_components,
    inverse_factor,
    solve_positive,
    strong_components,
)


def _random_edges(rng: random.Random, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    src = np.array([rng.randrange(n) for _ in range(m)], dtype=np.int64)
    dst = np.array([rng.randrange(n) for _ in range(m)], dtype=np.int64)
    return src, dst


def _reach(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    reach = np.eye(n, dtype=bool)
    reach[src, dst] = True
    for k in range(n):  # Warshall
        reach |= reach[:, [k]] & reach[[k], :]
    return reach


@pytest.mark.parametrize("seed", range(30))
def test_components_agree_with_reachability(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 25)
    src, dst = _random_edges(rng, n, rng.randint(0, 2 * n))
    both = _reach(n, np.concatenate([src, dst]), np.concatenate([dst, src]))
    labels = connected_components(n, src, dst)
    assert np.array_equal(labels[:, None] == labels[None, :], both)
    # Numbered by each component's lowest node: the first node of every new label is new.
    firsts = [labels.tolist().index(c) for c in range(labels.max(initial=-1) + 1)]
    assert firsts == sorted(firsts)

    reach = _reach(n, src, dst)
    count, strong = strong_components(n, src, dst)
    assert sorted(set(strong.tolist())) == list(range(count))
    assert np.array_equal(strong[:, None] == strong[None, :], reach & reach.T)


def test_a_long_chain_needs_no_deep_recursion():
    n = 60_000
    src = np.arange(n, dtype=np.int64)
    dst = (src + 1) % n  # one cycle through every node
    count, labels = strong_components(n, src, dst)
    assert count == 1 and not labels.any()
    count, labels = strong_components(n, src[:-1], dst[:-1])  # the chain, broken once
    assert count == n and len(set(labels.tolist())) == n
    assert not connected_components(n, src[:-1], dst[:-1]).any()


def test_sparse_matrix_and_membership_match_dense_algebra():
    rng = np.random.default_rng(4)
    n_sides, n_bots = 9, 6
    rows, cols = rng.integers(0, n_sides, 40), rng.integers(0, n_sides, 40)
    values = rng.normal(size=40)
    a = SparseMatrix.from_entries(rows, cols, values, (n_sides, n_sides))
    dense = np.zeros((n_sides, n_sides))
    np.add.at(dense, (rows, cols), values)
    assert np.allclose(a.toarray(), dense)
    v = rng.normal(size=n_sides)
    assert np.allclose(a.dot(v), dense @ v)
    assert np.allclose(a.diagonal(), np.diag(dense))

    sizes = rng.integers(1, 4, n_sides)
    members = np.concatenate([rng.choice(n_bots, size=k, replace=False) for k in sizes]).astype(np.int64)
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    s = Membership(ptr, members, n_bots)
    s_dense = np.zeros((n_sides, n_bots))
    for side in range(n_sides):
        s_dense[side, s.of(side)] = 1.0
    r = rng.normal(size=n_bots)
    assert np.allclose(s.side_sums(r), s_dense @ r)
    assert np.allclose(s.bot_sums(v), s_dense.T @ v)
    two = rng.normal(size=(n_sides, 2))
    assert np.allclose(s.bot_sums(two), s_dense.T @ two)
    assert np.allclose(s.project(a).toarray(), s_dense.T @ dense @ s_dense)
    sides = np.array([7, 2, 5], dtype=np.int64)
    column = np.array([5, 4, 3, 2, 1, 0], dtype=np.int64)
    sub = s.select(sides, column, n_bots)
    assert [sorted(sub.of(i).tolist()) for i in range(3)] == [sorted(column[s.of(k)].tolist()) for k in sides]


@pytest.mark.parametrize("n", [5, NUMPY_FACTOR_MAX + 3])
def test_factorisations_on_either_side_of_the_numpy_limit(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, n))
    a = x @ x.T + n * np.eye(n)
    b = rng.normal(size=n)
    assert np.allclose(solve_positive(a.copy(), b, 1e-9), np.linalg.solve(a, b))
    w = inverse_factor(a.copy(), 1e-9)
    assert w is not None and np.allclose(w.T @ w, np.linalg.inv(a))
    singular = a.copy()
    singular[:, 0] = singular[0, :] = 0.0
    assert solve_positive(singular.copy(), b, 1e-9) is None
    assert inverse_factor(singular, 1e-9) is None


def test_a_tournaments_fit_does_not_load_scipy():
    # scipy's import costs about 0.4 s, more than the fit of a field of this size: only teams
    # without a prior and groups above the numpy limit load it.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from arena.rating.table import fit_ratings\n"
        "results = [(('a',), ('b',), 1.0), (('b',), ('c',), 0.5), (('c',), ('a',), 0.0)] * 5\n"
        "for prior in (None, 0):\n"
        "    fit_ratings(results, prior=prior)\n"
        "fit_ratings([(('a', 'b'), ('c', 'd'), 1.0), (('a', 'c'), ('b', 'd'), 0.0)])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
