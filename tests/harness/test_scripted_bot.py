"""The scripted fake bot (tests/zoo/fakebot.py) fails a test that leaves part of its script
unplayed, as python-chess's mock engine does with ``assert_done``."""

from pathlib import Path

import pytest
from zoo.helpers import assert_done, fake_spec, hello, steps_left

from arena.harness.botproc import BotProcess


def _report(spec) -> Path:
    return Path(dict(spec.env)["ZOO_SCRIPT_LEFT"])


def test_a_script_played_through_is_done():
    steps = [{"on": "hello", "send": ['{"type":"ready","name":"fake","protocol":1}\n']}]
    spec = fake_spec(steps, steps_may_be_left=True)
    with BotProcess(spec) as bot:
        bot.send_hello(hello())
        bot.await_ready()
    assert_done(_report(spec), steps)


def test_a_step_never_reached_fails_naming_it():
    steps = [{"on": "request", "send": ["not a move\n"]}]
    spec = fake_spec(steps, steps_may_be_left=True)
    with BotProcess(spec) as bot:
        bot.send_hello(hello())
        bot.await_ready()  # the bot is never asked to move: its one step is left
    assert steps_left(_report(spec), steps) == steps
    with pytest.raises(AssertionError, match="1 of its 1 steps not reached"):
        assert_done(_report(spec), steps)


def test_a_script_that_never_ran_has_every_step_left():
    steps = [{"on": "hello", "exit": 3}]
    spec = fake_spec(steps, steps_may_be_left=True)
    assert steps_left(_report(spec), steps) == steps
