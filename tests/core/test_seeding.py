"""Rng hands out splitmix64 outputs computed ahead in batches (many at once, in lanes of one
big integer): whatever the mix of calls, it must give exactly what the plain one-output-at-a-
time generator gives, and report the same state."""

from __future__ import annotations

import random

import pytest

from arena.core.seeding import Rng, _mix

_MASK = (1 << 64) - 1


class _PlainRng:
    """splitmix64 one output at a time, as the module documents it."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def shuffle(self, items: list[int]) -> None:
        z = budget = 0
        for i in range(len(items) - 1, 0, -1):
            if budget < 16:
                z, budget = self.next_u64(), 64
            z *= i + 1
            j = z >> 64
            z &= _MASK
            budget -= (i + 1).bit_length()
            items[i], items[j] = items[j], items[i]


@pytest.mark.parametrize("count", [1, 2, 7, 64, 65])
def test_a_batch_is_the_next_outputs_in_order(count):
    for seed in (0, 1, _MASK, 0x9E3779B97F4A7C15, 2**63 + 12345):
        plain = _PlainRng(seed)
        assert _mix(seed, count)[::-1] == [plain.next_u64() for _ in range(count)]


def test_any_mix_of_calls_matches_the_plain_generator():
    script = random.Random(2026)
    for trial in range(400):
        seed = script.getrandbits(64) if trial % 4 else script.randrange(-3, 40)
        rng, plain = Rng(seed), _PlainRng(seed)
        for _ in range(script.randrange(1, 150)):
            op = script.randrange(5)
            if op == 0:
                n = script.choice([1, 2, 3, 7, 40, 2**40, 2**70])
                assert rng.below(n) == plain.next_u64() * n >> 64
            elif op == 1:
                assert rng.next_u64() == plain.next_u64()
            elif op == 2:
                assert rng.random() == (plain.next_u64() >> 11) / float(1 << 53)
            elif op == 3:
                n = script.randrange(0, 110)
                got, want = list(range(n)), list(range(n))
                rng.shuffle(got)
                plain.shuffle(want)
                assert got == want
            assert rng._state == plain.state


def test_below_refuses_an_empty_range():
    with pytest.raises(ValueError):
        Rng(1).below(0)


def test_long_runs_of_full_batches_match_the_plain_generator():
    # Full batches after the first start from the last one's lanes plus a step; a shuffle in
    # between computes outputs past the batch, and the next batch must start afresh.
    for seed in (0, 7, _MASK, 2**63 + 12345):
        rng, plain = Rng(seed), _PlainRng(seed)
        for round_ in range(6):
            for _ in range(300):
                assert rng.next_u64() == plain.next_u64()
            if round_ % 2:
                while len(rng._ahead) > 1:  # so that the shuffle's draws run past the batch
                    assert rng.next_u64() == plain.next_u64()
                got, want = list(range(40)), list(range(40))
                rng.shuffle(got)
                plain.shuffle(want)
                assert got == want
            assert rng._state == plain.state
