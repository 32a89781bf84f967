"""``arena validate``, ``arena run`` and ``arena table``: tournaments from a YAML file."""

from __future__ import annotations

import os
import shlex
import time
from collections import defaultdict
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli_edge import Interrupted, interrupt_exit_code, interrupt_name
from arena.cli_rate import FormatOption, PriorOption, check_prior
from arena.errors import ArenaError, InputError
from arena.printable import printable
from arena.safe_files import write_text
from arena.tables_format import TableFormat, render_table
from arena.tournament import runner
from arena.tournament.config import TournamentConfig, load_config
from arena.tournament.executors import Executor
from arena.tournament.runner import RunPlan
from arena.tournament.schedule import MatchSpec, build_schedule
from arena.tournament.store import MatchRow, ResultStore, ResumeMismatchError

if TYPE_CHECKING:
    from arena.tournament.standings import Standings

STANDINGS_FILES = ("plain", "csv", "json")
_EXT = {"plain": "txt", "github": "md", "csv": "csv", "json": "json"}


def _load(file: Path, *, concurrency: int | None = None, output: Path | None = None,
          check_commands: bool = True) -> TournamentConfig:
    config = load_config(file, check_commands=check_commands)
    if concurrency is not None:
        config = replace(config, concurrency=concurrency)
    if output is not None:
        config = replace(config, output=os.path.abspath(output))
    return config


def _summary(config: TournamentConfig, schedule: tuple[MatchSpec, ...]) -> str:
    shape = f"{config.players} players alone" if config.mode == "single" else (
        f"pairs: {config.players} players in teams of {config.team_size} ({config.team_mode})"
    )
    fmt = config.format + (f" (challenger {config.challenger})" if config.challenger else "")
    deals = len({s.deal for s in schedule})
    return (
        f"{config.name}: {len(config.bots)} bots, {shape}, {fmt}, "
        f"{config.matches_per_pairing} matches per pairing{' (duplicate deals)' if config.duplicate else ''}; "
        f"{len(schedule)} matches on {deals} deals; seed {config.seed}; "
        f"failures: {config.failures.policy}"
        + (f" ({config.failures.strikes} strikes)" if config.failures.policy == "substitute" else "")
        + f"; concurrency {config.concurrency}; output {_rel(config.output)}"
    )


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _schedule_table(config: TournamentConfig, schedule: tuple[MatchSpec, ...], done: set[str]) -> str:
    headers = ["match", "deal seed", *(f"seat {i}" for i in range(config.players))]
    if config.mode == "pairs":
        headers.append("sides")
    if done:
        headers.append("status")
    rows = []
    for spec in schedule:
        row: list[object] = [spec.id, spec.seed, *spec.seats]
        if config.mode == "pairs":
            row.append(" vs ".join(spec.sides))
        if done:
            row.append("done" if spec.id in done else "to play")
        rows.append(row)
    return render_table(headers, rows, TableFormat.PLAIN)


def validate(
    file: Annotated[Path, typer.Argument(help="Tournament YAML file (see docs/TOURNAMENTS.md).")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the summary line, not the schedule.")] = False,
) -> None:
    """Check a tournament file and print its schedule. Exit code 2 if the file is invalid."""
    config = _load(file)
    schedule = build_schedule(config)
    typer.echo(f"{file}: ok")
    typer.echo(_summary(config, schedule))
    if not quiet:
        typer.echo(_schedule_table(config, schedule, set()))


def _resume_command(file: Path, concurrency: int | None, output: Path | None) -> str:
    parts = ["arena", "run", str(file)]
    if output is not None:
        parts += ["--output", str(output)]
    if concurrency is not None:
        parts += ["--concurrency", str(concurrency)]
    return " ".join(shlex.quote(p) for p in parts)


def run(
    file: Annotated[Path, typer.Argument(help="Tournament YAML file (see docs/TOURNAMENTS.md).")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the file and print the schedule; play nothing, write nothing.")
    ] = False,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", "-j", min=1, help="Worker processes (default: the file's concurrency, else the number of cores)."
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Results folder (default: the file's output, else results/<name>).")
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress bar (on stderr).")] = True,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="Play on the Dask cluster whose scheduler is at this address, e.g. tcp://HOST:8786 "
            "(default: the file's cluster, else local worker processes; docs/CLUSTER.md).",
        ),
    ] = None,
) -> None:
    """Play a tournament, or resume it: matches already in the results folder are not played again.

    Ctrl-C, SIGTERM and SIGHUP stop it cleanly and print the command that resumes it."""
    # With --cluster the bots run on the workers: their programs need not exist here.
    config = _load(file, concurrency=concurrency, output=output, check_commands=not cluster)
    schedule = build_schedule(config)
    if dry_run:
        done: set[str] = set()
        if os.path.isfile(os.path.join(config.output, "results.sqlite")):
            with ResultStore.open_existing(config.output) as existing:
                if existing.fingerprint != config.fingerprint:
                    raise ResumeMismatchError(config.output, _changed(existing, config))
                # As the run itself would: every stored row read and checked against the schedule.
                pending = {spec.id for spec in runner.plan_run(config, existing).pending}
                done = {spec.id for spec in schedule if spec.id not in pending}
        typer.echo(_summary(config, schedule))
        typer.echo(f"{len(done)} of {len(schedule)} matches already in {_rel(config.output)}" if done else "nothing played yet")
        typer.echo(_schedule_table(config, schedule, done))
        return

    import rich.progress  # noqa: F401

    # Imported before any match is played: a Ctrl-C that lands inside an import surfaces as a
    # RuntimeError from deep in Python, not as the KeyboardInterrupt handled below.
    import arena.tournament.standings  # noqa: F401

    resume = _resume_command(file, concurrency, output) + (f" --cluster {shlex.quote(cluster)}" if cluster else "")
    address = cluster or config.cluster
    store = runner.open_store(config)
    with store:
        plan = runner.plan_run(config, store)
        typer.echo(_summary(config, schedule), err=True)
        if plan.done:
            typer.echo(f"resuming: {plan.done} of {plan.total} matches already played", err=True)
        try:
            if plan.pending:
                executor: Executor
                if address:
                    from arena.tournament.dask_executor import make_dask_executor

                    typer.echo(f"cluster: {address}", err=True)
                    executor = make_dask_executor(config, address)
                else:
                    executor = runner.make_executor(config, config.concurrency)
                _play_with_progress(store, plan, executor, config, show=progress)
        except KeyboardInterrupt as stop:
            # Ctrl-C, SIGTERM or SIGHUP (arena/cli_edge.py): every stored match is durable.
            _say_interrupted(store, plan.total, config, resume, stop)
            raise typer.Exit(interrupt_exit_code(stop)) from None
        except ArenaError as exc:
            exc.hint = f"the results so far are safe in {_rel(config.output)}; resume with: {resume}"
            raise
        _finish(store, config)


def _say_interrupted(store: ResultStore, total: int, config: TournamentConfig, resume: str, stop: BaseException) -> None:
    try:
        stored = f"{store.count()} of {total} matches are safely stored"
    except ArenaError:
        stored = "the matches played so far are safely stored"
    by = "" if not isinstance(stop, Interrupted) else f" by {interrupt_name(stop)}"
    try:
        typer.echo(
            f"interrupted{by}: {stored} in {_rel(config.output)}.\nresume with: {resume}",
            err=True,
        )
    except (OSError, ValueError):
        pass  # no terminal any more (SIGHUP): the exit code still says it


def _changed(store: ResultStore, config: TournamentConfig) -> list[str]:
    from arena.tournament.config import diff_game_dicts

    return diff_game_dicts(store.meta().get("game") or {}, config.game_dict())


class _Leader:
    """Running score fractions, for the progress bar's 'leader' (the full fit runs at the end)."""

    def __init__(self, config: TournamentConfig) -> None:
        self._seating = config.seating
        self.points: dict[str, float] = defaultdict(float)
        self.games: dict[str, int] = defaultdict(int)

    def add(self, row: MatchRow) -> None:
        from arena.tournament.standings import pair_results

        for pair in pair_results(row, self._seating):
            for name in pair.side_a:
                self.points[name] += pair.score_a
                self.games[name] += 1
            for name in pair.side_b:
                self.points[name] += 1.0 - pair.score_a
                self.games[name] += 1

    def text(self) -> str:
        if not self.games:
            return "-"
        name = max(self.games, key=lambda n: (self.points[n] / self.games[n], self.games[n], n))
        return f"{name} ({100 * self.points[name] / self.games[name]:.0f}%)"


def _play_with_progress(store: ResultStore, plan: RunPlan, executor: Executor, config: TournamentConfig, *, show: bool) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    leader = _Leader(config)
    for row in store.results():
        leader.add(row)
    console = Console(stderr=True)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("leader: {task.fields[leader]}"),
    )
    start = time.monotonic()
    with Progress(*columns, console=console, disable=not show, transient=False) as bar:
        task = bar.add_task(config.name, total=plan.total, completed=plan.done, rate="-", leader=leader.text())
        played = 0

        def on_match(row: MatchRow, done: int) -> None:
            nonlocal played
            played += 1
            leader.add(row)
            elapsed = max(time.monotonic() - start, 1e-9)
            bar.update(task, completed=done, rate=f"{60 * played / elapsed:.1f}/min", leader=leader.text())

        runner.play(store, plan, executor, on_match)


def write_tables(store: ResultStore) -> tuple[Standings, list[str]]:
    """Write standings and crosstable files beside the results; returns the standings and the paths."""
    from arena.tournament.standings import format_crosstable, format_standings, standings_from_store

    standings = standings_from_store(store)
    paths = []
    for fmt in STANDINGS_FILES:
        for what, render in (("standings", format_standings), ("crosstable", format_crosstable)):
            path = os.path.join(store.folder, f"{what}.{_EXT[fmt]}")
            # A new file renamed into place: a link planted under the name is replaced, not
            # followed; the results folder itself must not be a link (arena/safe_files.py).
            write_text(path, render(standings, fmt) + "\n", folder_may_be_link=False)
            paths.append(path)
    return standings, paths


def _finish(store: ResultStore, config: TournamentConfig) -> None:
    from arena.tournament.standings import format_crosstable, format_standings

    standings, paths = write_tables(store)
    typer.echo(format_standings(standings, "plain"))
    typer.echo("")
    typer.echo(format_crosstable(standings, "plain"))
    typer.echo("")
    typer.echo(
        f"results: {_rel(config.output)} ({store.count()} matches); tables: {', '.join(os.path.basename(p) for p in paths)}"
    )


class TableWhat(str, Enum):
    """Which table ``arena table`` prints (``--what``)."""

    STANDINGS = "standings"
    CROSSTABLE = "crosstable"


def table(
    results_dir: Annotated[Path, typer.Argument(help="A tournament's results folder (results/<name>).")],
    fmt: FormatOption = TableFormat.PLAIN,
    what: Annotated[
        TableWhat | None,
        typer.Option(
            "--what",
            help="Which table: standings or crosstable. Default: both in plain and github, the standings in csv and "
            "json (one table per output).",
        ),
    ] = None,
    crosstable: Annotated[bool, typer.Option("--crosstable", hidden=True, help="The same as --what crosstable.")] = False,
    prior: PriorOption = None,
) -> None:
    """Print the ranked standings and the crosstable of a tournament (derived from its results store).

    csv and json hold plain numbers, one table per output (docs/TOURNAMENTS.md lists the columns);
    their notes go to stderr."""
    from arena.tournament.standings import format_crosstable, format_standings, standings_from_store, standings_notes

    prior = check_prior(prior)
    if crosstable:
        if what is TableWhat.STANDINGS:
            raise InputError("--crosstable and --what standings: give one (--what crosstable)")
        what = TableWhat.CROSSTABLE
    with ResultStore.open_existing(str(results_dir)) as store:
        standings = standings_from_store(store, prior=prior)
    machine = fmt in (TableFormat.CSV, TableFormat.JSON)
    if what is None:
        shown = [TableWhat.STANDINGS] if machine else [TableWhat.STANDINGS, TableWhat.CROSSTABLE]
    else:
        shown = [what]
    for i, one in enumerate(shown):
        if i:
            typer.echo("")
        render = format_standings if one is TableWhat.STANDINGS else format_crosstable
        typer.echo(render(standings, fmt.value))
    if machine and TableWhat.STANDINGS in shown:
        # Keep the machine-readable output clean; the caveats go to stderr, as in arena rate.
        for note in standings_notes(standings):
            typer.echo(f"note: {printable(note)}", err=True)


__all__ = ["run", "table", "validate", "write_tables"]
