"""What a worker process does: keep bot processes alive, play one match spec, return its record.

Everything here is plain data or module-level functions, so it pickles by reference into
spawned worker processes (and into a remote executor later).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from arena.core.rules import Rules, Seating
from arena.errors import ArenaError, ExitCode
from arena.harness import containment
from arena.harness.botproc import BotProcess, BotSpec, Limits, StartFailure
from arena.harness.containment import default_clock
from arena.harness.protocol import Clock
from arena.harness.resources import ResourceLimits
from arena.match.jsontext import ascii_dumps
from arena.match.record import FailurePolicy, GameRecord, derive_row_values
from arena.match.referee import play_match
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import Summary, WorkerPlan
from arena.tournament.failures import failure_notes
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import MatchRow, hidden_by_bot


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to play any match of the tournament."""

    rules: dict[str, Any]
    seating: dict[str, Any]
    bots: tuple[tuple[str, BotSpec], ...]
    policy: FailurePolicy
    logs_dir: str | None

    def bot(self, name: str) -> BotSpec:
        for bot_name, spec in self.bots:
            if bot_name == name:
                return spec
        raise KeyError(name)


def bot_spec(bot: Any, python: str, hidden: tuple[str, ...] = ()) -> BotSpec:
    """The harness's BotSpec for a configured bot ($PYTHON expanded, cwd resolved)."""
    from arena.tournament.identity import outside_input_folders

    return BotSpec(name=bot.name, cmd=bot.resolved_cmd(python), cwd=bot.resolved_cwd, env=bot.env,
                   pass_env=bot.pass_env, limits=bot_limits(bot, default_clock()),
                   resources=ResourceLimits.from_dict(dict(bot.limits)), hidden=hidden,
                   readable=outside_input_folders(bot))


def bot_limits(bot: Any, machine_clock: Clock | None = None) -> Limits:
    """The time limits a configured bot plays under: what its records hold (``arena verify``
    checks). Its clock is the file's, else ``machine_clock`` (the machine's default, which
    a file that names no clock leaves to the machine), else the wall clock."""
    given = (("startup_ms", bot.startup_ms), ("move_ms", bot.move_ms), ("bank_ms", bot.bank_ms))
    clock = bot.clock if bot.clock is not None else machine_clock
    limits = Limits(**{k: v for k, v in given if v is not None})
    return limits if clock is None else replace(limits, clock=clock)


def make_job(config: TournamentConfig, *, python: str, logs_dir: str | None) -> Job:
    hidden = hidden_by_bot(config)
    return Job(
        rules=config.rules.to_dict(),
        seating=config.seating.to_dict(),
        bots=tuple((bot.name, bot_spec(bot, python, hidden[bot.name])) for bot in config.bots),
        policy=config.failures,
        logs_dir=logs_dir,
    )


def worker_plan(config: TournamentConfig, *, python: str, logs_dir: str | None) -> WorkerPlan:
    return WorkerPlan(make_job(config, python=python, logs_dir=logs_dir), open_state, play, close_state, summarize)


def summarize(spec: MatchSpec, played: dict[str, Any], duration: float) -> Summary:
    """The row, the record's JSON, the bots' ready names and the failures' details of a
    played match (what ``play`` returned; a bare record dict is taken as well).

    The record ``play`` returns is the referee's own ``GameRecord``, used as it is; a record
    given as a dict is read and checked first (``GameRecord.from_dict``)."""
    given = played["record"] if "record" in played else played
    ready = tuple(name if isinstance(name, str) else None for name in played.get("ready", ()))
    cannot_start = tuple(f if isinstance(f, StartFailure) else None for f in played.get("cannot_start", ()))
    record = given if isinstance(given, GameRecord) else GameRecord.from_dict(given)
    record_dict = given.to_dict() if isinstance(given, GameRecord) else given
    return Summary(
        row=row_from_record(spec, record, duration),
        record_json=ascii_dumps(record_dict),
        ready=ready,
        failures=failure_notes(record),
        cannot_start=cannot_start,
    )


@dataclass
class Kept:
    """A bot process a worker keeps between matches, and the deals it has been dealt."""

    proc: BotProcess
    deals: set[int] = field(default_factory=set)


# Processes a worker keeps per bot and per seat the bot takes in a match: two, so that the
# twin of a deal (its other rotation) finds one that has not seen it, mostly without a start.
KEEP_PER_SEAT = 2


@dataclass
class WorkerState:
    """A worker's live bot processes, by bot name."""

    worker_id: str
    procs: dict[str, list[Kept]] = field(default_factory=dict)


def open_state(job: Job, worker_id: str) -> WorkerState:
    if job.logs_dir is not None:
        os.makedirs(job.logs_dir, exist_ok=True)
    return WorkerState(worker_id)


def close_state(state: WorkerState) -> None:
    for kept in state.procs.values():
        for each in kept:
            each.proc.close()
    state.procs.clear()


def seat_processes(job: Job, spec: MatchSpec, state: WorkerState) -> list[BotProcess]:
    """A process for each seat of ``spec`` that has never been dealt its deal (PROTOCOL.md,
    "Limits and containment"): a bot that remembers a game must not meet its cards again, in
    the deal's other rotations (duplicate) or beside itself (clone partners). A process kept
    from an earlier match of another deal is reused (the start-up saving); when every kept
    process of the bot has seen this deal, the oldest of them is closed and a new one started."""
    chosen: list[Kept] = []
    for name in spec.seats:
        kept = state.procs.setdefault(name, [])
        # A process chosen for another seat of this match has been dealt the deal already.
        fresh = next((k for k in kept if spec.seed not in k.deals), None)
        if fresh is None:
            if len(kept) >= KEEP_PER_SEAT * spec.seats.count(name):
                old = next(k for k in kept if all(k is not c for c in chosen))
                kept.remove(old)
                old.proc.close()
            fresh = Kept(BotProcess(job.bot(name), stderr_dir=job.logs_dir))
            kept.append(fresh)
        fresh.deals.add(spec.seed)
        chosen.append(fresh)
    return [k.proc for k in chosen]


# Plays of one match whose launcher was lost beyond its bots' reach, before the worker gives up.
LAUNCHER_LOSSES_PER_MATCH = 3


class LauncherLostError(ArenaError):
    """The bots' launcher was lost match after match (the machine kills it): the run stops,
    every stored match kept, and resumes."""

    exit_code = ExitCode.FAULT


def play(job: Job, spec: MatchSpec, state: WorkerState) -> dict[str, Any]:
    """One match: ``{"record": the referee's ``GameRecord``, "ready": the name each seat's
    bot gave in its ready reply this match (None: no name, or no handshake), "cannot_start":
    each seat's ``StartFailure`` (None: its command started)}``. Bots stay up
    for the next match; the referee restarts any that died.

    A match during which the bots' launcher was lost where none of them could have brought it
    down (``containment.launchers_lost_beyond_bots``: the OOM killer, a person) is not the bots'
    result: it is played again from its seed with new processes, as a lost worker's match is."""
    for _ in range(LAUNCHER_LOSSES_PER_MATCH):
        lost_before = containment.launchers_lost_beyond_bots()
        bots = seat_processes(job, spec, state)
        for proc in bots:
            # Set again by this match's handshake: a name left from an earlier match must not
            # vouch for a process that never answered this one.
            proc.ready_name = None
            proc.cannot_start = None
        record = play_match(
            bots,
            Rules.from_dict(job.rules),
            Seating.from_dict(job.seating),
            spec.seed,
            job.policy,
        )
        if containment.launchers_lost_beyond_bots() == lost_before:
            return {"record": record, "ready": [proc.ready_name for proc in bots],
                    "cannot_start": [proc.cannot_start for proc in bots]}
        for kept in state.procs.values():
            for gone in [k for k in kept if any(k.proc is proc for proc in bots)]:
                kept.remove(gone)
                gone.proc.close()
    raise LauncherLostError(f"match {spec.id}: the bots' launcher was lost in each of {LAUNCHER_LOSSES_PER_MATCH} "
                            "plays of it (killed by the system?)")


def row_from_record(spec: MatchSpec, record: GameRecord | Mapping[str, Any], duration: float) -> MatchRow:
    """The match row: its place in the schedule from ``spec``, its summary derived from the
    record (``derive_row_values``), and what each bot used (the record's ``usage``, a
    measurement that nothing verifies); the record itself is stored beside it."""
    game = record if isinstance(record, GameRecord) else GameRecord.from_dict(record)
    values = derive_row_values(game)
    return MatchRow(
        id=spec.id,
        index=spec.index,
        pairing=spec.pairing,
        deal=spec.deal,
        rotation=spec.rotation,
        seed=spec.seed,
        sides=spec.sides,
        seats=spec.seats,
        winner=values.winner,
        scores=values.scores,
        reason=values.reason,
        terminations=values.terminations,
        escobas=values.escobas,
        hands=values.hands,
        failures=values.failures,
        duration=float(duration),
        usage=tuple((u.seat, u.cpu_ms, u.wall_ms) for u in game.usage),
    )
