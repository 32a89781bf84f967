"""The edge of the command line: one app, commands in workflow order, one exit code per error
class in every command, one line per error, tracebacks saved rather than shown, SIGTERM and
SIGHUP handled like Ctrl-C."""

from __future__ import annotations

import inspect
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from process_helpers import as_from_a_terminal, as_under_nohup
from typer.testing import CliRunner

import arena
from arena.cli import app
from arena.errors import ArenaError, ExitCode
from arena.tournament.config import load_config
from arena.tournament.store import ResultStore, StoreError

pytestmark = pytest.mark.slow  # runs the arena as a command, signals included

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()


def _all_error_classes() -> list[type[ArenaError]]:
    import importlib
    import pkgutil

    for module in pkgutil.walk_packages(arena.__path__, "arena."):
        importlib.import_module(module.name)
    found: list[type[ArenaError]] = []
    todo: list[type[ArenaError]] = [ArenaError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_error_class_carries_a_documented_exit_code():
    readme = (ROOT / "README.md").read_text()
    documented = {int(code) for code in re.findall(r"^\| `(\d+)` \|", readme, flags=re.M)}
    assert documented == {int(code) for code in ExitCode}
    for cls in _all_error_classes():
        assert isinstance(cls.exit_code, ExitCode), cls


def test_commands_are_listed_in_workflow_order_with_whole_sentences():
    result = cli.invoke(app, ["--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0
    panel = result.stdout.split("Commands:\n", 1)[1]
    listed = re.findall(r"^  ([a-z-]+) {2,}(.*?)\s*$", panel, flags=re.M)
    names = [name for name, _ in listed]
    assert names == ["run", "table", "compare", "report", "sprt", "sprt-stats", "replay", "analyze", "play", "check-bot",
                     "rate", "verify", "validate", "export"]
    for name, summary in listed:
        assert summary.endswith("."), (name, summary)  # a whole sentence, not cut
    assert "<bool>" not in result.stdout


@pytest.mark.parametrize(
    "command", ["run", "table", "compare", "report", "sprt", "sprt-stats", "replay", "play", "check-bot", "rate",
                "verify", "validate", "export"]
)
def test_flags_show_as_flags_in_every_help(command):
    result = cli.invoke(app, [command, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0
    assert "<bool>" not in result.stdout
    assert "--help" in result.stdout


def test_a_missing_results_folder_is_the_same_error_and_code_in_every_command(tmp_path: Path):
    missing = str(tmp_path / "nowhere")
    for args in (["table", missing], ["report", missing], ["verify", missing], ["replay", missing, "some-id"],
                 ["export", missing, "--games", "csv"], ["compare", missing, "a", "b"]):
        result = cli.invoke(app, args)
        assert result.exit_code == ExitCode.BAD_INPUT, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "nowhere" in lines[0], (args, result.stderr)


# --- internal errors -------------------------------------------------------------------------------


def test_an_internal_error_prints_one_line_and_saves_the_traceback(tmp_path: Path):
    """A real process: a bug (here, an exception planted in the schedule builder) ends the
    command with one line and exit code 4; the traceback is in the file the line names."""
    (tmp_path / "t.yaml").write_text("name: t\nseed: 1\nbots:\n  - {name: a, cmd: sh}\n  - {name: b, cmd: sh}\n")
    code = (
        "import arena.cli.tournament as t\n"
        "def broken(config):\n"
        "    raise ZeroDivisionError('planted for the test')\n"
        "t.build_schedule = broken\n"
        "from arena.cli import main\n"
        "main()\n"
    )
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    proc = subprocess.run([sys.executable, "-c", code, "validate", str(tmp_path / "t.yaml")], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == ExitCode.INTERNAL == 4
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: internal error: ZeroDivisionError: planted for the test")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    saved = Path(lines[0].rsplit("the traceback is in ", 1)[1])
    assert saved.parent == tmp_path / "state" / "escoba-arena"
    text = saved.read_text()
    assert "Traceback (most recent call last)" in text and "planted for the test" in text and "in broken" in text
    assert "validate" in text  # the command that failed


def test_the_traceback_goes_to_the_temporary_folder_when_the_state_folder_cannot_be_written(tmp_path: Path,
                                                                                        monkeypatch: pytest.MonkeyPatch):
    import arena.cli.tournament as t

    blocker = tmp_path / "state"
    blocker.write_text("a file where the folder should be")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # let it read TMPDIR again

    def broken(config):
        raise KeyError("planted")

    monkeypatch.setattr(t, "build_schedule", broken)
    (tmp_path / "t.yaml").write_text("name: t\nseed: 1\nbots:\n  - {name: a, cmd: sh}\n  - {name: b, cmd: sh}\n")
    result = cli.invoke(app, ["validate", str(tmp_path / "t.yaml")])
    assert result.exit_code == 4
    saved = Path(result.stderr.strip().rsplit("the traceback is in ", 1)[1])
    assert saved.parent == tmp_path / "tmp" and "KeyError: 'planted'" in saved.read_text()


# --- a real tournament, interrupted and damaged --------------------------------------------------------


def write_tournament(folder: Path, *, matches: int = 2, sleep_ms: int = 0, target: int | None = None) -> Path:
    # Without a sleep of its own, the file passes the variable (a sealed bot gets no other of the
    # arena's environment): a run given POLICYBOT_SLEEP_MS (``_signal_a_run``) then has slow moves.
    env = f", env: {{POLICYBOT_SLEEP_MS: {sleep_ms}}}" if sleep_ms else ", pass_env: [POLICYBOT_SLEEP_MS]"
    bots = "\n".join(f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}"{env}}}'
                     for p in ("first", "greedy", "hash"))
    rules = f"rules: {{target: {target}}}\n" if target is not None else ""
    path = folder / "tiny.yaml"
    path.write_text(f"name: tiny\nseed: 2024\n{rules}output: {folder / 'out'}\nconcurrency: 2\n"
                    f"matches_per_pairing: {matches}\nbots:\n{bots}\n")
    return path


def stored_ids(folder: str) -> list[str]:
    with ResultStore.open_existing(folder) as store:
        return [row.id for row in store.results()]


def _wait_for_a_stored_match(proc: subprocess.Popen, folder: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(os.path.join(folder, "results.sqlite")):
            try:
                if stored_ids(folder):
                    return
            except StoreError:
                pass
        time.sleep(0.05)
    raise AssertionError("the run ended, or stored nothing, before it could be stopped")


@pytest.mark.parametrize(
    ("sig", "to_group"),
    [(signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGHUP, True)],
    ids=["SIGTERM to the arena", "SIGTERM to its process group", "SIGHUP to its process group"],
)
def test_sigterm_and_sighup_stop_a_run_like_ctrl_c(tmp_path: Path, sig: signal.Signals, to_group: bool):
    # Matches to 5 points; only the run to stop has 5 ms moves (in its environment, which the bots
    # get through the file's pass_env: the sleep changes no move), so the resume plays at full speed.
    path = write_tournament(tmp_path, matches=4, target=5)
    output = load_config(path).output
    # To the group: a closed terminal, or `kill -TERM -PGID` (the workers get it too); to the
    # arena alone: a process manager stopping it.
    returncode, err = _signal_a_run(path, sig, as_from_a_terminal, to_group=to_group, sleep_ms=5)
    assert returncode == 128 + sig, err
    assert "Traceback" not in err and "Exception ignored" not in err and "SystemExit" not in err, err
    kept = len(stored_ids(output))
    assert f"interrupted by {sig.name}: {kept} of 12 matches are safely stored" in err
    assert f"resume with: arena run {path}" in err
    again = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert again.exit_code == 0, again.output
    assert f"resuming: {kept} of 12" in again.stderr
    ids = stored_ids(output)
    assert len(ids) == len(set(ids)) == 12


def test_a_ctrl_c_once_the_command_is_done_neither_prints_a_traceback_nor_changes_its_exit_code():
    # The interrupt lands at the start of the interpreter's exit, before the bots' and their
    # launcher's clean-up (exit handlers run last registered first): once seen 20 ms after
    # the last line of `arena run`, as "Exception ignored in atexit callback" and exit 0.
    script = (
        "import atexit, os, signal, sys, time\n"
        "import arena.harness.botproc\n"
        "from arena.cli.app import main\n"
        "def interrupt():\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(0.2)\n"
        "atexit.register(interrupt)\n"
        "sys.argv = ['arena', 'play', sys.executable + ' bots/random_bot.py', sys.executable + ' bots/greedy_bot.py']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert "result: " in done.stdout, done.stdout[-500:]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_during_the_arena_scripts_imports_is_one_line_and_its_status(tmp_path: Path, sig: signal.Signals):
    # Before the command line handles signals, during the imports of the first half second of
    # a run, a Ctrl-C raised KeyboardInterrupt inside an import: Python's traceback, status -2.
    script = tmp_path / "arena"  # the console script's name, which is what the early handler looks for
    script.write_text(
        "import os, signal, sys, time\n"
        "import arena.cli\n"
        f"os.kill(os.getpid(), {int(sig)})\n"
        "time.sleep(10)\n"
        "print('not stopped')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (128 + sig, ""), done.stderr
    assert done.stderr == f"interrupted ({'Ctrl-C' if sig == signal.SIGINT else 'SIGTERM'})\n"
    # Once the command runs, the command line's own handling is back (Ctrl-C: KeyboardInterrupt).
    script.write_text(
        "import os, signal\n"
        "import arena.cli\n"
        "from arena.cli.starting import command_starts\n"
        "command_starts()\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.stdout == "KeyboardInterrupt\n", done.stderr


def test_a_reader_that_stops_early_ends_the_command_quietly_with_sigpipes_status():
    # `arena play ... | head -1`: the rest has no reader. Not a failed check (1), no traceback,
    # and no bot left behind.
    done = subprocess.run(
        f"{sys.executable} -m arena.cli play '{sys.executable} bots/random_bot.py' '{sys.executable} bots/greedy_bot.py'"
        " | head -c 1 >/dev/null; echo $PIPESTATUS",
        shell=True, executable="/bin/bash", cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [str(128 + signal.SIGPIPE)], (done.stdout, done.stderr)
    assert done.stderr == ""


def test_under_nohup_a_closed_terminal_does_not_stop_the_run(tmp_path: Path):
    """nohup ignores SIGHUP so that the run outlives its terminal: the arena keeps that."""
    path = write_tournament(tmp_path, matches=2, sleep_ms=1)
    returncode, err = _signal_a_run(path, signal.SIGHUP, as_under_nohup, to_group=True)
    assert returncode == 0, err
    ids = stored_ids(load_config(path).output)
    assert len(ids) == len(set(ids)) == 6


def _signal_a_run(path: Path, sig: signal.Signals, started_as, *, to_group: bool,
                  sleep_ms: int = 0) -> tuple[int, str]:
    """``arena run`` started with ``started_as`` (a ``preexec_fn``) and sent ``sig`` once a
    match is stored: its exit code and stderr. ``sleep_ms``: POLICYBOT_SLEEP_MS in its environment."""
    env = dict(os.environ, POLICYBOT_SLEEP_MS=str(sleep_ms)) if sleep_ms else None
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=ROOT,
                            preexec_fn=started_as, env=env)
    try:
        _wait_for_a_stored_match(proc, load_config(path).output)
        if to_group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err_bytes = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, err_bytes.decode()


def test_a_full_disk_during_a_run_loses_nothing_and_says_how_to_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """SQLite's own "database or disk is full" (its page limit, set above the empty store's
    size by room for about four of its matches) stops the run after a few matches."""
    import sqlite3

    from arena.tournament import store as store_module

    path = write_tournament(tmp_path, matches=4)
    output = load_config(path).output
    real_connect = store_module._connect_raw
    # The room a match takes, from the same tournament played whole elsewhere: matches that
    # finish together are stored in one transaction, so the room must hold more than one
    # (with room for one match only, two finished at once were refused together, none stored).
    whole = cli.invoke(app, ["run", str(path), "--no-progress", "--no-report", "-o", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    with closing(sqlite3.connect(tmp_path / "whole" / "results.sqlite")) as db:
        per_match = db.execute("PRAGMA page_count").fetchone()[0] / 12

    def small_disk(db: str, readonly: bool) -> sqlite3.Connection:
        conn = real_connect(db, readonly)
        if not readonly:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {max(pages, 4) + round(4 * per_match)}")
        return conn

    monkeypatch.setattr(store_module, "_connect_raw", small_disk)
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == ExitCode.FAULT == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert re.match(r"error: cannot write match '.+' to .*results\.sqlite: database or disk is full$", lines[-2]), lines
    assert lines[-1].startswith("the results so far are safe in ") and output in lines[-1]
    assert lines[-1].endswith(f"; resume with: arena run {path}")
    assert "Traceback" not in result.output
    kept = stored_ids(output)
    assert 1 <= len(kept) < 12
    monkeypatch.setattr(store_module, "_connect_raw", real_connect)  # room again
    again = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert again.exit_code == 0, again.output
    assert f"resuming: {len(kept)} of 12" in again.stderr
    final = stored_ids(output)
    assert len(final) == len(set(final)) == 12 and set(kept) <= set(final)
    assert cli.invoke(app, ["verify", output]).exit_code == 0


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament played to the end by real bot processes (copied by each test that damages it)."""
    folder = tmp_path_factory.mktemp("finished")
    path = write_tournament(folder)
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    return folder


def _copy(finished: Path, to: Path) -> tuple[Path, Path]:
    """A copy of the played tournament (file and results folder) in ``to``."""
    import shutil

    shutil.copytree(finished / "out", to / "out")
    path = to / "tiny.yaml"
    path.write_text((finished / "tiny.yaml").read_text().replace(str(finished), str(to)))
    return path, to / "out"


def _sql(results: Path, statement: str, *args: object) -> None:
    import sqlite3

    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        conn.execute(statement, args)
    conn.close()


def _overwrite_the_middle(results: Path) -> None:
    """Garbage over the matches table's first page (past its 8-byte page header): bytes inside
    the file, neither its header nor its end, that every query of the table meets."""
    import sqlite3

    conn = sqlite3.connect(results / "results.sqlite")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'matches'").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    assert 1 < root < pages  # not the file's header page, nor its last
    db = results / "results.sqlite"
    data = bytearray(db.read_bytes())
    start, end = (root - 1) * size + 8, root * size
    data[start:end] = bytes((i * 151 + 7) % 256 for i in range(end - start))
    db.write_bytes(bytes(data))


DAMAGES = {
    "bytes overwritten in the middle": (_overwrite_the_middle, "damaged"),
    "a dropped matches table": (lambda r: _sql(r, "DROP TABLE matches"), "matches table is missing"),
    "invalid JSON in a column": (lambda r: _sql(r, "UPDATE matches SET scores = '[21, ' WHERE idx = 1"),
                                 "column scores: not valid JSON"),
    "a wrong type in a column": (lambda r: _sql(r, "UPDATE matches SET hands = 'many' WHERE idx = 2"),
                                 "column hands: expected an integer, got 'many'"),
    "a JSON value of the wrong shape": (lambda r: _sql(r, "UPDATE matches SET sides = '{\"a\": 1}' WHERE idx = 0"),
                                        "column sides: expected a JSON list of strings"),
    "invalid JSON in the meta table": (lambda r: _sql(r, "UPDATE meta SET value = '{' WHERE key = 'game'"),
                                       "meta 'game': not valid JSON"),
    "a meta value of the wrong shape": (
        lambda r: _sql(r, "UPDATE meta SET value = json_set(value, '$.players', 'four') WHERE key = 'game'"),
        "meta 'game': players: expected an integer, got 'four'"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_store_is_one_line_and_exit_2_in_every_command(finished: Path, tmp_path: Path, damage: str):
    path, results = _copy(finished, tmp_path)
    harm, fragment = DAMAGES[damage]
    harm(results)
    before = (results / "results.sqlite").read_bytes()
    for args in (["table", str(results)], ["verify", str(results)], ["report", str(results)],
                 ["run", str(path), "--no-progress"], ["run", str(path), "--dry-run"]):
        result = cli.invoke(app, args)
        assert result.exit_code == ExitCode.BAD_INPUT, (damage, args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (damage, args, result.stderr)
        assert fragment in lines[0] and "results.sqlite" in lines[0], (damage, args, lines[0])
        assert result.exception is None or isinstance(result.exception, SystemExit), (damage, args)
    # Nothing was written over what remains: the damaged file is as it was, for whoever repairs it.
    assert (results / "results.sqlite").read_bytes() == before


def test_a_record_that_is_not_json_is_refused_by_verify_and_report(finished: Path, tmp_path: Path):
    _, results = _copy(finished, tmp_path)
    _sql(results, "UPDATE matches SET record = '{\"seed\": ' WHERE idx = 3")
    verify = cli.invoke(app, ["verify", str(results)])
    assert verify.exit_code == ExitCode.CHECK_FAILED
    refused = [line for line in verify.stdout.splitlines() if line.startswith("refused")]
    assert len(refused) == 1 and "column record: not valid JSON" in refused[0]
    report = cli.invoke(app, ["report", str(results)])
    assert report.exit_code == ExitCode.CHECK_FAILED and "Traceback" not in report.output
    assert cli.invoke(app, ["table", str(results)]).exit_code == 0  # the table needs no record


def test_the_command_line_is_one_app_with_no_private_registry():
    import arena.cli as cli_module

    source = inspect.getsource(cli_module)
    assert "_register_all" not in source
    import typer

    group = typer.main.get_command(app)
    assert group.list_commands(None) == [
        "run", "table", "compare", "report", "sprt", "sprt-stats", "replay", "analyze", "play", "check-bot", "rate", "verify",
        "validate", "export"]
    # Each is imported when it runs, from the one table in arena/cli/app.py.
    ctx = typer.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command.name == name and command.callback is not None and command.params, name
