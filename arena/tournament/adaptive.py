"""The adaptive formats played: swiss, ladder and knockout, whose pairings follow from the
results (pairing.py chooses them; this module decides when, and what each choice may see).

Determinism at any concurrency. Choices come in batches (a swiss or knockout round; one
pairing of a ladder), numbered in order. Batch ``b`` is chosen from the results of the
batches before ``b - lag`` and from nothing else: a round waits for the round before it
(lag 0); a ladder chooses pairing ``k`` from the pairings before ``k - window``, so up to
``window`` pairings are in play while it chooses the next one. The results come back in
any order; ``InOrder`` (the sequential test's book, inorder.py) hands them to the chooser in
pairing order, and only as far as the next choice may see. So the same seed and the same
results give the same schedule whatever the concurrency and whichever match finishes first;
the file's ``window`` is part of the tournament, the concurrency is not.

When no choice may be made yet (its results are still in play), ``AdaptiveRun.pending``
gives ``NOT_YET``: the executor asks again when a match finishes (executors.py). A pairing
is numbered ``k``: it plays deals ``k * D .. k * D + D - 1`` (``D`` deals of the pairing, each
once per seat rotation with duplicate deals) as matches ``k * M ..`` (``M`` matches per
pairing), so a match's id and place are known the moment its pairing is chosen.

Resume, and every reader of the store, replay the choices from the stored rows in schedule
order (``Replay``): each stored row must be the match the choices give at its place, and the
matches chosen but not stored (in play when the run stopped) are played first on resume.
The store stays the one source of truth: no choice is stored, they are recomputed.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from arena.tournament.config import TournamentConfig
from arena.tournament.executors import NOT_YET, Completed, Wait
from arena.tournament.identity import bot_name
from arena.tournament.inorder import InOrder
from arena.tournament.pairing import Chooser, KnockoutChooser, LadderChooser, LadderRule, Pairing, SwissChooser
from arena.tournament.schedule import Format, MatchSpec, Mode, Side, TeamMode, deal_specs, entrants, most_matches
from arena.tournament.store import MatchRow, ResultStore, StoreDamagedError

# Ladder newcomers: the meta key of the field's history, [[first pairing, [labels joining]], ...].
FIELD_KEY = "field"
# The meta key of a ladder's rule (pairing.LadderRule's value): "spread-refit" since 2026-12-06,
# "density" before ("refit" in the 2026-12-05 build that refitted at once). A ladder store
# without it was begun before any of them: its choices replay, and go on, by the widest interval
# first. So every ladder folder still resumes and reads by its own rule.
FOCUS_KEY = "ladder_focus"


def chooser_for(config: TournamentConfig, field: Sequence[Side], *, rule: LadderRule = LadderRule.SPREAD) -> Chooser:
    size = config.sides
    if config.format is Format.SWISS:
        return SwissChooser(field, size, config.rounds or 0, config.seating)
    if config.format is Format.LADDER:
        return LadderChooser(field, size, config.seating, lag=config.window or 0, per_pairing=config.matches_per_pairing,
                             max_matches=config.max_matches, target_ci=config.target_ci,
                             rule=rule)
    if config.format is Format.KNOCKOUT:
        by_label = {side.label: side for side in field}
        return KnockoutChooser([by_label[label] for label in config.seeding], config.seating)
    raise ValueError(f"format {config.format} is not adaptive")


Epochs = Sequence[tuple[int, Sequence[str]]]


class AdaptiveSchedule:
    """The choices, batch after batch, each from what it may see (the module's docstring).
    ``add`` takes any match of a chosen pairing, in any order; ``next_batch`` gives the next
    batch's matches, ``NOT_YET`` while its results are in play, None once the format is over.
    ``epochs``: the field's history (a ladder that bots joined), first pairing -> labels."""

    def __init__(self, config: TournamentConfig, epochs: Epochs | None = None, *,
                 rule: LadderRule = LadderRule.SPREAD) -> None:
        self.config = config
        pool = {side.label: side for side in entrants(config)}
        history = list(epochs) if epochs else [(0, list(pool))]

        def side(label: str) -> Side:
            # A version of a changed bot (versions.py) that the file does not name: ``mybot~2``
            # under the file's names, or the old ``mybot`` under the current versions' names.
            if label in pool:
                return pool[label]
            if config.mode is not Mode.SINGLE or bot_name(label) not in {bot_name(name) for name in pool}:
                raise StoreDamagedError(f"{config.output}: the ladder's field names {label!r}, not a bot of the file")
            return Side(label, (label,))

        self._joining = deque((first, [side(label) for label in labels]) for first, labels in history[1:])
        self._field = list(history[0][1])
        self.chooser = chooser_for(config, [side(label) for label in history[0][1]], rule=rule)
        self.per = config.matches_per_pairing
        self.deals = self.per // (config.sides if config.duplicate else 1)
        self.book: InOrder[MatchRow] = InOrder(self.per)
        self.open: deque[list[tuple[int, Pairing]]] = deque()  # chosen, not all learned
        self.chosen = 0  # batches
        self.learned = 0  # batches
        self._partial = 0  # pairings learned of the first open batch
        self.pairings = 0  # pairings chosen
        self.finished = False

    def add(self, row: MatchRow) -> None:
        """A stored match of a chosen pairing; ``StoreDamagedError`` for one counted already."""
        try:
            self.book.add(row.pairing, row.index - row.pairing * self.per, row)
        except ValueError as exc:
            raise StoreDamagedError(f"match {row.id!r}: {exc}") from None

    def next_batch(self, *, stored: bool = False) -> list[MatchSpec] | Wait | None:
        """``stored``: the batch is known to be played (a stored row is in it), so a ladder's
        stop, which the file may have moved since, does not end it."""
        if self.finished:
            return None
        while self.learned < self.chosen - self.chooser.lag:
            if not self._learn_first():
                return NOT_YET
        while self._joining and self._joining[0][0] <= self.pairings:
            joining = self._joining.popleft()[1]
            labels = {side.label for side in joining}
            # A changed bot's new version replaces its older ones in the field.
            versions = {bot_name(label) for label in labels}
            leaving = [label for label in self._field if label not in labels and bot_name(label) in versions]
            self._field = [label for label in self._field if label not in leaving]
            self._field += [label for label in labels if label not in self._field]
            self.chooser.grow(joining, leaving)
        batch = self.chooser.choose(stored=stored)
        if batch is None:
            self.finished = True
            return None
        numbered = list(enumerate(batch, start=self.pairings))
        self.open.append(numbered)
        self.chosen += 1
        self.pairings += len(batch)
        specs: list[MatchSpec] = []
        per_deal = self.per // self.deals
        for number, sides in numbered:
            for d in range(self.deals):
                specs += deal_specs(self.config, sides, pairing=number, deal=number * self.deals + d,
                                    index=number * self.per + d * per_deal, turn=d)
        return specs

    def _learn_first(self) -> bool:
        batch = self.open[0]
        while self._partial < len(batch):
            rows = self.book.pop()
            if rows is None:
                return False
            self.chooser.learn(batch[self._partial][1], rows)
            self._partial += 1
        self.open.popleft()
        self._partial = 0
        self.learned += 1
        return True


# What a ladder's file may change between runs besides adding bots: when it stops.
LADDER_MAY_CHANGE = ("bots", "max_matches", "target_ci")


def grown_field(config: TournamentConfig, store: ResultStore) -> Epochs | None:
    """The field's history when ``config`` is the ladder of ``store`` with bots added (or with
    its stop moved) since its results began: the newcomers join from the pairing after the
    last stored one. None when it is the same file, or another change (refused as usual)."""
    from arena.tournament.config import fingerprint_of, stored_game_dict

    if config.format is not Format.LADDER or config.team_mode is TeamMode.FIXED:
        return None
    stored = stored_game_dict(store.meta().get("game") or {})
    game = config.game_dict()
    if fingerprint_of(stored) == config.fingerprint:
        return None
    listed = stored.get("bots")
    old_bots: list[Any] = listed if isinstance(listed, list) else []
    new_bots = {bot["name"]: bot for bot in game["bots"]}
    kept = all(isinstance(bot, dict) and new_bots.get(bot.get("name")) == bot for bot in old_bots)
    same = {k: v for k, v in stored.items() if k not in LADDER_MAY_CHANGE} == {
        k: v for k, v in game.items() if k not in LADDER_MAY_CHANGE}
    if not (kept and same):
        return None
    old = [bot["name"] for bot in old_bots]
    epochs = [(first, list(labels)) for first, labels in stored_epochs(store) or [(0, old)]]
    joining = [name for name in new_bots if name not in old]
    if joining:
        epochs.append((store.last_index() // config.matches_per_pairing + 1, joining))
    return epochs


def version_joins(config: TournamentConfig, store: ResultStore, joining: Sequence[str]) -> list[list[Any]]:
    """The meta ``field`` of a ladder whose changed bots join as new versions (``joining``,
    their entrant names): from the pairing after the last stored one, each replacing its
    bot's older version. ``ValueError`` (the reason) when an older version has matches
    chosen before and not stored (a run stopped with them in play): the program that would
    play them is gone, and the choices after them follow from their results."""
    replay = stored_replay(config, store)
    for row in store.iter_rows():
        try:
            replay.add(row)
        except NotChosen as exc:
            raise StoreDamagedError(f"{store.path}: {exc.why}; use a new output folder") from None
    versions = {bot_name(label) for label in joining}
    unplayed = sorted({seat for spec in replay.rest() for seat in spec.seats if bot_name(seat) in versions})
    if unplayed:
        raise ValueError(f"{', '.join(unplayed)} had matches of the ladder in play when it stopped; run them with the "
                         "version that was chosen for them first")
    epochs = [[first, list(labels)] for first, labels in stored_epochs(store) or [(0, [s.label for s in entrants(config)])]]
    return [*epochs, [store.last_index() // config.matches_per_pairing + 1, list(joining)]]


def open_ladder_store(config: TournamentConfig, *, draft: bool = False) -> ResultStore:
    """A ladder's store, as ``runner.open_store`` opens any other, but for a file that added
    bots (or moved when the ladder stops) since its results began (``grown_field``): the
    stored matches are kept, the newcomers join the field from the next pairing on (recorded
    in the meta's ``field``), and the stored choices replay as they were made."""
    from arena.tournament.store import STORE_FILE

    game = config.game_dict()
    if os.path.isfile(os.path.join(config.output, STORE_FILE)):
        with ResultStore.open_existing(config.output) as existing:
            grows = grown_field(config, existing) is not None
            meta = existing.meta()
        if grows:
            store = ResultStore.open_for_run(config.output, meta["fingerprint"], meta["game"], meta["config"], draft=draft)
            try:
                epochs = grown_field(config, store)  # again, now that the folder is this run's
                if epochs is None:
                    raise StoreDamagedError(f"{store.path}: changed while it was opened")
                store.redescribe(config.fingerprint, game, config.to_dict(), {FIELD_KEY: [list(e) for e in epochs]})
            except BaseException:
                store.close()
                raise
            return store
    store = ResultStore.open_for_run(config.output, config.fingerprint, game, config.to_dict(), draft=draft)
    try:
        if FOCUS_KEY not in store.meta() and store.count() == 0:
            mark_focus(store)
    except BaseException:
        store.close()
        raise
    return store


def mark_focus(store: ResultStore, rule: LadderRule = LadderRule.SPREAD) -> None:
    """Record in a new ladder's store the rule its choices follow (this arena's, unless told)."""
    meta = store.meta()
    store.redescribe(meta["fingerprint"], meta["game"], meta["config"], {FOCUS_KEY: rule.value})


def stored_replay(config: TournamentConfig, store: ResultStore, epochs: Epochs | None = None) -> Replay:
    """The replay of a store's choices: its field's history (``epochs`` if given, else the
    stored one) and the rule its ladder was begun with (``stored_rule``)."""
    return Replay(config, epochs or stored_epochs(store), rule=stored_rule(store))


def stored_rule(store: ResultStore) -> LadderRule:
    """The rule a ladder's store was begun with (``FOCUS_KEY``; without it, the widest first)."""
    value = store.meta().get(FOCUS_KEY, LadderRule.WIDEST.value)
    try:
        return LadderRule(value)
    except ValueError:
        known = ", ".join(repr(rule.value) for rule in LadderRule if rule is not LadderRule.WIDEST)
        raise StoreDamagedError(f"{store.path}: meta {FOCUS_KEY!r}: expected one of {known} (a ladder begun by "
                                f"this arena or an earlier one), not {value!r}") from None


def stored_epochs(store: ResultStore) -> Epochs | None:
    """The field's history a ladder's store records (newcomers), or None: the file's field throughout."""
    value = store.meta().get(FIELD_KEY)
    if value is None:
        return None
    if not isinstance(value, list) or not all(
            isinstance(e, list) and len(e) == 2 and isinstance(e[0], int) and isinstance(e[1], list) for e in value):
        raise StoreDamagedError(f"{store.path}: meta {FIELD_KEY!r}: expected [[first pairing, [names]], ...]")
    return [(int(first), [str(x) for x in labels]) for first, labels in value]


class Replay:
    """The choices replayed from stored rows, given in schedule order: ``add`` checks each
    against the match chosen at its place (``NotChosen`` names the row that is not one) and
    returns that match; ``rest`` is every match chosen but not stored."""

    def __init__(self, config: TournamentConfig, epochs: Epochs | None = None, *,
                 rule: LadderRule = LadderRule.SPREAD) -> None:
        self.schedule = AdaptiveSchedule(config, epochs, rule=rule)
        self.upcoming: deque[MatchSpec] = deque()
        self.missing: list[MatchSpec] = []
        self.stored = 0

    def add(self, row: MatchRow) -> MatchSpec:
        while not self.upcoming or self.upcoming[-1].index < row.index:
            batch = self.schedule.next_batch(stored=True)
            if not isinstance(batch, list):
                why = "after the format ended" if batch is None else "before the results it follows from"
                raise NotChosen(row, f"match {row.id!r} is not in the tournament's schedule (stored {why})")
            self.upcoming.extend(batch)
        while self.upcoming[0].index < row.index:
            self.missing.append(self.upcoming.popleft())
        spec = self.upcoming.popleft()
        if spec.index != row.index or spec.id != row.id:
            raise NotChosen(row, f"match {row.id!r} is not in the tournament's schedule at place {row.index}")
        self.schedule.add(row)
        self.stored += 1
        return spec

    def rest(self) -> list[MatchSpec]:
        """The matches chosen and not stored, in schedule order (then the format goes on)."""
        out = [*self.missing, *self.upcoming]
        self.missing, self.upcoming = [], deque()
        return out


class NotChosen(Exception):
    def __init__(self, row: MatchRow, why: str) -> None:
        super().__init__(why)
        self.row = row
        self.why = why


class AdaptiveRun:
    """A run's strategy (``runner.Strategy``) for an adaptive format: first the matches chosen
    before and not stored, then each choice as the results allow it."""

    def __init__(self, config: TournamentConfig, replay: Replay) -> None:
        self.config = config
        self.schedule = replay.schedule
        self.to_play: deque[MatchSpec] = deque(replay.rest())
        self._done = replay.stored
        first = self.schedule.next_batch()
        if isinstance(first, list):
            self.to_play.extend(first)
        elif first is NOT_YET and not self.to_play:
            raise StoreDamagedError(f"{config.output}: the stored matches stop short of what they follow from")

    @classmethod
    def resume(cls, config: TournamentConfig, store: ResultStore, epochs: Epochs | None = None) -> AdaptiveRun:
        """The format as the stored rows leave it (read once, in schedule order); ``epochs``:
        the field's history, if not the stored one (a dry run of a ladder that bots join)."""
        replay = stored_replay(config, store, epochs)
        for row in store.iter_rows():
            try:
                replay.add(row)
            except NotChosen as exc:
                raise StoreDamagedError(f"{store.path}: {exc.why}; use a new output folder") from None
        return cls(config, replay)

    @property
    def done(self) -> int:
        return self._done

    @property
    def run_config(self) -> TournamentConfig:
        """The tournament as its workers play it (each bot under its current version's name)."""
        return self.config

    @property
    def total(self) -> int:
        """The most it plays (``most_matches``): a ladder with a ``target_ci`` may stop before."""
        return most_matches(self.config)

    @property
    def has_work(self) -> bool:
        return bool(self.to_play) or not self.schedule.finished

    @property
    def pending(self) -> Iterator[MatchSpec | Wait]:
        while True:
            if self.to_play:
                yield self.to_play.popleft()
                continue
            batch = self.schedule.next_batch()
            if batch is None:
                return
            if isinstance(batch, list):
                self.to_play.extend(batch)
            else:
                yield batch

    def on_completed(self, completed: Completed, done: int) -> None:
        self.schedule.add(completed.row)

    def outcome(self, store: ResultStore) -> dict[str, Any]:
        return {"total": store.count()}


def chosen_now(run: AdaptiveRun) -> list[MatchSpec]:
    """The matches ``run`` gives before it waits for a result (``arena run --dry-run``); the
    run is spent."""
    out: list[MatchSpec] = []
    for spec in run.pending:
        if not isinstance(spec, MatchSpec):
            break
        out.append(spec)
    return out


def champion(config: TournamentConfig, store: ResultStore) -> str | None:
    """A knockout's winner, from its stored matches; None while the bracket is not played out."""
    replay = replay_store(config, store)
    if replay.rest() or replay.schedule.next_batch() is not None:
        return None
    chooser = replay.schedule.chooser
    winner = chooser.champion if isinstance(chooser, KnockoutChooser) else None
    return None if winner is None else winner.label


def describe_format(config: TournamentConfig) -> str:
    """The format in a few words, for the run's summary line."""
    if config.format is Format.SWISS:
        return f"swiss, {config.rounds} rounds"
    if config.format is Format.KNOCKOUT:
        if config.seeding_from is not None:
            return f"knockout (single elimination, seeded by the ratings of {config.seeding_from}: {', '.join(config.seeding)})"
        return "knockout (single elimination, seeded " + (
            "in the file's order)" if list(config.seeding) == [s.label for s in entrants(config)] else "by seeding)")
    stops = [f"at most {config.max_matches:,} matches"] if config.max_matches is not None else []
    if config.target_ci is not None:
        stops.append(f"until every interval is within +/-{config.target_ci:g} Elo")
    return f"ladder ({' or '.join(stops)}; {config.window} pairings chosen ahead of the results)"


def seeded_by_ratings(config: TournamentConfig, refuse: Callable[[str], Exception]) -> TournamentConfig:
    """A knockout with ``seeding: FOLDER``: its entrants in the order of that results folder's
    table (the standings' rating fit, as ``arena table FOLDER`` ranks them), those it does not
    rate after them in the file's order. The order is the one of the day the knockout's
    results began: a resume keeps the one its store holds, whatever the folder played since
    (the bracket is the store's). ``refuse`` makes the file's error of a folder that gives none."""
    from arena.errors import ArenaError
    from arena.tournament.config import stored_game_dict
    from arena.tournament.standings import standings_from_store
    from arena.tournament.store import STORE_FILE

    labels = [side.label for side in entrants(config)]
    if os.path.isfile(os.path.join(config.output, STORE_FILE)):
        try:
            with ResultStore.open_existing(config.output) as own:
                stored = stored_game_dict(own.meta().get("game") or {}).get("seeding")
        except ArenaError:
            stored = None  # the run refuses the folder itself, with the store's own message
        if isinstance(stored, list) and sorted(str(label) for label in stored) == sorted(labels):
            return replace(config, seeding=tuple(str(label) for label in stored))
    folder = config.seeding_from or ""
    if not os.path.isfile(os.path.join(folder, STORE_FILE)):
        raise refuse(f"expected a results folder to seed by its ratings, or the entrants in seeding order; "
                     f"{folder} holds no results")
    try:
        with ResultStore.open_existing(folder) as store:
            standings = standings_from_store(store)
    except ArenaError as exc:
        raise refuse(f"{folder}: its results give no ratings to seed by: {exc}") from None
    rated = [bot.name for bot in standings.bots if bot.matches and bot.name in labels]
    return replace(config, seeding=(*rated, *(label for label in labels if label not in rated)))


def replay_store(config: TournamentConfig, store: ResultStore, rows: Iterator[MatchRow] | None = None) -> Replay:
    """The choices replayed from every stored row (``NotChosen`` for one that is not chosen)."""
    replay = stored_replay(config, store)
    for row in rows if rows is not None else store.iter_rows():
        replay.add(row)
    return replay


__all__ = ["FIELD_KEY", "FOCUS_KEY", "AdaptiveRun", "AdaptiveSchedule", "NotChosen", "Replay", "champion", "chosen_now",
           "chooser_for", "describe_format", "grown_field", "mark_focus", "open_ladder_store", "replay_store",
           "seeded_by_ratings", "stored_epochs", "stored_replay", "stored_rule", "version_joins"]
