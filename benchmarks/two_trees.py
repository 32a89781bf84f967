"""Two checkouts of the project, each driven in its own long-lived worker process: what the
interleaved comparisons (engine_ab.py, harness_ab.py) share.

A worker is the comparing script itself run with ``--worker`` and the checkout's directory
first on PYTHONPATH, so that it imports that version's ``arena``; it reads one request line at
a time and answers one line.

A tree runs as it is: a checkout runs as Python. To measure the build ``pip install .`` gives
(its hot paths compiled, setup.py), pass the unpacked wheel instead: ``pip wheel --no-deps -w W
CHECKOUT`` then ``python -m zipfile -e W/escoba_arena-*.whl BUILD``, and BUILD as the tree.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tree_arguments(parser: argparse.ArgumentParser) -> None:
    """The two checkouts to compare: OLD_TREE and [NEW_TREE] (default: this one)."""
    parser.add_argument("old", type=Path, help="checkout of the older version")
    parser.add_argument("new", type=Path, nargs="?", default=ROOT, help="checkout of the newer one (default: this)")


class TreeWorker:
    """``script --worker *args`` with ``tree`` first on the path; ``ask`` sends a line and
    returns the answer's fields."""

    def __init__(self, script: str, tree: Path, args: Sequence[str] = (),
                 preexec_fn: Callable[[], None] | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen([sys.executable, script, "--worker", *args], cwd=tree, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=preexec_fn)

    def ask(self, line: str) -> list[str]:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        if stdin is None or stdout is None:
            raise RuntimeError("the worker's pipes are closed")
        stdin.write(line + "\n")
        stdin.flush()
        answer = stdout.readline().split()
        if not answer:
            raise RuntimeError("the worker stopped (see its error above)")
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()
