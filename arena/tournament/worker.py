"""What a worker process does: keep bot processes alive, play one match spec, return its record.

Everything here is plain data or module-level functions, so it pickles by reference into
spawned worker processes (and into a remote executor later).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, BotSpec, Limits
from arena.harness.resources import ResourceLimits
from arena.match.record import FailurePolicy, GameRecord, derive_row_values
from arena.match.referee import play_match
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import Summary, WorkerPlan
from arena.tournament.failures import failure_notes
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import MatchRow


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
    limits = {
        k: v for k, v in (("startup_ms", bot.startup_ms), ("move_ms", bot.move_ms), ("bank_ms", bot.bank_ms)) if v is not None
    }
    return BotSpec(name=bot.name, cmd=bot.resolved_cmd(python), cwd=bot.resolved_cwd, env=bot.env, limits=Limits(**limits),
                   resources=ResourceLimits.from_dict(dict(bot.limits)), hidden=hidden)


def make_job(config: TournamentConfig, *, python: str, logs_dir: str | None) -> Job:
    hidden = config.secrets
    return Job(
        rules=config.rules.to_dict(),
        seating=config.seating.to_dict(),
        bots=tuple((bot.name, bot_spec(bot, python, hidden)) for bot in config.bots),
        policy=config.failures,
        logs_dir=logs_dir,
    )


def worker_plan(config: TournamentConfig, *, python: str, logs_dir: str | None) -> WorkerPlan:
    return WorkerPlan(make_job(config, python=python, logs_dir=logs_dir), open_state, play, close_state, summarize)


def summarize(spec: MatchSpec, played: dict[str, Any], duration: float) -> Summary:
    """The row, the record's JSON, the bots' ready names and the failures' details of a
    played match (what ``play`` returned; a bare record dict is taken as well)."""
    record_dict = played["record"] if "record" in played else played
    ready = tuple(name if isinstance(name, str) else None for name in played.get("ready", ()))
    record = GameRecord.from_dict(record_dict)
    return Summary(
        row=row_from_record(spec, record, duration),
        record_json=json.dumps(record_dict, separators=(",", ":")),
        ready=ready,
        failures=failure_notes(record),
    )


@dataclass
class WorkerState:
    """A worker's live bot processes: one per (bot, copy), copies for teams of clones."""

    worker_id: str
    procs: dict[tuple[str, int], BotProcess] = field(default_factory=dict)


def open_state(job: Job, worker_id: str) -> WorkerState:
    if job.logs_dir is not None:
        os.makedirs(job.logs_dir, exist_ok=True)
    return WorkerState(worker_id)


def close_state(state: WorkerState) -> None:
    for proc in state.procs.values():
        proc.close()
    state.procs.clear()


def play(job: Job, spec: MatchSpec, state: WorkerState) -> dict[str, Any]:
    """One match: ``{"record": the record's dict, "ready": the name each seat's bot gave in
    its ready reply this match (None: no name, or no handshake)}``. Bots stay up for the
    next match; the referee restarts any that died."""
    bots = []
    copies: dict[str, int] = {}
    for name in spec.seats:
        copy = copies.get(name, 0)
        copies[name] = copy + 1
        proc = state.procs.get((name, copy))
        if proc is None:
            proc = BotProcess(job.bot(name), stderr_dir=job.logs_dir)
            state.procs[name, copy] = proc
        # Set again by this match's handshake: a name left from an earlier match must not
        # vouch for a process that never answered this one.
        proc.ready_name = None
        bots.append(proc)
    record = play_match(
        bots,
        Rules.from_dict(job.rules),
        Seating.from_dict(job.seating),
        spec.seed,
        job.policy,
    )
    return {"record": record.to_dict(), "ready": [proc.ready_name for proc in bots]}


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
