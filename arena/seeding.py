"""Portable seeded randomness: the same seed gives the same numbers on any machine and Python.

Python's ``random`` is not used for game randomness because its algorithms are an
implementation detail; splitmix64 is tiny, fast and fully specified.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")
_MASK64 = (1 << 64) - 1


def derive_seed(seed: int, *labels: str | int) -> int:
    """A child seed for a labelled purpose (``derive_seed(master, "deal", 3)``), 63 bits."""
    text = "/".join([str(int(seed))] + [str(label) for label in labels])
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class Rng:
    """splitmix64. Deterministic, portable, not for cryptography."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = int(seed) & _MASK64

    def next_u64(self) -> int:
        z = self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Integer in [0, n) by multiply-shift (Lemire); the bias, n / 2**64, is negligible."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        z = self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return ((z ^ (z >> 31)) * n) >> 64

    def random(self) -> float:
        return (self.next_u64() >> 11) / float(1 << 53)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates from the end. Each 64-bit draw yields several indexes by repeated
        multiply-shift (the remainder of one product is the fraction for the next), drawing
        again once fewer than 16 bits of the fraction would be left."""
        state = self._state
        for steps in _shuffle_plan(len(items)):
            z = state = (state + 0x9E3779B97F4A7C15) & _MASK64
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
            z ^= z >> 31
            for i, size in steps:
                z *= size
                j = z >> 64
                z &= _MASK64
                items[i], items[j] = items[j], items[i]
        self._state = state


_PLANS: dict[int, tuple[tuple[tuple[int, int], ...], ...]] = {}


def _shuffle_plan(n: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The steps of ``Rng.shuffle`` over ``n`` items, one group per fresh 64-bit draw: each
    step is (position, number of choices). Where the draws fall depends on ``n`` alone: each
    index uses up the bit length of its number of choices."""
    plan = _PLANS.get(n)
    if plan is None:
        groups: list[list[tuple[int, int]]] = []
        budget = 0  # bits left in the current draw
        for i in range(n - 1, 0, -1):
            if budget < 16:
                groups.append([])
                budget = 64
            budget -= (i + 1).bit_length()
            groups[-1].append((i, i + 1))
        plan = tuple(tuple(g) for g in groups)
        if len(_PLANS) < 100:
            _PLANS[n] = plan
    return plan
