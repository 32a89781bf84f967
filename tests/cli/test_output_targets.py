"""An output file that is a results folder's store is refused: ``-o``/``--html`` given the
store's name (tab completion offers it) wrote a CSV or a page over every stored match."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_helpers import make_store
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament.store import ResultStore


@pytest.mark.parametrize("name", ["results.sqlite", "results.sqlite-wal"])
@pytest.mark.parametrize("args", [
    ["export", "{r}", "--games", "csv", "-o", "{out}"],
    ["replay", "{r}", "{id}", "--html", "{out}"],
    ["report", "{r}", "--html", "{out}"],
    ["analyze", "{r}", "{id}", "--playouts", "2", "-j", "1", "--html", "{out}"],
])
def test_an_output_over_a_results_store_is_refused_and_the_store_kept(tmp_path: Path, args, name):
    results = Path(make_store(tmp_path / "r", rules={"target": 3}, matches=2))
    with ResultStore.open_existing(str(results)) as store:
        first = store.results()[0].id
        count = store.count()
    out = results / name
    before = out.read_bytes() if out.exists() else None
    done = CliRunner().invoke(app, [a.format(r=results, id=first, out=out) for a in args])
    assert done.exit_code == 2, done.output
    [line] = done.stderr.splitlines()
    assert line.startswith("error: ") and str(out) in line and "results store" in line, line
    assert (out.read_bytes() if out.exists() else None) == before
    with ResultStore.open_existing(str(results)) as store:
        assert store.count() == count


def test_an_export_writes_through_no_link_planted_beside_its_output(tmp_path: Path):
    # It wrote a fixed OUT.tmp and renamed it: a link planted there (in a shared folder) had
    # the export written through it, into any file the user may write.
    results = Path(make_store(tmp_path / "r", rules={"target": 3}, matches=2))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "shared" / "games.csv"
    out.parent.mkdir()
    (out.parent / "games.csv.tmp").symlink_to(victim)
    done = CliRunner().invoke(app, ["export", str(results), "--games", "csv", "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert victim.read_text() == "keep me\n"
    assert out.read_text().startswith("side_a,side_b,score_a,") and not out.is_symlink()
