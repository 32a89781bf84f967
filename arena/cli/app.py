"""The command line: the only place that prints to the user and chooses exit codes.

Every command is listed below in ``COMMANDS``, in the order a user works (``arena --help``
lists them in this order): its name, the module and function that run it, and the summary
``arena --help`` shows. A command's module is imported only when that command runs, so that
``arena --help`` and each command start without the others' imports. To add a command: write
its function in an ``arena/cli/`` module (options as ``Annotated[..., typer.Option(help=...)]``,
a docstring whose first line is its summary, typed ``ArenaError`` subclasses for what can go
wrong), then add one line to ``COMMANDS`` at its place in the workflow. Errors, signals and exit
codes are handled once, for every command, in ``arena/cli/edge.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import typer

from arena.cli.edge import ArenaGroup, on_the_way_out
from arena.cli.starting import command_starts


class Command(NamedTuple):
    name: str
    target: str  # "module:function", imported when the command runs
    summary: str  # what ``arena --help`` shows beside the name: one whole sentence


COMMANDS = (
    Command("run", "arena.cli.tournament:run", "Play a tournament from a YAML file, or resume it."),
    Command("table", "arena.cli.tournament:table", "Print the standings and crosstable of a results folder."),
    Command("compare", "arena.cli.compare:compare_cmd", "Show two versions of a bot side by side, wherever they played."),
    Command("report", "arena.cli.replay:report_cmd",
            "Write a tournament's report page (a verified replay per match), or a league's page."),
    Command("sprt", "arena.cli.sprt:sprt", "Test whether one bot is stronger than another with the fewest games (SPRT)."),
    Command("sprt-stats", "arena.cli.sprt:sprt_stats",
            "Print a sequential test's numbers for counts of pairs played elsewhere."),
    Command("replay", "arena.cli.replay:replay_cmd", "Replay a logged match in the terminal, or as an HTML page."),
    Command("analyze", "arena.cli.analyze:analyze",
            "Re-examine every decision of logged matches with the expert's search: losses, marks."),
    Command("play", "arena.cli.play:play", "Play one match between bot commands and show it as it goes."),
    Command("check-bot", "arena.cli.play:check_bot", "Check that a bot follows the protocol: PASS or FAIL."),
    Command("rate", "arena.cli.rate:rate", "Fit Elo-scale ratings to results files, or to results folders as a league."),
    Command("verify", "arena.cli.replay:verify_cmd", "Re-play every game record and check it ends as recorded."),
    Command("validate", "arena.cli.tournament:validate", "Check a tournament file and print its schedule."),
    Command("export", "arena.cli.export:export", "Export a results folder's matches or game records for other tools."),
)

class _Arena(ArenaGroup):
    lazy_commands = COMMANDS


app = typer.Typer(
    name="arena",
    cls=_Arena,
    help="Escoba Arena: referee Escoba bots written in any language, run tournaments, rate and replay them.",
    epilog="Exit codes: 0 ok; 1 a check failed (a record refused, a bot failing check-bot); 2 bad input (a file, "
    "option or results folder); 3 the arena could not finish (a full disk, a worker or cluster fault); 4 an internal "
    "error (its traceback is saved to a file); 129, 130, 143 stopped by SIGHUP, Ctrl-C, SIGTERM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _arena() -> None:
    # The group's own callback: with it typer builds a group whose commands ``_Arena`` finds
    # in ``COMMANDS`` (none is registered with typer, so none is imported to list them).
    return None


def main() -> None:
    command_starts()
    try:
        app()
    finally:
        on_the_way_out()


if __name__ == "__main__":
    main()
