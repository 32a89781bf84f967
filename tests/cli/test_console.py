"""Every console line goes through ``arena/cli/console.py``, which escapes it: a bot whose ready
name, stderr and replies hold terminal controls cannot act on the terminal of ``arena run`` or
``arena play`` (tests/zoo/terminal_attack.py is that bot)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "tests" / "zoo"
CLI = ROOT / "arena" / "cli"
# What terminal_attack.py sends: ESC, BEL, CR, backspace, DEL, C1 CSI and NEL, the bidi override.
RAW = ("\x1b", "\x07", "\r", "\x08", "\x7f", "\x9b", "\x85", "\u202e")
ESCAPED = "ev\\x1b[2J\\x1b]0;owned\\x07il"


def _writes_to_the_console(node: ast.AST) -> str | None:
    """The name of a call that writes to stdout or stderr, other than through console.py."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id == "print":
        return "print"
    if isinstance(func, ast.Attribute):
        text = ast.unparse(func)
        if text in ("typer.echo", "typer.secho", "click.echo", "click.secho", "sys.stdout.write", "sys.stderr.write"):
            return text
        if func.attr == "print":  # a rich console's
            return text
    return None


def test_only_the_console_module_writes_to_the_console():
    found = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "console.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = _writes_to_the_console(node)
            if name is not None:
                found.append(f"{path.name}:{getattr(node, 'lineno', '?')}: {name}")
    assert found == []


def test_the_console_escapes_each_line_and_leaves_escaped_text_alone(capsys):
    from arena.cli import console

    console.echo("a\x1b[2J\nb\u202ec")
    console.err("bell\x07")
    console.echo("already \\x1b escaped")
    got = capsys.readouterr()
    assert got.out == "a\\x1b[2J\nb\\u202ec\nalready \\x1b escaped\n"
    assert got.err == "bell\\x07\n"


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CACHE_DIR"}
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def _raw(text: str) -> list[str]:
    return [ch for ch in RAW if ch in text]


def _attacker(name: str, mode: str) -> str:
    return f'  - {{name: {name}, cmd: "$PYTHON terminal_attack.py {mode}", cwd: "{ZOO}"}}\n'


@pytest.mark.slow
def test_a_run_against_bots_that_attack_the_terminal_prints_no_raw_control(tmp_path: Path):
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 5\nrules: {{target: 5}}\noutput: {tmp_path / 'out'}\nconcurrency: 2\nbots:\n"
                    + _attacker("crash", "crash") + _attacker("garbage", "garbage") + _attacker("illegal", "illegal")
                    + _attacker("ready", "ready 1000"))
    done = _arena("run", str(path), "--no-report", "-v", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _raw(done.stdout) == [] and _raw(done.stderr) == []
    # The failure lines are there, with what the bots sent, escaped: the end of its stderr, the
    # reply that is not JSON, the move that is not a move.
    failures = [line for line in done.stderr.splitlines() if line.startswith("failure: ")]
    assert any("crash: bot exited with code 3; stderr ends: " + ESCAPED in line for line in failures), failures
    assert any(line.startswith("failure: garbage") and "'no " + ESCAPED in line for line in failures), failures
    assert any(line.startswith("failure: illegal") and "'7o+" + ESCAPED in line for line in failures), failures


@pytest.mark.slow
def test_a_played_match_against_a_bot_that_attacks_the_terminal_prints_no_raw_control(tmp_path: Path):
    attack = f"{sys.executable} {ZOO / 'terminal_attack.py'}"
    done = _arena("play", f"{attack} ready 1000", f"{attack} crash 3", "--seed", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _raw(done.stdout) == [] and _raw(done.stderr) == []
    assert "stderr ends: " + ESCAPED in done.stdout + done.stderr
