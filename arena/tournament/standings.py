"""Standings, crosstable and ratings, derived from the store's match rows every time.

Pure: plain rows in, plain values out. Their text, CSV and JSON forms are
``arena.render.standings``.

Two-sided tournaments count wins, draws and losses; with three or more sides a match has
finishing places instead (1st, 2nd, ...), and the ratings come from the Plackett-Luce model
of that order (see docs/RATINGS.md).

Per-hand figures count only the hands played to their end. A match that a forfeit ended
stopped in a hand that was never scored (a forfeit at the handshake stops it in the first
hand, before any card is played); that hand is not counted, nor the escobas made in it
(its points never were). Forfeits have columns of their own: ``forfeits``, the matches a
bot's own failure lost for its side, and ``opponent_forfeits``, the matches in which a bot
of another side did so.

``cpu/wall`` is a bot's CPU time (user + system of its whole process tree) over the wall time
of its matches, summed over the matches whose records measured it (docs/REPLAY.md, ``usage``):
above 1, the bot used more than one CPU while it was timed. It is a measurement, not part of
any game: never verified, and "-" where nothing was measured (in-process players, stores
written before it).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from arena.core.outcome import EndReason
from arena.core.rules import Seating
from arena.harness.protocol import Termination
from arena.rating.table import DEFAULT_PRIOR, BotRating, MatchResult, Model, PairResult, RatingTable, fit_ratings

if TYPE_CHECKING:  # the tables are derived from rows; the store is opened only by standings_from_store
    from arena.tournament.identity import BotIdentity
    from arena.tournament.store import MatchRow, ResultStore

FAILURE_REASONS = tuple(t.value for t in Termination if t.is_failure)


def hands_played(row: MatchRow) -> int:
    """The hands of the match played to their end (scored). A forfeit stops a match inside a
    hand (the record's ``hands`` counts it) that never scores: that hand is not counted."""
    if row.reason == EndReason.FORFEIT:
        return max(row.hands - 1, 0)
    return row.hands


@dataclass(frozen=True)
class BotStanding:
    rank: int
    name: str
    elo: float | None
    ci95: float | None
    los_next: float | None  # likelihood this bot is stronger than the next one listed
    matches: int
    wins: int
    draws: int
    losses: int
    points_for: int
    points_against: int  # the other sides' points, summed
    hands: int  # hands played to their end (see hands_played)
    escobas: int
    failures: tuple[tuple[str, int], ...]  # reason -> count (substituted failures too), sorted by reason
    status: str = "rated"
    note: str = ""
    # Matches of three or more sides: how often the bot's side finished 1st, 2nd, ... (tied
    # sides share the better place). Empty in two-sided tournaments, where W-D-L says it.
    places: tuple[int, ...] = ()
    forfeits: int = 0  # matches its own failure lost for its side
    opponent_forfeits: int = 0  # matches in which a bot of another side lost by a failure
    group: int = 1  # the rating group (bots rated on one scale); see docs/RATINGS.md
    cpu_ms: float = 0.0  # CPU time of the bot's process tree over its measured matches
    wall_ms: float = 0.0  # the wall time of those matches (the same spans)
    # The version and identity key (identity.py) of the program that played, when recorded;
    # ``name`` is then its label when the folder holds several versions of the bot.
    version: str | None = None
    identity: str | None = None

    @property
    def record(self) -> str:
        """``W-D-L``, or the counts of finishing places (``1st-2nd-3rd``) with more sides."""
        if self.places:
            return "-".join(map(str, self.places))
        return f"{self.wins}-{self.draws}-{self.losses}"

    @property
    def points_per_hand(self) -> float | None:
        return self.points_for / self.hands if self.hands else None

    @property
    def escobas_per_hand(self) -> float | None:
        return self.escobas / self.hands if self.hands else None

    @property
    def cpu_per_wall(self) -> float | None:
        """CPU time per wall time over the measured matches; None when none was measured."""
        return self.cpu_ms / self.wall_ms if self.wall_ms > 0 else None

    def to_dict(self) -> dict[str, Any]:
        """Plain values (the JSON form); ``places`` (a list: 1st, 2nd, ...) replaces ``wins``,
        ``draws`` and ``losses`` when matches have three or more sides. No value is ever -0."""
        record: dict[str, Any] = (
            {"places": list(self.places)} if self.places else {"wins": self.wins, "draws": self.draws, "losses": self.losses}
        )
        return {
            "rank": self.rank,
            "name": self.name,
            "elo": plain_number(self.elo, 2),
            "ci95": plain_number(self.ci95, 2),
            "los_next": plain_number(self.los_next, 4),
            "group": self.group,
            "matches": self.matches,
            **record,
            "forfeits": self.forfeits,
            "opponent_forfeits": self.opponent_forfeits,
            "points_for": self.points_for,
            "points_against": self.points_against,
            "hands": self.hands,
            "points_per_hand": plain_number(self.points_per_hand, 3),
            "escobas": self.escobas,
            "escobas_per_hand": plain_number(self.escobas_per_hand, 3),
            "failures": dict(self.failures),
            "cpu_s": plain_number(self.cpu_ms / 1000, 3) if self.wall_ms > 0 else None,
            "cpu_per_wall": plain_number(self.cpu_per_wall, 3),
            "status": self.status,
            "note": self.note,
            "version": self.version,
            "identity": self.identity,
        }


@dataclass(frozen=True)
class Crosstable:
    """Score of each row entrant against each column entrant: (points, games); a win is 1, a draw 1/2.

    ``by_bot``: entrants are bots, and a cell counts the row bot's matches against sides that
    included the column bot (rotating partners); otherwise entrants are the sides' labels."""

    names: tuple[str, ...]
    cells: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)
    by_bot: bool = False

    def cell(self, a: str, b: str) -> tuple[float, int] | None:
        return self.cells.get((a, b))


@dataclass(frozen=True)
class Standings:
    bots: tuple[BotStanding, ...]
    crosstable: Crosstable
    matches: int
    notes: tuple[str, ...] = ()
    sides: int = 2  # sides per match: above 2, places replace W-D-L
    model: Model = Model.BRADLEY_TERRY  # the rating model
    prior: float = DEFAULT_PRIOR  # the rating prior's strength (0: plain maximum likelihood)

    @property
    def leader(self) -> str | None:
        return self.bots[0].name if self.bots and self.matches else None


@dataclass
class _Tally:
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points_for: int = 0
    points_against: int = 0
    hands: int = 0
    escobas: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    places: list[int] = field(default_factory=list)
    forfeits: int = 0
    opponent_forfeits: int = 0
    cpu_ms: float = 0.0
    wall_ms: float = 0.0


def side_members(row: MatchRow, seating: Seating) -> list[tuple[str, ...]]:
    """The distinct bots of each side, in seat order (copies of one bot count once)."""
    out = []
    for side in range(seating.sides):
        members: list[str] = []
        for seat in seating.seats_of(side):
            if row.seats[seat] not in members:
                members.append(row.seats[seat])
        out.append(tuple(members))
    return out


def _failed_bots(row: MatchRow) -> set[str]:
    """The bots whose failure lost the match (a forfeit), by name."""
    if row.reason != EndReason.FORFEIT:
        return set()
    return {row.seats[seat] for seat, termination in enumerate(row.terminations) if termination.is_failure}


def _forfeited(row: MatchRow, seating: Seating) -> list[bool]:
    return [
        row.reason == EndReason.FORFEIT and any(row.terminations[s].is_failure for s in seating.seats_of(side))
        for side in range(seating.sides)
    ]


def match_places(row: MatchRow, seating: Seating) -> tuple[int, ...]:
    """Each side's finishing place (1 is first; tied sides share the better place).

    Two sides: the winner is first, a draw ties. More sides: the winner is first; the others
    are ordered by whether they forfeited and then by their points.
    """
    if seating.sides == 2:
        return (1, 1) if row.winner is None else (1, 2) if row.winner == 0 else (2, 1)
    forfeited = _forfeited(row, seating)
    keys = [(row.winner == s, not forfeited[s], row.scores[s]) for s in range(seating.sides)]
    return tuple(1 + sum(other > own for other in keys) for own in keys)


def match_result(row: MatchRow, seating: Seating) -> PairResult | MatchResult:
    """One match as the rating fit takes it: a two-sided result, or the sides' finishing order."""
    members = side_members(row, seating)
    places = match_places(row, seating)
    if seating.sides == 2:
        return PairResult(members[0], members[1], 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5)
    return MatchResult(tuple(members), places)


def pair_results(row: MatchRow, seating: Seating) -> list[PairResult]:
    """One match as pairwise results between its sides (who finished ahead of whom; a tie
    is 1/2): the crosstable's cells and a running leader. The ratings use the whole order."""
    members = side_members(row, seating)
    places = match_places(row, seating)
    out = []
    for i in range(seating.sides):
        for j in range(i + 1, seating.sides):
            score = 1.0 if places[i] < places[j] else 0.0 if places[i] > places[j] else 0.5
            out.append(PairResult(members[i], members[j], score))
    return out


def compute_standings(
    rows: Sequence[MatchRow],
    seating: Seating,
    bots: Iterable[str],
    *,
    by_bot_crosstable: bool = False,
    prior: float | None = DEFAULT_PRIOR,
    unscored: Mapping[str, Sequence[int]] | None = None,
) -> Standings:
    """Everything in the standings table, derived from the match rows.

    ``by_bot_crosstable``: key the crosstable by bot rather than by side label (rotating
    partners, where side labels are one-off teams). ``prior``: the rating prior's strength
    in virtual draws per bot (0: the plain maximum-likelihood fit; None: the default).
    ``unscored``: per match id, each side's escobas made in the hand a forfeit cut short
    (``unscored_escobas`` of its record); they are left out with that hand. A forfeited
    match missing from it keeps all its escobas.
    """
    unscored = unscored or {}
    bot_names = list(dict.fromkeys(bots))
    tallies: dict[str, _Tally] = {name: _Tally() for name in bot_names}
    cross: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    labels: list[str] = []
    results = []
    for row in rows:  # one pass: a store's rows are read again at each
        _tally_match(tallies, row, seating, unscored.get(row.id, ()))
        _cross_match(cross, labels, row, seating, by_bot_crosstable)
        results.append(match_result(row, seating))
    table = fit_ratings(results, players=bot_names, prior=prior)
    standings = [_standing(rating, tallies.get(rating.name, _Tally()), seating) for rating in table.ratings]
    standings, ties = _break_ties(standings, table)
    return Standings(
        tuple(standings),
        _crosstable(labels, cross, standings, by_bot_crosstable),
        len(rows),
        (*table.notes, *ties),
        sides=seating.sides,
        model=table.model,
        prior=table.prior,
    )


def _tally_match(tallies: dict[str, _Tally], row: MatchRow, seating: Seating, cut_short: Sequence[int]) -> None:
    """Add one match to its bots' tallies: its result, points, hands, escobas (less those of a
    hand a forfeit cut short), forfeits, failures and usage."""
    members = side_members(row, seating)
    places = match_places(row, seating)
    total = sum(row.scores)
    played = hands_played(row)
    forfeited = _forfeited(row, seating)
    failed = _failed_bots(row)
    for side, side_bots in enumerate(members):
        others_forfeited = any(f for s, f in enumerate(forfeited) if s != side)
        for name in side_bots:
            t = tallies.setdefault(name, _Tally())
            t.forfeits += forfeited[side] and name in failed
            t.opponent_forfeits += others_forfeited
            t.matches += 1
            if seating.sides > 2:
                if not t.places:
                    t.places = [0] * seating.sides
                t.places[places[side] - 1] += 1
            elif row.winner is None:
                t.draws += 1
            elif row.winner == side:
                t.wins += 1
            else:
                t.losses += 1
            t.points_for += row.scores[side]
            t.points_against += total - row.scores[side]
            t.hands += played
            t.escobas += row.escobas[side] - (cut_short[side] if side < len(cut_short) else 0)
    for seat, reason in row.failures:
        tallies[row.seats[seat]].failures[reason.value] += 1
    for seat, cpu_ms, wall_ms in row.usage:
        t = tallies[row.seats[seat]]
        t.cpu_ms += cpu_ms
        t.wall_ms += wall_ms


def _cross_match(cross: dict[tuple[str, str], list[float]], labels: list[str], row: MatchRow, seating: Seating,
                 by_bot: bool) -> None:
    """Add one match to the crosstable: each pairwise result, in both directions."""
    members = side_members(row, seating)
    pairs = pair_results(row, seating)
    k = 0
    for i in range(seating.sides):
        for j in range(i + 1, seating.sides):
            score = pairs[k].score_a
            k += 1
            keys_i, keys_j = (members[i], members[j]) if by_bot else ((row.sides[i],), (row.sides[j],))
            for a in keys_i:
                for b in keys_j:
                    cross[a, b][0] += score
                    cross[a, b][1] += 1
                    cross[b, a][0] += 1.0 - score
                    cross[b, a][1] += 1
    for label in (row.sides if not by_bot else [b for m in members for b in m]):
        if label not in labels:
            labels.append(label)


def _standing(rating: BotRating, t: _Tally, seating: Seating) -> BotStanding:
    return BotStanding(
        rank=rating.rank,
        name=rating.name,
        elo=rating.elo,
        ci95=rating.ci95,
        los_next=rating.los_next,
        matches=t.matches,
        wins=t.wins,
        draws=t.draws,
        losses=t.losses,
        points_for=t.points_for,
        points_against=t.points_against,
        hands=t.hands,
        escobas=t.escobas,
        failures=tuple(sorted(t.failures.items())),
        status=rating.status.value,
        note=rating.note,
        places=tuple(t.places or [0] * seating.sides) if seating.sides > 2 else (),
        forfeits=t.forfeits,
        opponent_forfeits=t.opponent_forfeits,
        group=rating.group,
        cpu_ms=t.cpu_ms,
        wall_ms=t.wall_ms,
    )


def _crosstable(labels: list[str], cross: dict[tuple[str, str], list[float]], standings: Sequence[BotStanding],
                by_bot: bool) -> Crosstable:
    order = {s.name: i for i, s in enumerate(standings)}
    if by_bot or all(label in order for label in labels):
        # Bots (alone or as clone teams) follow the standings' order.
        names = tuple(sorted(labels, key=lambda n: order.get(n, len(order))))
    else:
        names = tuple(_order_labels(labels, cross))
    return Crosstable(names, {key: (v[0], int(v[1])) for key, v in cross.items()}, by_bot=by_bot)


_TIE_ELO = 1e-6


def _break_ties(rows: list[BotStanding], table: RatingTable) -> tuple[list[BotStanding], list[str]]:
    """Rank bots with equal ratings (same group, within a millionth of an Elo point) by
    points difference per match, then by name; their LOS is recomputed for the new order.
    Also returns a note per set of tied bots."""
    out = list(rows)
    start = 0
    changed = False
    notes = []
    while start < len(out):
        end = start + 1
        while end < len(out) and _tied(out[start], out[end], table):
            end += 1
        if end - start > 1:
            run = sorted(out[start:end], key=lambda s: (-(s.points_for - s.points_against) / max(s.matches, 1), s.name))
            changed |= [s.name for s in run] != [s.name for s in out[start:end]]
            out[start:end] = run
            notes.append(f"{', '.join(s.name for s in run)} have equal ratings: ranked by points difference per match, then name")
        start = end
    if not changed:
        return rows, notes
    fixed = []
    for pos, s in enumerate(out):
        los = s.los_next
        if pos + 1 < len(out) and s.status == "rated":
            los = table.los(s.name, out[pos + 1].name) if table[s.name].group == table[out[pos + 1].name].group else None
        elif pos + 1 == len(out):
            los = None
        fixed.append(replace(s, rank=pos + 1, los_next=los))
    return fixed, notes


def _tied(a: BotStanding, b: BotStanding, table: RatingTable) -> bool:
    if a.status != "rated" or b.status != "rated" or a.elo is None or b.elo is None:
        return False
    return table[a.name].group == table[b.name].group and abs(a.elo - b.elo) < _TIE_ELO


def seating_of(game: dict[str, Any]) -> Seating:
    """The table shape recorded in a store's config snapshot."""
    if game.get("mode") == "pairs":
        return Seating.pairs(players=int(game["players"]), team_size=int(game["team_size"]))
    return Seating.alone(int(game["players"]))


def unscored_escobas(record: Mapping[str, Any], sides: int) -> tuple[int, ...]:
    """Each side's escobas made after the record's last scored hand: in the hand a forfeit cut
    short (an escoba of the deal counts too, when the forfeit came at the handshake)."""
    events = record.get("events")
    counts = [0] * sides
    if not isinstance(events, list):
        return tuple(counts)
    for event in reversed(events):
        if not isinstance(event, dict) or event.get("type") == "hand_score":
            break
        side = event.get("side")
        if event.get("type") == "escoba" and isinstance(side, int) and not isinstance(side, bool) and 0 <= side < sides:
            counts[side] += 1
    return tuple(counts)


@dataclass(frozen=True)
class VersionedRows:
    """A store's rows as tables and exports show them (``versioned_rows``)."""

    rows: Sequence[MatchRow]
    names: tuple[str, ...]  # the entrants shown, as labels
    identities: Mapping[str, BotIdentity]  # label -> identity, where recorded
    several: bool  # some bot changed in this folder (versions.py)


def versioned_rows(store: ResultStore, names: Sequence[str], *, every_version: bool = True,
                   checked_elsewhere: bool = False) -> VersionedRows:
    """The store's checked rows (``audit.scheduled_rows``) with each version of a changed bot
    under its label (``mybot@2.0``), of every version or only the current ones'.
    ``checked_elsewhere``: the caller checks the rows against the schedule itself and uses none
    of this if they fail: they are read unchecked here, once less."""
    from arena.tournament.audit import keyed_identities, scheduled_rows
    from arena.tournament.versions import Versions, is_current, version_labels

    rows: Sequence[MatchRow] = store.results() if checked_elsewhere else scheduled_rows(store)
    versions = Versions(store.generations())
    current = versions.current_entrants(names)
    shown = versions.all_entrants(names) if every_version or not versions.current else current
    identities = keyed_identities(store) or {}
    labels = version_labels(identities, versions.all_entrants(names))
    several = False
    if versions.current:
        # An earlier version is listed while the folder holds its results (--drop-old deletes them).
        played = {seat for row in rows for seat in row.seats}
        older = [name for name in versions.all_entrants(names) if name not in current and name in played]
        several = bool(older)
        shown = tuple(name for name in shown if name in current or name in older)
        kept = frozenset(shown)
        rows = [_renamed(row, labels) for row in rows if is_current(row.seats, kept)]
    return VersionedRows(rows, tuple(labels[name] for name in shown),
                         {labels[name]: identities[name] for name in shown if name in identities}, several)


def store_labels(store: ResultStore) -> dict[str, str]:
    """What each entrant of a folder where a bot changed is shown as (``mybot~2`` ->
    ``mybot@2.0``, versions.py); empty where no bot changed, every name shown as it is."""
    from arena.tournament.audit import keyed_identities
    from arena.tournament.versions import Versions, version_labels

    versions = Versions(store.generations())
    if not versions.current:
        return {}
    game = store.meta().get("game") or {}
    names = [bot["name"] for bot in game.get("bots", []) if isinstance(bot, dict) and "name" in bot]
    return version_labels(keyed_identities(store) or {}, versions.all_entrants(names))


def relabelled(record: Any, labels: Mapping[str, str]) -> Any:
    """A ``GameRecord`` with its seats' names as people read them (``store_labels``), for a
    replay to show; never for checking it."""
    if not labels:
        return record
    return replace(record, seats=tuple(labels.get(s, s) for s in record.seats),
                   outcomes=tuple(replace(o, bot=labels.get(o.bot, o.bot)) for o in record.outcomes))


def _renamed(row: MatchRow, labels: Mapping[str, str]) -> MatchRow:
    return replace(row, seats=tuple(labels.get(s, s) for s in row.seats),
                   sides=tuple(shown_side(side, labels) for side in row.sides))


def shown_side(side: str, labels: Mapping[str, str]) -> str:
    """A side's label with each bot by its label: a rotating team's side is its members'
    names joined by "+" (schedule.py; a name holds no "+")."""
    return "+".join(labels.get(member, member) for member in side.split("+"))


def standings_from_store(store: ResultStore, *, prior: float | None = DEFAULT_PRIOR,
                         every_version: bool = False, checked_elsewhere: bool = False) -> Standings:
    """The standings of a results store: of each bot's current version, or with
    ``every_version`` of every version it played as (versions.py). Only the records of forfeited matches are read (for
    the escobas of the hand the forfeit cut short); one that cannot be read keeps them, and a
    note says so: the rows alone always give the table. ``checked_elsewhere``: the rows are not
    checked against the schedule here (``versioned_rows``)."""
    from arena.tournament.store import UNSEALED_KEY, StoreError

    meta = store.meta()
    game = meta.get("game")
    if not isinstance(game, dict):
        raise StoreError(f"{store.folder}: the store has no tournament description")
    seating = seating_of(game)
    # Only rows that are the schedule's matches are counted: an extra row is refused, not added.
    versioned = versioned_rows(store, [bot["name"] for bot in game["bots"]], every_version=every_version,
                               checked_elsewhere=checked_elsewhere)
    rows = versioned.rows
    unscored: dict[str, tuple[int, ...]] = {}
    unreadable = 0
    for row in rows:
        if row.reason == EndReason.FORFEIT and any(row.escobas):
            try:
                unscored[row.id] = unscored_escobas(store.record(row.id), seating.sides)
            except StoreError:
                unreadable += 1
    standings = compute_standings(
        rows,
        seating,
        versioned.names,
        by_bot_crosstable=game.get("teams") == "rotating",
        prior=prior,
        unscored=unscored,
    )
    if versioned.identities:
        by_label = versioned.identities
        bots = tuple(replace(b, version=by_label[b.name].version, identity=by_label[b.name].key) if b.name in by_label
                     else b for b in standings.bots)
        standings = replace(standings, bots=bots)
    if versioned.several and not every_version:
        standings = replace(standings, notes=(*standings.notes, "current versions only; --versions all shows every "
                                              "version of the bots that changed"))
    if unreadable:
        note = (
            f"{unreadable} forfeited match{'es' if unreadable != 1 else ''} with an unreadable record: "
            "escobas of the hand the forfeit cut short are counted (arena verify names the record)"
        )
        standings = replace(standings, notes=(*standings.notes, note))
    unsealed = meta.get(UNSEALED_KEY)
    if unsealed:
        standings = replace(standings, notes=(*standings.notes, unsealed_note(str(unsealed))))
    return standings


def unsealed_note(why: str) -> str:
    return (f"unsealed: matches of this tournament were played by bots that were not sealed ({why}): a bot "
            "could reach other bots and the arena's processes (docs/PROTOCOL.md, \"Limits and containment\")")


def _order_labels(labels: list[str], cross: dict[tuple[str, str], list[float]]) -> list[str]:
    """Side labels by score fraction, best first (teams have no rating of their own)."""

    def fraction(label: str) -> float:
        points = sum(v[0] for (a, _), v in cross.items() if a == label)
        games = sum(v[1] for (a, _), v in cross.items() if a == label)
        return points / games if games else 0.0

    return sorted(labels, key=lambda label: (-fraction(label), labels.index(label)))


def plain_number(value: float | None, digits: int) -> float | None:
    """``value`` rounded to ``digits`` places for the machine-readable forms: ``None`` when it
    is unknown or not finite, and never ``-0.0`` (a rounded -0.001 is 0.0)."""
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits) + 0.0
