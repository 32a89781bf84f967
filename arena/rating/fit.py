"""The fit behind ``arena.rating.table.fit_ratings``: its numerical half, apart so that importing
the ratings' values does not load numpy (every command of the CLI imports them; only a fit
needs the algebra, in ``arena.rating.engine``).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from arena.rating.engine import (
    INTERVAL_MAX,
    Covariance,
    FitError,
    MatchBuilder,
    MatchData,
    Records,
    Separation,
    components,
    invert,
    min_norm,
    newton,
    objective_for,
    records,
    restrict,
    separation,
    side_parts,
)
from arena.rating.linalg import SparseMatrix
from arena.rating.table import (
    DEFAULT_PRIOR,
    ELO_PER_NAT,
    Z95,
    AnchorError,
    BotRating,
    ConvergenceError,
    Model,
    RatingError,
    RatingGroup,
    RatingTable,
    Result,
    Status,
    check_prior,
    check_result,
    pair_los,
    prior_sd_elo,
)


class _CovarianceView(Mapping[tuple[str, str], float]):
    """Covariance (Elo^2) of the reported values of any two rated bots of one group.

    Computed on demand from each part's inverse information matrix, so a league of
    thousands of bots never holds a dictionary of millions of pairs.
    """

    def __init__(self) -> None:
        self._parts: list[Covariance] = []
        self._where: dict[str, tuple[int, int]] = {}

    def add(self, cov: Covariance, members: Mapping[str, int]) -> None:
        for name, i in members.items():
            self._where[name] = (len(self._parts), i)
        self._parts.append(cov)

    def __getitem__(self, key: tuple[str, str]) -> float:
        a, b = key
        pa, ia = self._where[a]
        pb, ib = self._where[b]
        if pa != pb:
            raise KeyError(key)
        return ELO_PER_NAT**2 * self._parts[pa].cov(ia, ib)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        by_part: dict[int, list[str]] = defaultdict(list)
        for name, (p, _i) in self._where.items():
            by_part[p].append(name)
        for names in by_part.values():
            for a in names:
                for b in names:
                    yield a, b

    def __len__(self) -> int:
        counts: dict[int, int] = defaultdict(int)
        for p, _i in self._where.values():
            counts[p] += 1
        return sum(c * c for c in counts.values())


def _all_matches(n: int) -> str:
    return "its only match" if n == 1 else f"all {n} matches"


@dataclass
class _Row:
    name: str
    status: Status
    elo: float | None = None
    ci95: float | None = None
    note: str = ""
    level: float = 0.0  # position along the separation direction, for ordering


def fit(
    results: Iterable[Result],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    prior: float | None = DEFAULT_PRIOR,
    players: Iterable[str] = (),
) -> RatingTable:
    """``fit_ratings`` (see there)."""
    strength = check_prior(prior)
    if not math.isfinite(anchor_elo):
        raise RatingError(f"anchor Elo must be a finite number, got {anchor_elo!r}")
    builder = MatchBuilder()
    for name in players:
        builder.bot(name)
    for index, raw in enumerate(results):
        sides, places = check_result(index, raw)
        builder.add(sides, places)
    if anchor is not None and anchor not in builder.bot_index:
        raise AnchorError(anchor, "no such bot in the results")
    try:
        # One BLAS thread: the dense algebra here is small next to the cost of BLAS worker
        # threads that spin while the fit runs Python, which on a machine busy with bots
        # (or other work) made the fit several times slower in CPU and wall time.
        with threadpool_limits(limits=1, user_api="blas"):
            data = builder.build()
            if strength == 0.0:
                return _fit(data, anchor, anchor_elo, strength).table
            return _fit_field_prior(data, anchor, anchor_elo, strength)
    except FitError as exc:
        raise ConvergenceError(str(exc)) from exc


# A spread is estimated only from groups of at least this many rated bots: from fewer it is
# mostly noise, and one perfect record among a handful would widen the prior without end.
SPREAD_MIN_BOTS = 10
# The weakest prior the widening goes to (sd 1,100 Elo): a prior still, so every rating stays finite.
PRIOR_FLOOR = 0.1
# Steps of the widening (each one fit); it stops earlier once the strength moves by under 1%.
PRIOR_STEPS = 12
# The search for the prior of the highest evidence, on the log of its strength: the first step
# from the EM's strength (0.1: 5% in sd), and the bracket's width where it stops (0.02: 1% in sd).
EVIDENCE_STEP = 0.1
EVIDENCE_TOL = 0.02


@dataclass(frozen=True)
class _Fitted:
    table: RatingTable
    # log p(results | prior) by the Laplace approximation, summed over the groups of at least
    # SPREAD_MIN_BOTS bots (up to a constant); None without such a group or where one has no
    # factored information matrix (a group beyond INTERVAL_MAX, or a singular one).
    evidence: float | None


def _fit_field_prior(data: MatchData, anchor: str | None, anchor_elo: float, strength: float) -> RatingTable:
    """The fit with a prior at most ``strength`` virtual draws, weaker when the field is wider
    than the prior's sd: its variance then is the field's, the one under which the results
    are likeliest (the evidence, by the Laplace approximation), searched from the fixed point
    of a Gaussian hierarchical model's EM (the mean over rated bots of rating^2 + variance).

    Why: a prior narrower than the field pulls the ends in, and where the design leaves the
    field's spread to the prior (a ladder or a swiss meets mostly neighbours) the pull is
    many intervals wide: a 700 Elo field read 0.5 of its true spread and its intervals
    covered the truth a fifth of the time. The EM alone reads a wide field narrow (2% on 700
    Elo round robins, 3-4% on ladders' fields and up to 17%, whose intervals then covered 75%): it takes the
    likelihood as Gaussian, with the information of the fitted ratings, and ratings pulled in
    are closer, so their matches look more informative than they are; the evidence counts
    that (its log determinant). The widening is a no-op for fields no wider than the prior's
    sd by the EM, so the prior's strength keeps its meaning there."""
    current = strength
    fitted = _fit(data, None, 0.0, current)
    for _ in range(PRIOR_STEPS):
        spread = _spread(fitted.table)
        if spread is None:
            break
        wanted = min(strength, max(PRIOR_FLOOR, 4.0 / spread))
        if abs(wanted - current) <= 0.01 * current:
            break
        current = wanted
        fitted = _fit(data, None, 0.0, current)
    if current != strength:
        current, fitted = _most_evident(data, current, strength, fitted)
    # ``fitted`` is the fit at ``current`` already: only an anchor needs another.
    table = fitted.table if anchor is None else _fit(data, anchor, anchor_elo, current).table
    if current == strength:
        return table
    note = (f"prior widened from {strength:g} to {current:.3g} virtual draws: the field is wider than "
            f"the prior's sd of {prior_sd_elo(strength):.0f} Elo, so the prior's sd is the field's")
    return dataclasses.replace(table, notes=(*table.notes, note))


def _most_evident(data: MatchData, start: float, strongest: float, fitted: _Fitted) -> tuple[float, _Fitted]:
    """The prior strength in [PRIOR_FLOOR, strongest] of the highest evidence, and its fit:
    from ``start`` (whose fit is ``fitted``), steps doubling in log strength while the evidence
    grows, then a golden-section search of the bracket found (the evidence of a log strength is
    smooth and, in the fields measured, has a single peak)."""
    if fitted.evidence is None:
        return start, fitted
    low, high = math.log(PRIOR_FLOOR), math.log(strongest)
    fits: dict[float, _Fitted] = {math.log(start): fitted}

    def evidence(u: float) -> float:
        if u not in fits:
            fits[u] = _fit(data, None, 0.0, math.exp(u))
        value = fits[u].evidence
        return -math.inf if value is None else value

    best = math.log(start)
    # Bracket the peak: [a, b] around ``best``, the evidence lower (or the bound) at both ends.
    a, b = best - EVIDENCE_STEP, best + EVIDENCE_STEP
    for direction in (-1.0, 1.0):  # weaker first: the EM's fixed point is the narrower side
        step, moved = EVIDENCE_STEP, False
        while True:
            nxt = min(high, max(low, best + direction * step))
            if nxt == best or evidence(nxt) <= evidence(best):
                break
            best, moved = nxt, True
            step *= 2.0
        if moved:  # the point before ``best`` is half a step behind it, the one that fell a step ahead
            a, b = sorted((best - direction * step / 2.0, best + direction * step))
            break
    a, b = max(low, a), min(high, b)
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - golden * (b - a), a + golden * (b - a)
    while b - a > EVIDENCE_TOL:
        if evidence(c) >= evidence(d):
            b, d = d, c
            c = b - golden * (b - a)
        else:
            a, c = c, d
            d = a + golden * (b - a)
    best = max(fits, key=lambda u: (evidence(u), -u))
    # The start's own strength where it stays the best (its fit was made at it, not at exp(log)).
    return (start if best == math.log(start) else math.exp(best)), fits[best]


def _spread(table: RatingTable) -> float | None:
    """The field's variance (nats^2), each group about its mean: rating^2 + variance, averaged
    over the rated bots of groups of at least SPREAD_MIN_BOTS; None without such a group."""
    by_group: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for row in table.ratings:
        if row.status is Status.RATED and row.elo is not None and row.ci95 is not None:
            by_group[row.group].append((row.elo / ELO_PER_NAT, (row.ci95 / Z95 / ELO_PER_NAT) ** 2))
    total, count = 0.0, 0
    for members in by_group.values():
        if len(members) < SPREAD_MIN_BOTS:
            continue
        mean = sum(elo for elo, _ in members) / len(members)
        total += sum((elo - mean) ** 2 + var for elo, var in members)
        count += len(members)
    return total / count if count else None


def _fit(data: MatchData, anchor: str | None, anchor_elo: float, strength: float) -> _Fitted:
    names = data.names
    rec = records(data)
    precision = strength / 4.0
    ml = strength == 0.0
    component = components(data)
    sep: Separation | None = None
    if ml:
        sep = separation(data, component)
        part = sep.part
        level = sep.level
    else:
        part = component
        level = np.zeros(data.n_bots)
    side_part = side_parts(data, part)

    by_component: dict[int, list[int]] = defaultdict(list)
    for bot, ci in enumerate(component.tolist()):
        by_component[ci].append(bot)
    ordered = sorted(by_component.values(), key=lambda bots: (-len(bots), min(names[b] for b in bots)))

    rows: dict[str, _Row] = {}
    covariance = _CovarianceView()
    clusters: list[tuple[int, float, list[str]]] = []
    notes: list[str] = []
    evidence: float | None = None
    evidence_known = True
    for ci, comp in enumerate(ordered):
        if len(comp) == 1 and rec.matches[comp[0]] == 0:
            name = names[comp[0]]
            rows[name] = _Row(name, Status.NO_MATCHES, note="no matches")
            clusters.append((ci, 0.0, [name]))
            continue
        by_part: dict[int, list[int]] = defaultdict(list)
        for bot in comp:
            by_part[int(part[bot])].append(bot)
        # Parts in the order of their first member's name (ties between equal-sized parts
        # for the main group go to the earlier one).
        for p, members in sorted(by_part.items(), key=lambda item: min(names[b] for b in item[1])):
            member_names = sorted(names[b] for b in members)
            lvl = float(level[members[0]])
            clusters.append((ci, lvl, member_names))
            blocks = restrict(data.blocks, side_part, p, sep.separated if sep is not None else frozenset())
            if not blocks:
                for bot in members:
                    rows[names[bot]] = _singleton_row(names[bot], rec, bot, sep, lvl)
                continue
            bots = np.array(sorted(members), dtype=np.int64)
            obj = objective_for(blocks, data, bots, precision)
            fit = newton(obj, level_free=ml)
            log_det = _rate_part(data, bots, fit.strengths, fit.info, precision, ml, anchor, anchor_elo, lvl, rows,
                                 covariance, notes)
            if ml or len(members) < SPREAD_MIN_BOTS:
                continue
            if log_det is None:
                evidence_known = False
                continue
            # Laplace: log p(results | prior) = the log-posterior at its mode, plus the prior's
            # normalisation (n/2) log(precision), minus (1/2) log det(information + precision).
            own = obj.value(fit.strengths) + 0.5 * len(members) * math.log(precision) - 0.5 * log_det
            evidence = own if evidence is None else evidence + own

    if anchor is not None and rows[anchor].status is not Status.RATED:
        raise AnchorError(anchor, f"it has no finite rating ({rows[anchor].note})")
    model = Model.PLACKETT_LUCE if data.max_sides > 2 else Model.BRADLEY_TERRY
    table_rows, groups, table_notes = _assemble(names, rec, rows, clusters, anchor, anchor_elo, strength, covariance, model)
    table = RatingTable(
        ratings=table_rows,
        groups=groups,
        notes=(*table_notes, *notes),
        prior=strength,
        anchor=anchor,
        anchor_elo=anchor_elo,
        model=model,
        covariance=covariance,
    )
    return _Fitted(table, evidence if evidence_known else None)


def _singleton_row(name: str, rec: Records, bot: int, sep: Separation | None, level: float) -> _Row:
    hint = "a positive --prior (the default) gives a finite estimate"
    matches = int(rec.matches[bot])
    two_sided_only = not rec.places[bot].any()
    beat = bool(sep.beat[bot]) if sep is not None else True
    beaten = bool(sep.beaten[bot]) if sep is not None else True
    if not beaten:
        what = "won" if two_sided_only else "finished first in"
        note = f"{what} {_all_matches(matches)}: rating unbounded above; {hint}"
        return _Row(name, Status.UNBOUNDED_ABOVE, note=note, level=level)
    if not beat:
        what = "lost" if two_sided_only else "finished last in"
        note = f"{what} {_all_matches(matches)}: rating unbounded below; {hint}"
        return _Row(name, Status.UNBOUNDED_BELOW, note=note, level=level)
    record = f"{rec.wins[bot]}-{rec.draws[bot]}-{rec.losses[bot]}"
    if not two_sided_only:
        record = "places " + "-".join(str(int(v)) for v in rec.places[bot])
    return _Row(
        name,
        Status.SEPARATED,
        note=f"{record} with no upset: every result is perfectly ordered, so the rating is unbounded; {hint}",
        level=level,
    )


def _rate_part(
    data: MatchData,
    bots: np.ndarray,
    strengths: np.ndarray,
    info: SparseMatrix,
    precision: float,
    ml: bool,
    anchor: str | None,
    anchor_elo: float,
    level: float,
    rows: dict[str, _Row],
    covariance: _CovarianceView,
    notes: list[str],
) -> float | None:
    """Rows for the bots of one part; returns the log determinant of its information plus
    the prior (None without one: a part beyond INTERVAL_MAX, or not factored)."""
    names = [data.names[b] for b in bots.tolist()]
    n = len(names)
    idx = {name: i for i, name in enumerate(names)}
    a = idx.get(anchor) if anchor is not None else None
    ref = anchor_elo if anchor is not None else 0.0
    if n > INTERVAL_MAX:
        # Ratings only: the intervals would need a dense n x n matrix.
        centre = strengths - (strengths[a] if a is not None else strengths.mean())
        for name, i in idx.items():
            rows[name] = _Row(name, Status.RATED, elo=ref + ELO_PER_NAT * float(centre[i]), level=level)
        notes.append(f"a group of {n} bots is larger than {INTERVAL_MAX}: no intervals or LOS for it")
        return None
    inverse = invert(info, precision, level_free=ml)
    strengths = min_norm(strengths, inverse.null)
    identified = inverse.identified()
    if anchor is not None and a is not None and not identified[a]:
        raise AnchorError(anchor, "its rating is not separable from its team-mates'")
    centre = strengths - (strengths[a] if a is not None else strengths.mean())
    cov = inverse.covariance(a)
    sd = np.sqrt(np.maximum(cov.variances(), 0.0)) * ELO_PER_NAT
    rated = {}
    for name, i in idx.items():
        elo = ref + ELO_PER_NAT * float(centre[i])
        if identified[i]:
            rows[name] = _Row(name, Status.RATED, elo=elo, ci95=Z95 * float(sd[i]), level=level)
            rated[name] = i
        else:
            rows[name] = _Row(
                name,
                Status.NOT_IDENTIFIED,
                elo=elo,
                note="always played with the same team-mates: only the team's sum is determined (even split shown)",
                level=level,
            )
    covariance.add(cov, rated)
    return inverse.log_det()


def _assemble(
    names: Sequence[str],
    rec: Records,
    rows: Mapping[str, _Row],
    clusters: list[tuple[int, float, list[str]]],
    anchor: str | None,
    anchor_elo: float,
    prior: float,
    covariance: Mapping[tuple[str, str], float],
    model: Model,
) -> tuple[tuple[BotRating, ...], tuple[RatingGroup, ...], tuple[str, ...]]:
    """The fit's table: its groups, its notes, and a row per bot in ranking order."""
    layout = _group_layout(rows, clusters)
    n_components = len({ci for ci, _, _ in clusters})
    notes = _table_notes(model, n_components, layout.groups, prior, anchor, anchor_elo)
    return _rated_rows(names, rec, rows, layout, n_components, covariance, model), layout.groups, notes


@dataclass(frozen=True)
class _Layout:
    """Bots in ranking order, the group each belongs to, and the groups with their notes."""

    sequence: tuple[str, ...]
    group_of: Mapping[str, int]
    group_note: Mapping[int, str]
    groups: tuple[RatingGroup, ...]


def _group_layout(rows: Mapping[str, _Row], clusters: list[tuple[int, float, list[str]]]) -> _Layout:
    # Components in size order; within one, separated parts from the top down.

    def sort_key(name: str) -> tuple[float, str]:
        elo = rows[name].elo
        return (-elo if elo is not None else math.inf, name)

    # Group ids follow the ranking order. A group is a set of bots rated on one common
    # scale: the largest rated part of each connected component is its main group, and
    # that component's unbounded bots join it (they are ordered relative to it, just not
    # by a finite amount); any other rated part is a group of its own.
    main_part: dict[int, int] = {}
    for pos, (ci, _level, members) in enumerate(clusters):
        if len(members) > 1 and len(members) > len(clusters[main_part[ci]][2] if ci in main_part else ()):
            main_part[ci] = pos
    gid_of_cluster: dict[object, int] = {}
    comp_gid: dict[int, int] = {}
    order = sorted(range(len(clusters)), key=lambda k: (clusters[k][0], -clusters[k][1], -len(clusters[k][2]), clusters[k][2][0]))
    next_gid = 1
    for k in order:
        ci, _level, members = clusters[k]
        key: object = main_part.get(ci, ("component", ci)) if len(members) == 1 else k
        if key not in gid_of_cluster:
            gid_of_cluster[key] = next_gid
            next_gid += 1
        gid_of_cluster[k] = gid_of_cluster[key]
        if main_part.get(ci) == k:
            comp_gid[ci] = gid_of_cluster[k]

    group_of: dict[str, int] = {}
    members_of: dict[int, list[str]] = defaultdict(list)
    group_note: dict[int, str] = {}
    sequence: list[str] = []
    for k in order:
        ci, _level, members = clusters[k]
        gid = gid_of_cluster[k]
        members = sorted(members, key=sort_key)
        if len(members) > 1 and comp_gid[ci] != gid:
            group_note[gid] = (
                f"no upset between group {gid} and group {comp_gid[ci]}: the gap between them is "
                "unbounded, so they are rated separately; use --prior to compare them"
            )
        for name in members:
            group_of[name] = gid
            members_of[gid].append(name)
        sequence.extend(members)
    groups = tuple(RatingGroup(gid, tuple(members_of[gid]), group_note.get(gid, "")) for gid in sorted(members_of))
    return _Layout(tuple(sequence), group_of, group_note, groups)


def _table_notes(model: Model, n_components: int, groups: Sequence[RatingGroup], prior: float, anchor: str | None,
                 anchor_elo: float) -> tuple[str, ...]:
    notes: list[str] = []
    notes.append(f"model: {model.description}")
    if n_components > 1:
        notes.append(
            f"the field splits into {n_components} parts that never met (directly or "
            "through common opponents); ratings are only comparable within a group"
        )
    if any(g.note for g in groups):
        notes.append("some results are perfectly separated (no upsets); see the notes column")
    if prior > 0:
        notes.append(
            f"prior: {prior:g} virtual draws per bot against the reference level "
            f"(Gaussian, sd {prior_sd_elo(prior):.0f} Elo); --prior 0 for the plain maximum-likelihood fit"
        )
    if anchor is not None:
        notes.append(f"anchor: {anchor} = {anchor_elo:g}")
    return tuple(notes)


def _rated_rows(names: Sequence[str], rec: Records, rows: Mapping[str, _Row], layout: _Layout, n_components: int,
                covariance: Mapping[tuple[str, str], float], model: Model) -> tuple[BotRating, ...]:
    sequence, group_of = layout.sequence, layout.group_of
    index = {name: i for i, name in enumerate(names)}
    width = rec.places.shape[1] if model is Model.PLACKETT_LUCE else 0
    out: list[BotRating] = []
    for pos, name in enumerate(sequence):
        row = rows[name]
        bot = index[name]
        los = None
        if pos + 1 < len(sequence):
            nxt = sequence[pos + 1]
            below = rows[nxt]
            if (
                group_of[nxt] == group_of[name]
                and row.status is Status.RATED
                and below.status is Status.RATED
                and row.ci95 is not None
                and below.ci95 is not None
                and row.elo is not None
                and below.elo is not None
            ):
                los = pair_los(row.elo, below.elo, covariance, name, nxt)
        gnote = layout.group_note.get(group_of[name], "")
        note = row.note
        if gnote and not note:
            note = gnote
        elif n_components > 1 and group_of[name] != 1 and not note and row.status is Status.RATED:
            note = f"group {group_of[name]}: not comparable with other groups"
        out.append(
            BotRating(
                rank=pos + 1,
                name=name,
                elo=row.elo,
                ci95=row.ci95,
                los_next=los,
                matches=int(rec.matches[bot]),
                wins=int(rec.wins[bot]),
                draws=int(rec.draws[bot]),
                losses=int(rec.losses[bot]),
                group=group_of[name],
                status=row.status,
                note=note,
                places=tuple(int(v) for v in rec.places[bot][:width]),
            )
        )
    return tuple(out)
