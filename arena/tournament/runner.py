"""Run a tournament: schedule, skip what the store already holds, play the rest, store each result.

The parent process is the only writer of the store; workers only play. Each finished match
is written the moment it arrives, in its own transaction, so an interrupted run (Ctrl-C,
kill -9, power cut) loses at most the matches that were still being played, and running
again plays exactly those.

A run never holds the whole schedule or every stored row: the schedule is generated as
workers become free, and what is already stored is one byte per match of the schedule.

Results belong to the bots that played them. Before a resume plays anything, each bot's
identity (identity.py: its command, the hashes of the files it runs, its build inputs, its
commit) is compared with the one stored with the results, and a changed bot is refused
(``BotChangedError``), as is a bot whose ``ready`` name changes during the run: another
program answered under its name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from arena.safe_files import make_folder
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import Completed, Executor, InlineExecutor, LocalExecutor, Wait
from arena.tournament.identity import BotIdentity, identify_bot, identity_changes
from arena.tournament.schedule import Format, MatchSpec, build_schedule, iter_schedule
from arena.tournament.store import MatchRow, ResultStore, StoreError

LOGS_DIR = "logs"


class BotChangedError(StoreError):
    """The stored results were played by another version of a bot (its files, command, build
    or commit differ, or another program answered under its name): a resume would mix two
    programs under one name."""

    def __init__(self, folder: str, bot: str, changes: list[str], *, during_run: bool = False) -> None:
        self.folder = folder
        self.bot = bot
        self.changes = changes
        what = "answered differently during this run" if during_run else "changed since its results were stored"
        super().__init__(
            f"bot {bot!r} {what}: {'; '.join(changes)}. The results in {folder} belong to the bot that played "
            f"them: to start afresh, delete {folder} or use a new folder (--output DIR); to keep both versions, "
            "give the new one its own name in the file and use a new folder"
        )


@dataclass(frozen=True)
class RunPlan:
    """What a run will do: how many matches the schedule has, which are stored already
    (``stored[index]`` is 1), and the rest, generated on demand (``pending``)."""

    config: TournamentConfig
    total: int
    done: int
    stored: bytes

    @property
    def to_play(self) -> int:
        return self.total - self.done

    @property
    def pending(self) -> Iterator[MatchSpec]:
        """The matches still to play, in schedule order, one at a time."""
        stored = self.stored
        return (spec for spec in iter_schedule(self.config) if not stored[spec.index])

    def is_stored(self, spec: MatchSpec) -> bool:
        return spec.index < len(self.stored) and bool(self.stored[spec.index])

    # -- as a Strategy: the whole schedule --

    @property
    def has_work(self) -> bool:
        return self.to_play > 0

    def on_completed(self, completed: Completed, done: int) -> None:
        pass  # the schedule is fixed: a result changes nothing of what is played

    def outcome(self, store: ResultStore) -> dict[str, Any]:
        return {"total": self.total}


class Strategy(Protocol):
    """Which matches a run plays and when it stops: the whole schedule (``RunPlan``), or a
    sequential test that stops when it has decided (``sprt_run.SprtRun``). ``plan_strategy``
    picks it from the file's format; ``play`` feeds it every stored match."""

    @property
    def done(self) -> int:
        """Matches stored before this run."""

    @property
    def total(self) -> int | None:
        """The matches the run will have stored at its end, or None when results decide it."""

    @property
    def has_work(self) -> bool:
        """Whether any match is left to play."""

    @property
    def pending(self) -> Iterator[MatchSpec | Wait]:
        """The matches to play, in schedule order, generated as they are asked for; ``NOT_YET``
        while the next one follows from results still in play (an adaptive format)."""

    def on_completed(self, completed: Completed, done: int) -> None:
        """Told of every match as it is stored, before the caller's callbacks."""

    def outcome(self, store: ResultStore) -> dict[str, Any]:
        """What ``run_tournament`` returns of the run beyond what it played: "total"; a
        sequential test adds "sprt", its ``SprtSummary``."""



def open_store(config: TournamentConfig) -> ResultStore:
    """The run's store: created, or reopened for a resume (refused if the file changed; a
    ladder may have gained bots, ``adaptive.open_ladder_store``)."""
    if config.format is Format.LADDER:
        from arena.tournament.adaptive import open_ladder_store

        return open_ladder_store(config)
    return ResultStore.open_for_run(config.output, config.fingerprint, config.game_dict(), config.to_dict())


def plan_run(config: TournamentConfig, store: ResultStore) -> RunPlan:
    """Walk the schedule and the stored matches side by side (both in schedule order):
    every stored match must be the schedule's match of its index.

    A sequential test's schedule is open-ended: its plan ends with the last stored match
    (``total`` is how far the store reaches; sprt_run.py decides what is played next)."""
    stored = bytearray()
    keys = store.stored_keys()
    key = next(keys, None)
    done = 0
    open_ended = config.format is Format.SPRT
    try:
        for spec in iter_schedule(config):
            if open_ended and key is None:
                break
            here = 0
            if key is not None and key[0] <= spec.index:
                index, match_id, seed, seats = key
                # The fingerprint already matched; this catches a store edited by hand or a bug.
                if index != spec.index or match_id != spec.id or seed != spec.seed or seats != spec.seats:
                    raise _not_in_schedule(store, match_id)
                here = 1
                done += 1
                key = next(keys, None)
            stored.append(here)
        if key is not None:
            raise _not_in_schedule(store, key[1])
    finally:
        keys.close()  # its cursor is released now, whatever happened
    return RunPlan(config, len(stored), done, bytes(stored))


def plan_strategy(config: TournamentConfig, store: ResultStore) -> Strategy:
    """The run's strategy, from what the store holds: ``plan_run``'s plan, played whole, or for
    format sprt the sequential test it leaves (``SprtRun.resume`` reads the stored rows), or for
    swiss, ladder and knockout the choices the stored rows replay (``AdaptiveRun.resume``)."""
    if config.format.adaptive:
        from arena.tournament.adaptive import AdaptiveRun

        return AdaptiveRun.resume(config, store)
    plan = plan_run(config, store)
    if config.format is Format.SPRT:
        from arena.tournament.sprt_run import SprtRun

        return SprtRun.resume(config, store, plan)
    return plan


def _not_in_schedule(store: ResultStore, match_id: str) -> StoreError:
    return StoreError(f"{store.folder}: stored match {match_id!r} is not in this schedule; use a new output folder")


def make_executor(config: TournamentConfig, concurrency: int, *, python: str | None = None, inline: bool = False) -> Executor:
    from arena.tournament import worker

    logs_dir = os.path.join(config.output, LOGS_DIR)
    make_folder(logs_dir)  # a link planted as logs/ is refused here, before any bot runs
    plan = worker.worker_plan(config, python=python or sys.executable, logs_dir=logs_dir)
    if inline:
        return InlineExecutor(plan)
    return LocalExecutor(plan, concurrency)


# --- identities ------------------------------------------------------------------------------


def identify_bots(config: TournamentConfig) -> dict[str, BotIdentity]:
    """Each bot's identity as its files are now. Give the config ``run_builds`` returned:
    its bots from a revision are checked out, with their commit known."""
    return {bot.name: identify_bot(bot) for bot in config.bots}


def check_identities(store: ResultStore, identities: Mapping[str, BotIdentity]) -> str | None:
    """Refuse a resume whose bots are not the ones that played the stored matches
    (``BotChangedError``); then record the identities. Returns a note for the user when the
    store was written by an arena that did not record them (it is then trusted, once)."""
    recorded = store.identities()
    count = store.count()
    current = dict(identities)
    note = None
    if recorded is None:
        if count:
            note = (
                f"the bots' identities were not recorded with the {count} matches in {store.folder} (an earlier "
                "version of the arena); they are taken as played by these bots, and recorded from now on"
            )
    elif count:
        for name, identity in identities.items():
            old = recorded.get(name)
            if old is None:
                continue
            changes = identity_changes(old, identity)
            if changes:
                raise BotChangedError(store.folder, name, changes)
            current[name] = identity.with_ready_name(old.ready_name)
    if recorded != current:
        store.set_identities(current)
    return note


class ReadyNames:
    """Watches the name each bot gives in its ``ready`` reply, match after match: the first
    one is recorded with the bot's identity, a different one later is another program."""

    def __init__(self, store: ResultStore, identities: Mapping[str, BotIdentity]) -> None:
        self._store = store
        self.identities = dict(identities)

    def check(self, completed: Completed) -> None:
        """Raises ``BotChangedError`` before the match is stored when a name changed."""
        changed = False
        for seat, ready in enumerate(completed.ready):
            if ready is None or seat >= len(completed.row.seats):
                continue
            bot = completed.row.seats[seat]
            identity = self.identities.get(bot)
            if identity is None:
                continue
            if identity.ready_name is None:
                self.identities[bot] = identity.with_ready_name(ready)
                changed = True
            elif identity.ready_name != ready:
                raise BotChangedError(
                    self._store.folder, bot,
                    [f"its ready name changed ({identity.ready_name!r} -> {ready!r}) in match {completed.row.id}: "
                     "another program answered under its name"],
                    during_run=True,
                )
        if changed:
            self._store.set_identities(self.identities)


# --- playing -----------------------------------------------------------------------------------


def play(
    store: ResultStore,
    plan: Strategy,
    executor: Executor,
    on_match: Callable[[MatchRow, int], None] | None = None,
    *,
    on_completed: Callable[[Completed, int], None] | None = None,
    ready_names: ReadyNames | None = None,
) -> int:
    """Play the strategy's pending matches; store each as it finishes. Returns how many were
    played.

    The strategy, then ``on_completed(completed, done)`` and ``on_match(row, done)``, are told
    of each match after it is durably stored; ``ready_names`` checks its ready names before.
    """
    done = plan.done
    played = 0
    with executor:
        for completed in executor.run_stream(plan.pending):
            if ready_names is not None:
                ready_names.check(completed)
            row = completed.row
            store.add(row, completed.record_json)
            done += 1
            played += 1
            plan.on_completed(completed, done)
            if on_completed is not None:
                on_completed(completed, done)
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
    """Everything at once (library and tests): opens the store, builds the bots, checks their
    identities, plays what is not stored yet. Returns {"total", "played", "folder"}; for a
    sequential test also "sprt", the test's ``SprtSummary``, and "total" is the matches stored."""
    from arena.tournament.build import run_builds

    with open_store(config) as store:
        config = run_builds(config, os.path.join(config.output, LOGS_DIR), jobs=concurrency or config.concurrency).config
        identities = identify_bots(config)
        check_identities(store, identities)
        strategy = plan_strategy(config, store)
        if executor is None:
            executor = make_executor(config, concurrency or config.concurrency)
        ready = ReadyNames(store, store.identities() or identities)
        played = play(store, strategy, executor, on_match, ready_names=ready) if strategy.has_work else 0
        return {**strategy.outcome(store), "played": played, "folder": config.output}


__all__ = [
    "BotChangedError",
    "Completed",
    "LOGS_DIR",
    "ReadyNames",
    "RunPlan",
    "Strategy",
    "build_schedule",
    "check_identities",
    "identify_bots",
    "make_executor",
    "open_store",
    "plan_run",
    "plan_strategy",
    "play",
    "run_tournament",
]
