"""No bot text reaches the terminal raw, and no hostile file gives a traceback.

Names, moves and failure details are shown with control characters escaped (arena/printable.py)
in ``arena replay``, ``arena table``, ``arena rate``, ``arena verify`` and the error edge, while
the terminal replay's own colours keep working. A CSV field over the csv module's limit, a record
nested 100,000 deep and a record of several hundred MB each give one line and an exit code."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from replay_helpers import play
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Seating
from arena.errors import ExitCode
from arena.match.replay import replay
from arena.printable import printable, printable_lines
from arena.render.text import TextStyle, render_screen, render_transcript
from arena.tournament.export import MAX_RECORD_BYTES

cli = CliRunner()
BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"

# ESC (a screen clear, a window title), BEL, CR, DEL, a C1 control (CSI), a bidi override.
EVIL = "ev\x1b[2J\x1b]0;owned\x07il\r\x7f\x9b31m\u202egnp.exe"
RAW = ("\x1b", "\x07", "\r", "\x7f", "\x9b", "\u202e")


def _clean(text: str) -> bool:
    return not any(ch in text for ch in RAW)


# --- the rule -------------------------------------------------------------------------------------


def test_printable_escapes_controls_and_bidi_and_keeps_the_rest():
    assert printable(EVIL) == "ev\\x1b[2J\\x1b]0;owned\\x07il\\x0d\\x7f\\x9b31m\\u202egnp.exe"
    assert printable("tab\there\nnewline") == "tab\\x09here\\x0anewline"
    assert printable("\u2028\u200b\ufeff\ud800") == "\\u2028\\u200b\\ufeff\\ud800"
    kept = "Señor Ñandú 7♦ K♥ 漢字 🂡 a b-c_d.e"
    assert printable(kept) == kept
    assert printable_lines("a\x1b\nb") == "a\\x1b\nb"


# --- the commands ---------------------------------------------------------------------------------


def _evil_record() -> dict:
    """A real match whose bots have hostile names; seat 1 crashes, with a hostile detail."""
    data = play(Seating.alone(2), {"target": 5}, 4, failing_seat=1, fail_on=6).to_dict()
    data["seats"] = [EVIL, "b\x1b[31mred"]
    for outcome in data["outcomes"]:
        outcome["bot"] = data["seats"][outcome["seat"]]
        if outcome["termination"] != "ok":
            outcome["detail"] = "said \x1b[2J\x07"
    for failure in data["failures"]:
        failure["detail"] = "said \x1b[2J\x07"
    return data


def test_replay_shows_hostile_names_escaped(tmp_path: Path):
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(_evil_record()))
    result = cli.invoke(app, ["replay", str(path)])
    assert result.exit_code == 0, result.output
    assert _clean(result.stdout)
    assert printable(EVIL) in result.stdout and "said \\x1b[2J\\x07" in result.stdout


def test_the_terminal_replay_keeps_its_own_colours_around_escaped_names():
    rep = replay(_evil_record())
    style = TextStyle(color=True, unicode=True)
    screens = [render_screen(rep, i, style) for i in range(len(rep.frames))] + [render_transcript(rep, style)]
    for text in screens:
        # Every ESC left is one of the replay's own colour codes (SGR: ESC [ digits ; m).
        assert re.sub(r"\x1b\[[0-9;]*m", "", text).count("\x1b") == 0
        assert not any(ch in text for ch in RAW[1:])
    assert "\x1b[1;33m" in "".join(screens) or "\x1b[1;31m" in "".join(screens)  # cards still coloured
    assert printable(EVIL) in screens[0]


def test_verify_and_the_error_edge_escape_what_they_quote(tmp_path: Path):
    folder = tmp_path / "records"
    folder.mkdir()
    data = _evil_record()
    data["moves"][2]["move"] = "\x1b[2J1o"  # a move that does not replay
    (folder / "bad\x1b[31m.json").write_text(json.dumps(data))
    result = cli.invoke(app, ["verify", str(folder)])
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert _clean(result.stdout) and _clean(result.stderr)
    assert result.stdout.startswith("refused bad\\x1b[31m: record does not replay: move 3")
    missing = cli.invoke(app, ["replay", str(tmp_path / "gone\x1b]0;x\x07.json")])
    assert missing.exit_code == ExitCode.BAD_INPUT
    assert missing.stderr == f"error: {tmp_path}/gone\\x1b]0;x\\x07.json: no such file or folder\n"
    single = folder / "bad\x1b[31m.json"
    refused = cli.invoke(app, ["replay", str(single)])
    assert refused.exit_code == ExitCode.CHECK_FAILED and _clean(refused.stderr)
    assert "bad\\x1b[31m.json: record does not replay" in refused.stderr


def test_rate_shows_hostile_names_escaped(tmp_path: Path):
    evil = EVIL.replace("\r", "")  # the file is read as text: a CR in a cell would arrive as a newline
    path = tmp_path / "results.csv"
    path.write_text(f'side_a,side_b,score_a\n"{evil}",b,1\nb,"{evil}",0.5\nb,c,1\nc,"{evil}",0\n')
    for fmt in ("plain", "github", "csv"):
        result = cli.invoke(app, ["rate", str(path), "--format", fmt])
        assert result.exit_code == 0, result.output
        assert _clean(result.stdout) and printable(evil) in result.stdout, fmt
    as_json = cli.invoke(app, ["rate", str(path), "--format", "json"])
    assert _clean(as_json.stdout) and evil in [r["name"] for r in json.loads(as_json.stdout)]


def _rename(results: Path, old: str, new: str) -> None:
    """Rename a bot everywhere in a results store: meta, rows and records (a forged store)."""

    def walk(value):  # noqa: ANN001, ANN202
        if isinstance(value, str):
            return new if value == old else value
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {(new if k == old else k): walk(v) for k, v in value.items()}  # keys too: identities by name
        return value

    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        for key, value in conn.execute("SELECT key, value FROM meta").fetchall():
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps(walk(json.loads(value))), key))
        for columns in conn.execute("SELECT id, sides, seats, record FROM matches").fetchall():
            conn.execute("UPDATE matches SET sides = ?, seats = ?, record = ? WHERE id = ?",
                         (*(json.dumps(walk(json.loads(c))) for c in columns[1:]), columns[0]))
    conn.close()


def test_table_and_verify_show_a_forged_stores_names_escaped(tmp_path: Path):
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 2\nrules: {{target: 5}}\noutput: {tmp_path / 'out'}\nconcurrency: 1\n"
                    "matches_per_pairing: 2\nbots:\n"
                    f'  - {{name: first, cmd: "$PYTHON policybot.py first", cwd: "{BOTS}"}}\n'
                    f'  - {{name: last, cmd: "$PYTHON policybot.py last", cwd: "{BOTS}"}}\n')
    assert cli.invoke(app, ["run", str(path), "--no-progress"]).exit_code == 0
    _rename(tmp_path / "out", "first", EVIL)
    for fmt in ("plain", "github", "csv"):
        table = cli.invoke(app, ["table", str(tmp_path / "out"), "--format", fmt])
        assert table.exit_code == 0, table.output
        assert _clean(table.stdout) and printable(EVIL) in table.stdout, fmt
    verify = cli.invoke(app, ["verify", str(tmp_path / "out"), "-v"])
    assert verify.exit_code == 0, verify.output  # renamed consistently, it still verifies
    replayed = cli.invoke(app, ["replay", str(tmp_path / "out"), "00000.0"])
    assert replayed.exit_code == 0 and _clean(replayed.stdout) and printable(EVIL) in replayed.stdout


# --- no traceback -----------------------------------------------------------------------------------


def test_a_csv_line_over_the_line_cap_or_a_field_over_the_csv_modules_limit_is_one_line_with_its_line(
        tmp_path: Path):
    path = tmp_path / "results.csv"
    path.write_text("side_a,side_b,score_a\na,b,1\n" + "x" * 200_000 + ",b,1\n")
    result = cli.invoke(app, ["rate", str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stderr == (f"error: {path}:3: a line longer than 65,536 bytes; expected a CSV with header "
                             "side_a,side_b,score_a, a match a line\n")
    quoted = tmp_path / "quoted.csv"  # a quoted field over many lines: the line it starts on
    quoted.write_text('side_a,side_b,score_a\na,b,1\n"' + "x\n" * 70_000 + '",b,1\n')
    result = cli.invoke(app, ["rate", str(quoted)])
    assert result.exit_code == ExitCode.BAD_INPUT and result.stderr.startswith(f"error: {quoted}:3: ")


@pytest.mark.parametrize("command", ["verify", "replay"])
def test_a_record_nested_100000_deep_is_one_line(tmp_path: Path, command: str):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    result = cli.invoke(app, [command, str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stderr == f"error: {path}: not a game record: its JSON is nested too deep\n"
    # In a folder of records it is one refused record among the others.
    folder = tmp_path / "records"
    folder.mkdir()
    path.rename(folder / "deep.json")
    (folder / "good.json").write_text(json.dumps(play(Seating.alone(2), {"target": 5}, 3).to_dict()))
    result = cli.invoke(app, ["verify", str(folder)])
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert result.stdout.splitlines()[0] == f"refused deep: {folder / 'deep.json'}: not a game record: its JSON is " \
                                            "nested too deep"


@pytest.mark.parametrize("command", ["verify", "replay"])
def test_a_record_of_several_hundred_mb_is_refused_unread(tmp_path: Path, command: str):
    path = tmp_path / "huge.json"
    with open(path, "wb") as fh:
        fh.truncate(300 * 1024 * 1024)  # sparse: the disk holds nothing
    result = cli.invoke(app, [command, str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stderr == (f"error: {path}: not a game record: larger than {MAX_RECORD_BYTES // 2**20} MB\n")
