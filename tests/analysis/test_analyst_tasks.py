"""The analyst's tasks cross to worker processes (``arena analyze -j N`` pickles them with the
pool's dill): each must come back whole and be analysed to the same values, on the compiled
build too (tests/test_compiled.py runs this file on it: a class mypyc compiles is rebuilt from
its constructor's arguments alone, and a compiled frozen dataclass refuses the pickler's
assignments, which hung every ``arena analyze -j 2`` of a compiled install)."""

import pickle

import dill

from arena.analysis import analyse, tasks
from arena.core.rules import Rules, Seating
from arena.match.referee import play_match
from bots import greedy_bot
from bots.local import KitPlayer


def _record(seed: int):
    return play_match([KitPlayer(greedy_bot.choose, "a"), KitPlayer(greedy_bot.choose, "b", seed=1)],
                      Rules(target=3), Seating.alone(2), seed)


def test_a_task_comes_back_from_the_pickler_whole_and_is_analysed_alike():
    found = tasks("m", _record(3))
    assert len(found) > 20
    # Against greedy, the other seat's plays this round hold the deals: the evidence travels too.
    assert sum(1 for t in found if t.seen is not None and t.seen.plays) > 10
    for dumps, loads in ((pickle.dumps, pickle.loads), (dill.dumps, dill.loads)):
        back = [loads(dumps(t)) for t in found]
        assert back == found
    for t in found[:6]:
        assert analyse(pickle.loads(pickle.dumps(t)), 24) == analyse(t, 24)
