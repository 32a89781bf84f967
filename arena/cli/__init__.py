"""The command line (typer): the only layer that prints and chooses exit codes.

``arena.cli.app`` holds the application; ``python -m arena.cli`` runs it.

``arena play`` and ``arena run`` start their bots' launcher (a Python of its own) first, before
the command line's own imports, so that the two starts overlap (``containment.prestart``).
"""

import sys

if sys.argv[1:2] in (["play"], ["run"]) and "--help" not in sys.argv:
    from arena.harness.containment import prestart

    prestart()

from arena.cli.app import app, main  # noqa: E402

__all__ = ["app", "main"]
