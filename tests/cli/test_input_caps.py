"""Hostile inputs the arena reads: a line of hundreds of MB, a match of 600 sides, a stored row
of 20 MB. Each is refused with one short line naming the file and the line, having read no more
than the cap (docs/TOURNAMENTS.md, "Size caps"), so its memory stays near the cap, not the input."""

from __future__ import annotations

import io
import json
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from replay_helpers import play
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Seating
from arena.errors import ExitCode
from arena.lines import LineTooLongError, capped_lines, capped_lines_numbered
from arena.rating.inputs import MAX_LINE_BYTES, MAX_MATCH_BOTS, MAX_SIDE_BOTS, MAX_SIDES
from arena.tournament.export import MAX_RECORD_BYTES
from arena.tournament.store import MAX_ROW_BYTES

cli = CliRunner()
BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
SHORT = 400  # an error line about a hostile input is at most this long


class _Counting(io.BytesIO):
    """A file that remembers the longest read it was asked for."""

    largest = 0

    def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        got = super().readline(size)
        self.largest = max(self.largest, len(got))
        return got


def test_capped_lines_refuse_a_long_line_having_read_only_the_cap_and_quote_a_few_dozen_characters():
    data = _Counting(b"ok\n" + b"\x1b" + b"y" * 5000 + b"\nlast")
    assert list(capped_lines(_Counting(b"a\nbb\n"), 2, "f")) == [b"a\n", b"bb\n"]
    lines = capped_lines(data, 100, "f.jsonl")
    assert next(lines) == b"ok\n"
    with pytest.raises(LineTooLongError) as refused:
        next(lines)
    assert refused.value.line == 2 and data.largest == 101
    assert str(refused.value) == "f.jsonl:2: a line longer than 100 bytes, the cap of this file's lines " \
                                 f"(it starts {chr(0x1b) + 'y' * 39 + '...'!r})"
    numbered = list(capped_lines_numbered(_Counting(b"ok\n" + b"y" * 5000 + b"\nlast"), 100, "f"))
    assert [n for n, _ in numbered] == [1, 2, 3] and isinstance(numbered[1][1], LineTooLongError)
    assert numbered[2] == (3, b"last")


def _peak_mb(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """An arena command run in a process of its own, and the most memory it held (MB)."""
    # VmHWM, not getrusage's ru_maxrss: Linux carries the high-water mark of the memory an exec
    # replaces into ru_maxrss, and a vfork'ed child's is the pytest worker's (418 MB on CI once).
    code = ("import sys\nfrom arena.cli import main\nsys.argv = ['arena', *sys.argv[1:]]\n"
            "try:\n    main()\nfinally:\n"
            "    hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
            "    print('peak', hwm.split()[1], file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    peak = next(int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("peak "))
    done.stderr = "".join(line + "\n" for line in done.stderr.splitlines() if not line.startswith("peak "))
    return done, peak / 1024


def _huge_line(path: Path, prefix: bytes, mb: int, after: bytes = b"") -> None:
    with open(path, "wb") as fh:
        fh.write(prefix)
        block = b"x" * (1 << 20)
        for _ in range(mb):
            fh.write(block)
        fh.write(b"\n" + after)


def test_rate_refuses_a_match_of_more_sides_than_a_game_has_naming_the_file_the_line_and_what_is_allowed(
        tmp_path: Path):
    assert (MAX_SIDES, MAX_SIDE_BOTS, MAX_MATCH_BOTS) == (4, 3, 6)  # as arena.core.rules.Seating allows
    path = tmp_path / "many.jsonl"
    line = json.dumps({"sides": [[f"bot{i}"] for i in range(600)], "scores": list(range(600))})
    path.write_text('{"sides": [["a"], ["b"]], "scores": [1, 0]}\n' + line + "\n")
    assert 8000 < path.stat().st_size < 12_000  # the red team's 8.8 KB
    done, peak = _peak_mb("rate", str(path))
    assert done.returncode == ExitCode.BAD_INPUT, done.stderr
    assert done.stderr == (f"error: {path}:2: 600 sides; a game of Escoba has 2 to 4 (2, 3 or 4 sides of one bot, "
                           "2 pairs, 3 pairs or 2 teams of 3)\n")
    assert peak < 400, peak
    for sides, why in (([["a", "b", "c", "d"], ["e"]], "side 1 has 4 bots; a side of Escoba has at most 3"),
                       ([["a", "b"], ["c", "d"], ["e", "f"], ["g", "h"]], "8 bots in one match; a game of Escoba "
                                                                          "has at most 6")):
        path.write_text(json.dumps({"sides": sides, "scores": list(range(len(sides)))}) + "\n")
        result = cli.invoke(app, ["rate", str(path)])
        assert result.exit_code == ExitCode.BAD_INPUT and result.stderr.startswith(f"error: {path}:1: {why} ("), \
            result.stderr
    csv = tmp_path / "teams.csv"
    csv.write_text("side_a,side_b,score_a\na+b+c+d,e,1\n")
    result = cli.invoke(app, ["rate", str(csv)])
    assert result.stderr.startswith(f"error: {csv}:2: side_a has 4 bots; a side of Escoba has at most 3 ("), result.stderr


@pytest.mark.slow
def test_a_300_mb_line_of_json_results_is_one_short_error_in_little_memory(tmp_path: Path):
    path = tmp_path / "huge.jsonl"
    _huge_line(path, b'{"sides": [["', 300)
    done, peak = _peak_mb("rate", str(path))
    assert done.returncode == ExitCode.BAD_INPUT
    assert done.stderr == f"error: {path}:1: a line longer than {MAX_LINE_BYTES:,} bytes; expected JSON lines " \
                          "(one match per line), a match a line\n"
    assert peak < 400, peak


@pytest.mark.slow
def test_a_300_mb_line_of_records_jsonl_is_one_refused_line_among_the_others_in_little_memory(tmp_path: Path):
    good = json.dumps(play(Seating.alone(2), {"target": 5}, 3).to_dict())
    path = tmp_path / "records.jsonl"
    _huge_line(path, good.encode() + b"\n" + b'{"id": "00001.0", "record": {"x": "', 300, good.encode() + b"\n")
    done, peak = _peak_mb("verify", str(path), "-v")
    assert done.returncode == ExitCode.CHECK_FAILED, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ok 1: ") and lines[2].startswith("ok 3: "), lines
    assert lines[1] == f"refused line 2: longer than {MAX_RECORD_BYTES // 2**20} MB, the cap of a record"
    assert all(len(line) < SHORT for line in done.stdout.splitlines() + done.stderr.splitlines())
    # The line is never held whole: the process stays far from the 300 MB line (1.9 GB before).
    assert peak < 400, peak
    replayed, peak = _peak_mb("replay", str(path), "00001.0")
    assert replayed.returncode != 0 and len(replayed.stderr) < SHORT, replayed.stderr
    # The line is never held whole: the process stays far from the 300 MB line (1.9 GB before).
    assert peak < 400, peak


def test_a_stored_row_over_the_cap_is_one_short_error(tmp_path: Path):
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 2\nrules: {{target: 5}}\noutput: {tmp_path / 'out'}\nconcurrency: 1\n"
                    "bots:\n"
                    f'  - {{name: first, cmd: "$PYTHON policybot.py first", cwd: "{BOTS}"}}\n'
                    f'  - {{name: last, cmd: "$PYTHON policybot.py last", cwd: "{BOTS}"}}\n')
    assert cli.invoke(app, ["run", str(path), "--no-progress", "--no-report"]).exit_code == 0
    conn = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    with conn:
        conn.execute("UPDATE matches SET record = ? WHERE id = '00000.1'", ('{"x": "' + "y" * MAX_ROW_BYTES + '"}',))
    conn.close()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    why = f"a stored row longer than {MAX_ROW_BYTES // 2**20} MB, the cap of a row"
    verify = cli.invoke(app, ["verify", str(tmp_path / "out")])  # one refused record among the others
    assert verify.exit_code == ExitCode.CHECK_FAILED and verify.stdout.startswith("refused 00000.1: "), verify.output
    replay = cli.invoke(app, ["replay", str(tmp_path / "out"), "00000.1"])
    assert replay.exit_code == ExitCode.BAD_INPUT, replay.output
    for line in verify.stdout.splitlines()[:1] + replay.stderr.splitlines():
        assert why in line and len(line.replace(str(tmp_path), "")) < SHORT, line
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 8 * 1024 * 16  # KB: never read whole
