"""The schedule: which bots sit where in every match, and with which deal seed.

Pure and deterministic: the same config gives the same list, whatever the
concurrency, so a match id names the same game on every run (what resume relies on).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from itertools import combinations
from math import comb, factorial
from typing import TYPE_CHECKING, Any

from arena.core.outcome import TextEnum
from arena.core.seeding import derive_seed

if TYPE_CHECKING:
    # Only a type here: config imports count_matches from this module to refuse a file
    # whose schedule is too large before anything is built.
    from arena.tournament.config import TournamentConfig

# The most matches a tournament may have (docs/TOURNAMENTS.md, "Limits"). Every match is a
# row of the store and the schedule is held in memory whole (about 0.5 GB at this size).
MAX_MATCHES = 1_000_000



class Mode(TextEnum):
    """How seats make sides: each player alone, or in pairs of teammates."""

    SINGLE = "single"
    PAIRS = "pairs"


class TeamMode(TextEnum):
    """Who plays in a team (pairs mode): copies of one bot, teams the file fixes, or every
    way of splitting the bots into teams."""

    CLONES = "clones"  # also single mode's value, unused there
    FIXED = "fixed"
    ROTATING = "rotating"


class Format(TextEnum):
    """Which pairings a tournament plays and how many times."""

    ROUND_ROBIN = "round_robin"
    DOUBLE_ROUND_ROBIN = "double_round_robin"
    GAUNTLET = "gauntlet"
    SPRT = "sprt"  # two sides, deal after deal, each deal from both seats, until the test stops (sprt_run.py)
    # Chosen from the results so far (adaptive.py): who meets whom is not known in advance.
    SWISS = "swiss"
    LADDER = "ladder"
    KNOCKOUT = "knockout"

    @property
    def adaptive(self) -> bool:
        """Whether the pairings follow from the results (adaptive.py), not from the file alone."""
        return self in (Format.SWISS, Format.LADDER, Format.KNOCKOUT)


SPRT_MAX_PAIRS = MAX_MATCHES // 2
"""The most pairs a sequential test plays: its ``max_pairs`` when it has none (a test
that has not stopped by then ends undecided), and the largest it may set."""


def sprt_pair_limit(config: TournamentConfig) -> int:
    """The pairs a sequential test's schedule holds: its ``max_pairs``, else ``SPRT_MAX_PAIRS``."""
    limit = config.sprt.max_pairs if config.sprt is not None else None
    return limit if limit is not None else SPRT_MAX_PAIRS


@dataclass(frozen=True)
class Side:
    """One side of a match: a label (the bot, or the team) and the bots sitting for it."""

    label: str
    members: tuple[str, ...]


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def plain_fields(obj: Any) -> dict[str, Any]:
    """A dataclass of plain values as a JSON-ready dict (tuples become lists), in field order."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}


@dataclass(frozen=True)
class MatchSpec:
    id: str  # stable: "<deal>.<rotation>", e.g. "00012.1"
    index: int  # position in the schedule
    pairing: int  # which pairing (set of sides) this match belongs to
    deal: int  # deal number i; seed = derive_seed(master, "deal", i)
    rotation: int  # 0 for the deal's first seating, then 1.. for its duplicates
    seed: int
    sides: tuple[str, ...]  # side label per side index (seating order of sides)
    seats: tuple[str, ...]  # bot name per seat

    def to_dict(self) -> dict[str, Any]:
        return plain_fields(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchSpec:
        return cls(
            id=str(data["id"]),
            index=int(data["index"]),
            pairing=int(data["pairing"]),
            deal=int(data["deal"]),
            rotation=int(data["rotation"]),
            seed=int(data["seed"]),
            sides=tuple(data["sides"]),
            seats=tuple(data["seats"]),
        )


def match_id(deal: int, rotation: int) -> str:
    return f"{deal:05d}.{rotation}"


def entrants(config: TournamentConfig) -> list[Side]:
    """The competitors a pairing is drawn from (not used for rotating partners)."""
    if config.mode is Mode.PAIRS and config.team_mode is TeamMode.FIXED:
        return [Side(t.name, t.members) for t in config.teams]
    return [Side(b.name, (b.name,) * config.team_size) for b in config.bots]


def pairings(config: TournamentConfig) -> list[tuple[Side, ...]]:
    """Every set of sides that meets, in a stable order (sides in their base seating order)."""
    k = config.sides
    if config.mode is Mode.PAIRS and config.team_mode is TeamMode.ROTATING:
        names = [b.name for b in config.bots]
        out: list[tuple[Side, ...]] = []
        for group in combinations(names, config.players):
            if config.challengers and sum(name in config.challengers for name in group) != 1:
                continue
            for split in _partitions(group, config.team_size):
                out.append(tuple(Side("+".join(team), team) for team in split))
        return out
    pool = entrants(config)
    if not config.challengers:
        return [tuple(c) for c in combinations(pool, k)]
    # Each challenger meets the field, never another challenger (cutechess's gauntlet seeds).
    field = [s for s in pool if s.label not in config.challengers]
    return [(champion, *rest) for champion in pool if champion.label in config.challengers
            for rest in combinations(field, k - 1)]


def _partitions(group: Sequence[str], size: int) -> Iterator[tuple[tuple[str, ...], ...]]:
    """Unordered splits of ``group`` into teams of ``size``, each listed once."""
    if not group:
        yield ()
        return
    first, rest = group[0], list(group[1:])
    for mates in combinations(rest, size - 1):
        remaining = [x for x in rest if x not in mates]
        for tail in _partitions(remaining, size):
            yield ((first, *mates), *tail)


def build_schedule(config: TournamentConfig, *, deals: int | None = None) -> tuple[MatchSpec, ...]:
    return tuple(iter_schedule(config, deals=deals))


def iter_schedule(config: TournamentConfig, *, deals: int | None = None) -> Iterator[MatchSpec]:
    """``build_schedule`` one match at a time, in schedule order: a run streams it rather
    than hold every match spec of a long tournament at once.

    A sequential test's schedule (format sprt) is open-ended: deal after deal of its one
    pairing, each played from both seats, up to its pair limit (``sprt_pair_limit``); the
    test stops long before, and the runner stops taking matches from it then. ``deals``
    ends any schedule after that many deals (what a store of a stopped test holds)."""
    legs = 2 if config.format is Format.DOUBLE_ROUND_ROBIN else 1
    rotations = config.sides if config.duplicate else 1
    deals_per_leg = sprt_pair_limit(config) if config.format is Format.SPRT else config.matches_per_pairing // rotations
    index = 0
    deal = 0
    for p, sides in enumerate(pairings(config)):
        for leg in range(legs):
            # The return leg starts from the opposite seating of sides.
            base = sides if leg == 0 else tuple(reversed(sides))
            for d in range(deals_per_leg):
                if deals is not None and deal >= deals:
                    return
                specs = deal_specs(config, base, pairing=p, deal=deal, index=index, turn=d)
                yield from specs
                index += len(specs)
                deal += 1


def deal_specs(config: TournamentConfig, sides: Sequence[Side], *, pairing: int, deal: int, index: int,
               turn: int) -> list[MatchSpec]:
    """The matches of one deal between ``sides`` (in their base seating order): once per seat
    rotation with duplicate deals, else once, the sides shifted by ``turn`` so that successive
    deals alternate who sits first. ``index`` is the first match's place in the schedule."""
    k = config.sides
    seating = config.seating
    seed = derive_seed(config.seed, "deal", deal)
    shifts = range(k) if config.duplicate else range(turn % k, turn % k + 1)
    out = []
    for r, shift in enumerate(shifts):
        order = tuple(sides[(s + shift) % k] for s in range(k))
        seats = [""] * config.players
        for side_index, side in enumerate(order):
            for member, seat in zip(side.members, seating.seats_of(side_index), strict=False):
                seats[seat] = member
        out.append(MatchSpec(id=match_id(deal, r), index=index + r, pairing=pairing, deal=deal, rotation=r, seed=seed,
                             sides=tuple(s.label for s in order), seats=tuple(seats)))
    return out


def count_matches(
    *,
    mode: Mode,
    team_mode: TeamMode,
    format: Format,
    players: int,
    team_size: int,
    bots: int,
    teams: int,
    challengers: int,
    matches_per_pairing: int,
    duplicate: bool,
) -> int:
    """``len(build_schedule(config))`` in closed form, from the numbers a file gives, so a
    file asking for billions of matches is refused before any is built."""
    sides = players // team_size
    if mode is Mode.PAIRS and team_mode is TeamMode.ROTATING:
        # Every group of `players` bots (one challenger's, in a gauntlet), split every way
        # into teams of `team_size`.
        groups = challengers * comb(bots - challengers, players - 1) if challengers else comb(bots, players)
        same_team_orders: int = factorial(team_size) ** sides * factorial(sides)
        pairings = groups * factorial(players) // same_team_orders
    else:
        pool = teams if mode is Mode.PAIRS and team_mode is TeamMode.FIXED else bots
        pairings = challengers * comb(pool - challengers, sides - 1) if challengers else comb(pool, sides)
    legs = 2 if format is Format.DOUBLE_ROUND_ROBIN else 1
    rotations = sides if duplicate else 1
    return pairings * legs * (matches_per_pairing // rotations) * rotations


def schedule_size(config: TournamentConfig) -> int:
    """How many matches ``build_schedule(config)`` makes, without making them."""
    if config.format is Format.SPRT:
        return config.sides * sprt_pair_limit(config)
    if config.format.adaptive:
        return most_matches(config)
    return count_matches(
        mode=config.mode,
        team_mode=config.team_mode,
        format=config.format,
        players=config.players,
        team_size=config.team_size,
        bots=len(config.bots),
        teams=len(config.teams),
        challengers=len(config.challengers),
        matches_per_pairing=config.matches_per_pairing,
        duplicate=config.duplicate,
    )


def most_matches(config: TournamentConfig) -> int:
    """The most matches the format can play: exactly this many for swiss and knockout; a
    ladder's ``max_matches`` (in whole pairings), or the cap of every schedule."""
    per = config.matches_per_pairing
    field = len(entrants(config))
    if config.format is Format.SWISS:
        return (config.rounds or 0) * (field // config.sides) * per
    if config.format is Format.KNOCKOUT:
        return (field - 1) * per
    return ((config.max_matches or MAX_MATCHES) // per) * per


def side_members(config: TournamentConfig) -> dict[str, tuple[str, ...]]:
    """Side label -> its bots, for every side that can appear in the schedule."""
    out: dict[str, tuple[str, ...]] = {}
    for sides in pairings(config):
        for side in sides:
            out[side.label] = side.members
    return out
