"""Logs per match: each bot process's stderr kept with the match's record, per seat, capped per
match and per bot, never blocking the bot; and the tournament-wide log file as before."""

import dataclasses
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner
from zoo.helpers import FAST

from arena.cli import app
from arena.core.rules import Rules, Seating
from arena.harness.botproc import MATCH_STDERR_BYTES, BotProcess, BotSpec, _StderrPump
from arena.harness.local_bot import LocalBot
from arena.match.record import GameRecord, RecordError
from arena.match.referee import play_match
from arena.match.replay import verify_steps
from arena.render.html import replay_data
from arena.render.text import stderr_text

# A bot that writes a line on stderr for each request (control characters in it), then
# FLOOD bytes once at its first request, and plays the first legal move.
BOT = r"""
import json, os, sys
flood = int(os.environ.get("FLOOD", "0"))
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_match"):
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
    elif msg["type"] == "request":
        sys.stderr.write(f"thinking \x1b[2J about {msg['id']}\n")
        if flood:
            sys.stderr.write("x" * flood + "\n")
            flood = 0
        sys.stderr.flush()
        print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
    elif msg["type"] == "goodbye":
        break
"""


def _spec(flood: int = 0, stderr_bytes: int = 1_000_000) -> BotSpec:
    limits = dataclasses.replace(FAST, stderr_bytes=stderr_bytes)
    return BotSpec(name="talker", cmd=(sys.executable, "-c", BOT), env={"FLOOD": str(flood)}, limits=limits)


def _match(bot: BotProcess, seed: int = 4) -> GameRecord:
    return play_match([bot, LocalBot("plain", seed=1)], Rules(target=1), Seating.alone(2), seed=seed)


def test_the_pump_keeps_each_match_capped_and_drains_a_flood_without_blocking():
    read, write = os.pipe()
    pump = _StderrPump(read, None, cap=1000, kept_room=2 * MATCH_STDERR_BYTES + 100)
    pump.start()
    try:
        for match in range(3):
            os.write(write, b"a line\n" + b"y" * 100_000)  # the pipe holds 64 KB: the pump must drain it
            deadline = time.monotonic() + 10
            while pump.dropped < 100_007 * (match + 1) and time.monotonic() < deadline:
                time.sleep(0.01)
            chunks, dropped = pump.take_match()
            kept = b"".join(chunk for _, chunk in chunks)
            assert kept.startswith(b"a line\n")
            assert len(kept) == [MATCH_STDERR_BYTES, MATCH_STDERR_BYTES, 100][match]  # the bot's room is spent
            assert dropped == 100_007 - len(kept)
            assert all(later >= earlier for (earlier, _), (later, _) in zip(chunks, chunks[1:], strict=False))
    finally:
        pump.stop()
        os.close(write)
        pump.join(2)
        os.close(read)


def test_a_bot_processs_stderr_goes_with_its_match_by_seat_and_time(tmp_path):
    with BotProcess(_spec(), stderr_dir=tmp_path) as bot:
        first = _match(bot)
        second = _match(bot, seed=5)
    for rec in (first, second):
        ids = [int(line.text.rsplit(" ", 1)[1]) for line in rec.stderr]
        assert [line.text for line in rec.stderr] == [f"thinking \x1b[2J about {i}" for i in ids]
        assert ids == list(range(ids[0], ids[0] + len([m for m in rec.moves if m.seat == 0])))
        assert {line.seat for line in rec.stderr} == {0} and rec.stderr_dropped == (0, 0)
        times = [line.t_ms for line in rec.stderr]
        assert times == sorted(times) and 0 <= times[0]  # the last may be read as the match ends
        data = json.loads(json.dumps(rec.to_dict()))
        assert data["schema_version"] == 2 and "stderr" not in rec.to_dict(times=False)
        assert rec.to_dict(times=False)["schema_version"] == 1  # what is left is version 1's
        assert GameRecord.from_dict(data) == rec
    # The second match holds its own lines only; the tournament-wide file holds both.
    assert second.stderr[0].text.endswith(f"about {len(first.stderr) + 1}")
    log = (tmp_path / "talker.stderr.log").read_text()
    assert log.count("thinking") == len(first.stderr) + len(second.stderr)

    text = stderr_text(first, "00001.1")
    assert text.splitlines()[0].startswith("== 00001.1 | seat 0 (talker) | stderr: ")
    assert "00001.1 seat 0 " in text and "\\x1b[2J" in text and "\x1b" not in text
    assert "seat 1 (plain) | stderr: 0 lines" in text
    checked, steps = verify_steps(first)
    lines = replay_data(checked, steps)["stderr"]
    assert [seat for _, seat, _, _ in lines] == [0] * len(first.stderr)
    moves = [i for i, _, _, _ in lines]
    known = [i for i in moves if i is not None]  # None: read after the last move
    assert moves == known + [None] * (len(moves) - len(known)) and known == sorted(known)
    assert all(first.moves[i].seat == 0 for i in known)
    assert all("\x1b" not in text for *_, text in lines)


def test_a_flood_is_cut_for_the_record_and_the_bot_plays_on(tmp_path):
    with BotProcess(_spec(flood=2_000_000, stderr_bytes=100_000), stderr_dir=tmp_path) as bot:
        rec = _match(bot)
        again = _match(bot, seed=5)
    assert not rec.failures and rec.outcomes[0].termination.value == "ok"
    kept = sum(len(line.text) + 1 for line in rec.stderr)
    assert MATCH_STDERR_BYTES - 200 <= kept <= MATCH_STDERR_BYTES + 1
    assert rec.stderr_dropped[0] > 1_900_000 and rec.stderr_dropped[1] == 0
    assert "1,9" in stderr_text(rec, "m")  # the dropped bytes are said
    assert (tmp_path / "talker.stderr.log").stat().st_size < 100_200  # the tournament-wide cap as before
    assert again.stderr and not any(again.stderr_dropped)


def test_a_record_with_bad_stderr_is_refused():
    rec = GameRecord.from_dict(json.loads(json.dumps(_plain_record().to_dict())))
    data = rec.to_dict()
    data["schema_version"] = 2
    for bad in ({"lines": [[0, 1.0]], "dropped": [0, 0]}, {"lines": [[5, 1.0, "x"]], "dropped": [0, 0]},
                {"lines": [], "dropped": [0]}, {"lines": [[0, -1, "x"]], "dropped": [0, 0]}, [1]):
        with pytest.raises(RecordError, match="stderr"):
            GameRecord.from_dict({**data, "stderr": bad})
    with pytest.raises(RecordError, match="schema_version 2"):
        GameRecord.from_dict({**data, "schema_version": 1, "stderr": {"lines": [], "dropped": [1, 0]}})
    ok = GameRecord.from_dict({**data, "stderr": {"lines": [[1, 2.5, "hi"]], "dropped": [0, 3]}})
    assert ok.stderr[0].text == "hi" and ok.stderr_dropped == (0, 3)


def _plain_record() -> GameRecord:
    return play_match([LocalBot("a"), LocalBot("b", seed=1)], Rules(target=1), Seating.alone(2), seed=2)


# A kit bot that keeps notes: its first legal move, with how many it had, and a stderr line.
NOTES_BOT = """
import sys
import escoba_kit as kit

def choose(game, request, rng):
    sys.stderr.write(f"notesbot: request {request.id} of {len(request.legal)} moves\\n")
    sys.stderr.flush()
    return kit.Noted(request.legal[0], {"legal": len(request.legal)})

kit.run(choose, name="notesbot")
"""


@pytest.mark.slow
def test_a_tournament_keeps_notes_and_logs_per_match(tmp_path):
    """``arena replay RESULTS ID --stderr`` and ``arena export --records`` on a real run."""
    bots_dir = tmp_path / "bot"
    bots_dir.mkdir()
    shutil.copy(Path(__file__).parents[2] / "bots" / "kit" / "escoba_kit.py", bots_dir)
    (bots_dir / "notesbot.py").write_text(NOTES_BOT)
    bots = "\n".join(f'  - {{name: {p}, cmd: "$PYTHON notesbot.py", cwd: "{bots_dir}"}}' for p in ("first", "second"))
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 3\noutput: {tmp_path / 'out'}\nrules: {{target: 1}}\nmatches_per_pairing: 2\n"
                    f"concurrency: 2\nbots:\n{bots}\n")
    cli = CliRunner()
    ran = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "out"
    exported = tmp_path / "records.jsonl"
    done = cli.invoke(app, ["export", str(out), "--records", "jsonl", "-o", str(exported)])
    assert done.exit_code == 0, done.output
    lines = [json.loads(x) for x in exported.read_text().splitlines()]
    assert lines and all(m["info"]["legal"] >= 1 for x in lines for m in x["record"]["moves"] if m["by"] == "bot")
    match_id = lines[0]["id"]
    shown = cli.invoke(app, ["replay", str(out), match_id, "--stderr"])
    assert shown.exit_code == 0, shown.output
    assert f"{match_id} seat 0 " in shown.output and f"{match_id} seat 1 " in shown.output
    assert "notesbot: request" in shown.output
    assert (out / "logs" / "first.stderr.log").read_text().count("notesbot: request") >= 1
    verified = cli.invoke(app, ["verify", str(out)])
    assert verified.exit_code == 0, verified.output


def test_stderr_threads_are_not_left_behind():
    assert not [t for t in threading.enumerate() if t.name.startswith("stderr-") and not t.daemon]
