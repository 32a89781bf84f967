"""``arena validate``, ``arena run`` and ``arena table``: tournaments from a YAML file.

What ``arena run`` prints, and where: tables on stdout (on stderr with ``--progress jsonl``,
whose stdout is one JSON object per finished match); everything for a person on stderr: the
plan, the builds, the progress bar (matches per minute, the leader by rating, failures so
far), each bot failure as it happens with a hint, ``-v``'s line per match, and at the end a
failure summary per bot. ``--quiet`` leaves only errors, the failure summary and the tables.
Every file a run writes goes through ``write_file``.
"""

from __future__ import annotations

import enum
import json
import os
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

import arena.cli.console as console
from arena.cli.edge import Interrupted, interrupt_exit_code, interrupt_name
from arena.cli.options import FormatOption, PriorOption, check_prior
from arena.cli.seeds import ShowSeedOption, seed_text
from arena.errors import ArenaError, ExitCode, InputError
from arena.printable import printable
from arena.render.tables import TableFormat, render_table
from arena.safe_files import write_text
from arena.tournament.schedule import Format, MatchSpec, Mode, build_schedule, iter_schedule

_S = TypeVar("_S")

if TYPE_CHECKING:  # what a run needs is loaded by the commands that run, not by --help
    from rich.progress import ProgressColumn

    from arena.tournament import runner
    from arena.tournament.adaptive import AdaptiveRun
    from arena.tournament.build import PlannedBuild
    from arena.tournament.config import TournamentConfig
    from arena.tournament.executors import Completed, Executor
    from arena.tournament.failures import FailureNote, FailureTally
    from arena.tournament.sprt_run import SprtRun
    from arena.tournament.standings import Standings
    from arena.tournament.store import MatchRow, ResultStore

STANDINGS_FILES = ("plain", "csv", "json")
_EXT = {"plain": "txt", "github": "md", "csv": "csv", "json": "json"}
# Above this many matches the run writes no report page unless asked (--report): a replay
# page per match takes long and makes a folder of that many files.
REPORT_MAX_MATCHES = 5000
# Failures of one bot printed as they happen before the rest are only counted (-v shows all).
LIVE_FAILURES_PER_BOT = 10
# Without a terminal (a CI log, a file) the bar becomes a status line this often, and at the end.
STATUS_EVERY_S = 30.0
# A sequential test's schedule has no end: validate and --dry-run show its first deals.
SPRT_SHOWN_DEALS = 3


class FailureLimitError(ArenaError):
    """``--strict`` or ``failures.max_failed_matches``: the run had more bot failures than allowed."""

    exit_code = ExitCode.CHECK_FAILED


class Progress(str, enum.Enum):
    BAR = "bar"
    JSONL = "jsonl"
    NONE = "none"


def write_file(path: str, text: str) -> None:
    """Every file ``arena run`` writes into a results folder (tables, report pages) goes here:
    a new file renamed into place, so a link planted under the name is replaced, never
    followed, and the folder it goes in must not be a link (arena/safe_files.py)."""
    write_text(path, text, folder_may_be_link=False)


def _load(file: Path, *, concurrency: int | None = None, output: Path | None = None,
          check_commands: bool = True) -> TournamentConfig:
    # The results folder is known before the file is checked: no bot may be granted to write it.
    from arena.tournament.config import load_config

    config = load_config(file, check_commands=check_commands, output=None if output is None else str(output))
    if concurrency is not None:
        config = replace(config, concurrency=concurrency)
    return config


def _summary(config: TournamentConfig, matches: int, deals: int, show_seed: bool) -> str:
    shape = f"{config.players} players alone" if config.mode is Mode.SINGLE else (
        f"pairs: {config.players} players in teams of {config.team_size} ({config.team_mode})"
    )
    fmt = config.format + (f" (challenger{'s' if len(config.challengers) > 1 else ''} {', '.join(config.challengers)})"
                           if config.challengers else "")
    if config.format.adaptive:
        from arena.tournament.adaptive import describe_format

        fmt = describe_format(config)
    from arena.render.text import counted

    limit = ""
    if config.max_failed_matches is not None:
        limit = f", at most {counted(config.max_failed_matches, 'match', 'matches')} with a failure"
    return (
        f"{config.name}: {counted(len(config.bots), 'bot')}, {shape}, {fmt}, "
        f"{counted(config.matches_per_pairing, 'match', 'matches')} per pairing"
        f"{' (duplicate deals)' if config.duplicate else ''}; "
        f"{counted(matches, 'match', 'matches')} on {counted(deals, 'deal')}; {seed_text(config.seed, show_seed)}; "
        f"failures: {config.failures.policy}"
        + (f" ({config.failures.strikes} strikes)" if config.failures.substitutes else "")
        + limit
        + f"; concurrency {config.concurrency}; output {_rel(config.output)}"
    )


def _size(config: TournamentConfig) -> tuple[int, int]:
    """(matches, deals) of the schedule, counted as it is generated (never held whole)."""
    matches = deals = 0
    for spec in iter_schedule(config):
        matches += 1
        deals = spec.deal + 1
    return matches, deals


def _adaptive_size(config: TournamentConfig) -> tuple[int, int]:
    from arena.tournament.schedule import most_matches

    matches = most_matches(config)
    return matches, matches // (config.sides if config.duplicate else 1)


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _schedule_table(config: TournamentConfig, schedule: tuple[MatchSpec, ...], done: Callable[[MatchSpec], bool] | None,
                    show_seed: bool) -> str:
    # A deal's seed gives its every hand: a column only when asked for (arena/cli/seeds.py).
    headers = ["match", *(["deal seed"] if show_seed else []), *(f"seat {i}" for i in range(config.players))]
    if config.mode is Mode.PAIRS:
        headers.append("sides")
    if done is not None:
        headers.append("status")
    rows = []
    for spec in schedule:
        row: list[object] = [spec.id, *([spec.seed] if show_seed else []), *spec.seats]
        if config.mode is Mode.PAIRS:
            row.append(" vs ".join(spec.sides))
        if done is not None:
            row.append("done" if done(spec) else "to play")
        rows.append(row)
    return render_table(headers, rows, TableFormat.PLAIN)


def _planned_builds(config: TournamentConfig) -> list[PlannedBuild]:
    from arena.tournament.build import plan_builds

    return plan_builds(config)


def _build_lines(planned: list[PlannedBuild]) -> list[str]:
    if not planned:
        return []
    todo = sum(1 for p in planned if p.will_run)
    head = f"builds: {todo} to run, {len(planned) - todo} cached (nothing is built until arena run)"
    return [head, *(f"  {p.describe()}" for p in planned)]


def validate(
    file: Annotated[Path, typer.Argument(help="Tournament YAML file (see docs/TOURNAMENTS.md).")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the summary line, not the schedule.")] = False,
    show_seed: ShowSeedOption = False,
) -> None:
    """Check a tournament file and print its schedule and what would be built. Exit code 2 if the file is invalid."""
    from arena.tournament.grants import grant_lines

    config = _load(file)
    schedule, summary, caption = _file_schedule(config, show_seed)
    planned = _planned_builds(config)
    console.echo(f"{file}: ok")
    console.echo(summary)
    for line in grant_lines(config):
        console.echo(line)
    if not quiet:
        for line in _build_lines(planned):
            console.echo(line)
        if caption:
            console.echo(caption)
        console.echo(_schedule_table(config, schedule, None, show_seed))


def _file_schedule(config: TournamentConfig, show_seed: bool) -> tuple[tuple[MatchSpec, ...], str, str]:
    """What a file's schedule is before anything is played: its matches, the summary line and
    a caption. A sequential test's schedule is open-ended (the test decides how many deals): its
    first deals stand for it."""
    if config.format is Format.SPRT:
        caption = f"the first {SPRT_SHOWN_DEALS} deals of an open-ended schedule (the test decides how many):"
        return build_schedule(config, deals=SPRT_SHOWN_DEALS), _sprt_summary(config, show_seed), caption
    if config.format.adaptive:
        from arena.tournament.adaptive import AdaptiveRun, Replay, chosen_now

        matches, deals = _adaptive_size(config)
        first = tuple(chosen_now(AdaptiveRun(config, Replay(config))))
        return first, _summary(config, matches, deals, show_seed), _adaptive_caption(first)
    schedule = build_schedule(config)
    return schedule, _summary(config, len(schedule), len({s.deal for s in schedule}), show_seed), ""


def _adaptive_caption(chosen: Sequence[MatchSpec]) -> str:
    pairings = len({spec.pairing for spec in chosen})
    return (f"the {pairings} pairings chosen now ({len(chosen)} matches); the next follow from their results:"
            if chosen else "nothing left to choose")


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
        bool,
        typer.Option("--dry-run", help="Check the file; print the schedule, what is already played and what would be "
                                       "built; play, build and write nothing."),
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
    progress: Annotated[
        Progress,
        typer.Option("--progress", help="bar: a progress bar on stderr; jsonl: one JSON object per finished match on "
                                        "stdout (tables then go to stderr); none: neither."),
    ] = Progress.BAR,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="The same as --progress none.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="A line per finished match, and every failure.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only errors, the failure summary and the final tables.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with code 1 if any bot failed in any match (after writing the tables).")
    ] = False,
    report: Annotated[
        bool | None,
        typer.Option("--report/--no-report", help=f"Write the report page (report.html) into the results folder at the "
                                                  f"end (default: when the tournament has at most {REPORT_MAX_MATCHES} "
                                                  "matches)."),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="Play on the Dask cluster whose scheduler is at this address, e.g. tcp://HOST:8786 "
            "(default: the file's cluster, else local worker processes; docs/CLUSTER.md).",
        ),
    ] = None,
    require_sealed: Annotated[
        bool,
        typer.Option("--require-sealed", help="Exit with code 2, playing nothing, unless every bot runs sealed "
                     "(its own namespaces through bubblewrap; docs/PROTOCOL.md, \"Limits and containment\")."),
    ] = False,
    show_seed: ShowSeedOption = False,
    drop_old: Annotated[
        bool,
        typer.Option("--drop-old", help="Delete the results of every bot's earlier versions from the results folder "
                                        "(a changed bot otherwise keeps them, as its old version's)."),
    ] = False,
) -> None:
    """Build the bots, then play a tournament, or resume it: matches already in the results folder are not played again.

    Ctrl-C, SIGTERM and SIGHUP stop it cleanly and print the command that resumes it."""
    from arena.harness.containment import require_sealed as require_sealed_bots

    # With --cluster the bots run on the workers: their programs need not exist here.
    config = _load(file, concurrency=concurrency, output=output, check_commands=not cluster)
    if dry_run:
        _dry_run(config, show_seed)
        return
    if require_sealed and not cluster:
        require_sealed_bots()
    resume = _resume_command(file, concurrency, output) + (f" --cluster {shlex.quote(cluster)}" if cluster else "")
    play_config(config, resume=resume, cluster=cluster, progress=progress, no_progress=no_progress, verbose=verbose,
                quiet=quiet, strict=strict, report=report, show_seed=show_seed, drop_old=drop_old)


# What the rest of a run imports: the tables' fit (numpy) for the live leader, the
# failures as they come, the report at the end.
_RUN_MODULES = ("arena.rating.fit", "arena.tournament.failures", "arena.tournament.progress",
                "arena.tournament.standings", "arena.tournament.store", "arena.tournament.adaptive",
                "arena.tournament.audit", "arena.render.standings", "arena.render.html", "arena.render.report",
                "arena.cli.replay")


class _Warm:
    """Imports ``modules`` on a thread of their own while the run starts its workers and plays
    their first matches, instead of before: about a second of start-up off every run.

    Every one is imported before a result is handled (``wait``), never in the middle of the run:
    a Ctrl-C or SIGTERM that lands inside an import on the main thread is lost in Python's
    import machinery ("Exception ignored in _get_module_lock"), not raised as the interrupt the
    run handles; on this thread it never lands (signals are taken on the main thread), and the
    main thread waits in ``join``, which a signal interrupts."""

    def __init__(self, modules: Sequence[str]) -> None:
        import threading

        self._modules = modules
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="arena-imports", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from importlib import import_module

        try:
            for name in self._modules:
                import_module(name)
        except BaseException as exc:  # noqa: BLE001 - raised again on the main thread, in wait()
            self._error = exc

    def wait(self) -> None:
        if self._thread.is_alive():
            self._thread.join()
        if self._error is not None:
            raise self._error


def play_config(config: TournamentConfig, *, resume: str, cluster: str | None, progress: Progress, no_progress: bool,
                verbose: bool, quiet: bool, strict: bool, report: bool | None, show_seed: bool,
                drop_old: bool = False) -> None:
    """``arena run``'s whole run of a tournament (``arena sprt`` makes one and plays it here):
    builds, identity checks, the live progress and failure lines, Ctrl-C with the ``resume``
    command, the tables and the report page. A sequential test (format sprt) plays until it
    decides (arena/tournament/sprt_run.py) and ends with its numbers and decision."""
    from arena.harness.containment import clock_note, containment_line, sealing_line, unsealed_why
    from arena.tournament import runner
    from arena.tournament.grants import grant_lines

    mode = Progress.NONE if no_progress else progress
    if quiet and mode is Progress.BAR:
        mode = Progress.NONE  # quiet silences what is for a person, not the JSON lines for a script
    out = _Human(quiet=quiet, tables_to_stderr=mode is Progress.JSONL)
    address = cluster or config.cluster
    if address:
        from arena.tournament.dask_executor import require_extra

        require_extra(f"--cluster {address}" if cluster else f"{config.source}: key 'cluster'")

    warm = _Warm(_RUN_MODULES)
    if mode is Progress.BAR and console.stderr_is_terminal():
        import rich.progress  # noqa: F401  # before any worker starts, as everything the run's main thread imports

    from arena.tournament.build import run_builds
    from arena.tournament.versions import Versions, generation_config

    store = runner.open_store(config)
    view: _RunView | None = None
    with store:
        try:
            # Everything stored is read (and checked) before anything is printed or built: a
            # damaged store is one line, and nothing is written to it.
            view = _view_of(config, runner.plan_strategy(config, store))
            live = _Live(config, store, view, out, mode=mode, verbose=verbose)
            out.say(view.summary(show_seed))
            out.say("containment: " + (containment_line() if not address else "on the cluster's workers, each as a local run"))
            clock_why = None if address or all(bot.clock is not None for bot in config.bots) else clock_note()
            if clock_why is not None:
                out.say(clock_why)
            why = None if address else unsealed_why()
            if why is not None:
                out.say(sealing_line(why))
                if view.strategy.has_work:
                    store.mark_unsealed(why)
            for line in grant_lines(config):
                out.say(line, always=line.startswith("warning:"))
            built = run_builds(config, os.path.join(config.output, runner.LOGS_DIR), jobs=min(2, config.concurrency))
            for line in built.lines():
                out.say(f"build: {line}")
            config = built.config
            checked = runner.check_identities(store, runner.identify_bots(config), config)
            if checked.note:
                out.say(f"note: {checked.note}")
            for line in checked.new_versions:
                out.say(line, always=True)
            for line in checked.respelled:
                out.say(f"note: {line}")
            if checked.raised_limit:
                out.say(f"note: {checked.raised_limit}")
            if drop_old:
                _drop_old(store, config, out)
            if checked.new_versions or drop_old:
                # A new generation of versions: its own schedule, planned afresh.
                view = _view_of(config, runner.plan_strategy(config, store))
                live = _Live(config, store, view, out, mode=mode, verbose=verbose)
            from arena.tournament.adaptive import AdaptiveRun

            if isinstance(view.strategy, (runner.RunPlan, AdaptiveRun)):
                # The tournament as its workers play it (each bot under its current entrant
                # name), with the bots as built (one from a revision runs in its checkout, a
                # built one has its program): the plan may have been made before the builds.
                versions = (view.strategy.versions if isinstance(view.strategy, runner.RunPlan)
                            else Versions(store.generations()))
                config = replace(view.strategy.run_config, bots=generation_config(config, versions).bots)
            if view.strategy.done:
                out.say(view.resuming())
            if view.strategy.has_work:
                executor: Executor
                if address:
                    from arena.tournament.dask_executor import make_dask_executor

                    out.say(f"cluster: {address}")
                    executor = make_dask_executor(config, address, **view.cluster_window)
                else:
                    executor = runner.make_executor(config, config.concurrency)
                    shares = getattr(executor, "shares", None)
                    if shares is not None:
                        out.say("cores: each worker and its bots on cores of their own: "
                                + " | ".join(map(cpu_list, shares)) + " (pin_workers)")
                ready = runner.ReadyNames(store, store.identities() or {}, runner.identify_now(config))
                try:
                    live.play(executor, ready, warm)
                    for line in ready.notes.values():
                        out.say(f"note: {line}", always=True)
                except ArenaError as exc:
                    # A changed bot says itself what to do; anything else may simply resume.
                    from arena.harness.botproc import CommandCannotStartError

                    safe = f"the results so far are safe in {_rel(config.output)}"
                    if isinstance(exc, CommandCannotStartError):
                        # Nothing stored yet (the bot's first match was the first played): no
                        # results to speak of, nothing to resume, and no folder made for them.
                        kept = f" ({safe})" if store.count() else ""
                        if not kept:
                            store.discard()
                        again = f"resume with: {resume}" if kept else f"run it again: {resume}"
                        exc.hint = (f"fix its cmd in {_rel(config.source)}, then {again}{kept}"
                                    if config.source else f"fix the command and run it again{kept}")
                    elif exc.hint is None and not isinstance(exc, runner.BotChangedError):
                        exc.hint = f"{safe}; resume with: {resume}"
                    raise
        except KeyboardInterrupt as stop:
            # Ctrl-C, SIGTERM or SIGHUP (arena/cli/edge.py): every stored match is durable.
            _say_interrupted(store, view.total if view is not None else None, config, resume, stop)
            raise typer.Exit(interrupt_exit_code(stop)) from None
        try:
            warm.wait()
            _finish(store, config, live, out, strict=strict, report=report)
        except KeyboardInterrupt as stop:
            # Stopped while writing the tables or the report: the matches are all stored, and
            # running it again writes them (a file being written is renamed into place whole).
            _say_interrupted(store, view.total, config, resume, stop)
            raise typer.Exit(interrupt_exit_code(stop)) from None


# --- a sequential test (format sprt) -------------------------------------------------------------


def _decided(test: SprtRun) -> str:
    from arena.render.sprt_text import decision_text

    return (f"{decision_text(test.summary())} (LLR {test.state.llr:.2f}); the matches in progress are finished "
            "and counted")


def _sprt_status(test: SprtRun) -> str:
    from arena.render.sprt_text import status_text

    return status_text(test.summary())


def _sprt_summary(config: TournamentConfig, show_seed: bool) -> str:
    from arena.sprt import Metric
    from arena.tournament.schedule import sprt_pair_limit
    from arena.tournament.sprt_run import sides_of

    params = config.sprt
    candidate, baseline = sides_of(config)
    shape = f"{config.players} players alone" if config.mode is Mode.SINGLE else (
        f"pairs: {config.players} players in teams of {config.team_size} (clones)")
    test = "" if params is None else (
        f"[{params.h0:g}, {params.h1:g}] {params.metric.value}"
        + (f" {params.model.value}" if params.metric is Metric.ELO else " per hand")
        + f", alpha {params.alpha:g}, beta {params.beta:g}, at most {sprt_pair_limit(config)} pairs")
    return (f"{config.name}: sprt, {candidate} (A) against {baseline} (B), {shape}; {test}; every deal played from "
            f"both seats, until the test decides; {seed_text(config.seed, show_seed)}; failures: {config.failures.policy}; "
            f"concurrency {config.concurrency}; output {_rel(config.output)}")


def _draft(config: TournamentConfig, planned: list[PlannedBuild], kind: type[_S]) -> tuple[_S | None, list[str]]:
    """The run's own first steps on a draft of its store (``runner.open_store(draft=True)``:
    read-only, what it would record held in memory): the store refused as the run refuses it,
    every stored row read, the bots' identities checked (those whose files are final now: no
    build to run, not from a revision; the rest are checked once the run has built them), and
    the plan the run would make after that check. None without a store: nothing played yet."""
    from arena.tournament import runner
    from arena.tournament.identity import identify_bot

    if not os.path.isfile(os.path.join(config.output, "results.sqlite")):
        return None, []
    building = {name for p in planned if p.will_run for name in p.bots}
    with runner.open_store(config, draft=True) as store:
        strategy = runner.plan_strategy(config, store)
        for _row in store.iter_rows():
            pass  # every stored row read as the run would, so a damaged one is refused here too
        final = {bot.name: identify_bot(bot) for bot in config.bots if bot.source is None and bot.name not in building}
        checked = runner.check_identities(store, final, config)
        if checked.new_versions:
            strategy = runner.plan_strategy(config, store)  # as the run plans a new generation afresh
    if not isinstance(strategy, kind):
        raise TypeError(f"format {config.format} planned as a {type(strategy).__name__}, not a {kind.__name__}")
    said = [*([f"note: {checked.note}"] if checked.note else []), *checked.new_versions,
            *(f"note: {line}" for line in checked.respelled),
            *([f"note: {checked.raised_limit}"] if checked.raised_limit else [])]
    return strategy, said


def _dry_run(config: TournamentConfig, show_seed: bool) -> None:
    """What ``arena run`` would do: the summary, the builds (none run), the schedule and what is
    already stored, after the run's own checks of the file and of the bots (a changed bot's new
    version is shown as it would join, or refused as the run would refuse it). Nothing is written."""
    from arena.tournament import runner
    from arena.tournament.grants import grant_lines

    if config.format is Format.SPRT:
        _dry_run_sprt(config, show_seed)
        return
    if config.format.adaptive:
        _dry_run_adaptive(config, show_seed)
        return
    schedule = build_schedule(config)
    planned = _planned_builds(config)
    plan, said = _draft(config, planned, runner.RunPlan)
    console.echo(_summary(config, len(schedule), len({s.deal for s in schedule}), show_seed))
    for line in [*grant_lines(config), *_build_lines(planned), *said]:
        console.echo(line)
    if plan is None or not plan.done:
        console.echo("nothing played yet")
        console.echo(_schedule_table(config, schedule, None, show_seed))
    elif plan.versions.current:
        # A new generation: what it plays, under its versions' names, after what is kept.
        console.echo(f"{plan.done} of {plan.total} matches already in {_rel(config.output)}; to play:")
        console.echo(_schedule_table(plan.run_config, tuple(plan.pending), None, show_seed))
    else:
        console.echo(f"{plan.done} of {plan.total} matches already in {_rel(config.output)}")
        console.echo(_schedule_table(config, schedule, plan.is_stored, show_seed))


def _dry_run_adaptive(config: TournamentConfig, show_seed: bool) -> None:
    """``_dry_run`` of swiss, ladder or knockout: what is stored, and the matches chosen now
    (from the stored results, and with any new version of a changed bot joined), which a run
    plays first."""
    from arena.tournament.adaptive import AdaptiveRun, Replay, chosen_now
    from arena.tournament.grants import grant_lines

    planned = _planned_builds(config)
    drafted, said = _draft(config, planned, AdaptiveRun)
    strategy = AdaptiveRun(config, Replay(config)) if drafted is None else drafted
    matches, deals = _adaptive_size(config)
    console.echo(_summary(config, matches, deals, show_seed))
    for line in [*grant_lines(config), *_build_lines(planned), *said]:
        console.echo(line)
    console.echo(f"{strategy.done} matches already in {_rel(config.output)}" if strategy.done else "nothing played yet")
    chosen = chosen_now(strategy)
    console.echo(_adaptive_caption(chosen))
    if chosen:
        console.echo(_schedule_table(strategy.run_config, tuple(chosen), None, show_seed))


def _dry_run_sprt(config: TournamentConfig, show_seed: bool) -> None:
    """``_dry_run`` of a sequential test: what is stored, the test as it stands, the deals next."""
    from arena.tournament.grants import grant_lines
    from arena.tournament.sprt_run import SprtRun

    planned = _planned_builds(config)
    test, said = _draft(config, planned, SprtRun)
    status = "nothing played yet"
    first = 0
    if test is not None and test.done:
        status = f"{test.done} matches already in {_rel(config.output)}; {_sprt_status(test)}"
        first = test.book.next_deal
        if not test.has_work:
            status += "; the test has decided: nothing to play"
    console.echo(_sprt_summary(config, show_seed))
    for line in [*grant_lines(config), *_build_lines(planned), *said]:
        console.echo(line)
    console.echo(status)
    schedule = [spec for spec in build_schedule(config, deals=first + SPRT_SHOWN_DEALS) if spec.deal >= first]
    console.echo(f"the next {SPRT_SHOWN_DEALS} deals of an open-ended schedule (the test decides how many):")
    console.echo(_schedule_table(config, tuple(schedule), None, show_seed))


def _drop_old(store: ResultStore, config: TournamentConfig, out: _Human) -> None:
    """``--drop-old``: delete the matches of every version that is not a bot's current one."""
    from arena.render.text import counted
    from arena.tournament.versions import Versions, is_current

    versions = Versions(store.generations())
    current = frozenset(versions.current_entrants(bot.name for bot in config.bots))
    old = [row.id for row in store.results() if not is_current(row.seats, current)]
    store.drop_matches(old)
    out.say(f"--drop-old: {counted(len(old), 'match', 'matches')} of earlier versions deleted from {_rel(store.folder)}",
            always=True)


def _say_interrupted(store: ResultStore, total: int | None, config: TournamentConfig, resume: str,
                     stop: BaseException) -> None:
    try:
        count = store.count()
        stored = f"{count} of {total} matches are safely stored" if total is not None else (
            f"{count} matches are safely stored")
    except ArenaError:
        stored = "the matches played so far are safely stored"
    by = "" if not isinstance(stop, Interrupted) else f" by {interrupt_name(stop)}"
    then = "; the test resumes from them to the same decision" if config.format is Format.SPRT else ""
    try:
        console.echo(
            f"interrupted{by}: {stored} in {_rel(config.output)}{then}.\nresume with: {resume}",
            err=True,
        )
    except (OSError, ValueError):
        pass  # no terminal any more (SIGHUP): the exit code still says it


# --- what a person sees while it runs ---------------------------------------------------------------


class _Human:
    """The lines for a person, on stderr: above the progress bar while it is up."""

    def __init__(self, *, quiet: bool, tables_to_stderr: bool) -> None:
        self.quiet = quiet
        self.tables_to_stderr = tables_to_stderr
        self._console: Any = None  # the live bar's console, while it is shown

    def say(self, line: str, *, always: bool = False) -> None:
        if self.quiet and not always:
            return
        if self._console is not None:
            console.above_bar(self._console, line)
        else:
            console.echo(line, err=True)

    def table(self, text: str) -> None:
        console.echo(text, err=self.tables_to_stderr)

    @contextmanager
    def above(self, screen: Any) -> Iterator[None]:
        self._console = screen
        try:
            yield
        finally:
            self._console = None


class _ScheduleView:
    """What a run of the whole schedule shows: a bar counting down to its total and the
    leader; its JSON lines count against the total."""

    cluster_window: dict[str, int] = {}

    def __init__(self, config: TournamentConfig, plan: runner.RunPlan | AdaptiveRun) -> None:
        self.config = config
        self.strategy = plan
        self.total: int | None = plan.total
        self._matches, self._deals = _size(config) if not config.format.adaptive else _adaptive_size(config)

    def summary(self, show_seed: bool) -> str:
        return _summary(self.config, self._matches, self._deals, show_seed)

    def resuming(self) -> str:
        return f"resuming: {self.strategy.done} of {self.strategy.total} matches already played"

    def columns(self, bar: tuple[ProgressColumn, ...]) -> tuple[ProgressColumn, ...]:
        return bar

    def state_text(self) -> str:
        return ""

    def status_line(self, live: _Live, done: int) -> str:
        return (f"{self.config.name}: {done}/{self.strategy.total} matches, {live.rate.text()}, "
                f"leader: {live.leader.text()}, failures: {live.failures_text()}")

    def json_line(self, row: MatchRow, notes: Sequence[FailureNote], done: int, store: ResultStore) -> str:
        from arena.tournament.progress import match_json

        return match_json(row, notes, done, self.strategy.total)

    def news(self, before: bool) -> str | None:
        return None

    def is_last(self, done: int) -> bool:
        return done == self.strategy.total

    def decided(self) -> bool:
        return False


class _SprtView:
    """What a sequential test shows: no total to count down to, the test's numbers instead of
    the bar and the leader, and a line when it decides."""

    # A test counts every match it submits: no more queued than the workers play.
    cluster_window = {"per_thread": 2, "min_window": 2}
    total = None

    def __init__(self, config: TournamentConfig, test: SprtRun) -> None:
        self.config = config
        self.strategy = test

    def summary(self, show_seed: bool) -> str:
        return _sprt_summary(self.config, show_seed)

    def resuming(self) -> str:
        return f"resuming: {self.strategy.done} matches stored; {self.state_text()}"

    def columns(self, bar: tuple[ProgressColumn, ...]) -> tuple[ProgressColumn, ...]:
        from rich.progress import TextColumn, TimeElapsedColumn

        return (TextColumn("[bold]{task.description}"), TextColumn("{task.fields[sprt]}"),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("failures: {task.fields[failures]}"))

    def state_text(self) -> str:
        return _sprt_status(self.strategy)

    def status_line(self, live: _Live, done: int) -> str:
        return (f"{self.config.name}: {self.state_text()}  ({done} matches, {live.rate.text()}, "
                f"failures: {live.failures_text()})")

    def json_line(self, row: MatchRow, notes: Sequence[FailureNote], done: int, store: ResultStore) -> str:
        from arena.render.sprt_text import status_json
        from arena.tournament.progress import match_json
        from arena.tournament.sprt_run import sides_of

        # No total (the test decides how many): null, and the test's state as "sprt", with
        # which program each side is (read afresh: a ready name, and so a label, comes with
        # a bot's first match).
        identities = store.identities() or {}
        sprt = status_json(self.strategy.summary())
        for role, name in zip(("a", "b"), sides_of(self.config), strict=True):
            identity = identities.get(name)
            sprt[role] = {"name": name, "label": identity.label if identity else None,
                          "version": identity.version if identity else None, "identity": identity.key if identity else None}
        line = {**json.loads(match_json(row, notes, done, 0)), "total": None, "sprt": sprt}
        return json.dumps(line, separators=(",", ":"))

    def news(self, before: bool) -> str | None:
        """The line to say when the match just stored made the test decide (``before``: it
        had decided already)."""
        if before or not self.strategy.state.finished:
            return None
        return f"{self.config.name}: {_decided(self.strategy)}"

    def is_last(self, done: int) -> bool:
        return False

    def decided(self) -> bool:
        return self.strategy.state.finished


_RunView = _ScheduleView | _SprtView


def _view_of(config: TournamentConfig, strategy: runner.Strategy) -> _RunView:
    """How the CLI shows a run of this strategy (``runner.plan_strategy``)."""
    from arena.tournament import runner

    if isinstance(strategy, runner.RunPlan):
        return _ScheduleView(config, strategy)
    if config.format.adaptive:  # only then: a fixed schedule's run does not pay its import (about 50 ms)
        from arena.tournament.adaptive import AdaptiveRun

        if isinstance(strategy, AdaptiveRun):
            return _ScheduleView(config, strategy)
    from arena.tournament.sprt_run import SprtRun

    if not isinstance(strategy, SprtRun):
        raise TypeError(f"no view of a run by {type(strategy).__name__}")
    return _SprtView(config, strategy)


class _Live:
    """Everything counted while a run plays: the failure tally (stored matches and new ones),
    the leader, the rate; and what is printed as each match finishes (as ``view`` shows it)."""

    def __init__(self, config: TournamentConfig, store: ResultStore, view: _RunView, out: _Human, *,
                 mode: Progress, verbose: bool) -> None:
        from arena.tournament.failures import FailureTally
        from arena.tournament.progress import LiveLeader, Throughput

        self.config = config
        self.store = store
        self.view = view
        self.out = out
        self.mode = mode
        self.verbose = verbose
        self.tally = FailureTally(bot.name for bot in config.bots)
        self.leader = LiveLeader(config.seating, [bot.name for bot in config.bots])
        self.rate = Throughput()
        self._shown: Counter[str] = Counter()  # failures printed per bot
        self._hinted: set[tuple[str, str]] = set()
        self.standings: Standings | None = None  # the final table's, once the run has played
        if view.strategy.done:
            # One pass over what is stored, a few hundred rows at a time.
            for row in store.results():
                self.tally.add(row)
                self.leader.add(row)

    def _bar(self, screen: Any) -> Any:
        """The live bar (rich's), on ``screen``."""
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar

        columns: tuple[ProgressColumn, ...] = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("leader: {task.fields[leader]}"),
            TextColumn("failures: {task.fields[failures]}"),
        )
        return Bar(*self.view.columns(columns), console=screen, transient=False)

    def _bar_fields(self) -> dict[str, str]:
        return {"rate": self.rate.text(), "leader": console.bar_field(self.leader.text()),
                "failures": self.failures_text(), "sprt": self.view.state_text()}

    def play(self, executor: Executor, ready: runner.ReadyNames, warm: _Warm | None = None) -> None:
        from contextlib import nullcontext

        from arena.tournament import runner
        from arena.tournament.progress import Throughput

        self.rate = Throughput()  # from the first match on, not from the builds
        view = self.view
        show = self.mode is Progress.BAR and console.stderr_is_terminal()
        status = self.mode is Progress.BAR and not show
        clock = time.monotonic
        last_status = clock()
        screen: Any = None
        if show:
            from rich.console import Console

            screen = Console(stderr=True)
        shown: Any = self._bar(screen) if show else nullcontext()
        with shown as bar:
            task = bar.add_task(console.bar_field(self.config.name), total=view.total, completed=view.strategy.done,
                                **{**self._bar_fields(), "rate": "-/min"}) if show else None
            decided = view.decided()

            def on_completed(completed: Completed, done: int) -> None:
                nonlocal last_status, decided
                if warm is not None:
                    warm.wait()  # the first match's fit needs the numerical libraries
                self.finished(completed, done)
                if show:
                    bar.update(task, completed=done, **self._bar_fields())
                news = view.news(decided)
                decided = view.decided()
                if news is not None:
                    self.out.say(news)
                if status and clock() - last_status >= STATUS_EVERY_S and not view.is_last(done):
                    last_status = clock()
                    self.out.say(view.status_line(self, done))

            with self.out.above(screen):
                played = runner.play(self.store, view.strategy, executor, on_completed=on_completed, ready_names=ready)
            # The last word on the leader is the final table's, refitted over every match, in
            # every format (the live fit is redone only every few seconds, and by pairs).
            self.standings = self.final_standings()
            done = view.strategy.done + played
            if show:
                bar.update(task, completed=done, leader=console.bar_field(self.leader.text()))
            if status and played:
                self.out.say(view.status_line(self, done))

    def final_standings(self) -> Standings:
        from arena.render.standings import elo_cell
        from arena.tournament.standings import standings_from_store

        standings = standings_from_store(self.store)
        top = standings.bots[0] if standings.leader is not None else None
        self.leader.settle(None if top is None else top.name, "" if top is None else elo_cell(top.elo, top.status))
        return standings

    def failures_text(self) -> str:
        failed = self.tally.failed_matches
        from arena.render.text import counted

        return "none" if not failed else counted(failed, "match", "matches")

    def finished(self, completed: Completed, done: int) -> None:
        from arena.tournament.progress import match_line

        row = completed.row
        notes = completed.failures
        self.tally.add(row, notes)
        self.leader.add(row)
        self.rate.add()
        if self.mode is Progress.JSONL:
            console.echo(self.view.json_line(row, notes, done, self.store))
        if self.verbose:
            self.out.say(match_line(row, notes))
        for note in notes:
            self._failure(note, row.id)

    def _failure(self, note: FailureNote, match_id: str) -> None:
        from arena.tournament.failures import describe, hint

        shown = self._shown[note.bot]
        if shown >= LIVE_FAILURES_PER_BOT and not self.verbose:
            return
        self._shown[note.bot] += 1
        self.out.say(describe(note, match_id))
        advice = hint(note.reason, note.detail)
        if advice and (note.bot, note.reason) not in self._hinted:
            self._hinted.add((note.bot, note.reason))
            self.out.say(f"  hint: {advice}")
        if shown + 1 == LIVE_FAILURES_PER_BOT and not self.verbose:
            self.out.say(f"  (further failures of {note.bot} are counted, not shown; -v shows them all)")


# --- the end of a run ---------------------------------------------------------------------------


def write_tables(store: ResultStore, standings: Standings | None = None) -> tuple[Standings, list[str]]:
    """Write standings and crosstable files beside the results (the ``standings`` of the store
    when they are already derived); returns the standings and the paths."""
    from arena.render.standings import format_crosstable, format_standings
    from arena.tournament.standings import standings_from_store

    if standings is None:
        standings = standings_from_store(store)
    paths = []
    for fmt in STANDINGS_FILES:
        # The text file holds every column (a file has no terminal's width to fit).
        for what, text in (("standings", format_standings(standings, fmt, wide=True)),
                           ("crosstable", format_crosstable(standings, fmt))):
            path = os.path.join(store.folder, f"{what}.{_EXT[fmt]}")
            write_file(path, text + "\n")
            paths.append(path)
    return standings, paths


def _finish(store: ResultStore, config: TournamentConfig, live: _Live, out: _Human, *, strict: bool,
            report: bool | None) -> None:
    from arena.render.standings import format_crosstable, format_standings

    standings, paths = write_tables(store, live.standings)
    out.table(format_standings(standings, "plain"))
    out.table("")
    out.table(format_crosstable(standings, "plain"))
    out.table("")
    count = store.count()
    for line in _failure_summary(store, config, live.tally):
        out.say(line, always=True)
    kinds = ", ".join(sorted({os.path.splitext(p)[1] for p in paths}, key=[os.path.splitext(p)[1] for p in paths].index))
    wrote = f"tables: standings and crosstable ({kinds})"
    if report is None:
        report = count <= REPORT_MAX_MATCHES
        if not report:
            wrote += f"; no report page for {count} matches (over {REPORT_MAX_MATCHES}; --report writes it)"
    if report:
        from arena.cli.replay import write_report

        written = write_report(Path(store.folder), say=out.say, skip_hint=" (--no-report skips it)", standings=standings)
        for line in written.refusals:
            out.say(f"report: {line}", always=True)
        wrote += f"; report: {_rel(str(written.page))}"
    out.say(f"results: {_rel(config.output)} ({count} matches); {wrote}")
    if config.format is Format.SPRT:
        out.table("")
        for line in sprt_lines(store):
            out.table(line)
    for line in knockout_lines(store):
        out.table(printable(line))
    limit = 0 if strict else config.max_failed_matches
    failed = live.tally.failed_matches
    if limit is not None and failed > limit:
        why = "--strict" if strict else f"failures.max_failed_matches is {limit}"
        raise FailureLimitError(f"{why}: {failed} of {count} matches had a bot failure (see the summary above)")


def knockout_lines(store: ResultStore) -> list[str]:
    """A knockout's champion (or that its bracket is not played out yet); nothing for another format."""
    from arena.tournament.adaptive import champion
    from arena.tournament.audit import store_config

    config = store_config(store)
    if config.format is not Format.KNOCKOUT:
        return []
    winner = champion(config, store)
    return [f"champion: {winner}" if winner is not None else "champion: not decided yet (the bracket is not played out)"]


def sprt_lines(store: ResultStore) -> list[str]:
    """A sequential test's numbers and decision, recomputed from its store, and the commit of
    each side built from a revision."""
    from arena.render.sprt_text import outcome_lines
    from arena.tournament.audit import keyed_identities
    from arena.tournament.sprt_run import replay_store

    return outcome_lines(replay_store(store), keyed_identities(store))


def _failure_summary(store: ResultStore, config: TournamentConfig, tally: FailureTally) -> list[str]:
    from arena.tournament import runner
    from arena.tournament.failures import failure_notes_of
    from arena.tournament.store import StoreError

    logs: dict[str, str] = {}
    commands: dict[str, str] = {}
    for name, stats in tally.failing():
        if stats.first is None and stats.first_match is not None:
            # Played by an earlier run: the detail is in its record.
            try:
                notes = failure_notes_of(store.record(stats.first_match))
            except (StoreError, ValueError):
                notes = ()
            first = next((n for n in notes if n.bot == name), None)
            if first is not None:
                tally.set_first(name, first)
        log = os.path.join(config.output, runner.LOGS_DIR, f"{name}.stderr.log")
        if os.path.isfile(log):
            logs[name] = _rel(log)
        try:
            bot = config.bot(name)
        except KeyError:
            continue
        cmd = bot.resolved_cmd(sys.executable)
        text = shlex.quote(cmd if isinstance(cmd, str) else shlex.join(cmd))
        cwd = _rel(bot.resolved_cwd)
        commands[name] = f"arena check-bot {text}" if cwd == "." else f"(cd {shlex.quote(cwd)} && arena check-bot {text})"
    return tally.summary_lines(logs, commands)


class TableWhat(str, Enum):
    """Which table ``arena table`` prints (``--what``)."""

    STANDINGS = "standings"
    CROSSTABLE = "crosstable"


class VersionsShown(str, Enum):
    """Which versions of a changed bot ``arena table`` shows (``--versions``)."""

    CURRENT = "current"
    ALL = "all"


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
    wide: Annotated[bool, typer.Option("--wide", help="Every column of the standings (forfeits, points for and "
                                       "against, hands, failures by reason); the default fits 100 columns.")] = False,
    versions: Annotated[VersionsShown, typer.Option("--versions", help="current: each bot's current version; all: "
                                                    "every version a changed bot played as, each its own entry.")
                        ] = VersionsShown.CURRENT,
) -> None:
    """Print the ranked standings and the crosstable of a tournament (derived from its results store).
    For a sequential test (arena sprt), its numbers and decision follow.

    csv and json hold plain numbers, one table per output (docs/TOURNAMENTS.md lists the columns);
    their notes go to stderr."""
    from arena.render.standings import format_crosstable, format_standings, standings_notes
    from arena.tournament.standings import standings_from_store
    from arena.tournament.store import ResultStore

    prior = check_prior(prior)
    if crosstable:
        if what is TableWhat.STANDINGS:
            raise InputError("--crosstable and --what standings: give one (--what crosstable)")
        what = TableWhat.CROSSTABLE
    machine = fmt in (TableFormat.CSV, TableFormat.JSON)
    with ResultStore.open_existing(str(results_dir)) as store:
        standings = standings_from_store(store, prior=prior, every_version=versions is VersionsShown.ALL)
        from arena.tournament.sprt_run import is_sprt_store

        test = sprt_lines(store) if not machine and is_sprt_store(store) else []
        cup = knockout_lines(store)
    if what is None:
        shown = [TableWhat.STANDINGS] if machine else [TableWhat.STANDINGS, TableWhat.CROSSTABLE]
    else:
        shown = [what]
    for i, one in enumerate(shown):
        if i:
            console.echo("")
        if one is TableWhat.STANDINGS:
            console.echo(format_standings(standings, fmt.value, wide=wide))
        else:
            console.echo(format_crosstable(standings, fmt.value))
    if test:
        console.echo("")
        for line in test:
            console.echo(printable(line))
    if cup and not machine:
        console.echo("")
        console.echo(printable(cup[0]))
    if machine and TableWhat.STANDINGS in shown:
        # Keep the machine-readable output clean; the caveats go to stderr, as in arena rate.
        for note in (*standings_notes(standings), *cup):
            console.echo(f"note: {printable(note)}", err=True)


def cpu_list(cores: Iterable[int]) -> str:
    """CPUs as Linux lists them (``0-3,8``): runs of consecutive numbers as ranges."""
    runs: list[list[int]] = []
    for core in sorted(cores):
        if runs and core == runs[-1][1] + 1:
            runs[-1][1] = core
        else:
            runs.append([core, core])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


__all__ = ["FailureLimitError", "Progress", "run", "table", "validate", "write_file", "write_tables"]
