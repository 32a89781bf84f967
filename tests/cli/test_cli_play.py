"""``arena play`` and ``arena check-bot`` through typer's CliRunner."""

import json
import sys

import pytest
from typer.testing import CliRunner
from zoo.helpers import ROOT, ZOO, firstmove_bin

from arena.cli import app
from arena.match.record import GameRecord
from arena.match.replay import replay

runner = CliRunner()
C = str(firstmove_bin())
PY = sys.executable


def zoo(mode, n=1):
    return f"{PY} {ZOO} {mode} {n}"


def run(*args):
    return runner.invoke(app, list(args))


def test_play_json_prints_one_object_with_winner_score_and_terminations():
    result = run("play", C, C, "--seed", "3", "--target", "5", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["reason"] == "target" and "seed" not in summary  # hidden: arena/cli/seeds.py
    assert summary["scores"][summary["winner"]] == max(summary["scores"]) >= 5
    assert [s["termination"] for s in summary["seats"]] == ["ok", "ok"]
    assert [s["bot"] for s in summary["seats"]] == ["firstmove.bin#1", "firstmove.bin#2"]
    again = run("play", C, C, "--seed", "3", "--target", "5", "--json")
    assert json.loads(again.stdout) == summary


def test_play_and_check_bot_run_python_placeholder_commands_as_a_tournament_file_does():
    # `$PYTHON` (the interpreter running the arena), as in a tournament file and in arena sprt:
    # a bot's sealed environment has no such variable, so left to the shell it ran `bots/...`.
    bot = f"$PYTHON {ROOT / 'bots' / 'random_bot.py'}"
    result = run("play", bot, bot, "--seed", "3", "--target", "3", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert [s["termination"] for s in summary["seats"]] == ["ok", "ok"]
    assert [s["bot"] for s in summary["seats"]] == ["random_bot.py#1", "random_bot.py#2"]
    checked = run("check-bot", bot)
    assert checked.exit_code == 0 and "result: PASS" in checked.stdout, checked.output


@pytest.mark.parametrize("command, said", [
    (f"{PY} missing.py", "expected the bot's program file to exist, but "),
    ("$PYTHON missing.py", "expected the bot's program file to exist, but "),
    ("no-such-program-here", "expected a command that exists, but 'no-such-program-here' is not on the PATH"),
])
def test_check_bot_of_a_missing_program_is_bad_input_as_in_play(command, said):
    # As arena play and a tournament file: one line, exit 2 (README, "a missing bot command"),
    # not a check failed (exit 1) on the interpreter's own complaint.
    for cmd in ("check-bot", "play"):
        result = run(cmd, command, *([command] if cmd == "play" else []))
        assert result.exit_code == 2, result.output
        [line] = result.stderr.splitlines()
        assert line.startswith("error: bot ") and said in line, line


def test_a_bot_command_in_the_home_folder_spelled_with_a_tilde_runs(monkeypatch, tmp_path):
    import shutil

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "mybot").mkdir()
    shutil.copy(C, tmp_path / "mybot" / "mybot")
    checked = run("check-bot", "~/mybot/mybot")
    assert checked.exit_code == 0 and "result: PASS" in checked.stdout, checked.output
    missing = run("check-bot", "~/mybot/nothing")
    assert missing.exit_code == 2 and f"{tmp_path}/mybot/nothing is not an executable file" in missing.stderr


def test_play_shows_the_match_as_it_goes():
    result = run("play", C, zoo("good"), C, "--seed", "8", "--target", "3")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("seed hidden (--show-seed); seat 0: firstmove.bin#1, seat 1: zoobot.py, seat 2: firstmove.bin#2")
    # Hands are numbered from 1, as arena replay numbers them.
    assert any(x.startswith("hand 1: dealer seat") for x in lines) and not any(x.startswith("hand 0") for x in lines)
    assert any("table:" in x for x in lines) and any(x.startswith("hand 1 points:") for x in lines)
    assert lines[-1].startswith("result: ")


def test_play_pairs_with_a_failing_bot_records_its_reason(tmp_path):
    record_path = tmp_path / "game.json"
    result = run("play", C, zoo("illegal", 2), C, C, "--pairs", "--seed", "4", "--json", "--record", str(record_path))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["reason"] == "forfeit" and summary["winner"] == 0 and summary["winner_seats"] == [0, 2]
    assert summary["seats"][1]["termination"] == "illegal_move"
    record = GameRecord.from_dict(json.loads(record_path.read_text()))
    replay(record)
    assert record.rules["target"] == 21 and record.seating["teams"] == [[0, 2], [1, 3]]
    shown = run("play", C, zoo("illegal", 2), C, C, "--pairs", "--seed", "4")
    # The sentence every view of a match ends with (match_end_text), with play's side labels.
    assert shown.stdout.splitlines()[-2] == (
        f"result: side 0 (firstmove.bin#1 + firstmove.bin#2) win {'-'.join(map(str, record.result.scores))} "
        f"by forfeit in hand {record.result.hands} (seat 1 (zoobot.py) illegal_move: {record.outcomes[1].detail})")


def test_play_with_rule_options_and_substitutes(tmp_path):
    result = run("play", C, zoo("illegal", 2), "--seed", "4", "--json", "--rule", "renuncio=true",
                 "--rule", "initial_table=subset15", "--target", "4", "--policy", "substitute", "--logs", str(tmp_path))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["reason"] == "target" and summary["seats"][1]["strikes"] == 1
    conversation = (tmp_path / "conversation.log").read_text()
    assert '"renuncio":true' in conversation and " << " in conversation and " >> " in conversation


def test_play_refuses_bad_input_with_exit_code_2():
    for args in (("play", C, C, C, C, C), ("play", C, C, "--pairs"), ("play", C, C, "--rule", "bogus=1"),
                 ("play", C, C, "--rule", "target"), ("play", C, C, "--policy", "forgive"),
                 ("play", C, C, "--move-ms", "-5")):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_check_bot_passes_a_correct_bot():
    result = run("check-bot", C)
    assert result.exit_code == 0, result.output
    assert "result: PASS" in result.stdout
    for step in ("handshake", "new_match", "stale request", "forced choices", "variant rules"):
        assert step in result.stdout


def test_check_bot_reports_the_first_problem():
    result = run("check-bot", zoo("stale_id", 5))
    assert result.exit_code == 1
    assert "[FAIL]" in result.stdout and "wrong_id" in result.stdout and "result: FAIL" in result.stdout
    result = run("check-bot", zoo("exit_now"))
    assert result.exit_code == 1 and "no_handshake" in result.stdout
    result = run("check-bot", zoo("crash_mid", 3))
    assert result.exit_code == 1 and "crash" in result.stdout and "crashing on purpose" in result.stdout




def test_the_perl_bot_written_from_the_protocol_passes_check_bot():
    result = runner.invoke(app, ["check-bot", f"perl {ROOT}/bots/perl/random.pl 7"])
    assert result.exit_code == 0, result.output
    assert "result: PASS" in result.stdout


@pytest.mark.slow
def test_perl_bots_play_every_table_shape_deterministically():
    perl = f"perl {ROOT}/bots/perl/random.pl"
    for args in ([f"{perl} 1", C], [f"{perl} 1", f"{perl} 2", f"{perl} 3"],
                 [f"{perl} 1", f"{perl} 2", C, f"{perl} 4", "--pairs"]):
        outputs = [run("play", *args, "--seed", "12", "--target", "9", "--json", "--rule", "renuncio=true")
                   for _ in range(2)]
        for out in outputs:
            assert out.exit_code == 0, out.output
            summary = json.loads(out.stdout)
            assert summary["reason"] == "target" and all(s["termination"] == "ok" for s in summary["seats"])
        assert outputs[0].stdout == outputs[1].stdout


@pytest.mark.slow
def test_sigterm_to_arena_play_leaves_no_bot_behind(tmp_path):
    import os
    import signal
    import subprocess
    import time
    import uuid

    from zoo.helpers import wait_until, with_environ

    # Found by a tag in their environment (set by their command: a bot is not given the
    # arena's whole environment): a sealed bot can write nothing the test could read, and its
    # pids are its own namespace's. The arena and its launcher carry the tag as well.
    tag = f"ZOO_TAG={uuid.uuid4().hex}".encode()

    def tagged() -> set[int]:
        return set(with_environ(tag.decode(), exclude=arena.pid))

    def bots() -> set[int]:
        # The zoo's bots themselves: the launcher's first look at bubblewrap (bwrap running
        # true) is tagged too, for a moment, while the arena may still be starting.
        found = set()
        for pid in tagged():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"zoobot.py" in f.read():
                        found.add(pid)
            except OSError:
                continue
        return found

    env = dict(os.environ, ZOO_TAG=tag.decode().split("=", 1)[1])
    arena = subprocess.Popen([sys.executable, "-m", "arena.cli", "play", f"env {tag.decode()} {zoo('orphan_setsid')}",
                              f"env {tag.decode()} {zoo('hang_mid', 0)}",
                              "--move-ms", "30000"], env=env, stdout=subprocess.DEVNULL, cwd=str(ROOT))
    deadline = time.monotonic() + 20
    while len(bots()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    # Both bots run (and the arena's launcher); an escaped child may be there too, or be dead already.
    assert len(bots()) >= 2 and len(tagged()) >= 3
    arena.send_signal(signal.SIGTERM)
    assert arena.wait(timeout=20) == 128 + signal.SIGTERM
    assert wait_until(lambda: not tagged(), timeout=10)


def test_play_pinned_to_one_cpu(tmp_path):
    import os

    before = os.sched_getaffinity(0)
    cpu = min(before)
    record_path = tmp_path / "r.json"
    result = run("play", C, C, "--seed", "3", "--target", "5", "--json", "--cpu", str(cpu), "--record", str(record_path))
    assert result.exit_code == 0, result.output
    assert os.sched_getaffinity(0) == before  # the command gives the CPUs back
    pinned = json.loads(result.stdout)
    assert pinned == json.loads(run("play", C, C, "--seed", "3", "--target", "5", "--json").stdout)
    result = run("play", C, C, "--cpu", "100000")
    assert result.exit_code == 2 and "not one of the CPUs" in result.output


def test_the_python_bot_in_protocol_md_passes_check_bot(tmp_path):
    text = (ROOT / "docs" / "PROTOCOL.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    bot = tmp_path / "randombot.py"  # not random.py: that would shadow the random module
    bot.write_text(code)
    result = run("check-bot", f"{PY} {bot}")
    assert result.exit_code == 0, result.output


def test_the_conformance_check_is_a_library_call_that_prints_nothing(capsys):
    from arena.harness.botproc import BotProcess, BotSpec
    from arena.match.conformance import check_bot

    seen = []
    bot = BotProcess(BotSpec.from_command(C))
    try:
        verdict = check_bot(bot, seen.append)
    finally:
        bot.close()
    assert verdict.passed and verdict.problem is None
    assert list(verdict.steps) == seen and all(step.passed for step in seen)
    assert seen[0].label.startswith("handshake") and seen[-1].label == "forced choices"
    assert capsys.readouterr() == ("", "")
    bad = BotProcess(BotSpec.from_command(zoo("exit_now")))
    try:
        verdict = check_bot(bad)
    finally:
        bad.close()
    assert not verdict.passed and verdict.problem.startswith("first problem: no_handshake")
    assert [step.passed for step in verdict.steps] == [False]


def test_check_bot_names_the_fixed_buffer_of_a_bot_that_stops_at_a_long_request(tmp_path):
    result = run("check-bot", f"{PY} {ZOO.parent / 'scanner_bot.py'}")
    assert result.exit_code == 1
    assert "[FAIL] long request: a table nobody clears, over 64 KB: crash" in result.stdout
    assert "  hint: it stopped at its first request over 64 KB (98 KB)" in result.stdout
    (tmp_path / "t.yaml").write_text(f"name: t\nseed: 1\nbots:\n  - {{name: a, cmd: {C}}}\n  - {{name: b, cmd: {C}}}\n")
    refused = run("check-bot", "--from", str(tmp_path / "t.yaml"), "a", "--move-ms", "500")
    assert refused.exit_code == 2 and "leave out --move-ms" in refused.output
