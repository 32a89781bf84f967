"""The grants of a tournament file as a person sees them: in ``arena validate``, ``arena run
--dry-run`` and the header of ``arena run``; and a refused grant as one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.harness.containment import clock_note, sealing_line, unsealed_why
from arena.tournament.grants import NETWORK_WARNING

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()


def _file(tmp_path: Path, limits: str, extra: str = "") -> Path:
    path = tmp_path / "t.yaml"
    bots = "".join(f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}"'
                   f'{", limits: " + limits if p == "greedy" else ""}}}\n' for p in ("first", "greedy"))
    path.write_text(f"name: t\nseed: 3\nrules: {{target: 5}}\noutput: {tmp_path / 'out'}\nconcurrency: 1\n{extra}"
                    f"bots:\n{bots}")
    return path


@pytest.mark.parametrize("command", [["validate"], ["validate", "-q"], ["run", "--dry-run"]])
def test_validate_and_the_dry_run_list_the_grants_and_warn(tmp_path, command):
    cache = tmp_path / "cache"
    path = _file(tmp_path, f"{{network: true, writable: [{cache}]}}")
    done = cli.invoke(app, [*command, str(path)])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert f"grants: greedy: network, writes {cache} (outside its folder)" in lines
    assert f"warning: {NETWORK_WARNING} (greedy)" in lines
    assert not any(line.startswith("grants: first") for line in lines)


def test_a_file_without_grants_says_so(tmp_path):
    done = cli.invoke(app, ["validate", "-q", str(_file(tmp_path, "{network: false}", "duplicate: false\n"))])
    assert done.exit_code == 0, done.output
    assert "grants: none" in done.stdout.splitlines() and "warning" not in done.stdout


@pytest.mark.parametrize("command", [["validate"], ["run"], ["run", "--dry-run"]])
def test_a_refused_grant_is_one_line_and_exit_2(tmp_path, command):
    path = _file(tmp_path, '{writable: ["/"]}')
    done = cli.invoke(app, [*command, str(path)])
    assert done.exit_code == 2
    assert done.stderr.strip() == (f"error: {path}:8: key 'bots[1].limits.writable[0]': expected a folder of the "
                                   "bot's own (inside its cwd, or one made for it such as ~/.cache/BOT), but / is "
                                   "the whole system")
    assert not (tmp_path / "out").exists()


def test_run_refuses_a_grant_over_the_output_it_is_given(tmp_path):
    path = _file(tmp_path, f"{{writable: [{tmp_path / 'mine'}]}}")
    done = cli.invoke(app, ["run", str(path), "--output", str(tmp_path / "mine" / "results")])
    assert done.exit_code == 2 and "holds the tournament's results folder" in done.stderr
    assert "\n" not in done.stderr.strip()


@pytest.mark.slow  # plays a tournament
def test_the_run_header_lists_the_grants_and_warns_even_when_quiet(tmp_path):
    path = _file(tmp_path, "{network: true}")
    done = cli.invoke(app, ["run", str(path), "--no-progress", "--no-report"])
    assert done.exit_code == 0, done.output
    header = done.stderr.splitlines()
    assert "grants: greedy: network" in header and f"warning: {NETWORK_WARNING} (greedy)" in header
    # After the summary, the containment line and what the machine lacks: a cgroup for the cpu
    # clock (a user with no cgroup delegated), sealing.
    note, why = clock_note(), unsealed_why()
    lacks = ([note] if note else []) + ([sealing_line(why)] if why else [])
    assert header[1].startswith("containment: ") and header[2:3 + len(lacks)] == [*lacks, "grants: greedy: network"], header
    quiet = cli.invoke(app, ["run", str(path), "--no-progress", "--no-report", "--quiet"])
    assert quiet.exit_code == 0, quiet.output
    assert f"warning: {NETWORK_WARNING} (greedy)" in quiet.stderr.splitlines()
    assert "grants: greedy: network" not in quiet.stderr
