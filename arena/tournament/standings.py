"""Standings, crosstable and ratings, derived from the store's match rows every time.

Pure: plain rows in, plain values out. Formatting to text is at the bottom and is
also pure (returns strings; the CLI prints them).

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
from typing import Any

from arena.printable import printable
from arena.protocol import Termination
from arena.ratings import DEFAULT_PRIOR, MatchResult, Model, PairResult, RatingTable, fit_ratings
from arena.record import EndReason
from arena.rules import Seating
from arena.tables_format import TableFormat, render_json, render_table
from arena.tournament.store import MatchRow, ResultStore, StoreError

FORMATS = ("plain", "github", "csv", "json")
WHATS = ("standings", "crosstable")
OK = Termination.OK.value  # a MatchRow holds the enums' text
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
    return {row.seats[seat] for seat, termination in enumerate(row.terminations) if termination != OK}


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
        played = hands_played(row)
        cut_short = unscored.get(row.id, ())
        forfeited = _forfeited(row, seating)
        failed = _failed_bots(row)
        for side, side_bots in enumerate(members):
            others_forfeited = any(f for s, f in enumerate(forfeited) if s != side)
            for name in side_bots:
                t = tallies.setdefault(name, _Tally())
                t.forfeits += forfeited[side] and name in failed
                t.opponent_forfeits += others_forfeited
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
                t.hands += played
                t.escobas += row.escobas[side] - (cut_short[side] if side < len(cut_short) else 0)
        for seat, reason in row.failures:
            tallies[row.seats[seat]].failures[reason] += 1
        for seat, cpu_ms, wall_ms in row.usage:
            t = tallies[row.seats[seat]]
            t.cpu_ms += cpu_ms
            t.wall_ms += wall_ms
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
                forfeits=t.forfeits,
                opponent_forfeits=t.opponent_forfeits,
                group=rating.group,
                cpu_ms=t.cpu_ms,
                wall_ms=t.wall_ms,
            )
        )
    standings, ties = _break_ties(standings, table)
    order = {s.name: i for i, s in enumerate(standings)}
    if by_bot_crosstable or all(label in order for label in labels):
        # Bots (alone or as clone teams) follow the standings' order.
        names = tuple(sorted(labels, key=lambda n: order.get(n, len(order))))
    else:
        names = tuple(_order_labels(labels, cross))
    crosstable = Crosstable(names, {key: (v[0], int(v[1])) for key, v in cross.items()}, by_bot=by_bot_crosstable)
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


def standings_from_store(store: ResultStore, *, prior: float | None = DEFAULT_PRIOR) -> Standings:
    """The standings of a results store. Only the records of forfeited matches are read (for
    the escobas of the hand the forfeit cut short); one that cannot be read keeps them, and a
    note says so: the rows alone always give the table."""
    game = store.meta().get("game")
    if not isinstance(game, dict):
        raise StoreError(f"{store.folder}: the store has no tournament description")
    from arena.tournament.audit import scheduled_rows

    seating = seating_of(game)
    # Only rows that are the schedule's matches are counted: an extra row is refused, not added.
    rows = scheduled_rows(store)
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
        [bot["name"] for bot in game["bots"]],
        by_bot_crosstable=game.get("teams") == "rotating",
        prior=prior,
        unscored=unscored,
    )
    if unreadable:
        note = (
            f"{unreadable} forfeited match{'es' if unreadable != 1 else ''} with an unreadable record: "
            "escobas of the hand the forfeit cut short are counted (arena verify names the record)"
        )
        standings = replace(standings, notes=(*standings.notes, note))
    return standings


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


# --- the ratings columns, shared with ``arena rate`` ---------------------------------------------
#
# One set of headers for the text tables and one set of keys for CSV and JSON, in both commands.

RATING_HEADERS = ("rank", "bot", "elo", "ci95", "los_next", "matches")
RATING_KEYS = ("rank", "name", "elo", "ci95", "los_next", "matches")
_ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th")


def signed(value: float, digits: int = 0) -> str:
    """``+72``, ``-35``; ``0`` when it rounds to zero (never ``-0`` or ``+0``)."""
    text = f"{value:+.{digits}f}"
    return f"{0:.{digits}f}" if float(text) == 0 else text


def elo_cell(elo: float | None, status: str) -> str:
    """The rating as a text table shows it; ``+inf``/``-inf``/``unbounded`` only without a prior."""
    if status == "unbounded_above":
        return "+inf"
    if status == "unbounded_below":
        return "-inf"
    if status == "separated":
        return "unbounded"
    return "-" if elo is None else signed(elo)


def ci95_cell(ci95: float | None, status: str) -> str:
    """``±142``; ``?`` for a rated bot without an interval (team-mates never apart), else ``-``."""
    if status not in ("rated", "not_identified"):
        return "-"
    return "?" if ci95 is None else f"±{ci95:.0f}"


def los_cell(los: float | None) -> str:
    if los is None:
        return "-"
    if los > 0.999:
        return ">99.9%"
    if los < 0.001:
        return "<0.1%"
    return f"{100 * los:.1f}%"


def places_header(width: int) -> str:
    return "-".join(_ORDINALS[:width])


def record_header(two_sided: bool, places: int) -> str:
    """The header of the record column: ``w-d-l``, the finishing places (``1st-2nd-3rd``) of
    matches with more sides, or both (``w-d-l, places 1st-2nd-3rd``) when the data mix them."""
    if not places:
        return "w-d-l"
    if not two_sided:
        return places_header(places)
    return f"w-d-l, places {places_header(places)}"


def place_keys(width: int) -> list[str]:
    """The CSV columns of a list of finishing-place counts: ``place_1``, ``place_2``, ..."""
    return [f"place_{k}" for k in range(1, width + 1)]


# --- text forms -----------------------------------------------------------------------

STANDINGS_HEADERS = (
    *RATING_HEADERS,
    "w-d-l",
    "forfeits",
    "opp_forfeits",
    "pts_for",
    "pts_against",
    "hands",
    "pts/hand",
    "escobas/hand",
    "cpu/wall",
    "failures",
)


def standings_headers(standings: Standings) -> tuple[str, ...]:
    """The standings table's headers: ``w-d-l`` becomes ``1st-2nd-3rd`` (the counts of each
    finishing place) when matches have three or more sides."""
    if standings.sides <= 2:
        return STANDINGS_HEADERS
    return tuple(places_header(standings.sides) if h == "w-d-l" else h for h in STANDINGS_HEADERS)


def standings_rows(standings: Standings) -> list[list[Any]]:
    rows = []
    for s in standings.bots:
        rows.append(
            [
                s.rank,
                s.name,
                elo_cell(s.elo, s.status),
                ci95_cell(s.ci95, s.status),
                los_cell(s.los_next),
                s.matches,
                s.record,
                s.forfeits,
                s.opponent_forfeits,
                s.points_for,
                s.points_against,
                s.hands,
                _fmt(s.points_per_hand, "{:.2f}"),
                _fmt(s.escobas_per_hand, "{:.3f}"),
                _fmt(s.cpu_per_wall, "{:.2f}"),
                ", ".join(f"{reason} {n}" for reason, n in s.failures) or "-",
            ]
        )
    return rows


def standings_keys(standings: Standings) -> list[str]:
    """The CSV columns of the standings: the JSON keys, with ``places`` spread over
    ``place_1``.. and ``failures`` over ``failures_<reason>`` for every failure reason."""
    record = place_keys(standings.sides) if standings.sides > 2 else ["wins", "draws", "losses"]
    return [
        *RATING_KEYS[:5],
        "group",
        "matches",
        *record,
        "forfeits",
        "opponent_forfeits",
        "points_for",
        "points_against",
        "hands",
        "points_per_hand",
        "escobas",
        "escobas_per_hand",
        *(f"failures_{reason}" for reason in FAILURE_REASONS),
        "cpu_s",
        "cpu_per_wall",
        "status",
        "note",
    ]


def _csv_record(standing: BotStanding) -> dict[str, Any]:
    data = standing.to_dict()
    places = data.pop("places", None)
    if places is not None:
        data.update(zip(place_keys(len(places)), places, strict=True))
    failures = data.pop("failures")
    data.update({f"failures_{reason}": failures.get(reason, 0) for reason in FAILURE_REASONS})
    return data


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


CROSSTABLE_KEYS = ("name", "opponent", "points", "games")


def crosstable_records(standings: Standings) -> list[dict[str, Any]]:
    """The crosstable as one object per cell (``name`` against ``opponent``), in the table's
    order; a pair that never met has no object."""
    table = standings.crosstable
    out = []
    for a in table.names:
        for b in table.names:
            cell = table.cell(a, b)
            if a != b and cell is not None:
                out.append({"name": a, "opponent": b, "points": plain_number(cell[0], 1), "games": cell[1]})
    return out


def crosstable_note(standings: Standings) -> str:
    """What a crosstable cell is."""
    if standings.crosstable.by_bot:
        return (
            "partners rotate, so rows and columns are bots: a cell is the row bot's score in its matches "
            "against a side that included the column bot (a win 1, a draw 1/2), as points/games; "
            "score adds the row's cells, so a match counts once per opposing bot"
        )
    if standings.sides > 2:
        return (
            "a cell counts each match once for every two sides in it: 1 when the row finished ahead of the "
            "column, 1/2 when level, 0 behind, as points/games; score adds the row's cells"
        )
    return "a cell is the row's score against the column (a win 1, a draw 1/2), as points/games; score adds the row's cells"


def standings_notes(standings: Standings) -> list[str]:
    """The notes under the standings: the fit's, then each bot's."""
    return [*standings.notes, *(f"{s.name}: {s.note}" for s in standings.bots if s.note)]


def format_standings(standings: Standings, fmt: str) -> str:
    """The standings in ``fmt``: a text table with its notes (plain, github); CSV with one
    header row and plain numbers (``standings_keys``); JSON, a list of objects (``to_dict``).
    The notes are left out of CSV and JSON (``standings_notes`` gives them)."""
    form = TableFormat(fmt)
    if form is TableFormat.JSON:
        return render_json([s.to_dict() for s in standings.bots])
    if form is TableFormat.CSV:
        keys = standings_keys(standings)
        return render_table(keys, [[_csv_record(s)[k] for k in keys] for s in standings.bots], form)
    headers = list(standings_headers(standings))
    # As ``arena rate`` shows the same columns: numbers right, names and texts left.
    align = ["left" if h in ("bot", "failures") else "right" for h in headers]
    return _format_table(headers, standings_rows(standings), form, standings_notes(standings), align)


def format_crosstable(standings: Standings, fmt: str) -> str:
    """The crosstable in ``fmt``: a matrix of ``points/games`` with a note saying what a cell is
    (plain, github); one row or object per cell with ``CROSSTABLE_KEYS`` (CSV, JSON)."""
    form = TableFormat(fmt)
    if form is TableFormat.JSON:
        return render_json(crosstable_records(standings))
    if form is TableFormat.CSV:
        records = crosstable_records(standings)
        return render_table(CROSSTABLE_KEYS, [[r[k] for k in CROSSTABLE_KEYS] for r in records], form)
    headers, rows = crosstable_rows(standings)
    return _format_table(headers, rows, form, [crosstable_note(standings)])


def _format_table(
    headers: list[str], rows: list[list[Any]], fmt: TableFormat, notes: Sequence[str] = (), align: Sequence[str] | None = None
) -> str:
    text = render_table(headers, rows, fmt, colalign=align)
    if notes:
        text += "\n\n" + "\n".join(f"Note: {printable(n)}" for n in notes)
    return text


def _fmt(value: float | None, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def _half(points: float) -> str:
    return f"{points:g}"
