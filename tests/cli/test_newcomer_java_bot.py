"""The Java bot written from docs/PROTOCOL.md alone plays through the real CLI and referee.

This is the standing check of the promise that a bot can be written from the protocol
document in a language the repository does not use. It runs ``arena`` as a user does (a
subprocess of ``python -m arena.cli``), so the whole path is exercised: argument parsing,
bot processes, referee, JSON summary. Java is required, not optional: the CI machine has it,
and a skip here would silently drop the only foreign-language bot check, so a missing
``java`` fails with a clear message.
"""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import arena_command

pytestmark = pytest.mark.slow  # compiles and runs a Java bot

ROOT = Path(__file__).resolve().parents[2]
JAVA_BOT = ROOT / "bots" / "java" / "EscobaBot.java"
PY_BOT = ROOT / "bots" / "greedy_bot.py"

# Generous limits: a loaded box may start a JVM slowly. These tests check conformance, not
# speed, so a slow machine must not turn into a failure.
LIMITS = ("--startup-ms", "60000", "--move-ms", "10000")


def java_program() -> str:
    java = shutil.which("java")
    if java is None or shutil.which("javac") is None:
        pytest.fail(
            "`java` or `javac` is not on PATH: the newcomer Java bot (bots/java/EscobaBot.java) cannot be "
            "checked. Install a JDK 17+ (e.g. `apt-get install openjdk-17-jdk-headless`)."
        )
    return java


def java_command() -> str:
    """The bot as the README runs it: the JVM's single-file source launcher, which compiles the
    file at every start (1-3 s on an idle 2-core box, more while the rest of the suite runs)."""
    return f"{shlex.quote(java_program())} {shlex.quote(str(JAVA_BOT))}"


@pytest.fixture(scope="module")
def compiled_java(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same file compiled once for the module (its header's "compile once" command, with
    its start-up flags): each start is then a JVM start (0.2 s), not a compile as well. The
    classes hold EscobaBot.java alone, so this is the very bot java_command() runs."""
    java = java_program()
    classes = tmp_path_factory.mktemp("java-classes")
    quick = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")  # a short-lived JVM: the C1 compiler only
    subprocess.run(["javac", *(f"-J{flag}" for flag in quick), "-d", str(classes), str(JAVA_BOT)], check=True,
                   capture_output=True, timeout=300)
    return shlex.join([java, *quick, "-cp", str(classes), "EscobaBot"])


def py_cmd() -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(PY_BOT))}"


def arena(*args: str) -> subprocess.CompletedProcess:
    return arena_command(*args)


def play_json(*args: str) -> dict:
    result = arena("play", *args, "--json", *LIMITS)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def assert_clean_finish(summary: dict, java_seats: list[int]) -> None:
    assert summary["reason"] in ("target", "max_hands"), summary
    for seat in summary["seats"]:
        assert seat["termination"] == "ok", seat
        assert seat["strikes"] == 0, seat
    assert [s["bot"].startswith("java") for s in summary["seats"]] == [
        i in java_seats for i in range(len(summary["seats"]))
    ]


def test_java_bot_plays_a_full_two_player_match_in_either_seat(compiled_java):
    # Seat 0 runs the file as the README says (java bots/java/EscobaBot.java); seat 1 the same
    # file compiled once.
    first = play_json(java_command(), py_cmd(), "--seed", "1")
    assert_clean_finish(first, [0])
    second = play_json(py_cmd(), compiled_java, "--seed", "2")
    assert_clean_finish(second, [1])


def test_java_bot_plays_pairs_with_a_variant_rule_set(tmp_path, compiled_java):
    java_cmd = compiled_java
    # Renuncio and subset15 bring the `renuncio ...`/`pass` and `mesa ...` requests; a
    # forfeit or an illegal claim would show as a termination other than ok.
    summary = play_json(
        java_cmd, py_cmd(), java_cmd, py_cmd(), "--pairs", "--seed", "4",
        "--rule", "renuncio=true", "--rule", "initial_table=subset15", "--logs", str(tmp_path),
    )
    assert_clean_finish(summary, [0, 2])
    assert summary["winner_seats"] in ([0, 2], [1, 3])
    # Seed 4 gives a Java seat at least one such request; without this the test could pass
    # while never touching the variant replies it is meant to cover.
    log = (tmp_path / "conversation.log").read_text()
    special = re.compile(r'seat [02] .*<< .*"move":\s*"(renuncio |mesa |pass")')
    assert any(special.search(line) for line in log.splitlines()), "no renuncio/mesa reply from Java"


def test_java_bot_passes_check_bot(compiled_java):
    java_cmd = compiled_java
    result = arena("check-bot", java_cmd, *LIMITS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "result: PASS" in result.stdout
