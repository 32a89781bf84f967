"""Snapshots of what the command line prints: ``arena --help``, one-line errors (a malformed
YAML file, a key with a wrong value, an unknown option, a missing parameter) and a table.

Each case's exit code, stdout and stderr are compared with tests/data/snapshots/NAME.txt. A
change to what is printed is then seen in review, as a change of that file. To accept one,
regenerate the snapshots and read their diff:

    ARENA_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/cli/test_snapshots.py

The command line runs in the repository's root (the table: beside a copy of the golden store),
with relative paths, so that messages quote the same path everywhere, and a terminal 100
columns wide.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "data" / "snapshots"
UPDATE = os.environ.get("ARENA_UPDATE_SNAPSHOTS", "") not in ("", "0")
WIDTH = 100

CASES = {
    "help": ["--help"],
    "error_yaml_syntax": ["validate", "tests/data/bad_tournaments/yaml_syntax.yaml"],
    "error_bad_mode": ["validate", "tests/data/bad_tournaments/bad_mode.yaml"],
    "error_unknown_option": ["play", "--bogus"],
    "error_missing_parameter": ["sprt-stats", "19", "52", "94", "82", "50", "--elo1", "10"],
    "error_too_few_values": ["sprt-stats", "1", "2", "3"],
    "error_unknown_top_option": ["--bogus"],
    "table": ["table", "store"],  # a copy of tests/golden/store: opening a store writes beside it
}


def _shown(args: list[str]) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(WIDTH)}, terminal_width=WIDTH)
    return (f"$ arena {' '.join(args)}\nexit code: {result.exit_code}\n"
            f"--- stdout ---\n{result.stdout}--- stderr ---\n{result.stderr}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_what_the_command_line_prints_matches_its_snapshot(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    if name == "table":
        shutil.copytree(ROOT / "tests" / "golden" / "store", tmp_path / "store")
        monkeypatch.chdir(tmp_path)
    else:
        monkeypatch.chdir(ROOT)
    shown = _shown(CASES[name])
    path = SNAPSHOTS / f"{name}.txt"
    if UPDATE:
        path.write_text(shown)
    assert path.exists(), f"no snapshot {path.name}: write it with ARENA_UPDATE_SNAPSHOTS=1 (see this file's docstring)"
    assert shown == path.read_text(), (f"arena {' '.join(CASES[name])} prints other than {path.name}; if that is "
                                       "meant, regenerate with ARENA_UPDATE_SNAPSHOTS=1 and review the diff")


def test_every_error_snapshot_is_one_line():
    for name in CASES:
        if name.startswith("error_"):
            stderr = (SNAPSHOTS / f"{name}.txt").read_text().split("--- stderr ---\n", 1)[1]
            assert stderr.count("\n") == 1 and stderr.startswith("error: "), (name, stderr)
