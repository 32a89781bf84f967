"""The bundled demo, run as a new user runs it: the ratings it prints rank the bots by their
real strength (expert above greedy above random), every rating is finite, and the report page
is written. The demo is a product promise (README's first command), so it is tested whole."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # plays the whole demo

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_ranks_expert_above_greedy_above_random_with_finite_ratings(tmp_path: Path):
    out = tmp_path / "demo"
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", "tournaments/demo.yaml", "-o", str(out),
                           "--progress", "none"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert "\ncontainment: subreaper launcher" in done.stderr  # the header says what holds the bots
    assert not re.search(r"\binf\b|unbounded", done.stdout), done.stdout
    rows = json.loads((out / "standings.json").read_text())
    ranked = [row["name"] for row in rows]
    assert ranked == ["expert", "greedy", "random"]
    elos = [row["elo"] for row in rows]
    assert all(isinstance(e, (int, float)) and math.isfinite(e) for e in elos)
    assert elos[0] > elos[1] > elos[2]
    assert all(row["status"] == "rated" and row["failures"] == {} for row in rows)
    assert (out / "report.html").is_file()
