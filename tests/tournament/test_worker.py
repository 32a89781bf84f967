"""The worker's summary of a played match: the record's JSON text, which the store keeps, is the
text the standard library writes (compact, ASCII), whatever the bots wrote into the record."""

from __future__ import annotations

import dataclasses
import json

from arena.core.rules import Rules, Seating
from arena.harness.local_bot import LocalBot
from arena.match.record import GameRecord, StderrLine
from arena.match.referee import play_match
from arena.tournament.schedule import MatchSpec
from arena.tournament.worker import summarize


def test_the_record_text_is_the_standard_librarys_and_reads_back_to_the_record():
    record = play_match([LocalBot("uno", seed=1), LocalBot("dos", seed=2)], Rules(target=5), Seating.alone(2), seed=11)
    # What a bot can put in a record beyond the game: its stderr, any text (and the stores
    # hold the bots' notes the same way).
    said = (StderrLine(0, 1.5, "pienso\u2026 \u00f1 \U0001f600 \u2028 \x7f <b>&"), StderrLine(1, 2.25, "\x1b[2J"),
            StderrLine(1, 3.0, "a byte that was no UTF-8: \udcff"))  # orjson refuses a lone surrogate: json writes it
    record = dataclasses.replace(record, stderr=said, stderr_dropped=(0, 3))
    spec = MatchSpec(id="00000.0", index=0, pairing=0, deal=0, rotation=0, seed=11, sides=("uno", "dos"),
                     seats=("uno", "dos"))
    summary = summarize(spec, {"record": record, "ready": ["uno", None]}, 0.5)
    assert len(record.moves) > 20
    assert summary.record_json == json.dumps(record.to_dict(), separators=(",", ":"))
    assert summary.record_json.isascii()
    assert GameRecord.from_dict(json.loads(summary.record_json)) == record
    assert summary.row.seats == ("uno", "dos") and summary.ready == ("uno", None)


def test_a_match_whose_launcher_the_machine_kills_is_played_again_not_charged_to_its_bots(tmp_path):
    # Killed by the OOM killer or a person, a launcher no bot could reach (sealed, or signals
    # confined) takes the match's processes with it: that is not a result of the bots. Before,
    # it was stored as a forfeit of both, a draw nobody played.
    import os
    import signal
    import sys
    import threading
    import time
    from pathlib import Path

    from arena.harness import containment
    from arena.harness.botproc import BotSpec, Limits
    from arena.match.record import FailurePolicy
    from arena.tournament.worker import Job, WorkerState, close_state, play

    launcher = containment.launcher()
    bots_dir = Path(__file__).resolve().parents[1] / "data" / "tournament_bots"
    limits = Limits(startup_ms=10000, move_ms=2000)
    job = Job(rules=Rules(target=21).to_dict(), seating=Seating.alone(2).to_dict(), policy=FailurePolicy("loss"),
              logs_dir=None,
              bots=tuple((p, BotSpec(name=p, cmd=(sys.executable, str(bots_dir / "policybot.py"), p), limits=limits,
                                     env={"POLICYBOT_SLEEP_MS": "5"})) for p in ("greedy", "hash")))
    spec = MatchSpec(id="00000.0", index=0, pairing=0, deal=0, rotation=0, seed=21, sides=("greedy", "hash"),
                     seats=("greedy", "hash"))
    first, second = WorkerState("t"), WorkerState("u")
    try:
        started = time.monotonic()
        reference = play(job, spec, first)["record"]
        half = (time.monotonic() - started) / 2
        killer = threading.Timer(half, lambda: os.kill(launcher.pid, signal.SIGKILL))
        killer.start()
        started = time.monotonic()
        again = play(job, spec, second)["record"]
        played = time.monotonic() - started
        killer.join()
    finally:
        close_state(first)
        close_state(second)
    assert played > half and not launcher.alive  # killed in the match
    if launcher.beyond_bots:
        assert again.to_dict(times=False) == reference.to_dict(times=False)
        assert not any(o.detail for o in again.outcomes)
    else:  # one of its bots may have done it (unsealed, no scoped signals): they lose, as before
        assert any("launcher" in o.detail for o in again.outcomes)
