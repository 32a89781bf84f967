"""The command line (typer): the only layer that prints and chooses exit codes.

``arena.cli.app`` holds the application; ``python -m arena.cli`` runs it.
"""

from arena.cli.app import app, main

__all__ = ["app", "main"]
