"""The rules core owns its named values: phases and end reasons are enum members end to end,
written as their text."""

import json

from arena.core.events import event_from_dict
from arena.core.game import MatchState
from arena.core.outcome import EndReason, Phase
from arena.core.rules import Rules, Seating
from arena.game import OVER, PLAY


def test_the_core_writes_members_not_text():
    state = MatchState(Rules(target=3), Seating.alone(2), seed=5)
    assert state.hand.phase is Phase.PLAY is PLAY
    while not state.is_over:
        state.apply(state.legal_moves()[0])
    assert state.hand.phase is Phase.OVER is OVER
    assert state.result is not None and type(state.result.reason) is EndReason
    end = state.events[-1].to_dict()
    assert type(end["reason"]) is str and end["reason"] == state.result.reason.value
    assert event_from_dict(json.loads(json.dumps(end))).reason is state.result.reason  # type: ignore[union-attr]


def test_members_print_as_their_text():
    for member in (*Phase, *EndReason):
        assert str(member) == f"{member}" == f"{member:<0}" == member.value == json.loads(json.dumps(member))
