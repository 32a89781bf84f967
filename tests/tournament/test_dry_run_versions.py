"""``arena run --dry-run`` on a folder where a bot changed: it takes the run's own steps on a
draft of the store (arena/tournament/store.py, ``draft``), so it names the new version and shows
the matches the run will then play (a round robin, a ladder), or refuses it as the run does (a
swiss), and leaves every byte of the folder as it was."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament.store import ResultStore

pytestmark = pytest.mark.slow

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()
FORMATS = {
    "round_robin": "format: round_robin",
    "swiss": "format: swiss\nrounds: 2",
    "ladder": "format: ladder\nmax_matches: 8\nwindow: 1",
}


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    # Not sqlite's -shm: the shared index of its write-ahead log, where every reader (``arena
    # table`` too) marks what it reads; the database and its log are compared.
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith("-shm")}


def _ids(folder: Path) -> list[str]:
    with ResultStore.open_existing(str(folder)) as store:
        return [row.id for row in store.results()]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_dry_run_names_a_changed_bots_new_version_shows_what_it_plays_and_writes_nothing(tmp_path: Path, fmt: str):
    shutil.copy(BOTS / "policybot.py", tmp_path / "mybot.py")
    bots = "".join(f'  - {{name: {p}, cmd: "$PYTHON policybot.py {p}", cwd: "{BOTS}"}}\n' for p in ("first", "greedy", "last"))
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 4\noutput: {tmp_path / 'out'}\nconcurrency: 2\n{FORMATS[fmt]}\nbots:\n"
                    f'  - {{name: mybot, cmd: "$PYTHON mybot.py hash"}}\n{bots}')
    assert cli.invoke(app, ["run", str(path), "--quiet", "--no-report"]).exit_code == 0
    before = _ids(tmp_path / "out")
    with open(tmp_path / "mybot.py", "a") as fh:
        fh.write("# tuned\n")
    path.write_text(path.read_text().replace("max_matches: 8", "max_matches: 14"))  # a ladder's stop moves on
    files = _snapshot(tmp_path / "out")

    dry = cli.invoke(app, ["run", str(path), "--dry-run"])
    assert _snapshot(tmp_path / "out") == files  # not a byte, not a date
    if fmt == "swiss":
        # A swiss's rounds cannot be played apart by version: refused, as the run refuses it.
        run = cli.invoke(app, ["run", str(path), "--quiet", "--no-report"])
        assert dry.exit_code == run.exit_code == 2 and dry.stderr == run.stderr, (dry.output, run.output)
        assert dry.stderr.startswith("error: bot 'mybot' changed since its results were stored: program file mybot.py")
        assert _ids(tmp_path / "out") == before
        return
    assert dry.exit_code == 0, dry.output
    said = [line for line in dry.stdout.splitlines() if "has a new version" in line]
    assert len(said) == 1 and said[0].startswith("mybot has a new version (program file mybot.py changed"), dry.stdout
    # The matches it shows are the new version's, named as the run names them ...
    shown = re.findall(r"^(\d{5}\.\d+(?:~\d+)?) ", dry.stdout, re.M)
    assert shown, dry.stdout
    shown_rows = [line for line in dry.stdout.splitlines() if line.split(" ", 1)[0] in shown]
    assert all("mybot~2" in line for line in shown_rows), shown_rows
    assert not any(re.search(r"\bmybot\b(?!~)", line) for line in shown_rows), shown_rows
    # ... and the ones the run then plays first.
    assert cli.invoke(app, ["run", str(path), "--quiet", "--no-report"]).exit_code == 0
    after = _ids(tmp_path / "out")
    assert after[:len(before)] == before
    assert after[len(before):len(before) + len(shown)] == shown
