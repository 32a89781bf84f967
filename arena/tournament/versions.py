"""A bot's versions in one results folder: a changed bot joins its tournament.

When a bot's identity (identity.py) differs from the one that played, its results stay, and
the new version becomes an entrant of its own, ``mybot~2`` (``~`` is never in a configured
name), that plays its own schedule against the field. Each such change opens a
*generation*: the store's meta ``versions`` lists, per generation, each changed bot's entrant
name then (store.py). Generation ``g``'s schedule is the file's schedule with the bots
renamed to their entrants of ``g``: the same pairings, deals and seeds, so a new version
meets the field on exactly the deals its old version met it on. Its matches are the file's
ids with ``~g`` (``00012.1~1``) at place ``g * N + index`` (``N`` the file's schedule
size); a match whose seats an earlier generation already played (between bots that did not
change) is not played again. The matches an old version had not played yet are left out: the
program that would play them is gone.

The fingerprint of the file is unchanged by all this: a new version is a change of a bot's
files, never of the file, so a change of rules, seed or format is still refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arena.tournament.identity import VERSION_MARK, BotIdentity, bot_name, entrant_name
from arena.tournament.schedule import Format, MatchSpec, Mode, TeamMode, iter_schedule, schedule_size

if TYPE_CHECKING:
    from arena.tournament.config import TournamentConfig


@dataclass(frozen=True)
class Versions:
    """A folder's generations (oldest first): each maps a bot name to its entrant name then."""

    generations: tuple[Mapping[str, str], ...] = ()

    @property
    def current(self) -> int:
        return len(self.generations)

    def entrant(self, bot: str, generation: int | None = None) -> str:
        """The name ``bot`` plays under in a generation (default: the current one)."""
        g = self.current if generation is None else generation
        return self.generations[g - 1].get(bot, bot) if g else bot

    def next_entrant(self, bot: str) -> str:
        """The entrant name of ``bot``'s next version: ``bot~2``, ``bot~3``, ..."""
        return entrant_name(bot, len({g[bot] for g in self.generations if bot in g}) + 2)

    def current_entrants(self, bots: Iterable[str]) -> tuple[str, ...]:
        return tuple(self.entrant(bot) for bot in bots)

    def all_entrants(self, bots: Iterable[str]) -> tuple[str, ...]:
        """Every entrant of the folder: each bot's versions, oldest first."""
        out: dict[str, None] = {}
        for bot in bots:
            for g in range(self.current + 1):
                out[self.entrant(bot, g)] = None
        return tuple(out)


def can_version(config: TournamentConfig) -> bool:
    """Whether a changed bot can join as a new version: its entrant is the bot itself (alone,
    copies of it, or a member of rotating teams, whose sides the schedule makes of whichever
    bots it has). A ladder of single bots takes the new version as a newcomer that replaces the
    old one from its next pairing on (adaptive.py ``version_joins``). A sequential test is about
    its two programs, fixed teams are the members the file names, and a swiss or knockout plays
    a bracket of the bots it began with: there a changed bot is refused (``version_refusal``
    says why and what to do)."""
    if config.format is Format.LADDER:
        return config.mode is Mode.SINGLE
    return (config.format is not Format.SPRT and not config.format.adaptive
            and (config.mode is Mode.SINGLE or config.team_mode is not TeamMode.FIXED))


def version_refusal(config: TournamentConfig, folder: str) -> str | None:
    """Why a changed bot cannot join this tournament, and the way out; None where the general
    way out is all there is to say (a swiss, ladder or knockout)."""
    if config.format is Format.SPRT:
        return (f"a sequential test decides about the two programs it began with, so a new version cannot join "
                f"it: test the new version in a folder of its own (--output DIR), or delete {folder} to start afresh")
    if config.mode is Mode.PAIRS and config.team_mode is TeamMode.FIXED:
        return (f"a fixed team is the members the file names, so a new version of one cannot join the team that "
                f"played: to keep both, give the new version its own name and team in the file and use a new folder "
                f"(--output DIR); to start afresh, delete {folder}")
    return None


def generation_config(config: TournamentConfig, versions: Versions, generation: int | None = None) -> TournamentConfig:
    """The file's tournament with every bot named as its entrant of the generation."""
    g = versions.current if generation is None else generation
    if g == 0:
        return config
    bots = tuple(replace(bot, name=versions.entrant(bot.name, g)) for bot in config.bots)
    challengers = tuple(versions.entrant(name, g) for name in config.challengers)
    return replace(config, bots=bots, challengers=challengers)


def generation_id(match_id: str, generation: int) -> str:
    return match_id if generation == 0 else f"{match_id}{VERSION_MARK}{generation}"


def generation_schedule(config: TournamentConfig, versions: Versions, generation: int) -> Iterator[MatchSpec]:
    """A generation's whole schedule, at its places (before any is left out)."""
    size = schedule_size(config)
    for spec in iter_schedule(generation_config(config, versions, generation)):
        yield replace(spec, id=generation_id(spec.id, generation), index=generation * size + spec.index)


def versioned_schedule(config: TournamentConfig, versions: Versions) -> Iterator[MatchSpec]:
    """Every generation's schedule, in place order: what a versioned folder's rows are checked against."""
    for g in range(versions.current + 1):
        yield from generation_schedule(config, versions, g)


def pending(config: TournamentConfig, versions: Versions, covered: bytes) -> Iterator[MatchSpec]:
    """The current generation's matches that no stored match covers (``covered[i]``: the
    file's match ``i`` with these seats is stored, in any generation)."""
    size = schedule_size(config)
    for spec in generation_schedule(config, versions, versions.current):
        if not covered[spec.index - versions.current * size]:
            yield spec


def coverage(config: TournamentConfig, versions: Versions, keys: Iterable[tuple[int, str, int, tuple[str, ...]]],
             refuse: Callable[[str], Exception]) -> tuple[int, bytes]:
    """Walk the stored matches' (index, id, seed, seats), in place order, beside every
    generation's schedule: each must be its generation's match at its place (``refuse(id)``
    otherwise). Returns how many are stored, and which of the file's matches the current
    generation need not play (its seats stored at that place, in any generation)."""
    size = schedule_size(config)
    current = [spec.seats for spec in iter_schedule(generation_config(config, versions))]
    covered = bytearray(size)
    specs = versioned_schedule(config, versions)
    spec: MatchSpec | None = None
    done = 0
    for index, match_id, seed, seats in keys:
        while spec is None or spec.index < index:
            spec = next(specs, None)
            if spec is None:
                raise refuse(match_id)
        if (spec.index, spec.id, spec.seed, spec.seats) != (index, match_id, seed, seats):
            raise refuse(match_id)
        done += 1
        if current[index % size] == seats:
            covered[index % size] = 1
    return done, bytes(covered)


def expected_schedule(config: TournamentConfig, versions: Versions, stored: Iterable[str],
                      covered: bytes) -> list[MatchSpec]:
    """What a versioned folder should hold: the matches it stores (each its generation's) and
    those the current generation has still to play."""
    ids = set(stored)
    return [spec for spec in versioned_schedule(config, versions) if spec.id in ids] + list(pending(config, versions, covered))


def is_current(seats: Sequence[str], current: frozenset[str]) -> bool:
    return all(seat in current for seat in seats)


def version_labels(identities: Mapping[str, BotIdentity] | None, entrants: Sequence[str]) -> dict[str, str]:
    """What each entrant is shown as: its bot's name when the bot has one version here, else
    its version label (``mybot@2.0``); two versions with one label get the short key too."""
    by_bot: dict[str, list[str]] = {}
    for entrant in entrants:
        by_bot.setdefault(bot_name(entrant), []).append(entrant)
    out: dict[str, str] = {}
    for names in by_bot.values():
        if len(names) == 1 or identities is None:
            out.update({name: name for name in names})
            continue
        shown = {name: (identities[name].label if name in identities else name) for name in names}
        for name, label in shown.items():
            clash = list(shown.values()).count(label) > 1 and name in identities
            out[name] = f"{label}({identities[name].key[:7]})" if clash else label
    return out


__all__ = [
    "Versions",
    "can_version",
    "version_refusal",
    "coverage",
    "expected_schedule",
    "generation_config",
    "generation_id",
    "generation_schedule",
    "is_current",
    "version_labels",
    "pending",
    "versioned_schedule",
]
