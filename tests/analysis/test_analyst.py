"""The analyst (arena/analysis/): which moves are decisions, what it knows, its marks, its sums,
and a planted blunder (tests/zoo/escoba_thrower.py) found and marked."""

import sys
from pathlib import Path

import pytest
from replay_helpers import play
from zoo.helpers import FAST

from arena.analysis import THRESHOLDS, Mark, analyse, by_bot, decision_seed, tasks
from arena.core.moves import MoveKind
from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, BotSpec
from arena.harness.local_bot import LocalBot
from arena.match.record import PlayedBy
from arena.match.referee import FailurePolicy, play_match
from arena.match.replay import ReplayMismatch, verify_decisions
from arena.search.evaluation import TERMS

ROOT = Path(__file__).resolve().parent.parent.parent
THROWER = ROOT / "tests" / "zoo" / "escoba_thrower.py"


def test_the_marks_follow_their_thresholds():
    assert Mark.of(0.0) is None
    assert Mark.of(THRESHOLDS[Mark.INACCURACY] - 1e-9) is None
    assert Mark.of(THRESHOLDS[Mark.INACCURACY]) is Mark.INACCURACY
    assert Mark.of(THRESHOLDS[Mark.MISTAKE]) is Mark.MISTAKE
    assert Mark.of(THRESHOLDS[Mark.BLUNDER]) is Mark.BLUNDER
    assert Mark.of(9.0) is Mark.BLUNDER
    assert THRESHOLDS[Mark.INACCURACY] < THRESHOLDS[Mark.MISTAKE] < THRESHOLDS[Mark.BLUNDER]


def test_each_decision_sees_what_its_seat_saw_before_the_move():
    record = play(Seating.alone(2), {"target": 3}, seed=4)
    rec, decisions = verify_decisions(record)
    assert [d.index for d in decisions] == list(range(len(rec.moves)))
    for d in decisions:
        assert rec.moves[d.index].seat == d.view.seat
        assert str(d.played) == rec.moves[d.index].move and d.played in d.legal
        # Its own hand and no other: the view holds the seat's dealt cards, not its opponent's.
        assert all(e.audience in (None, d.view.seat) for e in d.view.events)


def test_only_the_bots_choices_among_different_moves_are_analysed():
    record = play(Seating.alone(2), {"target": 3}, seed=2, failing_seat=1, fail_on=3,
                  policy=FailurePolicy("substitute", strikes=2))
    substituted = {i for i, m in enumerate(record.moves) if m.by is PlayedBy.SUBSTITUTE}
    assert substituted
    found = tasks("m", record)
    indexes = {t.index for t in found}
    assert not indexes & substituted
    assert {t.bot for t in tasks("m", record, bot="bot0")} == {"bot0"}
    # A seat with one card left has no choice: never a decision.
    _, decisions = verify_decisions(record)
    forced = {d.index for d in decisions if len(d.legal) == 1}
    assert forced and not indexes & forced
    assert all(t.view.events == () for t in found)  # sent to workers without the log


def test_a_record_that_does_not_replay_is_refused():
    data = play(Seating.alone(2), {"target": 3}, seed=4).to_dict()
    data["moves"][2], data["moves"][3] = data["moves"][3], data["moves"][2]
    with pytest.raises(ReplayMismatch):
        tasks("m", data)


def test_an_analysis_is_the_same_each_time_and_its_parts_add_up():
    record = play(Seating.alone(2), {"target": 3}, seed=6)
    found = tasks("m", record)[:6]
    first = [analyse(t, 16) for t in found]
    assert first == [analyse(t, 16) for t in found]
    assert found[0].seed == decision_seed(record.seed, found[0].index)
    for m in first:
        assert m.loss >= 0 and m.mark is Mark.of(m.loss)
        assert m.best_value == max(v for v in m.values if v is not None)
        assert abs(sum(m.loss_by) - m.loss) < 1e-9
        assert set(m.to_dict()["loss_by"]) == set(TERMS)
    summary = by_bot(first)
    assert sum(b.decisions for b in summary) == len(first)
    for b in summary:
        assert abs(sum(b.loss_by) - b.mean_loss) < 1e-9
        assert list(b.to_dict()) == ["bot", "decisions", "mean_loss", "inaccuracies", "mistakes", "blunders", *TERMS]


def test_a_planted_blunder_is_marked():
    # The thrower plays as greedy does, except that it leaves every escoba it could take.
    planted = []
    for seed in (12, 13, 17):
        thrower = BotProcess(BotSpec(name="thrower", cmd=(sys.executable, str(THROWER)), limits=FAST))
        try:
            record = play_match([thrower, LocalBot("random", seed=3)], Rules(target=3), Seating.alone(2), seed=seed)
        finally:
            thrower.close()
        for t in tasks(f"m{seed}", record, bot="thrower"):
            sweeps = [m for m in t.legal if m.kind is MoveKind.PLAY and m.take and len(m.take) == len(t.view.table)]
            if sweeps and not t.played.take:
                planted.append(t)
    assert len(planted) >= 3, "the thrower had too few escobas to throw away: pick other seeds"
    for t in planted:
        m = analyse(t, 32)
        assert m.mark is Mark.BLUNDER, (str(m.played), str(m.best), m.loss)
        assert m.best.take and len(m.best.take) == len(t.view.table)  # the escoba was the best move
        assert m.loss_by[TERMS.index("escobas")] >= 0.9  # and the loss is the escoba's
