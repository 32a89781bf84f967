"""Run a tournament: schedule, skip what the store already holds, play the rest, store each result.

The parent process is the only writer of the store; workers only play. Each finished match
is written the moment it arrives (those that arrive together in one transaction), so an
interrupted run (Ctrl-C, kill -9, power cut) loses at most the matches that were still being
played or waiting to be written, and running again plays exactly those.

A run never holds the whole schedule or every stored row: the schedule is generated as
workers become free, and what is already stored is one byte per match of the schedule.

Results belong to the bots that played them. Before a resume plays anything, each bot's
identity (identity.py: what it runs) is compared with the one stored with the results. A
changed bot joins the tournament as a new version (versions.py): its old results are kept,
and the new version plays its own schedule on the same deals. Where versions cannot be told
apart in the schedule (a sequential test, fixed teams, an adaptive format) a changed bot is refused
(``BotChangedError``), as is, always, a bot whose ``ready`` name changes during the run:
another program answered under its name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from arena.errors import ArenaError
from arena.harness.botproc import CommandCannotStartError
from arena.harness.resources import ResourceLimits
from arena.safe_files import make_folder
from arena.tournament.config import SPELLING_KEYS, TournamentConfig
from arena.tournament.executors import Completed, Executor, InlineExecutor, LocalExecutor, Wait, core_shares, own_cores
from arena.tournament.identity import BotIdentity, bot_name, identify_bot, identity_changes
from arena.tournament.schedule import Format, MatchSpec, build_schedule, iter_schedule
from arena.tournament.store import MatchRow, ResultStore, StoreError
from arena.tournament.versions import Versions, can_version, coverage, generation_config, pending, version_refusal

LOGS_DIR = "logs"


class BotChangedError(StoreError):
    """The stored results were played by another version of a bot (its files, command, build
    or commit differ, or another program answered under its name): a resume would mix two
    programs under one name."""

    def __init__(self, folder: str, bot: str, changes: list[str], *, during_run: bool = False,
                 way_out: str | None = None) -> None:
        self.folder = folder
        self.bot = bot
        self.changes = changes
        what = "answered differently during this run" if during_run else "changed since its results were stored"
        way_out = way_out or (
            f"to start afresh, delete {folder} or use a new folder (--output DIR); to keep both versions, "
            "give the new one its own name in the file and use a new folder")
        super().__init__(
            f"bot {bot!r} {what}: {'; '.join(changes)}. The results in {folder} belong to the bot that played "
            f"them: {way_out}"
        )


@dataclass(frozen=True)
class RunPlan:
    """What a run will do: how many matches the schedule has, which are stored already
    (``stored[index]`` is 1), and the rest, generated on demand (``pending``)."""

    config: TournamentConfig
    total: int
    done: int
    stored: bytes
    # A folder where a bot changed (versions.py): ``stored`` is then indexed by the file's
    # schedule and says which of the current generation's matches a stored one covers.
    versions: Versions = field(default_factory=Versions)

    @property
    def to_play(self) -> int:
        return self.total - self.done

    @property
    def run_config(self) -> TournamentConfig:
        """The tournament as its workers play it: each bot under its current entrant name."""
        return generation_config(self.config, self.versions)

    @property
    def pending(self) -> Iterator[MatchSpec]:
        """The matches still to play, in schedule order, one at a time."""
        stored = self.stored
        if self.versions.current:
            return pending(self.config, self.versions, stored)
        return (spec for spec in iter_schedule(self.config) if not stored[spec.index])

    def is_stored(self, spec: MatchSpec) -> bool:
        index = spec.index % len(self.stored) if self.versions.current and self.stored else spec.index
        return index < len(self.stored) and bool(self.stored[index])

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



def open_store(config: TournamentConfig, *, draft: bool = False) -> ResultStore:
    """The run's store: created, or reopened for a resume (refused if the file changed; a
    ladder may have gained bots, ``adaptive.open_ladder_store``). A ``draft`` is the existing
    store as the run would find it after these steps, written nowhere (``arena run --dry-run``)."""
    if config.format is Format.LADDER:
        from arena.tournament.adaptive import open_ladder_store

        return open_ladder_store(config, draft=draft)
    return ResultStore.open_for_run(config.output, config.fingerprint, config.game_dict(), config.to_dict(), draft=draft)


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
    versions = Versions(store.generations())
    if versions.current:
        keys.close()
        return _plan_versions(config, store, versions)
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


def _plan_versions(config: TournamentConfig, store: ResultStore, versions: Versions) -> RunPlan:
    """``plan_run`` of a folder where bots changed (versions.py ``coverage``)."""
    keys = store.stored_keys()
    try:
        done, covered = coverage(config, versions, keys, lambda match_id: _not_in_schedule(store, match_id))
    finally:
        keys.close()
    return RunPlan(config, done + len(covered) - sum(covered), done, covered, versions)


def plan_strategy(config: TournamentConfig, store: ResultStore) -> Strategy:
    """The run's strategy, from what the store holds: ``plan_run``'s plan, played whole, or for
    format sprt the sequential test it leaves (``SprtRun.resume`` reads the stored rows), or for
    swiss, ladder and knockout the choices the stored rows replay (``AdaptiveRun.resume``)."""
    if config.format.adaptive:
        from arena.tournament.adaptive import AdaptiveRun

        # A ladder's changed bots play as their current versions (versions.py), joined to its field.
        return AdaptiveRun.resume(generation_config(config, Versions(store.generations())), store)
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
    return LocalExecutor(plan, concurrency, shares=worker_cores(config, concurrency))


def worker_cores(config: TournamentConfig, concurrency: int) -> list[frozenset[int]] | None:
    """The cores each of the run's ``concurrency`` local workers is held to, with its bots
    (``executors.core_shares``), or None: ``pin_workers: false``, or nothing to share out."""
    if not config.pin_workers:
        return None
    # A share must hold the most CPUs any bot may use at once (its ``cpus`` limit).
    widest = max((ResourceLimits.from_dict(dict(bot.limits)).cpus for bot in config.bots), default=1)
    return core_shares(concurrency, own_cores(), widest)


# --- identities ------------------------------------------------------------------------------


def identify_bots(config: TournamentConfig) -> dict[str, BotIdentity]:
    """Each bot's identity as its files are now. Give the config ``run_builds`` returned:
    its bots from a revision are checked out, with their commit known."""
    return {bot.name: identify_bot(bot) for bot in config.bots}


@dataclass(frozen=True)
class IdentityCheck:
    """What ``check_identities`` found: a note for the user (a store whose identities were not
    recorded), and a line per bot that joins as a new version."""

    note: str | None = None
    new_versions: tuple[str, ...] = ()
    respelled: tuple[str, ...] = ()  # a line per bot whose command the file spells anew, the same program
    raised_limit: str | None = None  # a sequential test's pair limit, raised


def check_identities(store: ResultStore, identities: Mapping[str, BotIdentity], config: TournamentConfig) -> IdentityCheck:
    """Compare the bots with the ones that played the stored matches, then record the
    identities. A changed bot becomes a new version (versions.py), recorded with a new
    generation; where versions cannot be played apart, it is refused (``BotChangedError``).
    A bot changed back to a version the folder holds plays as that version again.

    A sequential test's raised pair limit (``store.raised_limit``) is recorded once they pass:
    a run refused for a changed bot leaves the folder's description as it was."""
    checked = _check_identities(store, identities, config)
    if store.raised_limit is None:
        return checked
    before, after = store.raised_limit
    store.redescribe(config.fingerprint, config.game_dict(), config.to_dict(), {})
    store.raised_limit = None
    line = (f"sprt.max_pairs raised from {before if before is not None else 'no limit'} to "
            f"{after if after is not None else 'no limit'}: the pairs stored are the test's first, and it goes on "
            "from them while undecided")
    return replace(checked, raised_limit=line)


def _check_identities(store: ResultStore, identities: Mapping[str, BotIdentity], config: TournamentConfig) -> IdentityCheck:
    recorded = store.identities()
    count = store.count()
    versions = Versions(store.generations())
    has_played = _Played(store).bot
    if store.respelled and count and (recorded is None or config.format.adaptive) and any(
            has_played(name) for name in store.respelled):
        # Without identities the arena cannot tell the same program; an adaptive format's
        # choices are not re-examined here: the file's change is refused as any other.
        from arena.tournament.store import ResumeMismatchError

        raise ResumeMismatchError(store.folder, [f"bots.{name}.cmd" for name in store.respelled])
    if recorded is None:
        named = {name: identity for name, identity in identities.items()}
        if named:
            store.set_identities(named)
        if not count:
            return IdentityCheck(respelled=_respell(store, config, set()))
        return IdentityCheck(
            f"the bots' identities were not recorded with the {count} matches in {store.folder} (an earlier "
            "version of the arena); they are taken as played by these bots, and recorded from now on")
    current = dict(recorded)
    generation = {bot.name: versions.entrant(bot.name) for bot in config.bots if versions.entrant(bot.name) != bot.name}
    lines: list[str] = []
    unplayed: list[str] = []  # a note per changed bot that never played here: no version of its own
    noted: set[str] = set()  # the bots those lines and notes are about (no respelling note for them)
    joined: list[str] = []  # the entrants the changed bots play as from now on
    for bot in config.bots:
        identity = identities.get(bot.name)
        if identity is None:
            continue
        entrant = versions.entrant(bot.name)
        old = recorded.get(entrant)
        if old is None or not count:
            current[entrant] = replace(identity, name=entrant)
            continue
        # Recorded by an older arena: its key is recomputed from the file's settings (the
        # fingerprint already held them unchanged), so an unchanged bot stays itself.
        old = old.fill_from(bot)
        changes = identity_changes(old, identity)
        if not changes:
            current[entrant] = replace(identity, name=entrant).with_ready_name(old.ready_name)
            continue
        if not has_played(bot.name):
            # No stored match is its (a command that could not start stopped its first one):
            # nothing to keep apart, so it is the bot the file now describes.
            current[entrant] = replace(identity, name=entrant)
            noted.add(bot.name)
            unplayed.append(f"{bot.name}: changed before it played a match here ({'; '.join(changes)}): it plays "
                            "as it is now, no version of its own")
            continue
        if not can_version(config):
            raise BotChangedError(store.folder, bot.name, changes, way_out=version_refusal(config, store.folder))
        earlier = [name for name, known in recorded.items()
                   if name != entrant and bot_name(name) == bot.name and known.fill_from(bot).key == identity.key]
        new = earlier[0] if earlier else versions.next_entrant(bot.name)
        if not earlier:
            current[new] = replace(identity, name=new)
        joined.append(new)
        generation[bot.name] = new
        if new == bot.name:
            del generation[bot.name]
        then = "it plays as that version again" if earlier else (
            "the new version joins the ladder as a newcomer, from its next pairing" if config.format is Format.LADDER
            else "the new version plays its own schedule against the field, on the same deals")
        noted.add(bot.name)
        lines.append(f"{bot.name} has a new version ({'; '.join(changes)}): the results of {old.label} are kept, and {then}")
    if lines:
        store.add_generation(generation, current, _ladder_joins(store, config, joined))
    elif recorded != current:
        store.set_identities(current)
    return IdentityCheck(None, tuple(lines), (*_respell(store, config, noted), *unplayed))


def _respell(store: ResultStore, config: TournamentConfig, changed: set[str]) -> tuple[str, ...]:
    """Record the file's new spelling of its bots' commands (``store.respelled``), once their
    identities are checked; a line for each that runs the same program as before."""
    if not store.respelled:
        return ()
    before = {bot.get("name"): bot for bot in (store.meta().get("game") or {}).get("bots", []) if isinstance(bot, dict)}
    store.redescribe(config.fingerprint, config.game_dict(), config.to_dict(), {})
    lines = []
    for name in store.respelled:
        if name in changed:
            continue
        old, new = before.get(name, {}), config.bot(name)
        described = new.to_dict()
        # Each key that changed, said as what it is: cmd and cwd spell the command, inputs name
        # the files the program is made of.
        changed_keys = [key for key in SPELLING_KEYS if old.get(key) != described.get(key)]
        shown = {"cmd": new.cmd, "cwd": new.cwd}
        spelled = "; ".join(f"{key} {old.get(key)!r} -> {shown.get(key, described.get(key))!r}" for key in changed_keys)
        what = [w for w, keys in (("spells its command anew", ("cmd", "cwd")), ("names its inputs anew", ("inputs",)))
                if any(key in changed_keys for key in keys)] or ["spells its command anew"]
        lines.append(f"{name}: the file {' and '.join(what)}" + (f" ({spelled})" if spelled else "")
                     + " for the same program (its identity): its results stand")
    store.respelled = ()
    return tuple(lines)


def _ladder_joins(store: ResultStore, config: TournamentConfig, joined: list[str]) -> dict[str, Any]:
    """A ladder's new versions join its field as newcomers (adaptive.py ``version_joins``):
    the meta that says from when, recorded with the new generation."""
    if config.format is not Format.LADDER:
        return {}
    from arena.tournament.adaptive import FIELD_KEY, version_joins

    try:
        return {FIELD_KEY: version_joins(config, store, joined)}
    except ValueError as exc:
        raise StoreError(f"{store.folder}: a ladder's changed bot cannot join yet: {exc}") from None


class ReadyNames:
    """Watches the name each bot gives in its ``ready`` reply, match after match: the first
    one is recorded with the bot's identity. A different one later is another program only if
    the program's files say so (``identify``, the identity as they are now): the name is the
    bot's to give, and a bot that gives another one at will must not stop the run; it keeps its
    first name, and ``notes`` says so once per bot."""

    def __init__(self, store: ResultStore, identities: Mapping[str, BotIdentity],
                 identify: Callable[[str], BotIdentity | None] | None = None) -> None:
        self._store = store
        self.identities = dict(identities)
        self._identify = identify
        self.notes: dict[str, str] = {}

    def check(self, completed: Completed) -> None:
        """Raises ``BotChangedError`` before the match is stored when a name changed and the
        program did (or cannot be checked)."""
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
                said = f"its ready name changed ({identity.ready_name!r} -> {ready!r}) in match {completed.row.id}"
                changes = self._program_changes(bot, identity)
                if changes == []:
                    self.notes.setdefault(bot, f"{bot}: {said}, its program unchanged (its identity): its results "
                                               f"stand, under its first name")
                    continue
                raise BotChangedError(
                    self._store.folder, bot,
                    [f"{said}: another program answered under its name", *(changes or ())],
                    during_run=True,
                )
        if changed:
            self._store.set_identities(self.identities)

    def _program_changes(self, bot: str, recorded: BotIdentity) -> list[str] | None:
        """How the bot's program differs now from the one recorded, in words (empty: the same
        program); None when that cannot be told."""
        if self._identify is None:
            return None
        try:
            now = self._identify(bot)
        except ArenaError:  # its files cannot be read as a program now: changed
            return None
        if now is None or recorded.env is None:
            return None
        return identity_changes(recorded, now)


def identify_now(config: TournamentConfig) -> Callable[[str], BotIdentity | None]:
    """An entrant's identity as its files are now (``ReadyNames``): the bot of that name in
    ``config``, or of its base name for a version (``mybot~2``); None for one it does not hold."""
    bots = {bot.name: bot for bot in config.bots}

    def now(entrant: str) -> BotIdentity | None:
        bot = bots.get(entrant) or bots.get(bot_name(entrant))
        return None if bot is None else identify_bot(bot)

    return now


# --- playing -----------------------------------------------------------------------------------


def cannot_start(completed: Completed, has_played: Callable[[str], bool]) -> CommandCannotStartError | None:
    """The error of a match in which a bot's command could not start (botproc ``StartFailure``),
    naming the bot as the file does; None for a bot that ``has_played`` a stored match: its
    command started then, so a "not found" now is its own doing (a bot may print one and exit),
    a failure recorded with the match, never a reason to stop the run."""
    for seat, failure in enumerate(completed.cannot_start):
        if failure is not None and seat < len(completed.row.seats) and not has_played(completed.row.seats[seat]):
            return CommandCannotStartError(bot_name(completed.row.seats[seat]), failure)
    return None


class _Played:
    """Which entrants (a version of a bot is one of its own) a stored match seats: read from the
    store when first asked (rare: a "cannot start", a bot changed), then kept up to date as
    matches are stored."""

    def __init__(self, store: ResultStore) -> None:
        self._store = store
        self._names: set[str] | None = None

    def _entrants(self) -> set[str]:
        if self._names is None:
            self._names = {name for _, _, _, seats in self._store.stored_keys() for name in seats}
        return self._names

    def __call__(self, entrant: str) -> bool:
        return entrant in self._entrants()

    def bot(self, name: str) -> bool:
        """Whether any version of the bot ``name`` (the file's name) played."""
        return any(bot_name(entrant) == name for entrant in self._entrants())

    def stored(self, completed: Completed) -> None:
        if self._names is not None:
            self._names.update(completed.row.seats)


def play(
    store: ResultStore,
    plan: Strategy,
    executor: Executor,
    on_match: Callable[[MatchRow, int], None] | None = None,
    *,
    on_completed: Callable[[Completed, int], None] | None = None,
    ready_names: ReadyNames | None = None,
) -> int:
    """Play the strategy's pending matches; store each as it finishes (those that finish
    together in one transaction). Returns how many were played.

    The strategy, then ``on_completed(completed, done)`` and ``on_match(row, done)``, are told
    of each match after it is durably stored; ``ready_names`` checks its ready names before
    (a match it refuses is not stored, those before it in its batch are). A match in which a
    bot's command could not start is refused the same way (``CommandCannotStartError``): the
    file is at fault, not the bot, and once it is fixed the run resumes.
    """
    done = plan.done
    played = 0
    has_played = _Played(store)
    with executor:
        for batch in executor.run_batches(plan.pending):
            checked: list[Completed] = []
            refused: BotChangedError | CommandCannotStartError | None = None
            for completed in batch:
                refused = cannot_start(completed, has_played)
                if refused is not None:
                    break
                if ready_names is not None:
                    try:
                        ready_names.check(completed)
                    except BotChangedError as exc:
                        refused = exc
                        break
                checked.append(completed)
            store.add_many([(completed.row, completed.record_json) for completed in checked])
            for completed in checked:
                has_played.stored(completed)
                done += 1
                played += 1
                plan.on_completed(completed, done)
                if on_completed is not None:
                    on_completed(completed, done)
                if on_match is not None:
                    on_match(completed.row, done)
            if refused is not None:
                raise refused
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
        check_identities(store, identities, config)
        strategy = plan_strategy(config, store)
        run_config = strategy.run_config if isinstance(strategy, RunPlan) else config
        if executor is None:
            executor = make_executor(run_config, concurrency or config.concurrency)
        ready = ReadyNames(store, store.identities() or identities, identify_now(config))
        played = play(store, strategy, executor, on_match, ready_names=ready) if strategy.has_work else 0
        return {**strategy.outcome(store), "played": played, "folder": config.output}


__all__ = [
    "BotChangedError",
    "Completed",
    "IdentityCheck",
    "LOGS_DIR",
    "ReadyNames",
    "identify_now",
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
