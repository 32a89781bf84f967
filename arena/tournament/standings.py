"""Standings, crosstable and ratings, derived from the store's match rows every time.

Pure: plain rows in, plain values out. Formatting to text is at the bottom and is
also pure (returns strings; the CLI prints them).

Two-sided tournaments count wins, draws and losses; with three or more sides a match has
finishing places instead (1st, 2nd, ...), and the ratings come from the Plackett-Luce model
of that order (see docs/RATINGS.md).
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.printable import printable
from arena.protocol import Termination
from arena.ratings import DEFAULT_PRIOR, MatchResult, Model, PairResult, RatingTable, fit_ratings
from arena.record import EndReason
from arena.rules import Seating
from arena.tables_format import TableFormat, render_json, render_table
from arena.tournament.store import MatchRow, ResultStore, StoreError

FORMATS = ("plain", "github", "csv", "json")
OK = Termination.OK.value  # a MatchRow holds the enums' text


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
    hands: int
    escobas: int
    failures: tuple[tuple[str, int], ...]  # reason -> count (substituted failures too), sorted by reason
    status: str = "rated"
    note: str = ""
    # Matches of three or more sides: how often the bot's side finished 1st, 2nd, ... (tied
    # sides share the better place). Empty in two-sided tournaments, where W-D-L says it.
    places: tuple[int, ...] = ()

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

    def to_dict(self) -> dict[str, Any]:
        """Plain values; ``places`` (a list: 1st, 2nd, ...) replaces ``wins``, ``draws`` and
        ``losses`` when matches have three or more sides."""
        record: dict[str, Any] = (
            {"places": list(self.places)} if self.places else {"wins": self.wins, "draws": self.draws, "losses": self.losses}
        )
        return {
            "rank": self.rank,
            "name": self.name,
            "elo": _round(self.elo, 2),
            "ci95": _round(self.ci95, 2),
            "los_next": _round(self.los_next, 4),
            "matches": self.matches,
            **record,
            "points_for": self.points_for,
            "points_against": self.points_against,
            "hands": self.hands,
            "points_per_hand": _round(self.points_per_hand, 3),
            "escobas": self.escobas,
            "escobas_per_hand": _round(self.escobas_per_hand, 3),
            "failures": dict(self.failures),
            "status": self.status,
            "note": self.note,
        }


@dataclass(frozen=True)
class Crosstable:
    """Score of each row entrant against each column entrant: (points, games); a win is 1, a draw 1/2."""

    names: tuple[str, ...]
    cells: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)

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


def _forfeited(row: MatchRow, seating: Seating) -> list[bool]:
    return [
        row.reason == EndReason.FORFEIT and any(row.terminations[s] != OK for s in seating.seats_of(side))
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
) -> Standings:
    """Everything in the standings table, derived from the match rows.

    ``by_bot_crosstable``: key the crosstable by bot rather than by side label (rotating
    partners, where side labels are one-off teams). ``prior``: the rating prior's strength
    in virtual draws per bot (0: the plain maximum-likelihood fit; None: the default).
    """
    bot_names = list(dict.fromkeys(bots))
    tallies: dict[str, _Tally] = {name: _Tally() for name in bot_names}
    results: list[PairResult | MatchResult] = []
    multi = seating.sides > 2
    cross: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    labels: list[str] = []
    for row in rows:
        members = side_members(row, seating)
        pairs = pair_results(row, seating)
        results.append(match_result(row, seating))
        places = match_places(row, seating)
        total = sum(row.scores)
        for side, side_bots in enumerate(members):
            for name in side_bots:
                t = tallies.setdefault(name, _Tally())
                t.matches += 1
                if multi:
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
                t.hands += row.hands
                t.escobas += row.escobas[side]
        for seat, reason in row.failures:
            tallies[row.seats[seat]].failures[reason] += 1
        # Crosstable: from each pairwise result, both directions.
        k = 0
        for i in range(seating.sides):
            for j in range(i + 1, seating.sides):
                score = pairs[k].score_a
                k += 1
                if by_bot_crosstable:
                    keys_i, keys_j = members[i], members[j]
                else:
                    keys_i, keys_j = (row.sides[i],), (row.sides[j],)
                for a in keys_i:
                    for b in keys_j:
                        cross[a, b][0] += score
                        cross[a, b][1] += 1
                        cross[b, a][0] += 1.0 - score
                        cross[b, a][1] += 1
        for label in (row.sides if not by_bot_crosstable else [b for m in members for b in m]):
            if label not in labels:
                labels.append(label)

    table = fit_ratings(results, players=bot_names, prior=prior)
    standings = []
    for rating in table.ratings:
        t = tallies.get(rating.name, _Tally())
        standings.append(
            BotStanding(
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
                places=tuple(t.places or [0] * seating.sides) if multi else (),
            )
        )
    standings, ties = _break_ties(standings, table)
    order = {s.name: i for i, s in enumerate(standings)}
    if by_bot_crosstable or all(label in order for label in labels):
        # Bots (alone or as clone teams) follow the standings' order.
        names = tuple(sorted(labels, key=lambda n: order.get(n, len(order))))
    else:
        names = tuple(_order_labels(labels, cross))
    crosstable = Crosstable(names, {key: (v[0], int(v[1])) for key, v in cross.items()})
    return Standings(
        tuple(standings),
        crosstable,
        len(rows),
        (*table.notes, *ties),
        sides=seating.sides,
        model=table.model,
        prior=table.prior,
    )


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


def standings_from_store(store: ResultStore, *, prior: float | None = DEFAULT_PRIOR) -> Standings:
    game = store.meta().get("game")
    if not isinstance(game, dict):
        raise StoreError(f"{store.folder}: the store has no tournament description")
    from arena.tournament.audit import scheduled_rows

    # Only rows that are the schedule's matches are counted: an extra row is refused, not added.
    return compute_standings(
        scheduled_rows(store),
        seating_of(game),
        [bot["name"] for bot in game["bots"]],
        by_bot_crosstable=game.get("teams") == "rotating",
        prior=prior,
    )


def _order_labels(labels: list[str], cross: dict[tuple[str, str], list[float]]) -> list[str]:
    """Side labels by score fraction, best first (teams have no rating of their own)."""

    def fraction(label: str) -> float:
        points = sum(v[0] for (a, _), v in cross.items() if a == label)
        games = sum(v[1] for (a, _), v in cross.items() if a == label)
        return points / games if games else 0.0

    return sorted(labels, key=lambda label: (-fraction(label), labels.index(label)))


def _round(value: float | None, digits: int) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


# --- text forms -----------------------------------------------------------------------

STANDINGS_HEADERS = (
    "rank",
    "bot",
    "elo",
    "ci95",
    "los_next",
    "matches",
    "w-d-l",
    "pts_for",
    "pts_against",
    "pts/hand",
    "escobas/hand",
    "failures",
)


_ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th")


def standings_headers(standings: Standings) -> tuple[str, ...]:
    """The standings table's headers: ``w-d-l`` becomes ``1st-2nd-3rd`` (the counts of each
    finishing place) when matches have three or more sides."""
    if standings.sides <= 2:
        return STANDINGS_HEADERS
    places = "-".join(_ORDINALS[: standings.sides])
    return tuple(places if h == "w-d-l" else h for h in STANDINGS_HEADERS)


def standings_rows(standings: Standings) -> list[list[Any]]:
    rows = []
    for s in standings.bots:
        rows.append(
            [
                s.rank,
                s.name,
                _fmt_elo(s),
                _fmt(s.ci95, "±{:.0f}"),
                _fmt_los(s.los_next),
                s.matches,
                s.record,
                s.points_for,
                s.points_against,
                _fmt(s.points_per_hand, "{:.2f}"),
                _fmt(s.escobas_per_hand, "{:.3f}"),
                ", ".join(f"{reason} {n}" for reason, n in s.failures) or "-",
            ]
        )
    return rows


def crosstable_rows(standings: Standings) -> tuple[list[str], list[list[str]]]:
    names = standings.crosstable.names
    headers = ["", *names, "score"]
    rows = []
    for a in names:
        cells = []
        total_points, total_games = 0.0, 0
        for b in names:
            cell = standings.crosstable.cell(a, b)
            if a == b or cell is None:
                cells.append("-" if a == b else "")
            else:
                points, games = cell
                total_points += points
                total_games += games
                cells.append(f"{_half(points)}/{games}")
        rows.append([a, *cells, f"{_half(total_points)}/{total_games}"])
    return headers, rows


def format_standings(standings: Standings, fmt: str) -> str:
    if fmt == "json":
        return render_json([s.to_dict() for s in standings.bots])
    notes = [*standings.notes, *(f"{s.name}: {s.note}" for s in standings.bots if s.note)]
    return _format_table(list(standings_headers(standings)), standings_rows(standings), fmt, notes=notes)


def format_crosstable(standings: Standings, fmt: str) -> str:
    headers, rows = crosstable_rows(standings)
    if fmt == "json":
        names = standings.crosstable.names
        data = {
            a: {b: {"points": c[0], "games": c[1]} for b in names if (c := standings.crosstable.cell(a, b)) is not None}
            for a in names
        }
        return json.dumps({"names": list(names), "scores": data}, indent=2)
    return _format_table(headers, rows, fmt)


def _format_table(headers: list[str], rows: list[list[Any]], fmt: str, notes: Sequence[str] = ()) -> str:
    text = render_table(headers, rows, TableFormat(fmt))
    if notes and fmt != "csv":
        text += "\n\n" + "\n".join(f"Note: {printable(n)}" for n in notes)
    return text


def _fmt_elo(s: BotStanding) -> str:
    if s.status == "unbounded_above":
        return "+inf"
    if s.status == "unbounded_below":
        return "-inf"
    if s.status == "separated":
        return "unbounded"
    return _fmt(s.elo, "{:+.0f}")


def _fmt_los(los: float | None) -> str:
    if los is None:
        return "-"
    if los > 0.999:
        return ">99.9%"
    if los < 0.001:
        return "<0.1%"
    return f"{100 * los:.1f}%"


def _fmt(value: float | None, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def _half(points: float) -> str:
    return f"{points:g}"
