"""The results folder is never a way out: links planted in it never make the arena write a file
outside it (arena/safe_files.py says what is refused and what is replaced).

Every test plants links to files outside the folder (in tmp_path/outside), runs a command, and
checks the files outside are byte for byte what they were."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.errors import ExitCode, WriteError
from arena.safe_files import (
    LinkRefusedError,
    make_folder,
    open_lock_file,
    open_log,
    open_text_log,
    refuse_links,
    write_text,
)

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()
PRECIOUS = "precious: must not change\n"


# --- the library ------------------------------------------------------------------------------------


def _outside(tmp_path: Path, name: str = "victim.txt") -> Path:
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    victim = folder / name
    victim.write_text(PRECIOUS)
    return victim


def _untouched(*victims: Path) -> bool:
    return all(v.read_text() == PRECIOUS for v in victims)


def _plant(link: Path, target: Path) -> None:
    """A symbolic link at ``link`` (what a finished run wrote there, such as its report page,
    is removed first)."""
    link.unlink(missing_ok=True)
    link.symlink_to(target)


def test_a_file_written_whole_replaces_a_symlink_or_a_hard_link_at_its_name(tmp_path: Path):
    folder = tmp_path / "results"
    folder.mkdir()
    soft, hard = _outside(tmp_path, "soft.txt"), _outside(tmp_path, "hard.txt")
    (folder / "a.txt").symlink_to(soft)
    os.link(hard, folder / "b.txt")
    write_text(folder / "a.txt", "table a\n")
    write_text(folder / "b.txt", "table b\n")
    assert _untouched(soft, hard)
    assert not (folder / "a.txt").is_symlink() and (folder / "a.txt").read_text() == "table a\n"
    assert (folder / "b.txt").stat().st_nlink == 1 and (folder / "b.txt").read_text() == "table b\n"
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.txt"]  # no temporary file left


def test_a_link_planted_under_an_old_temporary_name_leads_nowhere(tmp_path: Path):
    folder = tmp_path / "results"
    folder.mkdir()
    victim = _outside(tmp_path)
    (folder / "standings.txt.tmp").symlink_to(victim)
    write_text(folder / "standings.txt", "table\n")
    assert _untouched(victim) and (folder / "standings.txt.tmp").is_symlink()


def test_a_log_replaces_a_link_a_hard_link_or_a_fifo_and_appends_to_its_own_file(tmp_path: Path):
    folder = tmp_path / "logs"
    folder.mkdir()
    soft, hard = _outside(tmp_path, "soft.txt"), _outside(tmp_path, "hard.txt")
    (folder / "a.log").symlink_to(soft)
    os.link(hard, folder / "b.log")
    os.mkfifo(folder / "c.log")  # opening a fifo for writing would wait for a reader
    for name in ("a.log", "b.log", "c.log"):
        with open_log(folder / name) as fh:
            fh.write(b"one\n")
        with open_log(folder / name) as fh:
            fh.write(b"two\n")
        assert (folder / name).read_bytes() == b"one\ntwo\n" and not (folder / name).is_symlink()
    with open_text_log(folder / "a.log") as fh:  # a text log starts afresh
        fh.write("three\n")
    assert (folder / "a.log").read_text() == "three\n"
    assert _untouched(soft, hard)


def test_a_log_in_a_folder_that_is_a_link_is_refused(tmp_path: Path):
    victim = _outside(tmp_path)
    (tmp_path / "logs").symlink_to(victim.parent)
    with pytest.raises(LinkRefusedError, match="logs is a symbolic link"):
        open_log(tmp_path / "logs" / "victim.txt")
    assert _untouched(victim)


@pytest.mark.parametrize("plant", ["symlink", "hard link", "fifo"])
def test_a_lock_file_that_is_a_link_or_not_a_file_is_refused(tmp_path: Path, plant: str):
    victim = _outside(tmp_path)
    lock = tmp_path / "run.lock"
    if plant == "symlink":
        lock.symlink_to(victim)
    elif plant == "hard link":
        os.link(victim, lock)
    else:
        os.mkfifo(lock)
    with pytest.raises(LinkRefusedError, match="run.lock is a"):
        open_lock_file(tmp_path, "run.lock")
    assert _untouched(victim)
    fd = open_lock_file(tmp_path / "outside", "fresh.lock")  # a plain new one is fine
    os.close(fd)


def test_refuse_links_and_make_folder(tmp_path: Path):
    victim = _outside(tmp_path)
    (tmp_path / "db").write_text("")
    refuse_links(tmp_path, ["db", "db-wal"], one_name=True)  # plain or missing: fine
    (tmp_path / "db-wal").symlink_to(victim)
    with pytest.raises(LinkRefusedError, match="db-wal is a symbolic link"):
        refuse_links(tmp_path, ["db", "db-wal"], one_name=False)
    os.link(victim, tmp_path / "db2")
    refuse_links(tmp_path, ["db2"], one_name=False)  # reading may share a file with a backup
    with pytest.raises(LinkRefusedError, match="2 names"):
        refuse_links(tmp_path, ["db2"], one_name=True)
    (tmp_path / "linked").symlink_to(victim.parent)
    with pytest.raises(LinkRefusedError, match="linked is a symbolic link"):
        make_folder(tmp_path / "linked")
    make_folder(tmp_path / "new" / "deeper")
    assert (tmp_path / "new" / "deeper").is_dir()
    with pytest.raises(WriteError):
        write_text(tmp_path / "outside", "a folder is not replaced")


# --- the commands ---------------------------------------------------------------------------------


def _tournament(folder: Path, output: Path) -> Path:
    """Two bots, two matches; ``crashy`` writes to stderr and exits part-way through each."""
    path = folder / "links.yaml"
    path.write_text(
        f"name: links\nseed: 9\nrules: {{target: 5}}\noutput: {output}\nconcurrency: 1\nmatches_per_pairing: 2\n"
        "bots:\n"
        f'  - {{name: first, cmd: "$PYTHON policybot.py first", cwd: "{BOTS}"}}\n'
        f'  - {{name: crashy, cmd: "$PYTHON policybot.py greedy", cwd: "{BOTS}", env: {{POLICYBOT_CRASH_AFTER: "4"}}}}\n'
    )
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("links")
    path = _tournament(folder, folder / "out")
    result = cli.invoke(app, ["run", str(path), "--no-progress", "--no-report"])
    assert result.exit_code == 0, result.output
    return path, folder / "out"


def _copy(finished: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    path, results = finished
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    return path, copy


def _run(path: Path, output: Path):
    return cli.invoke(app, ["run", str(path), "--output", str(output), "--no-progress"])


def _refused_naming(result, link: Path) -> None:
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {link} is a"), result.stderr
    assert "Traceback" not in result.output


def _real_store(finished: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the finished store outside: a link to it would be a store SQLite could write."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    shutil.copy(finished[1] / "results.sqlite", outside / "store.sqlite")
    return outside / "store.sqlite"


@pytest.mark.slow
def test_run_replaces_links_planted_as_tables_and_their_temporary_names(finished, tmp_path: Path):
    path, results = _copy(finished, tmp_path)
    planted = {}
    for name in ("standings.txt", "crosstable.csv", "standings.json", "standings.txt.tmp", "crosstable.json.tmp"):
        victim = _outside(tmp_path, name)
        (results / name).unlink(missing_ok=True)
        (results / name).symlink_to(victim)
        planted[name] = victim
    hard = _outside(tmp_path, "hard.txt")
    (results / "crosstable.txt").unlink()
    os.link(hard, results / "crosstable.txt")
    result = _run(path, results)  # a resume with nothing to play: only the tables are written
    assert result.exit_code == 0, result.output
    assert _untouched(hard, *planted.values())
    for name in ("standings.txt", "crosstable.csv", "standings.json", "crosstable.txt"):
        assert not (results / name).is_symlink() and (results / name).stat().st_nlink == 1
    assert "first" in (results / "standings.txt").read_text()
    assert (results / "standings.txt.tmp").is_symlink()  # never used, never followed


@pytest.mark.parametrize("name", ["run.lock", "results.sqlite", "results.sqlite-wal", "results.sqlite-shm",
                                  "results.sqlite-journal"])
def test_run_refuses_a_link_planted_as_the_lock_or_a_store_file(finished, tmp_path: Path, name: str):
    path, results = _copy(finished, tmp_path)
    victim = _real_store(finished, tmp_path) if name == "results.sqlite" else _outside(tmp_path)
    before = victim.read_bytes()
    (results / name).unlink(missing_ok=True)
    (results / name).symlink_to(victim)
    _refused_naming(_run(path, results), results / name)
    assert victim.read_bytes() == before
    assert sorted(p.name for p in victim.parent.iterdir()) == [victim.name]  # no -wal, no -shm beside it


@pytest.mark.parametrize("name", ["run.lock", "results.sqlite"])
def test_run_refuses_a_hard_link_as_the_lock_or_the_store(finished, tmp_path: Path, name: str):
    path, results = _copy(finished, tmp_path)
    victim = _real_store(finished, tmp_path) if name == "results.sqlite" else _outside(tmp_path)
    before = victim.read_bytes()
    (results / name).unlink(missing_ok=True)
    os.link(victim, results / name)
    _refused_naming(_run(path, results), results / name)
    assert victim.read_bytes() == before
    if name == "results.sqlite":  # reading is fine: a backup made of hard links is still a store
        assert cli.invoke(app, ["table", str(results)]).exit_code == 0
        assert victim.read_bytes() == before


def test_run_refuses_a_results_folder_that_is_a_link(finished, tmp_path: Path):
    path, _ = finished
    victim = _outside(tmp_path, "standings.txt")
    (tmp_path / "results").symlink_to(victim.parent)
    _refused_naming(_run(path, tmp_path / "results"), tmp_path / "results")
    assert _untouched(victim) and sorted(p.name for p in victim.parent.iterdir()) == ["standings.txt"]


def test_run_refuses_a_logs_folder_that_is_a_link_before_any_bot_runs(finished, tmp_path: Path):
    path, _ = finished
    results = tmp_path / "fresh"
    results.mkdir()
    victim = _outside(tmp_path, "first.stderr.log")
    (results / "logs").symlink_to(victim.parent)
    result = _run(path, results)
    _refused_naming(result, results / "logs")
    assert _untouched(victim) and sorted(p.name for p in victim.parent.iterdir()) == ["first.stderr.log"]


def test_run_replaces_a_link_planted_as_a_bots_stderr_log(finished, tmp_path: Path):
    path, _ = finished
    results = tmp_path / "fresh"
    (results / "logs").mkdir(parents=True)
    victim = _outside(tmp_path, "crashy.stderr.log")
    (results / "logs" / "crashy.stderr.log").symlink_to(victim)
    result = _run(path, results)
    assert result.exit_code == 0, result.output
    log = results / "logs" / "crashy.stderr.log"
    assert "crashing on purpose" in log.read_text()  # the bot did write: to its own log
    assert _untouched(victim) and not log.is_symlink()


def test_a_build_log_planted_as_a_link_is_replaced(tmp_path: Path):
    from arena.tournament.build import run_builds
    from arena.tournament.config import load_config

    (tmp_path / "b.py").write_text("")
    path = tmp_path / "t.yaml"
    path.write_text("name: t\nseed: 1\nbots:\n  - {name: b, cmd: python3 b.py, build: echo built}\n"
                    "  - {name: other, cmd: python3 b.py}\n")
    victim = _outside(tmp_path, "b.build.log")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "b.build.log").symlink_to(victim)
    run_builds(load_config(path), str(tmp_path / "logs"), 1, cache_dir=str(tmp_path / "cache"))
    log = tmp_path / "logs" / "b.build.log"
    assert "built" in log.read_text() and not log.is_symlink()
    assert _untouched(victim)


@pytest.mark.parametrize("name", ["results.sqlite", "results.sqlite-wal", "results.sqlite-shm"])
@pytest.mark.parametrize("command", ["table", "verify", "report", "replay"])
def test_reading_commands_refuse_a_link_planted_as_a_store_file(finished, tmp_path: Path, name: str, command: str):
    _, results = _copy(finished, tmp_path)
    victim = _real_store(finished, tmp_path) if name == "results.sqlite" else _outside(tmp_path)
    before = victim.read_bytes()
    (results / name).unlink(missing_ok=True)
    (results / name).symlink_to(victim)
    args = [command, str(results)] + (["00000.0"] if command == "replay" else [])
    result = cli.invoke(app, args)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert f"{results / name} is a symbolic link" in result.stderr.splitlines()[0]
    assert victim.read_bytes() == before
    assert sorted(p.name for p in victim.parent.iterdir()) == [victim.name]


def test_report_replaces_links_planted_as_its_pages(finished, tmp_path: Path):
    _, results = _copy(finished, tmp_path)
    victims = [_outside(tmp_path, "report.html"), _outside(tmp_path, "page.html"), _outside(tmp_path, "tmp.html")]
    _plant(results / "report.html", victims[0])
    (results / "report_replays" / "data").mkdir(parents=True)
    _plant(results / "report_replays" / "data" / "00000.0.js", victims[1])
    (results / "report.html.tmp").symlink_to(victims[2])
    result = cli.invoke(app, ["report", str(results)])
    assert result.exit_code == 0, result.output
    assert _untouched(*victims)
    assert "<html" in (results / "report.html").read_text()
    assert "escobaReplayData(" in (results / "report_replays" / "data" / "00000.0.js").read_text()


def test_report_refuses_a_replays_folder_that_is_a_link(finished, tmp_path: Path):
    _, results = _copy(finished, tmp_path)
    victim = _outside(tmp_path, "00000.0.html")
    (results / "report_replays").symlink_to(victim.parent)
    _refused_naming(cli.invoke(app, ["report", str(results)]), results / "report_replays")
    assert _untouched(victim) and sorted(p.name for p in victim.parent.iterdir()) == ["00000.0.html"]


def test_report_refuses_a_results_folder_that_is_a_link_unless_the_page_goes_elsewhere(finished, tmp_path: Path):
    _, results = _copy(finished, tmp_path)
    linked = tmp_path / "linked"
    linked.symlink_to(results)
    _refused_naming(cli.invoke(app, ["report", str(linked)]), linked)
    assert not (results / "report.html").exists()
    page = tmp_path / "site" / "page.html"
    assert cli.invoke(app, ["report", str(linked), "--html", str(page)]).exit_code == 0  # reading through it is fine
    assert page.is_file() and len(list((tmp_path / "site" / "page_replays" / "data").glob("*.js"))) == 2


def test_replay_html_replaces_a_link_planted_as_its_page(finished, tmp_path: Path):
    _, results = finished
    victim, tmp_victim = _outside(tmp_path, "page.html"), _outside(tmp_path, "tmp.html")
    page = tmp_path / "page.html"
    page.symlink_to(victim)
    (tmp_path / "page.html.tmp").symlink_to(tmp_victim)
    result = cli.invoke(app, ["replay", str(results), "00000.0", "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert _untouched(victim, tmp_victim)
    assert not page.is_symlink() and "<html" in page.read_text()


def test_verify_and_table_write_nothing_through_links(finished, tmp_path: Path):
    _, results = _copy(finished, tmp_path)
    victims = [_outside(tmp_path, "a"), _outside(tmp_path, "b")]
    (results / "standings.txt").unlink()
    (results / "standings.txt").symlink_to(victims[0])
    (results / "run.lock").unlink()
    (results / "run.lock").symlink_to(victims[1])
    assert cli.invoke(app, ["verify", str(results)]).exit_code == 0
    assert cli.invoke(app, ["table", str(results)]).exit_code == 0
    assert _untouched(*victims)
