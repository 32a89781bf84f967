"""A results store checked against its own tournament: what the tables are computed from.

The standings are computed from the store's rows, and each row holds two kinds of values:
its place in the schedule (id, index, pairing, deal, rotation, seed, sides, seats) and a
summary of its match (winner, scores, reason, terminations, escobas, hands, failures). The
schedule is rebuilt here from the tournament described in the store's meta (``game``, written
when the run began); the summary is derived again from the row's game record
(``arena.match.record.derive_row_values``). A row whose id the schedule does not have, or whose
values differ from either source, is refused by name and column.

This module does not replay records through the rules core (``arena.match.replay``, a layer above,
does): ``arena verify`` does both. ``arena table`` uses ``scheduled_rows``: it refuses a store
holding a row that is not in its schedule rather than count it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from arena.core.rules import Rules, Seating
from arena.errors import ArenaError
from arena.harness.protocol import Clock
from arena.match.record import FailurePolicy, GameRecord, derive_row_values
from arena.tournament.config import BotConfig, TeamConfig, TournamentConfig
from arena.tournament.identity import BotIdentity, bot_name
from arena.tournament.schedule import MAX_MATCHES, Format, MatchSpec, Mode, TeamMode, build_schedule, iter_schedule, schedule_size
from arena.tournament.store import MatchRow, ResultStore, StoreDamagedError
from arena.tournament.versions import Versions, coverage, expected_schedule, versioned_schedule

if TYPE_CHECKING:
    from arena.sprt import SprtParams

# A store's meta is untrusted: a schedule larger than this is not built from it (a real
# tournament of this size would take years to play).
MAX_AUDITED_MATCHES = MAX_MATCHES  # a store comes from a file that passed this cap

_SCHEDULE_COLUMNS = ("index", "pairing", "deal", "rotation", "seed", "sides", "seats")
# The summary columns, in RowValues' order; seed and seats are compared with the schedule too.
DERIVED_COLUMNS = ("seed", "seats", "winner", "scores", "reason", "terminations", "escobas", "hands", "failures")


class _BadMeta(Exception):
    pass


def _get(game: Mapping[str, Any], key: str, kind: type, what: str) -> Any:
    value = game.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _BadMeta(f"{key}: expected {what}")
    return value


_MODES = {m.value: m for m in Mode}
_FORMATS = {f.value: f for f in Format}


def _limit(bot: Mapping[str, Any], key: str) -> int | None:
    value = bot.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    raise _BadMeta(f"bots: {bot['name']!r} {key}: expected a number of milliseconds or null")


def _clock(bot: Mapping[str, Any]) -> Clock | None:
    value = bot.get("clock")
    try:
        return None if value is None else Clock(value)
    except ValueError:
        raise _BadMeta(f"bots: {bot['name']!r} clock: expected cpu, wall or null") from None


def config_from_game(game: Mapping[str, Any]) -> TournamentConfig:
    """The tournament (as far as the schedule and the games go) described by a store's meta
    ``game`` object (``TournamentConfig.game_dict()``). Raises ``_BadMeta`` naming the key."""
    name = _get(game, "name", str, "a string")
    seed = _get(game, "seed", int, "an integer")
    mode_text = _get(game, "mode", str, "single or pairs")
    players = _get(game, "players", int, "an integer")
    team_size = _get(game, "team_size", int, "an integer")
    fmt_text = _get(game, "format", str, "a format")
    mpp = _get(game, "matches_per_pairing", int, "an integer")
    duplicate = _get(game, "duplicate", bool, "true or false")
    challenger = game.get("challenger")
    many = game.get("challengers")
    challengers = (challenger,) if isinstance(challenger, str) else ()
    if many is not None:
        if not isinstance(many, list) or not all(isinstance(c, str) for c in many) or challenger is not None:
            raise _BadMeta("challengers: expected a list of names, with no challenger")
        challengers = tuple(many)
    mode, fmt = _MODES.get(mode_text), _FORMATS.get(fmt_text)
    if mode is None or fmt is None:
        raise _BadMeta(f"mode {mode_text!r} or format {fmt_text!r} is not one this arena plays")
    if challenger is not None and not isinstance(challenger, str):
        raise _BadMeta("challenger: expected a name or null")
    if not 1 <= players <= 6 or not 1 <= team_size <= players or not 1 <= mpp <= 10**6:
        raise _BadMeta("players, team_size or matches_per_pairing out of range")
    try:
        seating = Seating.alone(players) if mode is Mode.SINGLE else Seating.pairs(players=players, team_size=team_size)
        rules = Rules.from_record(_get(game, "rules", dict, "an object"))
        failures = FailurePolicy.from_dict(_get(game, "failures", dict, "an object"))
    except (ArenaError, ValueError, TypeError) as exc:
        raise _BadMeta(str(exc)) from None
    listed = _get(game, "bots", list, "a list of bots")
    if not listed or not all(isinstance(b, Mapping) and isinstance(b.get("name"), str) for b in listed):
        raise _BadMeta("bots: expected a list of bots, each with a name")
    # The games' time limits go with the bots (records hold them; limits_differences compares).
    bots = tuple(BotConfig(bot["name"], "-", ".", startup_ms=_limit(bot, "startup_ms"), move_ms=_limit(bot, "move_ms"),
                           bank_ms=_limit(bot, "bank_ms"), clock=_clock(bot)) for bot in listed)
    names = [b.name for b in bots]
    teams_value = game.get("teams")
    teams: tuple[TeamConfig, ...] = ()
    if isinstance(teams_value, list):
        team_mode = TeamMode.FIXED
        for team in teams_value:
            members = team.get("members") if isinstance(team, dict) else None
            if not isinstance(team, dict) or not isinstance(team.get("name"), str) or not isinstance(members, list) \
                    or len(members) != team_size or not all(isinstance(m, str) and m in names for m in members):
                raise _BadMeta("teams: expected fixed teams of the bots, each with a name and members")
            teams += (TeamConfig(team["name"], tuple(members)),)
    elif teams_value in (TeamMode.CLONES.value, TeamMode.ROTATING.value):
        team_mode = TeamMode(teams_value)
    else:
        raise _BadMeta("teams: expected clones, rotating or a list of fixed teams")
    entrants = names if team_mode is not TeamMode.FIXED else [t.name for t in teams]
    if len(set(names)) != len(names) or not set(challengers) <= set(entrants):
        raise _BadMeta("bots: names must be unique, and the challengers among them")
    config = TournamentConfig(
        name=name, seed=seed, rules=rules, mode=mode, players=players, team_size=team_size if mode is Mode.PAIRS else 1,
        team_mode=team_mode, teams=teams, bots=bots, format=fmt, challengers=challengers, matches_per_pairing=mpp,
        duplicate=duplicate, failures=failures, concurrency=1, output=".",
    )
    if fmt is Format.SPRT:
        config = replace(config, sprt=_sprt_params(game.get("sprt")))
    if fmt.adaptive:
        config = replace(config, **_adaptive_settings(game, entrants))
    if config.seating != seating:
        raise _BadMeta("players and team_size do not make a table")
    size = schedule_size(config)
    if size > MAX_AUDITED_MATCHES:
        raise _BadMeta(f"its schedule would have {size} matches, more than the {MAX_AUDITED_MATCHES} a store is checked for")
    return config


def _adaptive_settings(game: Mapping[str, Any], entrants: Sequence[str]) -> dict[str, Any]:
    """The adaptive formats' settings of a meta ``game`` (``TournamentConfig.adaptive_dict``)."""
    out: dict[str, Any] = {}
    for key in ("rounds", "max_matches", "window"):
        value = game.get(key)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_MATCHES:
                raise _BadMeta(f"{key}: expected an integer")
            out[key] = value
    target = game.get("target_ci")
    if target is not None:
        if not isinstance(target, (int, float)) or isinstance(target, bool) or not 0 < target <= 1000:
            raise _BadMeta("target_ci: expected a number of Elo")
        out["target_ci"] = float(target)
    seeding = game.get("seeding")
    if seeding is not None:
        if not isinstance(seeding, list) or sorted(map(str, seeding)) != sorted(entrants):
            raise _BadMeta("seeding: expected every entrant once")
        out["seeding"] = tuple(seeding)
    return out


def _sprt_params(data: object) -> SprtParams:
    from arena.sprt import SprtError, SprtParams

    if not isinstance(data, Mapping):
        raise _BadMeta("sprt: expected the sequential test's parameters")
    try:
        return SprtParams.from_mapping(data)
    except SprtError as exc:
        raise _BadMeta(f"sprt: {exc}") from None


def store_config(store: ResultStore) -> TournamentConfig:
    """The tournament a store's meta describes; ``StoreDamagedError`` when its meta does not
    describe one this arena can play."""
    game = store.meta().get("game")
    try:
        if not isinstance(game, Mapping):
            raise _BadMeta("expected an object")
        return config_from_game(game)
    except _BadMeta as exc:
        raise StoreDamagedError(f"{store.path}: meta 'game' does not describe a tournament ({exc}); "
                                "restore the store from a copy") from None


def keyed_identities(store: ResultStore, config: TournamentConfig | None = None) -> dict[str, BotIdentity] | None:
    """The store's identities by entrant, each able to give its key: one recorded by an older
    arena is completed from the stored file's settings (identity.py ``fill_from``). None when
    none were recorded."""
    recorded = store.identities()
    if recorded is None:
        return None
    bots = {bot.name: bot for bot in (config or store_config(store)).bots}
    return {name: identity.fill_from(bots[bot_name(name)]) if bot_name(name) in bots else identity
            for name, identity in recorded.items()}


def store_schedule(store: ResultStore) -> tuple[TournamentConfig, tuple[MatchSpec, ...]]:
    """The tournament and the whole schedule a store's meta describes (what ``arena verify``
    compares the store with, matches missing from it included)."""
    config = store_config(store)
    if config.format.adaptive:
        from arena.tournament.adaptive import NotChosen, stored_replay

        # The choices the stored rows give, as far as they go; a row that is not one of them
        # is listed by verify as not in the schedule (the replay goes on without it).
        replay, chosen = stored_replay(config, store), []
        for row in store.iter_rows():
            try:
                chosen.append(replay.add(row))
            except NotChosen:
                continue
        return config, tuple(sorted([*chosen, *replay.rest()], key=lambda spec: spec.index))
    versions = Versions(store.generations())
    if versions.current:
        keys = store.stored_keys()
        try:
            _, covered = coverage(config, versions, keys, lambda match_id: _damaged_row(store, match_id))
        finally:
            keys.close()
        return config, tuple(expected_schedule(config, versions, (row.id for row in store.results()), covered))
    if config.format is Format.SPRT:
        # Open-ended: its schedule is every deal up to the last one the store holds (a
        # stopped test finished every pair it started; a gap below is a match missing).
        return config, build_schedule(config, deals=store.last_index() // config.sides + 1)
    return config, build_schedule(config)


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        value = [list(v) if isinstance(v, tuple) else v for v in value]
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _differences(names: Sequence[str], stored: Sequence[Any], expected: Sequence[Any], where: str) -> list[str]:
    return [f"{n} {_shown(a)} in the store, {_shown(b)} in {where}"
            for n, a, b in zip(names, stored, expected, strict=True) if a != b]


def schedule_differences(row: MatchRow, spec: MatchSpec) -> list[str]:
    """How ``row``'s place in the schedule differs from ``spec``'s (the same id)."""
    return _differences(_SCHEDULE_COLUMNS, [getattr(row, n) for n in _SCHEDULE_COLUMNS],
                        [getattr(spec, n) for n in _SCHEDULE_COLUMNS], "the schedule")


def record_differences(row: MatchRow, record: GameRecord) -> list[str]:
    """How ``row``'s summary differs from what its record says (``derive_row_values``), and
    where its duration cannot be (``duration_differences``)."""
    values = derive_row_values(record)
    return _differences(DERIVED_COLUMNS, [getattr(row, n) for n in DERIVED_COLUMNS],
                        [getattr(values, n) for n in DERIVED_COLUMNS], "the record") + duration_differences(row, record)


# The worker's clock starts before the referee's and stops after it; both are rounded (the
# record's to a microsecond): a millisecond covers the rounding.
_CLOCK_SLACK_MS = 1.0


def duration_differences(row: MatchRow, record: GameRecord) -> list[str]:
    """Durations that no clock gives: a negative or infinite one, the row's shorter than the
    referee's own (the row's is the worker's time around the match), a move longer than the
    match. A duration of 0 is one not measured (a store from before it was)."""
    out = []
    if not math.isfinite(row.duration) or row.duration < 0:
        out.append(f"duration {_shown(row.duration)} s in the store; a duration is a non-negative number of seconds")
    if not math.isfinite(record.duration_ms) or record.duration_ms < 0:
        out.append(f"duration_ms {_shown(record.duration_ms)} in the record; a duration is a non-negative number")
    if out:
        return out
    if row.duration > 0 and record.duration_ms > row.duration * 1000 + _CLOCK_SLACK_MS:
        out.append(f"duration {row.duration:.3f} s in the store, shorter than the record's {record.duration_ms:.3f} ms, "
                   "which it contains")
    times = [move.ms for move in record.moves if move.ms is not None]
    # Every move's time finite, >= 0 and within the match, asked of all of them at once (a
    # report asks it of every record); where it is not so, the first move that says otherwise.
    if times and (not math.isfinite(math.fsum(times)) or min(times) < 0
                  or record.duration_ms > 0 and max(times) > record.duration_ms + _CLOCK_SLACK_MS):
        for number, move in enumerate(record.moves, start=1):
            ms = move.ms
            if ms is not None and (not math.isfinite(ms) or ms < 0 or (record.duration_ms > 0
                                                                        and ms > record.duration_ms + _CLOCK_SLACK_MS)):
                out.append(f"move {number} took {_shown(ms)} ms in a match of {record.duration_ms:.3f} ms")
                break
    return out


def game_differences(record: GameRecord, config: TournamentConfig) -> list[str]:
    """How the record's rules, seating and failure policy differ from the tournament's."""
    out = []
    try:
        rules = Rules.from_record(record.rules)
    except (ArenaError, ValueError, TypeError):
        rules = None
    if rules != config.rules:
        out.append("its record was played under other rules than the tournament's")
    try:
        seating = Seating.from_dict(record.seating)
    except (ArenaError, ValueError, TypeError):
        seating = None
    if seating != config.seating:
        out.append("its record was played at another table than the tournament's")
    out.extend(limits_differences(record, config))
    if record.policy is not None and record.policy != config.failures:
        out.append(f"its record's failure policy is {record.policy.policy} ({record.policy.strikes} strikes), "
                   f"the tournament's {config.failures.policy} ({config.failures.strikes} strikes)")
    return out


def limits_differences(record: GameRecord, config: TournamentConfig) -> list[str]:
    """How the time limits in the record differ from those the tournament's file gives its bots
    (a record written before limits were recorded holds none, and is not compared)."""
    from arena.tournament.worker import bot_limits

    if not record.limits:
        return []
    if len(record.limits) != len(record.seats):
        return [f"its record holds {len(record.limits)} seats' limits for {len(record.seats)} seats"]
    bots = {bot.name: bot for bot in config.bots}
    out = []
    for seat, (name, limits) in enumerate(zip(record.seats, record.limits, strict=True)):
        bot = bots.get(bot_name(name))  # a later version (versions.py) has its bot's limits
        if bot is None:
            continue  # a seat of another bot: the schedule check says so
        expected = bot_limits(bot).to_dict()
        limits = dict(limits)
        if bot.clock is None:  # the file left the clock to the machine that played: any is its
            limits.pop("clock", None)
        if limits != expected:
            changed = sorted(k for k in set(limits) | set(expected) if limits.get(k) != expected.get(k))
            shown = ", ".join(f"{k} {_shown(limits.get(k))} (the file: {_shown(expected.get(k))})" for k in changed[:4])
            out.append(f"its record's limits of seat {seat} ({name}) are not the tournament file's: {shown}")
    return out


def unscheduled(rows: Sequence[MatchRow], schedule: Sequence[MatchSpec]) -> list[tuple[MatchRow, str]]:
    """Every row that is not the schedule's match of its id, with why."""
    by_id = {spec.id: spec for spec in schedule}
    out = []
    for row in rows:
        spec = by_id.get(row.id)
        if spec is None:
            out.append((row, f"match {row.id!r} is not in the tournament's schedule ({len(schedule)} matches)"))
            continue
        diff = schedule_differences(row, spec)
        if diff:
            out.append((row, "; ".join(diff)))
    return out


def _damaged_row(store: ResultStore, match_id: str) -> StoreDamagedError:
    return StoreDamagedError(f"{store.path}: stored match {match_id!r} is not in the schedule of its version; "
                             f"arena verify {store.folder} lists every problem")


def scheduled_rows(store: ResultStore) -> Sequence[MatchRow]:
    """The store's rows, each checked to be its schedule's match (id, place, seed, sides and
    seats); ``StoreDamagedError`` names the first that is not, so no table counts it.

    Rows and schedule are both walked in schedule order, side by side, so that a table of a
    long tournament never holds its whole schedule. An adaptive format's schedule is its
    choices, replayed from the rows as they are walked (adaptive.py)."""
    config = store_config(store)
    bad: list[tuple[MatchRow, str]] = []
    if config.format.adaptive:
        _check_chosen(store, config, bad)
    else:
        _check_scheduled(store, config, bad)
    if bad:
        row, why = bad[0]
        more = f" (and {len(bad) - 1} more rows)" if len(bad) > 1 else ""
        raise StoreDamagedError(f"{store.path}: a stored row is not the tournament's: {why}{more}; the store was "
                                f"edited or is damaged; arena verify {store.folder} lists every problem")
    return store.results()


def _check_chosen(store: ResultStore, config: TournamentConfig, bad: list[tuple[MatchRow, str]]) -> None:
    from arena.tournament.adaptive import NotChosen, stored_replay

    replay = stored_replay(config, store)
    for row in store.iter_rows():
        try:
            diff = schedule_differences(row, replay.add(row))
        except NotChosen as exc:
            bad.append((row, exc.why))
            continue
        if diff:
            bad.append((row, "; ".join(diff)))


def _check_scheduled(store: ResultStore, config: TournamentConfig, bad: list[tuple[MatchRow, str]]) -> None:
    versions = Versions(store.generations())
    specs = versioned_schedule(config, versions) if versions.current else iter_schedule(config)
    spec: MatchSpec | None = None
    for row in store.iter_rows():
        while spec is None or spec.index < row.index:
            spec = next(specs, None)
            if spec is None:
                break
        if spec is None or spec.index != row.index or spec.id != row.id:
            bad.append((row, f"match {row.id!r} is not in the tournament's schedule at place {row.index}"))
        else:
            diff = schedule_differences(row, spec)
            if diff:
                bad.append((row, "; ".join(diff)))


__all__ = [
    "DERIVED_COLUMNS",
    "MAX_AUDITED_MATCHES",
    "config_from_game",
    "duration_differences",
    "keyed_identities",
    "game_differences",
    "limits_differences",
    "record_differences",
    "schedule_differences",
    "schedule_size",
    "scheduled_rows",
    "store_schedule",
    "unscheduled",
]
