"""The arena's commands as the tests give them: in this process, with the output and exit code a
user gets."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _as_a_shell_has_it(cwd: Path, env: Mapping[str, str] | None) -> Iterator[None]:
    """From ``cwd``, with ``env`` over this process's environment and no shared build cache (the
    session's, which a newcomer's shell does not set): as a command started there would have it."""
    before, saved = os.getcwd(), dict(os.environ)
    os.environ.pop("ARENA_CACHE_DIR", None)
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)
        os.environ.clear()
        os.environ.update(saved)


def arena_command(*args: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """An ``arena`` command run in this process (typer's CliRunner), even one that plays (run,
    sprt, play): the same command line, output and exit code, without another Python. A command
    that plays as a process of its own costs about 1.4 s of CPU before its first match (the
    interpreter and the imports, its fork server and the package's resource tracker, its
    launchers); here the fork server and this process's launcher, once started, serve every later
    command of this test process. The tests of what only a process of its own shows (signals,
    kill -9, the console script, what survives it, the arena of a fresh clone) start one
    (``arena_process``)."""
    from typer.testing import CliRunner

    from arena.cli.app import app

    with _as_a_shell_has_it(cwd, env):
        result = CliRunner().invoke(app, list(args))
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def arena_process(*args: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None,
                  timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """An ``arena`` command as a process of its own (``python -m arena.cli``), from ``cwd``: the
    arena it imports is the one there first (a fresh clone's, run from the clone)."""
    full = {k: v for k, v in os.environ.items() if k != "ARENA_CACHE_DIR"} | dict(env or {})
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=full)
