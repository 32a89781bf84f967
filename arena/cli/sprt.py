"""``arena sprt``: is A stronger than B? A sequential test on duplicate deals (docs/SPRT.md).

Three ways in, one way through:

* ``arena sprt A B --elo0 0 --elo1 10``: A and B are bot commands, or bot names of a
  tournament file given with ``--file`` (its rules, table and bot settings are used);
* ``arena sprt --repo PATH --base REV --dev REV --build CMD --cmd CMD``: the same bot at two
  revisions of a git repository, built in checkouts of their own (dev is A, base is B);
* ``arena sprt --stats LL LD DD WD WW --elo0 X --elo1 Y``: the statistics of counts alone.

The first two make a tournament of ``format: sprt`` and play it exactly as ``arena run``
plays a file of that format (arena/cli/tournament.py: builds, identity checks, live status,
failures, Ctrl-C and resume, tables, report page); the text of the test's numbers is made
here, for both.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

import arena.cli.console as console
from arena.cli.seeds import PLACEHOLDER, ShowSeedOption, seed_argument
from arena.cli.tournament import Progress
from arena.errors import InputError
from arena.harness.protocol import Clock
from arena.tournament.schedule import SPRT_MAX_PAIRS, Format, Mode, TeamMode

if TYPE_CHECKING:
    from arena.sprt import SprtParams
    from arena.tournament.config import BotConfig, TournamentConfig

DEFAULT_SEED = 1
_NAME_MAX = 64


# --- the command ----------------------------------------------------------------------------------


_E = TypeVar("_E", bound=Enum)


# The test's parameters of ``arena sprt-stats``; ``arena sprt`` has the bounds too, and the
# rest without defaults of their own (a file's sprt: gives them).
Elo0Option = Annotated[float | None, typer.Option("--elo0", help="H0: A is this much stronger (Elo of --model).")]
Elo1Option = Annotated[float | None, typer.Option("--elo1", help="H1: A is this much stronger; more than elo0.")]
ModelOption = Annotated[str, typer.Option("--model", help="What elo0 and elo1 measure: normalized or logistic.")]
AlphaOption = Annotated[float, typer.Option("--alpha", help="Chance of accepting H1 when H0 holds.")]
BetaOption = Annotated[float, typer.Option("--beta", help="Chance of accepting H0 when H1 holds.")]


def _member(option: str, value: str, kind: type[_E]) -> _E:
    """An option's text as its enum member. Typer could parse these itself, but only with the
    enums imported when the command line starts, and they live beside the statistics, which
    load numpy: a second of start-up for every command (tests/cli/test_cli_startup.py)."""
    from arena.sprt import SprtParamError

    for member in kind:
        if member.value == value:
            return member
    raise SprtParamError(option, f"expected {' or '.join(str(m.value) for m in kind)}, got {value!r}")


def _params(given: dict[str, object], base: SprtParams | None = None, file: Path | None = None) -> SprtParams:
    """The test's parameters: the options given on the command line (``given``: each one given,
    by its mapping key: ``elo0``, ``max_pairs``, ...) over a tournament file's ``sprt:`` mapping
    (``base``, read from ``file``), over the defaults. An error names where the value it is
    about came from: ``--max-pairs``, or the file's key."""
    from arena.sprt import EloModel, Metric, SprtParamError, SprtParams

    merged: dict[str, object] = dict(base.to_dict()) if base is not None else {}
    metric = given.get("metric", merged.get("metric", Metric.ELO.value))
    if base is not None and metric != base.metric.value:
        # The file's hypotheses (and model) belong to its metric: another metric takes its own.
        for key in (*base.names, "model"):
            merged.pop(key, None)
    if metric == Metric.POINTS.value:
        if given.get("model", EloModel.NORMALIZED.value) != EloModel.NORMALIZED.value:
            raise SprtParamError("--model", "applies to --metric elo only")
        merged.pop("model", None)
        given = {key: value for key, value in given.items() if key != "model"}
    merged.update(given)
    if merged.get("max_pairs") is None:
        merged.pop("max_pairs", None)
    try:
        return SprtParams.from_mapping(merged)
    except SprtParamError as exc:
        if exc.parameter in given or base is None or exc.parameter not in merged:
            raise SprtParamError("--" + exc.parameter.replace("_", "-"), exc.reason) from None
        options = ", ".join("--" + key.replace("_", "-") for key in given)
        raise SprtParamError(f"{file}: key 'sprt.{exc.parameter}'",
                             exc.reason + (f" (with {options} from the command line)" if options else "")) from None


def _capped(params: SprtParams) -> SprtParams:
    """``params`` of a test to play, whose pairs a results folder can hold (a file's
    ``sprt.max_pairs`` is held to the same cap where it is read)."""
    from arena.sprt import SprtParamError

    if params.max_pairs is not None and params.max_pairs > SPRT_MAX_PAIRS:
        raise SprtParamError("--max-pairs", f"at most {SPRT_MAX_PAIRS:,} pairs (the size limit of a results folder), "
                                            f"got {params.max_pairs:,}")
    return params


def _given(**options: object) -> dict[str, object]:
    """The options given on the command line (those not None), by their mapping keys."""
    return {key: value for key, value in options.items() if value is not None}


def _provenance(name: str, file: Path | None, given: dict[str, object]) -> str:
    """Where the test's parameters come from when a file's ``sprt:`` gives some (the header
    that follows shows their values)."""
    options = [f"--{key.replace('_', '-')}" for key in given]
    return f"{name}: the test's parameters are {file}'s sprt:" + (
        f", with {', '.join(options)} from the command line" if options else "")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-._") or "bot"


def command_name(cmd: str) -> str:
    """A bot's name from its command: the stem of the script it runs (``expert_bot`` for
    ``python3 bots/expert_bot.py --ms 20``), else of the program (``firstmove`` for
    ``./firstmove.bin``)."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        words = cmd.split()
    if not words:
        return "bot"
    scripts = [w for w in words[1:] if not w.startswith("-") and ("/" in w or re.search(r"\.[A-Za-z]\w*$", w))]
    word = scripts[0] if scripts else words[0]
    stem = os.path.splitext(os.path.basename(word.rstrip("/")))[0]
    return _slug(stem)[:_NAME_MAX - 2]


def _command_bots(candidate: str, baseline: str, check: bool) -> tuple[BotConfig, BotConfig]:
    from arena.harness.botproc import expand_python, missing_program
    from arena.tournament.config import BotConfig

    names = [command_name(candidate), command_name(baseline)]
    if names[0] == names[1]:
        names = [f"{names[0]}-A", f"{names[1]}-B"]
    here = os.getcwd()
    bots = []
    for role, name, cmd in (("A", names[0], candidate), ("B", names[1], baseline)):
        if not cmd.strip():
            raise InputError(f"{role}: expected a bot command, got nothing")
        if check:
            missing = missing_program(expand_python(cmd, sys.executable), here, {})
            if missing:
                raise InputError(f"{role} ({cmd!r}): {missing}")
        bots.append(BotConfig(name, cmd, ".", base_dir=here))
    return bots[0], bots[1]


def _revision_bots(repo: Path, base: str | None, dev: str | None, build: str | None, cmd: str | None,
                   cwd: str) -> tuple[BotConfig, BotConfig]:
    from arena.tournament.buildspec import BuildSpec
    from arena.tournament.config import BotConfig
    from arena.tournament.sources import SourceSpec

    for option, value in (("--base", base), ("--dev", dev), ("--cmd", cmd)):
        if not value or not value.strip():
            raise InputError(f"--repo: {option} is required (--repo PATH --base REV --dev REV --cmd CMD [--build CMD])")
    if not repo.is_dir():
        raise InputError(f"--repo: {repo} is not a folder holding a git repository")
    here = os.getcwd()
    spec = BuildSpec(build) if build else None
    # dev is the candidate (A), base the baseline (B): a positive Elo means dev is stronger.
    return (
        BotConfig("dev", str(cmd), cwd, base_dir=here, build=spec,
                  source=SourceSpec(str(repo), str(dev).strip(), base_dir=here)),
        BotConfig("base", str(cmd), cwd, base_dir=here, build=spec,
                  source=SourceSpec(str(repo), str(base).strip(), base_dir=here)),
    )


def _file_config(file: Path, candidate: str, baseline: str, check: bool) -> TournamentConfig:
    """The tournament file's game (rules, table, failure policy, settings of the two bots);
    the sides are clones of A and B."""
    from arena.tournament.config import load_config

    config = load_config(file, check_commands=check)
    names = [bot.name for bot in config.bots]
    chosen = []
    for role, name in (("A", candidate), ("B", baseline)):
        try:
            chosen.append(config.bot(name))
        except KeyError:
            raise InputError(f"{role}: {file} has no bot named {name!r} (its bots: {', '.join(names)})") from None
    if candidate == baseline:
        raise InputError(f"A and B are both {candidate!r}: a test needs two bots (two entries of the file, "
                         "even if they run the same program)")
    if config.sides != 2:
        raise InputError(f"{file}: sprt tests one side against another: it needs exactly 2 sides, the file's table "
                         f"has {config.sides} ({config.players} players)")
    return replace(config, bots=tuple(chosen), team_mode=TeamMode.CLONES, teams=(), challengers=())


def sprt(
    candidate: Annotated[str | None, typer.Argument(
        metavar="A", help="The candidate: a bot command, or a bot name of --file.", show_default=False)] = None,
    baseline: Annotated[str | None, typer.Argument(
        metavar="B", help="The baseline: a bot command, or a bot name of --file.", show_default=False)] = None,
    elo0: Elo0Option = None,
    elo1: Elo1Option = None,
    metric: Annotated[str | None, typer.Option(
        "--metric", help="elo (match results) or points (margin in points per hand; give --points0 and --points1); "
                         "default: the file's sprt:, else elo.", show_default=False)] = None,
    points0: Annotated[float | None, typer.Option("--points0", help="H0 of --metric points, points per hand.")] = None,
    points1: Annotated[float | None, typer.Option("--points1", help="H1 of --metric points, points per hand.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="What elo0 and elo1 measure: normalized or logistic (default: the file's sprt:, else "
                        "normalized).", show_default=False)] = None,
    alpha: Annotated[float | None, typer.Option(
        "--alpha", help="Chance of accepting H1 when H0 holds (default: the file's sprt:, else 0.05).",
        show_default=False)] = None,
    beta: Annotated[float | None, typer.Option(
        "--beta", help="Chance of accepting H0 when H1 holds (default: the file's sprt:, else 0.05).",
        show_default=False)] = None,
    max_pairs: Annotated[int | None, typer.Option(
        "--max-pairs", help="Stop undecided after this many pairs (default: the file's sprt:, else no limit); "
                            "raised, a test that stopped there goes on.")] = None,
    stats: Annotated[tuple[int, int, int, int, int] | None, typer.Option(
        "--stats", metavar="LL LD DD WD WW", hidden=True, help="The old spelling of arena sprt-stats.")] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", "-f", help="A tournament file: A and B are bot names of it; its rules, table and bot settings "
                             "are used, and its sprt: (format: sprt) gives the test's parameters not given here.")] = None,
    repo: Annotated[Path | None, typer.Option(
        "--repo", help="A git repository: test the bot at --dev (A) against the bot at --base (B).")] = None,
    base: Annotated[str | None, typer.Option("--base", help="With --repo: the baseline's revision.")] = None,
    dev: Annotated[str | None, typer.Option("--dev", help="With --repo: the candidate's revision.")] = None,
    build: Annotated[str | None, typer.Option(
        "--build", help="With --repo: the command that builds the bot in its checkout.")] = None,
    cmd: Annotated[str | None, typer.Option("--cmd", help="With --repo: the command that runs the bot.")] = None,
    cwd: Annotated[str, typer.Option(
        "--cwd", help="With --repo: the bot's folder inside the repository, where --build and --cmd run.")] = ".",
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help=f"Master seed of the deals (default: the file's, else {DEFAULT_SEED}).")] = None,
    concurrency: Annotated[int | None, typer.Option(
        "--concurrency", "-j", min=1, help="Worker processes (default: the file's, else the number of cores).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Results folder (default: results/sprt-A-vs-B).")] = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", help="Play on the Dask cluster whose scheduler is at this address (docs/CLUSTER.md).")] = None,
    progress: Annotated[Progress, typer.Option(
        "--progress", help="bar: a status line on stderr; jsonl: one JSON object per finished match on stdout, "
                           "with the test's state; none: neither.")] = Progress.BAR,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="The same as --progress none.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="A line per finished match, and every failure.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors and the final results.")] = False,
    report: Annotated[bool | None, typer.Option(
        "--report/--no-report", help="Write the report page into the results folder (default: as arena run).")] = None,
    show_seed: ShowSeedOption = False,
    clock: Annotated[Clock | None, typer.Option(
        "--clock", help="What move_ms measures: cpu (each bot's CPU time) or wall (default: the file's, else cpu "
                        "where this machine counts it per bot).", show_default=False)] = None,
) -> None:
    """Test whether A is stronger than B with the fewest games: deals in pairs (both seats), until
    the log-likelihood ratio reaches a bound (H0 or H1 accepted) or --max-pairs.

    Resumable: run the same command again after Ctrl-C. arena sprt-stats prints the numbers of counts alone."""
    from arena.cli.tournament import play_config
    from arena.sprt import EloModel, Metric
    from arena.tournament.store import ResumeMismatchError

    given = _given(metric=metric and _member("--metric", metric, Metric).value,
                   model=model and _member("--model", model, EloModel).value, elo0=elo0, elo1=elo1, points0=points0,
                   points1=points1, alpha=alpha, beta=beta, max_pairs=max_pairs)
    if stats is not None:  # the old spelling of arena sprt-stats
        params = _params(given)
        if candidate is not None or file is not None or repo is not None:
            raise InputError("--stats takes counts instead of bots: give no bots, --file or --repo with it")
        _print_stats(params, stats)
        return
    # With a file, the options given complete its sprt: mapping, read with it below.
    early = _capped(_params(given)) if file is None or repo is not None else None

    check = not cluster
    if repo is not None:
        if candidate is not None or file is not None:
            raise InputError("--repo tests two revisions of one bot: give no A, B or --file with it")
        bots = _revision_bots(repo, base, dev, build, cmd, cwd)
        base_config = None
    else:
        for option, value in (("--base", base), ("--dev", dev), ("--build", build), ("--cmd", cmd)):
            if value is not None:
                raise InputError(f"{option} goes with --repo")
        if candidate is None or baseline is None:
            raise InputError("give two bots, A (the candidate) and B (the baseline): bot commands, bot names of "
                             "--file, or --repo with --base and --dev (arena sprt-stats takes counts)")
        if file is not None:
            base_config = _file_config(file, candidate, baseline, check)
            bots = (base_config.bots[0], base_config.bots[1])
        else:
            bots = _command_bots(candidate, baseline, check)
            base_config = None
    file_params = base_config.sprt if base_config is not None else None
    params = early if early is not None else _capped(_params(given, file_params, file))
    if clock is not None:
        bots = (replace(bots[0], clock=clock), replace(bots[1], clock=clock))
    config = _config(bots, params, base_config, seed, concurrency, output, cluster)
    if file_params is not None and not quiet:
        console.say(_provenance(config.name, file, given))
    if output is None:
        config = _own_folder(config)
    resume = _resume_command(candidate, baseline, params, file, repo, base, dev, build, cmd, cwd,
                             None if seed is None else seed_argument(seed, show_seed), concurrency, output, cluster,
                             clock)
    try:
        play_config(config, resume=resume, cluster=cluster, progress=progress, no_progress=no_progress,
                    verbose=verbose, quiet=quiet, strict=False, report=report, show_seed=show_seed)
    except ResumeMismatchError as exc:
        if file is not None:
            raise
        # Without --file the test's settings are this command's options: there is no file to restore.
        raise ResumeMismatchError(exc.folder, exc.changed, restore="give the options it began with") from None


def _config(bots: tuple[BotConfig, BotConfig], params: SprtParams, base: TournamentConfig | None, seed: int | None,
            concurrency: int | None, output: Path | None, cluster: str | None) -> TournamentConfig:
    from arena.core.rules import Rules
    from arena.match.record import FailurePolicy
    from arena.tournament.config import TournamentConfig

    name = f"sprt-{bots[0].name}-vs-{bots[1].name}"
    if len(name) > _NAME_MAX:
        name = name[:_NAME_MAX].rstrip("-._")
    folder = os.path.abspath(output if output is not None else os.path.join("results", name))
    if base is None:
        base = TournamentConfig(
            name=name, seed=DEFAULT_SEED, rules=Rules(), mode=Mode.SINGLE, players=2, team_size=1, team_mode=TeamMode.CLONES,
            teams=(), bots=bots, format=Format.SPRT, challengers=(), matches_per_pairing=2, duplicate=True,
            failures=FailurePolicy(), concurrency=os.cpu_count() or 1, output=folder,
        )
    return replace(
        base, name=name, bots=bots, format=Format.SPRT, matches_per_pairing=2, duplicate=True, sprt=params, output=folder,
        seed=seed if seed is not None else base.seed, concurrency=concurrency or base.concurrency,
        cluster=cluster or base.cluster, source=base.source,
    )


def _own_folder(config: TournamentConfig) -> TournamentConfig:
    """The test's default folder; or, when the test stored there was played by another version
    of a side (a sequential test is about the two programs it began with, so the new version
    cannot join it), the first beside it (``-2``, ``-3``, ...) that holds a test of these two
    programs, or none yet: the old test is kept, and running the same command again resumes
    the new one. A side with a build or from a revision is known only once built: its run
    checks it, and refuses a changed one with the way out."""
    from arena.cli.tournament import _rel
    from arena.tournament.identity import identify_bot, identity_changes
    from arena.tournament.store import STORE_FILE, ResultStore

    if any(bot.build is not None or bot.source is not None for bot in config.bots):
        return config
    first: tuple[str, list[str]] | None = None
    number = 1
    while True:
        folder = config.output if number == 1 else f"{config.output}-{number}"
        if not os.path.isfile(os.path.join(folder, STORE_FILE)):
            break
        with ResultStore.open_existing(folder) as store:
            recorded = store.identities() if store.count() else None
        changes = [f"{bot.name} has a new version ({'; '.join(found)})" for bot in config.bots
                   if recorded and bot.name in recorded
                   and (found := identity_changes(recorded[bot.name].fill_from(bot), identify_bot(bot)))]
        if not changes:
            break
        first = first or (folder, changes)
        number += 1
    if first is None:
        return config
    console.say(f"{'; '.join(first[1])}: the test in {_rel(first[0])} is about the programs it began with and is kept; "
                f"this test goes in {_rel(folder)}")
    return replace(config, output=folder)


def sprt_stats(
    counts: Annotated[tuple[int, int, int, int, int], typer.Argument(
        metavar="LL LD DD WD WW", help="Pentanomial counts of pairs, in fishtest's and fastchess's order.",
        show_default=False)],
    elo0: Elo0Option = None,
    elo1: Elo1Option = None,
    model: ModelOption = "normalized",
    alpha: AlphaOption = 0.05,
    beta: BetaOption = 0.05,
    max_pairs: Annotated[int | None, typer.Option(
        "--max-pairs", help="The test's limit of pairs, for its decision.")] = None,
) -> None:
    """Print a sequential test's numbers (Elo, LOS, LLR, the decision) for counts of pairs
    played elsewhere, as fastchess prints them; play nothing."""
    from arena.sprt import EloModel, Metric

    params = _params(_given(metric=Metric.ELO.value, model=_member("--model", model, EloModel).value, elo0=elo0,
                            elo1=elo1, alpha=alpha, beta=beta, max_pairs=max_pairs))
    _print_stats(params, counts)


def _print_stats(params: SprtParams, counts: tuple[int, int, int, int, int]) -> None:
    from arena.render.sprt_text import result_lines
    from arena.sprt import Pentanomial, summarize_counts

    for line in result_lines(summarize_counts(params, Pentanomial.from_counts(counts))):
        console.echo(line)


def _resume_command(candidate: str | None, baseline: str | None, params: SprtParams, file: Path | None,
                    repo: Path | None, base: str | None, dev: str | None, build: str | None, cmd: str | None, cwd: str,
                    seed: str | None, concurrency: int | None, output: Path | None, cluster: str | None,
                    clock: Clock | None = None) -> str:
    """The command that resumes this test: the same bots, test, clock and folder; ``seed`` is
    the ``--seed`` given, as it may be shown (arena/cli/seeds.py)."""
    parts = ["arena", "sprt"]
    if repo is not None:
        parts += ["--repo", str(repo), "--base", str(base), "--dev", str(dev), "--cmd", str(cmd)]
        parts += ["--build", build] if build else []
        parts += ["--cwd", cwd] if cwd != "." else []
    else:
        parts += [str(candidate), str(baseline)]
        parts += ["--file", str(file)] if file is not None else []
    name0, name1 = params.names
    parts += [f"--{name0}", f"{params.h0:g}", f"--{name1}", f"{params.h1:g}"]
    from arena.sprt import EloModel, Metric

    if params.metric is not Metric.ELO:
        parts += ["--metric", params.metric.value]
    if params.model is not EloModel.NORMALIZED:
        parts += ["--model", params.model.value]
    for option, value, default in (("--alpha", params.alpha, 0.05), ("--beta", params.beta, 0.05)):
        if not math.isclose(value, default):
            parts += [option, f"{value:g}"]
    for option, given in (("--max-pairs", params.max_pairs), ("--seed", seed), ("--concurrency", concurrency),
                          ("--output", output), ("--cluster", cluster),
                          ("--clock", clock.value if clock is not None else None)):
        if given is not None:
            parts += [option, str(given)]
    command = " ".join(shlex.quote(p) for p in parts)
    if seed == PLACEHOLDER:
        command += f" ({PLACEHOLDER}: the --seed you gave)"
    return command


__all__ = ["command_name", "sprt", "sprt_stats"]
