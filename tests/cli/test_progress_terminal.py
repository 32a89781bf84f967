"""The live progress bar is drawn where stderr is a terminal, and only there: a run whose
stderr is a file or a pipe never loads rich (a tenth of a second of every run's start)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the arena as a command over a real tournament

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "ARENA_CACHE_DIR")}
    return {**env, "COLUMNS": "200", "TERM": "xterm", "NO_COLOR": "1", **extra}


def test_stderr_off_a_terminal_is_told_without_loading_rich():
    done = subprocess.run([sys.executable, "-c",
                           "import sys; from arena.cli import console; "
                           "print(console.stderr_is_terminal(), any(m.startswith('rich') for m in sys.modules))"],
                          capture_output=True, text=True, env=_env(), timeout=60)
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_the_bar_is_drawn_on_a_terminal_and_the_run_ends_with_its_tables(tmp_path: Path):
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", "tests/golden/tournament.yaml", "--output",
                             str(tmp_path / "out"), "--no-report"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, env=_env())
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the arena ended and closed the terminal
                break
            if not chunk:
                break
            screen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out, _ = proc.communicate(timeout=60)
    text = screen.decode("utf-8", "replace")
    assert proc.returncode == 0, text[-3000:]
    assert "golden" in text and "leader:" in text and "failures:" in text and "eta" in text, text[-3000:]
    assert "12/12" in text and "\u2501" in text, text[-3000:]  # the bar, counting every match of the schedule
    assert out.decode().splitlines()[0].split()[:2] == ["rank", "bot"]


def test_no_bar_and_no_rich_where_stderr_is_a_pipe(tmp_path: Path):
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "arena.cli", "run", "tests/golden/tournament.yaml",
                           "--output", str(tmp_path / "out"), "--no-report"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "elapsed" not in done.stderr and "\u2501" not in done.stderr  # no bar: its columns, its line
    assert "12/12 matches" in done.stderr  # the status line a bar-less run ends with
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "arena.tournament.runner" in imported  # the run's own imports are seen
    assert not [name for name in imported if name.split(".")[0] == "rich"]
