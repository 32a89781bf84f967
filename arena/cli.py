"""The command line: the only place that prints to the user and chooses exit codes.

Each command group lives in its own ``arena/cli_*.py`` module exposing
``register(app)``; this module only assembles them.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="arena",
    help="Escoba Arena: referee Escoba bots written in any language, run tournaments, rate and replay them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_COMMAND_MODULES: tuple[str, ...] = ("cli_rate", "cli_tournament", "cli_play", "cli_replay")


_registered = False


@app.callback()
def _root() -> None:
    """Escoba Arena: referee Escoba bots written in any language, run tournaments, rate and replay them."""


def _register_all() -> None:
    """Add every command module's commands to ``app``; safe to call more than once."""
    global _registered
    if _registered:
        return
    import importlib

    for name in _COMMAND_MODULES:
        importlib.import_module(f"arena.{name}").register(app)
    _registered = True


def main() -> None:
    _register_all()
    app()


if __name__ == "__main__":
    main()
