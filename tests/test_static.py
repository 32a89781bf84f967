"""The type check and the lint that every change must pass, run by the test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_finds_no_error_in_the_package():
    # Strict, as pyproject.toml configures it; the files checked are named there too.
    done = _tool("mypy")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_finds_nothing_to_lint():
    done = _tool("ruff", "check", "arena", "tests", "benchmarks", "bots", "setup.py")
    assert done.returncode == 0, done.stdout + done.stderr
