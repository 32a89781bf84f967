"""The expert's CPU cap: reached exactly as if the CPU clock were read after every playout,
though it is read only when the wall clock says the cap could have been reached."""

from __future__ import annotations

import pytest

from arena.core.game import HandState, hand_view
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from bots import expert_bot


class _Clocks:
    """A fake wall clock that moves on 1 ms at every reading, and a CPU clock that follows it
    at ``rate`` (1: the thread never waits; 0.25: it gets a quarter of a core)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.now = 0.0
        self.cpu_reads = 0

    def wall(self) -> float:
        self.now += 0.001
        return self.now

    def cpu(self) -> float:
        self.cpu_reads += 1
        return self.now * self.rate


def _position():
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, 7, events=[])
    while len(state.legal_moves()) < 3:
        state.apply(state.legal_moves()[0])
    return hand_view(state, state.turn, [0, 0], ()), state.legal_moves()


@pytest.mark.parametrize("rate", [1.0, 0.25])
def test_the_cpu_cap_ends_the_search_when_its_cpu_time_is_spent(monkeypatch, rate):
    clocks = _Clocks(rate)
    monkeypatch.setattr(expert_bot.time, "perf_counter", clocks.wall)
    monkeypatch.setattr(expert_bot.time, "thread_time", clocks.cpu)
    view, legal = _position()
    _, _, deals = expert_bot.search(view, legal, Rng(3), 0.020, 100_000)
    playouts = round(clocks.now / 0.001) - 1  # one wall reading at the start, one per playout
    # The cap is 20 ms of CPU: at this rate that is 20 / rate ms of wall time, one playout each.
    assert abs(playouts - 0.020 / rate / 0.001) <= 2
    assert 0 < sum(deals) <= playouts
    # The CPU clock was read far less often than after every playout.
    assert clocks.cpu_reads < playouts / 2 if rate < 1 else clocks.cpu_reads <= 3


def test_a_search_within_its_playouts_never_reads_the_cpu_clock_after_the_start(monkeypatch):
    clocks = _Clocks(1.0)
    monkeypatch.setattr(expert_bot.time, "perf_counter", clocks.wall)
    monkeypatch.setattr(expert_bot.time, "thread_time", clocks.cpu)
    view, legal = _position()
    _, _, deals = expert_bot.search(view, legal, Rng(3), 10.0, 60)
    assert 0 < sum(deals) <= 60
    assert clocks.cpu_reads == 1
