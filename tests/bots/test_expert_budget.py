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


def test_by_time_the_budget_is_the_cpu_time_split_over_rounds_and_playouts_do_not_end_it(monkeypatch):
    clocks = _Clocks(0.5)
    monkeypatch.setattr(expert_bot.time, "perf_counter", clocks.wall)
    view, legal = _position()
    _, _, deals = expert_bot.search(view, legal, Rng(3), 0.030, 4, by_time=True, clock=clocks.cpu)
    # 30 ms of CPU at half a core is 60 ms of wall time, a playout each: far more than 4 playouts.
    playouts = round(clocks.now / 0.001) - 1
    assert abs(playouts - 60) <= 4 and sum(deals) > 4
    # Halving happened: the candidates kept longest had the most deals.
    assert len(set(deals)) > 1


class _Request:
    def __init__(self, clock: str, time_ms: int) -> None:
        self.clock, self.time_ms = clock, time_ms


def test_the_expert_budgets_by_cpu_time_only_on_the_cpu_clock(monkeypatch):
    calls = []

    def fake_search(*args, **kwargs):
        calls.append((args[3], args[4], kwargs))
        return 0, [], []

    monkeypatch.setattr(expert_bot, "search", fake_search)
    from bots.kit import escoba_kit as kit
    game = kit.Game()
    game.start({"type": "hello", "seat": 0, "side": 0, "players": 2, "teams": [[0], [1]], "rules": {},
                "time": {}, "seed": 1})
    view, legal = _position()
    moves = [kit.parse_move(str(m)) for m in legal]
    monkeypatch.setattr(expert_bot, "seat_view", lambda *a: view)
    for expert, clock, time_ms in ((expert_bot.Expert(ms=90), "wall", 100), (expert_bot.Expert(ms=90), "cpu", 100),
                                   (expert_bot.Expert(ms=90), "cpu", 2000),
                                   (expert_bot.Expert(ms=90, playouts=200), "cpu", 2000)):
        request = kit.Request(1, time_ms, 0, moves, kit.PLAY, {}, clock)
        expert(game, request, __import__("random").Random(1))
    (wall_s, wall_playouts, wall_kw), (cpu_s, _, cpu_kw), (long_s, _, _), (_, fixed, fixed_kw) = calls
    assert wall_playouts == expert_bot.DEFAULT_PLAYOUTS and not wall_kw.get("by_time")  # playouts, as before
    assert cpu_kw["by_time"] and cpu_kw["clock"] is expert_bot.time.process_time
    assert cpu_s == 0.05 and long_s == 0.09  # half its time, at most its ms
    assert fixed == 200 and not fixed_kw.get("by_time")  # playouts it was given: on either clock
