"""Two entries of a league side by side (two versions of one bot, most often): ``arena compare``.

The inputs are those of ``arena rate`` (results folders, folders of them, results files), so a
version is found wherever it played, as the one entry its identity is (pools.py). What is shown:

* each side's rating (its pool's joint fit), matches and tournaments, and from the results
  folders (a results file records none of it) points and escobas per hand, failures and the
  CPU time per move (its measured CPU over the moves its seats made);
* the duplicate deals where the two *met* (an SPRT of one against the other, a tournament
  holding both) and one of them won from every seat;
* the deals they played *apart*, against the same opponents from the same seats (a new
  version's schedule repeats its old version's deals, versions.py; two folders of one file and
  seed do too), where their results differ: what changed between the versions, deal by deal.

Every match is named by its folder and id, so that it can be replayed. The module reads the
stores and prints nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.core.outcome import EndReason
from arena.errors import ArenaError
from arena.league.pools import League, PoolRatings, Tournament, open_league, rate_league
from arena.rating.table import DEFAULT_PRIOR
from arena.tournament.identity import bot_name
from arena.tournament.store import MatchRow, ResultStore, StoreError


class CompareError(ArenaError):
    """A bot to compare that the results do not hold, or name ambiguously."""


@dataclass(frozen=True)
class CompareSide:
    label: str  # the entry's label, as arena rate shows it
    name: str  # the bot's name
    version: str | None  # None: the name's only version here
    identity: str | None  # the identity key (None: not recorded)
    pool: int | None  # the pool its rating is from
    elo: float | None
    ci95: float | None
    matches: int
    tournaments: tuple[str, ...]  # the inputs it played in
    points_per_hand: float | None  # None: no results folder holds its hands
    escobas_per_hand: float | None
    failures: int
    cpu_ms_per_move: float | None  # None: no CPU time measured


@dataclass(frozen=True)
class DealMatch:
    """One match of a deal: where it is stored, and how the side compared did in it."""

    folder: str  # the results folder, as given (or found in a folder of them)
    id: str
    deal: int
    score: float  # 1 won, 0.5 drew, 0 lost


@dataclass(frozen=True)
class Sweep:
    """A duplicate deal the two played against each other from every seat, won every time by
    ``winner``."""

    folder: str
    deal: int
    winner: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Flip:
    """A deal both played against the same opponents from the same seats, where their results
    differ: ``a`` and ``b`` are their matches, seat by seat in one order."""

    opponents: tuple[str, ...]
    a: tuple[DealMatch, ...]
    b: tuple[DealMatch, ...]

    @property
    def a_points(self) -> float:
        return sum(m.score for m in self.a)

    @property
    def b_points(self) -> float:
        return sum(m.score for m in self.b)


@dataclass(frozen=True)
class Comparison:
    a: CompareSide
    b: CompareSide
    deals_met: int  # duplicate deals the two played against each other, from every seat
    sweeps: tuple[Sweep, ...]
    deals_shared: int  # deals both played against the same opponents from the same seats
    flips: tuple[Flip, ...]  # those of them where their results differ, the widest first
    notes: tuple[str, ...] = ()


def resolve_entry(league: League, wanted: str, where: str) -> str:
    """The entry a user means: its label (``mybot@2.0``), a bot name of one entry, or a name the
    results use (``bot_v1`` of an SPRT folder, ``mybot~2`` inside a store) for one entry."""
    labels = sorted({e.label for e in league.entries.values()})
    if wanted in labels:
        return wanted
    for match in (lambda name, entry: entry.name == wanted, lambda name, entry: name == wanted,
                  lambda name, entry: bot_name(name) == wanted):
        found = sorted({entry.label for (_t, name), entry in league.entries.items() if match(name, entry)})
        if len(found) == 1:
            return found[0]
        if found:
            raise CompareError(f"{where}: {wanted!r} is {len(found)} programs here; name one: {', '.join(found)}")
    raise CompareError(f"{where}: no bot {wanted!r} (its bots: {', '.join(labels)})")


@dataclass
class _Tally:
    points: int = 0
    hands: int = 0
    escobas: int = 0
    failures: int = 0
    cpu_ms: float = 0.0
    moves: int = 0


@dataclass
class _Deals:
    """What the stores' rows say about the two, gathered tournament by tournament."""

    a: str
    b: str
    tallies: dict[str, _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    met: dict[tuple[int, int, int], list[tuple[str, str | None, int]]] = field(default_factory=lambda: defaultdict(list))
    # (kind, target, seed, opponents) -> side -> seat pattern -> its first match there
    apart: dict[tuple[Any, ...], dict[str, dict[tuple[str, ...], DealMatch]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(dict)))


def _score(row: MatchRow, side: int) -> float:
    return 0.5 if row.winner is None else 1.0 if row.winner == side else 0.0


def _reader(store: ResultStore, match_id: str) -> Callable[[], dict[str, Any]]:
    """A match's record, read once when first asked for (``{}`` if it cannot be read: the row
    alone still counts)."""
    kept: list[dict[str, Any]] = []

    def read() -> dict[str, Any]:
        if not kept:
            try:
                kept.append(store.record(match_id))
            except StoreError:
                kept.append({})
        return kept[0]

    return read


def _read_tournament(deals: _Deals, league: League, t: Tournament) -> None:
    from arena.tournament.audit import scheduled_rows
    from arena.tournament.standings import hands_played, side_members, unscored_escobas

    if t.seating is None:
        return
    seating = t.seating
    label = league.names(t)
    wanted = (deals.a, deals.b)
    with ResultStore.open_existing(str(t.path)) as store:
        for row in scheduled_rows(store):
            seats = tuple(label(name) for name in row.seats)
            if deals.a not in seats and deals.b not in seats:
                continue
            members = side_members(replace(row, seats=seats), seating)
            read = _reader(store, row.id)
            cut = unscored_escobas(read(), seating.sides) if row.reason is EndReason.FORFEIT and any(row.escobas) else ()
            for side, bots in enumerate(members):
                for who in bots:
                    if who not in wanted:
                        continue
                    tally = deals.tallies[who]
                    tally.points += row.scores[side]
                    tally.hands += hands_played(row)
                    tally.escobas += row.escobas[side] - (cut[side] if side < len(cut) else 0)
            for seat, _reason in row.failures:
                if seats[seat] in wanted:
                    deals.tallies[seats[seat]].failures += 1
            measured = {seat: cpu_ms for seat, cpu_ms, _wall in row.usage if seats[seat] in wanted}
            if measured:
                for move in read().get("moves", []):
                    mover = move.get("seat") if isinstance(move, dict) else None
                    if mover in measured:
                        deals.tallies[seats[mover]].moves += 1
                for seat, cpu_ms in measured.items():
                    deals.tallies[seats[seat]].cpu_ms += cpu_ms
            sides_of = {who: next((s for s, bots in enumerate(members) if who in bots), None) for who in wanted}
            side_a, side_b = sides_of[deals.a], sides_of[deals.b]
            if side_a is not None and side_b is not None:
                if len(members) == 2 and side_a != side_b:
                    winner = None if row.winner is None else deals.a if row.winner == side_a else deals.b
                    deals.met[t.index, row.pairing, row.deal].append((row.id, winner, row.deal))
                continue
            who, mine = (deals.a, side_a) if side_a is not None else (deals.b, side_b)
            if mine is None:  # a seat of theirs on no side: not a row of this seating
                continue
            pattern = tuple("*" if name == who else name for name in seats)
            opponents = tuple(sorted({name for name in seats if name != who}))
            key = (t.kind, t.target, row.seed, opponents)
            deals.apart[key][who].setdefault(pattern, DealMatch(t.label, row.id, row.deal, _score(row, mine)))


def _flips(deals: _Deals) -> tuple[int, list[Flip]]:
    shared = 0
    flips: list[Flip] = []
    for key, by_side in deals.apart.items():
        mine, theirs = by_side.get(deals.a, {}), by_side.get(deals.b, {})
        common = [pattern for pattern in mine if pattern in theirs]
        if not common:
            continue
        shared += 1
        flip = Flip(key[3], tuple(mine[p] for p in common), tuple(theirs[p] for p in common))
        if flip.a_points != flip.b_points:
            flips.append(flip)
    flips.sort(key=lambda f: (-abs(f.a_points - f.b_points), f.a[0].folder, f.a[0].deal, f.a[0].id))
    return shared, flips


def _sweeps(deals: _Deals, folders: dict[int, str]) -> tuple[int, list[Sweep]]:
    met = 0
    sweeps = []
    for (index, _pairing, deal), played in sorted(deals.met.items(), key=lambda item: (item[0][0], item[0][2], item[0][1])):
        if len(played) < 2:
            continue
        met += 1
        winners = {winner for _, winner, _ in played}
        if len(winners) == 1 and None not in winners:
            sweeps.append(Sweep(folders[index], deal, str(next(iter(winners))), tuple(match_id for match_id, _, _ in played)))
    return met, sweeps


def _rated(rated: Sequence[PoolRatings], label: str, other: str) -> tuple[PoolRatings | None, Any]:
    """The pool to read ``label``'s rating in: the first where both were rated, else its own."""
    def row(pr: PoolRatings, name: str) -> Any:
        return next((r for r in pr.rows if r.rating.name == name), None)

    for pr in rated:
        if row(pr, label) is not None and row(pr, other) is not None:
            return pr, row(pr, label)
    for pr in rated:
        if row(pr, label) is not None:
            return pr, row(pr, label)
    return None, None


def compare(inputs: Sequence[str | Path], a: str, b: str, *, prior: float | None = DEFAULT_PRIOR) -> Comparison:
    """``a`` and ``b`` (entry labels as ``arena rate`` shows them, bot names, or names the
    results use) across the league of ``inputs``."""
    league = open_league(inputs)
    where = ", ".join(map(str, inputs))
    a, b = resolve_entry(league, a, where), resolve_entry(league, b, where)
    if a == b:
        raise CompareError(f"{where}: give two different programs to compare (both are {a!r})")
    rated = rate_league(league, prior=prior)
    deals = _Deals(a, b)
    tournaments = [t for pool in league.pools for t in pool.tournaments]
    for t in dict.fromkeys(tournaments):
        _read_tournament(deals, league, t)
    deals_met, sweeps = _sweeps(deals, {t.index: t.label for t in tournaments})
    deals_shared, flips = _flips(deals)
    notes: list[str] = []

    def side(label: str, other: str) -> CompareSide:
        pr, row = _rated(rated, label, other)
        entry = league.entry(label)
        tally = deals.tallies.get(label, _Tally())
        played = tuple(dict.fromkeys(t.label for t in tournaments
                                     if any(league.names(t)(name) == label for name in t.bots)))
        return CompareSide(
            label, entry.name if entry else label, entry.version if entry else None, entry.key if entry else None,
            pr.pool.number if pr else None, row.rating.elo if row else None, row.rating.ci95 if row else None,
            row.rating.matches if row else 0, played,
            tally.points / tally.hands if tally.hands else None, tally.escobas / tally.hands if tally.hands else None,
            tally.failures, tally.cpu_ms / tally.moves if tally.moves else None)

    side_a, side_b = side(a, b), side(b, a)
    if side_a.pool != side_b.pool:
        notes.append(f"{a} and {b} played different kinds of game (pools {side_a.pool} and {side_b.pool}): "
                     "their ratings are not on one scale")
    else:
        pr = next(p for p in rated if p.pool.number == side_a.pool)
        groups = {r.rating.name: r.rating.group for r in pr.rows}
        if groups.get(a) != groups.get(b):
            notes.append(f"{a} and {b} are in different rating groups (no chain of results links them): "
                         "their ratings are not on one scale")
    return Comparison(side_a, side_b, deals_met, tuple(sweeps), deals_shared, tuple(flips), tuple(notes))


__all__ = ["CompareError", "CompareSide", "Comparison", "DealMatch", "Flip", "Sweep", "compare", "resolve_entry"]
