"""A bot made of files outside its own folder (``inputs: ['../shared/*.py']``): sealed, it sees its
own folder and no other of the user's, so the folders its inputs name are given it to read; a
folder no input names stays out of its reach, and so do the tournament's secrets (its file, its
results) inside a folder given."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.harness import seal
from arena.harness.containment import unsealed_why

POLICYBOT = Path(__file__).resolve().parents[1] / "data" / "tournament_bots" / "policybot.py"

# Imports its module from the folder given (else it crashes), and crashes if it can read any of
# the files named after it; then plays as policybot.py does.
BOT = """\
import os, runpy, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, {module_folder!r}))
import brain
for secret in {secrets!r}:
    try:
        open(os.path.join(here, secret), "rb").read(1)
    except OSError:
        continue
    sys.exit("read " + secret)
sys.argv = ["policybot.py", brain.POLICY]
runpy.run_path(os.path.join(here, "policybot.py"), run_name="__main__")
"""

pytestmark = pytest.mark.skipif(not seal.find_bwrap() or unsealed_why() is not None,
                                reason="needs sealed bots (user namespaces)")


# The folder above given whole (its private/ with it), the tournament's file and results still not.
@pytest.mark.parametrize(("module_folder", "inputs", "private"), [("../shared", "../shared/*.py", True),
                                                                  ("..", "../*.py", False)])
def test_a_sealed_bot_reads_the_files_its_inputs_name_outside_its_folder(tmp_path: Path, module_folder: str,
                                                                           inputs: str, private: bool):
    (tmp_path / "bot").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.txt").write_text("not yours")
    (tmp_path / module_folder.replace("..", ".")).joinpath("brain.py").write_text('POLICY = "greedy"\n')
    secrets = ["../private/secret.txt"] * private + ["../t.yaml", "../out/results.sqlite"]
    (tmp_path / "bot" / "bot.py").write_text(BOT.format(module_folder=module_folder, secrets=secrets))
    shutil.copy(POLICYBOT, tmp_path / "bot" / "policybot.py")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 5\nrules: {{target: 3}}\nconcurrency: 1\noutput: {tmp_path / 'out'}\nbots:\n"
                    f"  - {{name: mine, cmd: $PYTHON bot.py, cwd: bot, inputs: ['{inputs}']}}\n"
                    f"  - {{name: other, cmd: $PYTHON {POLICYBOT} first}}\n")
    # --strict: exit 1 on any bot failure (a crash when the module cannot be read, or a secret can).
    result = CliRunner().invoke(app, ["run", str(path), "--no-progress", "--no-report", "--strict"])
    assert result.exit_code == 0, result.output
    conn = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    try:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone() == (2,)
    finally:
        conn.close()
