"""``arena check-bot``'s long requests: the deals that make them, a bot that reads through a
fixed 64 KB buffer, and a correct bot."""

import sys

from zoo.helpers import HERE, ROOT

from arena.core.game import MatchState
from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, BotSpec
from arena.harness.protocol import request_line
from arena.match.conformance import FIXED_BUFFER_BYTES, LONG_DEALS, check_bot

SCANNER = HERE / "scanner_bot.py"


def first_long_request(seed: int, seat: int) -> int:
    """The bytes of the first request over 64 KB the bot at ``seat`` gets when everyone trails."""
    match = MatchState.new(Rules(max_hands=1), Seating.alone(2), seed)
    while not match.is_over:
        legal = [str(m) for m in match.legal_moves()]
        if match.current_seat == seat:
            size = len(request_line(1, 2000, 0, {"hand": [], "table": []}, legal))
            if size > FIXED_BUFFER_BYTES:
                return size
        match.apply(next(m for m in legal if "+" not in m))
    return 0


def test_the_long_deals_make_requests_over_64_kb_and_of_about_140_kb():
    sizes = [first_long_request(seed, seat) for seed, seat in LONG_DEALS]
    assert 90_000 < sizes[0] < 110_000
    assert 135_000 < sizes[1] < 150_000


def verdict_of(cmd: str):
    bot = BotProcess(BotSpec.from_command(cmd))
    try:
        return check_bot(bot)
    finally:
        bot.close()


def test_a_bot_reading_through_a_64_kb_buffer_fails_with_the_hint():
    verdict = verdict_of(f"{sys.executable} {SCANNER}")
    assert not verdict.passed
    assert verdict.problem == "first problem: crash in step 'long request: a table nobody clears, over 64 KB'"
    # Every step before the long requests passed: the bot is correct in every other respect.
    assert [s.passed for s in verdict.steps] == [True] * 6 + [False]
    assert "fixed 64 KB buffer (Go's bufio.Scanner default)" in verdict.hint
    assert "max_line_bytes in hello limits only the lines the bot sends" in verdict.hint


def test_a_bot_with_a_128_kb_buffer_fails_only_at_140_kb_and_is_told_so():
    verdict = verdict_of(f"{sys.executable} {SCANNER} {128 * 1024}")
    assert not verdict.passed and verdict.steps[-2].passed
    assert verdict.steps[-1].label.endswith("about 140 KB") and not verdict.steps[-1].passed
    assert "answered a 98 KB request but stopped at one of 137 KB" in verdict.hint


def test_the_greedy_bot_answers_the_long_requests():
    verdict = verdict_of(f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}")
    assert verdict.passed and verdict.hint is None
    long_steps = [s for s in verdict.steps if s.label.startswith("long request")]
    assert [s.detail.split(" request")[0] for s in long_steps] == ["answered a 98 KB", "answered a 137 KB"]


def test_check_bot_from_a_file_runs_the_bot_sealed_under_the_tournament_s_limits(tmp_path):
    """The probe reports what it runs under, once from ``check-bot --from`` and once from each
    process of ``arena run`` of the same file: the same limits, seal and writable folders."""
    import json
    import os
    import shutil

    from typer.testing import CliRunner

    from arena.cli import app
    from arena.harness.containment import unsealed_why

    folder = tmp_path / "probe"
    (folder / "out").mkdir(parents=True)
    shutil.copy(HERE / "limits_probe.py", folder)
    report = folder / "out" / "report.jsonl"
    (tmp_path / "t.yaml").write_text(f"""name: probe
seed: 1
rules: {{target: 1}}
bots:
  - name: probe
    cmd: $PYTHON limits_probe.py
    cwd: probe
    move_ms: 1500
    startup_ms: 8000
    env: {{PROBE_OUT: {report}}}
    limits: {{open_files: 100, file_size_mb: 5, writable: [out]}}
  - name: greedy
    cmd: $PYTHON {ROOT / 'bots' / 'greedy_bot.py'}
format: round_robin
matches_per_pairing: 2
concurrency: 1
output: {tmp_path / "results"}
""")
    runner = CliRunner()
    checked = runner.invoke(app, ["check-bot", "--from", str(tmp_path / "t.yaml"), "probe"])
    assert checked.exit_code == 0, checked.output
    seen = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(seen) == 1
    mine = seen[0]
    assert mine["nofile"] == 100 and mine["fsize"] == 5 << 20
    from arena.harness.containment import default_clock

    # The machine's clock, as a tournament gives it: cpu where a cgroup counts each bot's CPU time,
    # else wall (a user with no cgroup delegated); hello names it either way.
    assert mine["time"] == {"startup_ms": 8000, "move_ms": 1500, "bank_ms": 0, "grace_ms": 200,
                            "clock": default_clock().value}
    assert mine["writes_beside_report"] and not mine["writes_in_cwd"]
    if unsealed_why() is None:
        assert mine["pid_ns"] != os.readlink("/proc/self/ns/pid")
    ran = runner.invoke(app, ["run", str(tmp_path / "t.yaml"), "--quiet"])
    assert ran.exit_code == 0, ran.output
    played = [json.loads(line) for line in report.read_text().splitlines()[1:]]
    assert played and all({k: v for k, v in r.items() if k != "pid_ns"} == {k: v for k, v in mine.items() if k != "pid_ns"}
                          for r in played)
