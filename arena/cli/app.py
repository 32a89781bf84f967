"""The command line: the only place that prints to the user and chooses exit codes.

Every command is registered below on one typer app, in the order a user works (``arena
--help`` lists them in this order). To add a command: write its function in an
``arena/cli_*.py`` module (options as ``Annotated[..., typer.Option(help=...)]``, a docstring
whose first line is its summary, typed ``ArenaError`` subclasses for what can go wrong), then
add one ``_command(...)`` line below at its place in the workflow. Errors, signals and exit
codes are handled once, for every command, in ``arena/cli/edge.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from arena.cli.analyze import analyze
from arena.cli.compare import compare_cmd
from arena.cli.edge import ArenaCommand, ArenaGroup
from arena.cli.export import export
from arena.cli.play import check_bot, play
from arena.cli.rate import rate
from arena.cli.replay import replay_cmd, report_cmd, verify_cmd
from arena.cli.sprt import sprt, sprt_stats
from arena.cli.tournament import run, table, validate

app = typer.Typer(
    name="arena",
    cls=ArenaGroup,
    help="Escoba Arena: referee Escoba bots written in any language, run tournaments, rate and replay them.",
    epilog="Exit codes: 0 ok; 1 a check failed (a record refused, a bot failing check-bot); 2 bad input (a file, "
    "option or results folder); 3 the arena could not finish (a full disk, a worker or cluster fault); 4 an internal "
    "error (its traceback is saved to a file); 129, 130, 143 stopped by SIGHUP, Ctrl-C, SIGTERM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _command(name: str, function: Callable[..., Any], summary: str) -> None:
    # ``summary`` is what ``arena --help`` shows beside the name: one whole sentence (typer
    # would otherwise take the docstring's first paragraph, or cut it at 45 characters).
    app.command(name, cls=ArenaCommand, short_help=summary)(function)


_command("run", run, "Play a tournament from a YAML file, or resume it.")
_command("table", table, "Print the standings and crosstable of a results folder.")
_command("compare", compare_cmd, "Show two bots (two versions) of a results folder side by side.")
_command("report", report_cmd, "Write a tournament's report page (a verified replay per match), or a league's page.")
_command("sprt", sprt, "Test whether one bot is stronger than another with the fewest games (SPRT).")
_command("sprt-stats", sprt_stats, "Print a sequential test's numbers for counts of pairs played elsewhere.")
_command("replay", replay_cmd, "Replay a logged match in the terminal, or as an HTML page.")
_command("analyze", analyze, "Re-examine every decision of logged matches with the expert's search: losses, marks.")
_command("play", play, "Play one match between bot commands and show it as it goes.")
_command("check-bot", check_bot, "Check that a bot follows the protocol: PASS or FAIL.")
_command("rate", rate, "Fit Elo-scale ratings to results files, or to results folders as a league.")
_command("verify", verify_cmd, "Re-play every game record and check it ends as recorded.")
_command("validate", validate, "Check a tournament file and print its schedule.")
_command("export", export, "Export a results folder's matches or game records for other tools.")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
