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
