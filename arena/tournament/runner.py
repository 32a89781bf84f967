"""Run a tournament: schedule, skip what the store already holds, play the rest, store each result.

The parent process is the only writer of the store; workers only play. Each finished match
is written the moment it arrives, in its own transaction, so an interrupted run (Ctrl-C,
kill -9, power cut) loses at most the matches that were still being played, and running
again plays exactly those.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.safe_files import make_folder
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import Completed, Executor, InlineExecutor, LocalExecutor
from arena.tournament.schedule import MatchSpec, build_schedule
from arena.tournament.store import MatchRow, ResultStore, StoreError

LOGS_DIR = "logs"


@dataclass(frozen=True)
class RunPlan:
    """What a run will do: the whole schedule and the part of it still to play."""

    schedule: tuple[MatchSpec, ...]
    pending: tuple[MatchSpec, ...]

    @property
    def total(self) -> int:
        return len(self.schedule)

    @property
    def done(self) -> int:
        return len(self.schedule) - len(self.pending)


def open_store(config: TournamentConfig) -> ResultStore:
    """The run's store: created, or reopened for a resume (refused if the file changed)."""
    return ResultStore.open_for_run(config.output, config.fingerprint, config.game_dict(), config.to_dict())


def plan_run(config: TournamentConfig, store: ResultStore) -> RunPlan:
    schedule = build_schedule(config)
    by_id = {spec.id: spec for spec in schedule}
    stored = store.results()
    for row in stored:
        spec = by_id.get(row.id)
        # The fingerprint already matched; this catches a store edited by hand or a bug.
        if spec is None or spec.seed != row.seed or spec.seats != row.seats:
            raise StoreError(f"{store.folder}: stored match {row.id!r} is not in this schedule; use a new output folder")
    done = {row.id for row in stored}
    return RunPlan(schedule, tuple(spec for spec in schedule if spec.id not in done))


def make_executor(config: TournamentConfig, concurrency: int, *, python: str | None = None, inline: bool = False) -> Executor:
    from arena.tournament import worker

    logs_dir = os.path.join(config.output, LOGS_DIR)
    make_folder(logs_dir)  # a link planted as logs/ is refused here, before any bot runs
    plan = worker.worker_plan(config, python=python or sys.executable, logs_dir=logs_dir)
    if inline:
        return InlineExecutor(plan)
    return LocalExecutor(plan, concurrency)


def play(
    store: ResultStore,
    plan: RunPlan,
    executor: Executor,
    on_match: Callable[[MatchRow, int], None] | None = None,
) -> int:
    """Play the pending matches; store each as it finishes. Returns how many were played.

    ``on_match(row, done)`` is called after each row is durably stored.
    """
    done = plan.done
    played = 0
    with executor:
        for completed in executor.run(plan.pending):
            row = completed.row
            store.add(row, completed.record_json)
            done += 1
            played += 1
            if on_match is not None:
                on_match(row, done)
    return played


def run_tournament(
    config: TournamentConfig,
    *,
    concurrency: int | None = None,
    executor: Executor | None = None,
    on_match: Callable[[MatchRow, int], None] | None = None,
) -> dict[str, Any]:
    """Everything at once (library and tests): returns {"total", "played", "folder"}."""
    with open_store(config) as store:
        plan = plan_run(config, store)
        if executor is None:
            executor = make_executor(config, concurrency or config.concurrency)
        played = play(store, plan, executor, on_match)
        return {"total": plan.total, "played": played, "folder": config.output}


__all__ = ["Completed", "RunPlan", "open_store", "plan_run", "make_executor", "play", "run_tournament", "LOGS_DIR"]
