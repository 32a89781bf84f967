"""Portable seeded randomness: the same seed gives the same numbers on any machine and Python.

Python's ``random`` is not used for game randomness because its algorithms are an
implementation detail; splitmix64 is tiny, fast and fully specified.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence, Sequence
from struct import Struct
from typing import TypeVar

T = TypeVar("T")
_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def derive_seed(seed: int, *labels: str | int) -> int:
    """A child seed for a labelled purpose (``derive_seed(master, "deal", 3)``), 63 bits."""
    text = ("%d" + "/%s" * len(labels)) % (int(seed), *labels)  # str(int(seed)) and str(label), joined by "/"
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


# --- many splitmix64 outputs at once ---------------------------------------------------------
# Each output costs a dozen operations on 64-bit integers, and in CPython an operation costs
# about the same on a 64-bit integer as on one of a few thousand bits. So ``_mix`` computes
# ``count`` outputs in one integer of ``count`` lanes of 128 bits: lane k holds the state of
# draw k, and every step of splitmix64 runs on all lanes at once. A product of two 64-bit
# numbers fits in its 128-bit lane, so no carry crosses lanes, provided the bits a right shift
# brings down from the next lane (above bit 64 of a lane) are cleared before multiplying.


class _Lanes:
    __slots__ = ("ones", "ramp", "low", "step", "unpack", "size")

    def __init__(self, count: int) -> None:
        self.ones = sum(1 << (128 * k) for k in range(count))  # 1 in every lane
        self.ramp = sum((k + 1) * _GAMMA << (128 * k) for k in range(count))  # lane k: (k + 1) * gamma
        self.low = sum(_MASK64 << (128 * k) for k in range(count))  # the low 64 bits of every lane
        # In every lane, how far the state moves in one batch of ``count`` outputs.
        self.step = (count * _GAMMA & _MASK64) * self.ones
        self.size = 16 * count
        # Read big-endian, the lanes come last one first, each as its high 64 bits (skipped: 8x)
        # then its low 64 bits.
        self.unpack = Struct(">" + "8xQ" * count).unpack


_LANES: dict[int, _Lanes] = {}


def _lanes(count: int) -> _Lanes:
    lanes = _LANES.get(count)
    if lanes is None:
        lanes = _Lanes(count)
        if len(_LANES) < 100:
            _LANES[count] = lanes
    return lanes


def _mix(state: int, count: int) -> list[int]:
    """The ``count`` splitmix64 outputs after ``state``, the LAST first (ready for ``pop``)."""
    lanes = _LANES.get(count) or _lanes(count)
    return _mix_lanes((state * lanes.ones + lanes.ramp) & lanes.low, lanes)


def _mix_lanes(z: int, lanes: _Lanes) -> list[int]:
    """``_mix`` from the lanes' states (lane k: the state of draw k)."""
    low = lanes.low
    z = ((z ^ (z >> 30)) & low) * 0xBF58476D1CE4E5B9 & low
    z = ((z ^ (z >> 27)) & low) * 0x94D049BB133111EB & low
    # No mask after the last step: the bits it leaves above bit 64 of a lane are not read.
    z ^= z >> 31
    return list(lanes.unpack(z.to_bytes(lanes.size, "big")))


class Rng:
    """splitmix64. Deterministic, portable, not for cryptography.

    Outputs are computed ahead in batches (``_mix``) and handed out in order, so every method
    gives exactly what drawing one output at a time would give; ``_state`` is the state of the
    generator as that one-at-a-time version would have it."""

    __slots__ = ("_last", "_ahead", "_batch", "_lanes")

    def __init__(self, seed: int) -> None:
        self._last = int(seed) & _MASK64  # the state after the last output computed
        self._ahead: list[int] = []  # outputs computed but not yet drawn, the next one last
        self._batch = 4  # doubles with each refill, up to 64: a short-lived Rng computes little ahead
        # The lanes' states of the last full batch (64), while the next batch follows it directly
        # (0 otherwise): the next batch's states are these plus one step, without multiplying.
        self._lanes = 0

    @property
    def _state(self) -> int:
        return (self._last - len(self._ahead) * _GAMMA) & _MASK64

    def _refill(self) -> list[int]:
        count = self._batch
        if count < 64:
            self._batch = count * 2
            ahead = self._ahead = _mix(self._last, count)
        else:
            lanes = _LANES.get(count) or _lanes(count)
            start = self._lanes
            if start:
                start = (start + lanes.step) & lanes.low
            else:
                start = (self._last * lanes.ones + lanes.ramp) & lanes.low
            self._lanes = start
            ahead = self._ahead = _mix_lanes(start, lanes)
        self._last = (self._last + count * _GAMMA) & _MASK64
        return ahead

    def _draws(self, count: int) -> list[int]:
        """The next ``count`` outputs, in order."""
        ahead = self._ahead
        taken = ahead[:-count - 1:-1] if ahead else []
        if len(taken) < count:
            self._lanes = 0  # the next batch no longer follows the last one
            del ahead[:]
            rest = count - len(taken)
            taken += _mix(self._last, rest)[::-1]
            self._last = (self._last + rest * _GAMMA) & _MASK64
        else:
            del ahead[-count:]
        return taken

    def next_u64(self) -> int:
        ahead = self._ahead or self._refill()
        return ahead.pop()

    def below(self, n: int) -> int:
        """Integer in [0, n) by multiply-shift (Lemire); the bias, n / 2**64, is negligible."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        ahead = self._ahead or self._refill()
        return ahead.pop() * n >> 64

    def random(self) -> float:
        return (self.next_u64() >> 11) / float(1 << 53)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates from the end. Each 64-bit draw yields several indexes by repeated
        multiply-shift (the remainder of one product is the fraction for the next), drawing
        again once fewer than 16 bits of the fraction would be left.

        The indexes one draw yields are the digits of one number in a mixed radix (see
        ``_shuffle_plan``), read off without the 64-bit products of the steps."""
        plan = _shuffle_plan(len(items))
        if not plan:
            return
        for z, (product, radix, high, low) in zip(self._draws(len(plan)), plan, strict=True):
            upper, lower = divmod(z * product >> 64, radix)
            for i, weight, size in high:
                j = upper // weight % size
                items[i], items[j] = items[j], items[i]
            for i, weight, size in low:
                j = lower // weight % size
                items[i], items[j] = items[j], items[i]


_Steps = tuple[tuple[int, int, int], ...]
_Plan = tuple[tuple[int, int, _Steps, _Steps], ...]
_PLANS: dict[int, _Plan] = {}
# Below this, an integer is one digit of CPython's (30 bits), and dividing it costs least.
_SMALL = 1 << 30


def _shuffle_plan(n: int) -> _Plan:
    """The steps of ``Rng.shuffle`` over ``n`` items, one group per fresh 64-bit draw. Where the
    draws fall depends on ``n`` alone: each index uses up the bit length of its number of
    choices.

    A group's steps have s1, s2, ... sK choices. With fraction z (the draw), step k's index is
    the integer part of (z * s1 * ... * sK mod 2**64) * s(k+1) / 2**64, which is digit k of
    ``D = z * s1 * ... * sK >> 64`` written in the mixed radix (s1, ..., sK), the first step
    the most significant: ``D // (s(k+1) * ... * sK) % sk``.

    D has up to 64 bits, and dividing it is cheaper in pieces of one digit: so ``D`` is first
    split by ``radix``, the product of the last steps' choices that stays under 2**30, into
    the digits above it and those below. A group is (s1 * ... * sK, radix, the steps above,
    the steps below), each step (position, the weight of its digit in its piece, its number of
    choices)."""
    plan = _PLANS.get(n)
    if plan is None:
        groups: list[list[int]] = []
        budget = 0  # bits left in the current draw
        for i in range(n - 1, 0, -1):
            if budget < 16:
                groups.append([])
                budget = 64
            budget -= (i + 1).bit_length()
            groups[-1].append(i)
        built = []
        for positions in groups:
            high: list[tuple[int, int, int]] = []
            low: list[tuple[int, int, int]] = []
            weight = 1
            radix = 0
            for i in reversed(positions):  # the last step first: the least significant digit
                if not radix and weight * (i + 1) >= _SMALL:
                    radix = weight
                if radix:
                    high.append((i, weight // radix, i + 1))
                else:
                    low.append((i, weight, i + 1))
                weight *= i + 1
            built.append((weight, radix or weight, tuple(reversed(high)), tuple(reversed(low))))
        plan = tuple(built)
        if len(_PLANS) < 100:
            _PLANS[n] = plan
    return plan
