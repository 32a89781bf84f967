"""Who meets whom next, from the results so far: the choosers of the adaptive formats.

Pure and deterministic: a chooser is told the results of whole pairings in pairing order
(``learn``) and asked for the next batch of pairings (``choose``); the same results give
the same choices. adaptive.py decides when each is called, so that the workers' finishing
order never matters. Entrants are numbered by their place in the file; every tie is
broken by that number.

* ``SwissChooser``: rounds of groups of similar score (Monrad: each entrant, from the top of
  the standings, meets the nearest below it that it has not met), byes for the lowest
  entrants with the fewest byes.
* ``LadderChooser``: one pairing at a time, where it gains most information: the entrant
  with the widest interval (weighted by how crowded the field is about it, when the ladder
  ranks rather than stops on its intervals) meets the opponent of the most informative match
  for it (close ratings), weighted by the opponent's own uncertainty (wide intervals), from a
  running Gaussian estimate of every strength (refitted to all the results every
  ``REFIT_EVERY`` pairings when the ladder ranks, the fit's work spread over the pairings
  that follow).
* ``KnockoutChooser``: single elimination, seeded (1 meets the last seed, byes for the top
  seeds when the field is not a power of two).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

import numpy as np

from arena.core.rules import Seating
from arena.rating.table import MatchResult, PairResult
from arena.tournament.schedule import Side
from arena.tournament.standings import match_places
from arena.tournament.store import MatchRow

# Elo points per natural-log unit of strength (docs/RATINGS.md).
ELO_PER_UNIT = 400 / math.log(10)
# The running estimate's prior: the rating fit's default, 2 virtual draws (precision 2/4).
PRIOR_PRECISION = 0.5
# The opponent's weight is its variance to this power times the match's information: at 2
# (the variance each side would lose) the widest intervals won over close ratings and a
# ladder's matches were worth 0.14 in p(1-p), little more than a round robin's; at 0.5 they
# are worth 0.24 (0.25 between equals). Below 0.5 a bot meets the same neighbour again and
# again, and the ranking gets worse (benchmarks/RESULTS.md); so does dividing by the times
# the two met.
VARIANCE_POWER = 0.5
# A ladder that ranks (no ``target_ci``) chooses its focus by its variance times its density
# (entrants per unit of estimated strength about it) to this power: where the field is
# crowded an error of the same size costs more ranks, and the rank loss, a sum of density^2
# times variance, falls fastest for the entrant of the largest density times variance. At 1
# 200-bot fields at 350 Elo reached the round robin's Spearman in 0.57 of its matches, median
# of 8 fields, against 0.63 with the widest interval first (0); at 2, 0.68, the tails starved
# (benchmarks/RESULTS.md). A ladder with a ``target_ci`` stops on its widest interval, so it
# serves the widest first (0), as do ladders stored before this rule (adaptive.FOCUS_KEY).
FOCUS_DENSITY_POWER = 1.0
# Entrants on each side of one over which its density is measured.
DENSITY_HALF_WIDTH = 5
# A ladder that ranks (``LadderRule.REFIT``) sets its running estimate to the Bradley-Terry
# fit of every result learned, after every this many pairings learned: the one-match-at-a-time
# estimate is blind to how the ratings depend on each other, and at 700 Elo it reads the field
# at 0.4 of its true spread. Every 100: 0.34 of the round robin's matches to its Spearman at 700
# Elo (0.40 without), every 200 and 50 fewer covered or more matches (benchmarks/RESULTS.md).
REFIT_EVERY = 100
# The refit's Newton steps (from the running estimate) and conjugate-gradient steps in each.
# The refit's prior: a Gaussian this many times as wide as the running estimates' spread. At 2
# the fit read the field too wide and the ladder met nearer neighbours only (the table's
# intervals covered 91%); at 0.75 it met further ones and kept a fifth of the gain (RESULTS.md).
REFIT_PRIOR_WIDTH = 1.0
REFIT_NEWTON_STEPS = 6
REFIT_CG_STEPS = 40
# The spread refit (``LadderRule.SPREAD``) does the fit's work a little at each pairing learned
# rather than all at once, in steps of work counted, never timed (the same steps at the same
# pairings on every machine). Units of about 14 ns of CPU each, as measured: a pair visited by a
# conjugate-gradient step is one, by a Newton step ``REFIT_EXP_COST`` (its ``_exp``), an entrant
# of a step over the field ``REFIT_FIELD_COST`` (its exactly rounded sums); a step visits at
# most ``REFIT_CHUNK`` pairs. A pairing's own choice and learning count ``REFIT_PICK_COST`` an
# entrant, and the fit gets the rest of ``REFIT_WORK`` a pairing (at least ``REFIT_WORK_FLOOR``,
# and at least one step, which may be a pass over the field: 10,000 at 1,000 entrants): at 1,000
# entrants 4,000 units, some 0.06 ms beside the pairing's own 0.2-0.4 ms, a fit of 18,700 pairs
# met applied some 700 pairings after its start; at 200, 28,000, a fit of 3,000 pairs some 13
# pairings after (benchmarks/RESULTS.md: at 8,000 units, 3 of 40,000 pairings at 1,000 bots took
# 1 ms or more on a quiet machine, at 4,000 none or as many as the density rule's own).
REFIT_WORK = 34_000
REFIT_PICK_COST = 30
REFIT_WORK_FLOOR = 2_000
REFIT_CHUNK = 512
REFIT_EXP_COST = 8
REFIT_FIELD_COST = 10
# Pairings tried by the search for a round without a repeat before it settles for fewest repeats.
SEARCH_BUDGET = 20_000

Pairing = tuple[Side, ...]


class LadderRule(Enum):
    """How a ladder chooses. Its store records the rule it began with (adaptive.FOCUS_KEY), so
    that a folder begun by an earlier arena replays, resumes and reads by its own rule."""

    # The widest interval first (the stores made before the rule was recorded, with no key).
    WIDEST = "widest"
    # The focus by variance times density (``FOCUS_DENSITY_POWER``) when the ladder ranks.
    DENSITY = "density"
    # DENSITY, from a running estimate refitted every ``REFIT_EVERY`` pairings (two sides only),
    # the fit done at once in the pairing learned (the stores of 2026-12-05's build).
    REFIT = "refit"
    # REFIT, the fit of the results at pairing k * ``REFIT_EVERY`` done ``REFIT_WORK`` at each
    # pairing learned after it, and applied, with what the running estimate learned meanwhile,
    # at the pairing learned that finishes it: no pairing pays for a whole fit.
    SPREAD = "spread-refit"


def set_scores(rows: Sequence[MatchRow], seating: Seating) -> dict[str, float]:
    """Each side's score over the matches of one pairing, from 0 to 1: per match, the share of
    the other sides it finished ahead of (a tie counts half), averaged over the set."""
    out: dict[str, float] = {}
    others = seating.sides - 1
    for row in rows:
        places = match_places(row, seating)
        for side, label in enumerate(row.sides):
            mine = places[side]
            ahead = sum((mine < theirs) + 0.5 * (mine == theirs) for other, theirs in enumerate(places) if other != side)
            out[label] = out.get(label, 0.0) + ahead / others / len(rows)
    return out


def set_points(rows: Sequence[MatchRow]) -> dict[str, int]:
    """Each side's points over the set, minus the other sides' mean (a tie-break)."""
    out: dict[str, float] = {}
    for row in rows:
        total = sum(row.scores)
        for side, label in enumerate(row.sides):
            others = (total - row.scores[side]) / max(1, len(row.sides) - 1)
            out[label] = out.get(label, 0.0) + row.scores[side] - others
    return {label: round(value) for label, value in out.items()}


class Chooser(Protocol):
    """What adaptive.py drives: batch ``b`` is chosen once the pairings of batches before
    ``b - lag`` are learned, and from those alone."""

    lag: int

    def choose(self, *, stored: bool = False) -> list[Pairing] | None:
        """The next batch of pairings (sides in their base seating order); None: no more.
        ``stored``: a batch the store holds, made before any stop the file may have moved."""

    def learn(self, sides: Pairing, rows: Sequence[MatchRow]) -> None:
        """A pairing's matches, in schedule order, given in pairing order."""

    def grow(self, newcomers: Sequence[Side], leaving: Sequence[str] = ()) -> None:
        """Entrants who join the field from the next choice on (a ladder's newcomers), and the
        labels of those who leave it then (the older versions of a changed bot): their results
        stay learned, they are never chosen again."""


@dataclass
class SwissChooser:
    """``rounds`` rounds; each pairs groups of ``size`` entrants of similar score."""

    entrants: Sequence[Side]
    size: int
    rounds: int
    seating: Seating
    lag: int = 0
    played: int = 0
    score: list[float] = field(default_factory=list)
    met: list[set[int]] = field(default_factory=list)
    byes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.entrants)
        self.score, self.met, self.byes = [0.0] * n, [set() for _ in range(n)], [0] * n
        self._number = {side.label: i for i, side in enumerate(self.entrants)}

    def standings(self) -> list[int]:
        """Entrant numbers, best first: by score, then Buchholz (the sum of the scores of the
        opponents met), then file order."""
        buchholz = [sum(self.score[j] for j in self.met[i]) for i in range(len(self.entrants))]
        return sorted(range(len(self.entrants)), key=lambda i: (-self.score[i], -buchholz[i], i))

    def choose(self, *, stored: bool = False) -> list[Pairing] | None:
        if self.played >= self.rounds:
            return None
        self.played += 1
        ranked = self.standings()
        spare = len(ranked) % self.size
        # The byes go to the lowest in the standings among those with the fewest byes; a bye
        # scores as a won set.
        bye = sorted(ranked[::-1], key=lambda i: self.byes[i])[:spare]
        for i in bye:
            self.byes[i] += 1
            self.score[i] += 1.0
        playing = [i for i in ranked if i not in bye]
        groups = group_up(playing, self.size, self.met)
        return [tuple(self.entrants[i] for i in group) for group in groups]

    def learn(self, sides: Pairing, rows: Sequence[MatchRow]) -> None:
        scores = set_scores(rows, self.seating)
        numbers = [self._number[side.label] for side in sides]
        for i in numbers:
            self.score[i] += scores.get(self.entrants[i].label, 0.0)
            self.met[i].update(j for j in numbers if j != i)

    def grow(self, newcomers: Sequence[Side], leaving: Sequence[str] = ()) -> None:
        raise ValueError("a swiss field is fixed")


def group_up(ranked: Sequence[int], size: int, met: Sequence[set[int]], budget: int = SEARCH_BUDGET) -> list[tuple[int, ...]]:
    """Split ``ranked`` (best first; its length a multiple of ``size``) into groups: the first
    entrant left with the nearest below it, so that no two in a group have met. A search
    (depth first, in standings order) finds such a split when one exists within ``budget``
    steps; otherwise groups are filled greedily with the fewest repeats."""
    tries = [0]

    def search(left: list[int]) -> list[tuple[int, ...]] | None:
        if not left:
            return []
        head, rest = left[0], left[1:]
        for mates in _mates(head, rest, size - 1, met, tries, budget):
            remaining = [i for i in rest if i not in mates]
            found = search(remaining)
            if found is not None:
                return [(head, *mates), *found]
            if tries[0] > budget:
                return None
        return None

    found = search(list(ranked))
    if found is not None:
        return found
    out: list[tuple[int, ...]] = []
    left = list(ranked)
    while left:
        head = left.pop(0)
        group = [head]
        for _ in range(size - 1):
            best = min(range(len(left)), key=lambda k: (sum(left[k] in met[g] for g in group), k))
            group.append(left.pop(best))
        out.append(tuple(group))
    return out


def _mates(head: int, rest: list[int], count: int, met: Sequence[set[int]], tries: list[int],
           budget: int) -> Iterator[tuple[int, ...]]:
    """Sets of ``count`` entrants of ``rest`` (in order) none of whom met ``head`` or each other."""
    if count == 0:
        yield ()
        return
    for k, j in enumerate(rest):
        tries[0] += 1
        if tries[0] > budget:
            return
        if j in met[head]:
            continue
        for more in _mates(head, [x for x in rest[k + 1:] if x not in met[j]], count - 1, met, tries, budget):
            yield (j, *more)


class LadderChooser:
    """One pairing per batch, where it gains most information, until ``max_matches`` would be
    passed or every 95% interval is within ``target_ci`` Elo.

    The running estimate is a Gaussian per entrant (natural-log units), updated match by
    match as Glicko does (and, by ``LadderRule.SPREAD``, set to the fit of all the results
    learned at every ``REFIT_EVERY``-th pairing, that fit done a bounded amount at each pairing
    learned after it and applied at the one that finishes it: ``snapshot``, ``_Refit``); a
    pairing chosen but not yet learned counts for its information
    (not its outcome), so pairings chosen ahead of the results spread over the field. The
    running intervals ignore how the ratings depend on each other, so they are narrower than
    the table's: once they are within ``target_ci``, the rating fit of the table
    (``arena.rating``) decides, from the results learned, and again after every further
    ``max(field, chosen / 10)`` pairings until it agrees. The results are kept as counts per
    pair of sides, in one array sized by the field (12 bytes a pair: 6 MB for 1,000 sides, and
    4 for the pair's place among those met), and, for the spread refit, each pair met's numbers
    and slot (24 bytes), so its memory is bounded by the field however long the ladder runs; three or more
    sides, as counts per group and finishing order met."""

    def __init__(self, entrants: Sequence[Side], size: int, seating: Seating, *, lag: int, per_pairing: int,
                 max_matches: int | None, target_ci: float | None, rule: LadderRule = LadderRule.SPREAD) -> None:
        self.entrants = list(entrants)
        # An earlier rule for the ladders stored under it (adaptive.py replays their choices as
        # they were made). A ladder that stops on its intervals serves the widest first and
        # keeps its running estimate whatever the rule (its stop was measured so).
        self.rule = rule
        self.size = size
        self.seating = seating
        self.lag = lag
        self.per_pairing = per_pairing
        self.max_matches = max_matches
        self.target_ci = target_ci
        self.chosen = 0
        n = len(self.entrants)
        self.mu = np.zeros(n)
        self.precision = np.full(n, PRIOR_PRECISION)
        self.pending = np.zeros(n)
        self.retired = np.zeros(n, dtype=bool)  # older versions of a changed bot: never chosen again
        self._order = np.arange(n)  # entrants by running estimate, as ``density`` last sorted them
        self._number = {side.label: i for i, side in enumerate(self.entrants)}
        self._promised: dict[tuple[str, ...], list[tuple[list[int], np.ndarray]]] = {}
        # Slot ``_slot(a, b)`` of numbers a < b: [a ahead, level, b ahead]; a newcomer's slots
        # come after every earlier one, so the field grows by appending.
        self._counts = np.zeros((_slot(0, n), 3), dtype=np.uint32)
        self._orders: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}  # (numbers, places) -> times
        self._next_check = 0
        self._learned = 0  # pairings
        # The pairs of two sides met, in the order first met (``_met`` of them), in blocks of
        # ``REFIT_CHUNK`` (the spread refit's chunks: they are never copied as they grow): each
        # one's numbers a < b and its slot in ``_counts``; and each slot's place among them (-1:
        # not met).
        self._met = 0
        self._met_blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._met_place = np.full(len(self._counts), -1, dtype=np.int32)
        self._refitting: _Refit | None = None

    def grow(self, newcomers: Sequence[Side], leaving: Sequence[str] = ()) -> None:
        fresh = [side for side in newcomers if side.label not in self._number]
        for side in fresh:
            self._number[side.label] = len(self.entrants)
            self.entrants.append(side)
        extra = len(fresh)
        self.mu = np.concatenate([self.mu, np.zeros(extra)])
        self.precision = np.concatenate([self.precision, np.full(extra, PRIOR_PRECISION)])
        self.pending = np.concatenate([self.pending, np.zeros(extra)])
        self.retired = np.concatenate([self.retired, np.zeros(extra, dtype=bool)])
        self._order = np.concatenate([self._order, np.arange(len(self.mu) - extra, len(self.mu))])
        # A fit in progress is of the field before: dropped (at a pairing fixed by the field's
        # history, so resumes drop it too); the next starts at the next ``REFIT_EVERY``.
        self._refitting = None
        grown = np.zeros((_slot(0, len(self.entrants)), 3), dtype=np.uint32)
        grown[:len(self._counts)] = self._counts
        self._counts = grown
        self._met_place = np.concatenate([self._met_place, np.full(len(grown) - len(self._met_place), -1, np.int32)])
        # A version the field had before comes back with what it learned then.
        for side in newcomers:
            self.retired[self._number[side.label]] = False
        for label in leaving:
            self.retired[self._number[label]] = True

    def widest_ci(self) -> float:
        """The widest 95% half-width of the running estimate, Elo (learned results only)."""
        return float(1.96 * ELO_PER_UNIT / math.sqrt(float(self.precision[~self.retired].min())))

    def done(self) -> bool:
        if self.max_matches is not None and (self.chosen + 1) * self.per_pairing > self.max_matches:
            return True
        if self.target_ci is None or self.widest_ci() > self.target_ci or self.chosen < self._next_check:
            return False
        if self.fitted_widest_ci() <= self.target_ci:
            return True
        self._next_check = self.chosen + max(len(self.entrants), self.chosen // 10)
        return False

    def fitted_widest_ci(self) -> float:
        """The widest 95% half-width of the table's rating fit of the results learned, Elo."""
        from arena.rating.table import fit_ratings

        labels = [side.label for side in self.entrants]

        def results() -> Iterator[PairResult | MatchResult]:
            for slot in np.flatnonzero(self._counts.any(axis=1)).tolist():
                a, b = _numbers(slot)
                for score, count in zip((1.0, 0.5, 0.0), self._counts[slot].tolist(), strict=True):
                    for _ in range(count):
                        yield PairResult((labels[a],), (labels[b],), score)
            for (numbers, places), times in self._orders.items():
                for _ in range(times):
                    yield MatchResult(tuple((labels[i],) for i in numbers), places)

        table = fit_ratings(results(), players=labels)
        active = {side.label for i, side in enumerate(self.entrants) if not self.retired[i]}
        return max(math.inf if row.ci95 is None else row.ci95 for row in table.ratings if row.name in active)

    def choose(self, *, stored: bool = False) -> list[Pairing] | None:
        if self.done() and not stored:
            return None
        group, info = self.pick()
        self.pending[group] += info
        key = tuple(self.entrants[i].label for i in group)
        self._promised.setdefault(key, []).append((group, info))
        self.chosen += 1
        return [tuple(self.entrants[i] for i in group)]

    def pick(self) -> tuple[list[int], np.ndarray]:
        """The next group and the information its set is expected to give each member: the
        entrant with the widest interval (counting what is in play; times its density, see
        ``FOCUS_DENSITY_POWER``, unless the ladder stops on a ``target_ci``), and the opponents
        of the most information for it, weighted by their own uncertainty (``VARIANCE_POWER``)."""
        var = 1.0 / (self.precision + self.pending)
        ranking = self.rule is not LadderRule.WIDEST and self.target_ci is None and FOCUS_DENSITY_POWER != 0.0
        urgency = var * self.density() ** FOCUS_DENSITY_POWER if ranking else var
        focus = int(np.argmax(np.where(self.retired, -np.inf, urgency)))
        info = self.per_pairing * _expected_info(self.mu, var, focus)
        # Variance each side would lose: v - 1/(1/v + I).
        gain = var**VARIANCE_POWER * info
        gain[self.retired] = -np.inf
        gain[focus] = -np.inf
        if self.size == 2:
            others = [int(np.argmax(gain))]
        else:
            others = [int(i) for i in np.argsort(-gain, kind="stable")[: self.size - 1]]
        group = [focus, *others]
        return group, np.concatenate([[info[others].mean()], info[others]])

    def density(self) -> np.ndarray:
        """Each entrant's density relative to the field's mean: the active entrants per unit of
        running estimate over the ``DENSITY_HALF_WIDTH`` nearest in rank on each side (fewer at
        the ends); 1 for all while the estimates are still level, 0 for the retired."""
        # The order of the last call sorted again: the estimates move a little between picks,
        # and a stable sort of an almost sorted array is nearly linear (7 us for 1,000 entrants,
        # 70 us from scratch). Equal estimates (early on, entrants not yet played, or moved by
        # the same results) would keep the order they came in; they are put in file order, as
        # every tie is, by a sort from scratch.
        order = self._order[np.argsort(self.mu[self._order], kind="stable")]
        ranked = self.mu[order]
        if (ranked[1:] == ranked[:-1]).any():
            order = np.argsort(self.mu, kind="stable")
        self._order = order
        active = order[~self.retired[order]]
        out = np.zeros(len(self.mu))
        if len(active) < 2:
            out[active] = 1.0
            return out
        lo, hi, counted = _windows(len(active))
        ranked = self.mu[active]
        # A floor per entrant counted (0.001 units, a fifth of an Elo point), so that level
        # estimates, the ladder's start, give every entrant the same density.
        dens = counted / np.maximum(ranked[hi] - ranked[lo], 1e-3 * counted)
        out[active] = dens / dens.mean()
        return out

    def learn(self, sides: Pairing, rows: Sequence[MatchRow]) -> None:
        key = tuple(side.label for side in sides)
        promised = self._promised.get(key)
        if promised:
            group, info = promised.pop(0)
            if not promised:
                del self._promised[key]
            self.pending[group] -= info
        weight = 1.0 / (self.size - 1)
        for row in rows:
            places = match_places(row, self.seating)
            self._count(row.sides, places)
            numbers = [self._number[label] for label in row.sides]
            mu, precision = self.mu.copy(), self.precision.copy()
            for a, ia in enumerate(numbers):
                for b, ib in enumerate(numbers):
                    if a == b:
                        continue
                    s = 1.0 if places[a] < places[b] else 0.5 if places[a] == places[b] else 0.0
                    g = 1.0 / math.sqrt(1.0 + 3.0 / precision[ib] / math.pi ** 2)
                    e = 1.0 / (1.0 + math.exp(-g * (mu[ia] - mu[ib])))
                    self.precision[ia] += weight * g * g * e * (1.0 - e)
                    self.mu[ia] += weight * g * (s - e) / self.precision[ia]
        self._learned += 1
        if self.rule not in (LadderRule.REFIT, LadderRule.SPREAD) or self.target_ci is not None or self.size != 2:
            return
        if self.rule is LadderRule.REFIT:
            if self._learned % REFIT_EVERY == 0:
                self.refit()
            return
        # The fit's work a pairing: what it may take beside the pairing's own (REFIT_WORK's
        # comment). Fixed by the field's size and the counts alone, as is the pairing whose
        # learning finishes it; a fit begins at a multiple of REFIT_EVERY with none in progress.
        if self._refitting is not None:
            self._refitting.work(max(REFIT_WORK - REFIT_PICK_COST * len(self.mu), REFIT_WORK_FLOOR))
            if self._refitting.fitted is not None:
                self._apply(self._refitting)
                self._refitting = None
        if self._refitting is None and self._learned % REFIT_EVERY == 0 and self._met:
            self._refitting = self.snapshot()

    def refit(self) -> None:
        """Set the running estimate to the Bradley-Terry fit of the results learned, and each
        precision to the fit's information about that entrant alone (the diagonal: what its
        own results say) plus the running prior; the fit done at once (``LadderRule.REFIT``'s,
        the same arithmetic as its build's, so that its stores replay: the pairs in slot order,
        one chunk). The fit's prior is a Gaussian as wide as the running estimates' spread: a
        wider one (twice) let the fit read the field too wide, and the ladder, steered by it,
        met nearer neighbours only, whose results the table's fit reads with intervals that
        covered 91% (benchmarks/RESULTS.md)."""
        slots = np.flatnonzero(self._counts.any(axis=1))
        if not len(slots):
            return
        a, b = _slot_numbers(slots)
        counts = self._counts[slots].astype(float)
        fit = self._refit_of([(a, b)], lambda k: counts)
        fit.work(math.inf)
        self._apply(fit, since=False)

    def snapshot(self) -> _Refit:
        """The spread refit of the results learned so far, none of its work done yet: the pairs
        met so far, their counts as they are now (``_count`` notes in ``later`` what it adds to
        them while the fit reads them), the running estimate now. O(field), not O(pairs)."""
        m, blocks = self._met, self._met_blocks
        chunks = [(a[:hi - lo], b[:hi - lo]) for (a, b, _), lo, hi in zip(blocks, *_cuts(m, REFIT_CHUNK), strict=False)]

        def counts_now(k: int) -> np.ndarray:
            lo = k * REFIT_CHUNK
            out: np.ndarray = self._counts[blocks[k][2][:len(chunks[k][0])]].astype(float)
            for noted in fit.later:
                place, column = divmod(noted, 3)
                if lo <= place < lo + len(out):
                    out[place - lo, column] -= 1.0
            return out

        fit = self._refit_of(chunks, counts_now)
        return fit

    def _refit_of(self, chunks: Sequence[tuple[np.ndarray, np.ndarray]], counts: Callable[[int], np.ndarray]) -> _Refit:
        n = len(self.mu)
        mean = math.fsum(self.mu.tolist()) / n
        spread = math.sqrt(math.fsum(((self.mu - mean) ** 2).tolist()) / n)
        prior = 1.0 / (REFIT_PRIOR_WIDTH * max(spread, 0.25)) ** 2
        return _Refit(self.mu.copy(), self.precision.copy(), prior,
                      _fit_steps(chunks, counts, self.mu.copy(), prior))

    def _apply(self, fit: _Refit, *, since: bool = True) -> None:
        """The running estimate set to ``fit``'s, plus (``since``) what it learned after the
        fit's snapshot: its moves and the information it gained meanwhile."""
        if fit.fitted is None:
            return
        mu, diagonal = fit.fitted
        precision = diagonal - fit.prior + PRIOR_PRECISION
        if since:
            mu = mu + (self.mu - fit.mu)
            precision = precision + (self.precision - fit.precision)
        self.mu, self.precision = mu, precision

    def _count(self, labels: Sequence[str], places: Sequence[int]) -> None:
        # Teams are rated as the sum of their members; an entrant here is one side.
        numbers = tuple(self._number[label] for label in labels)
        if len(labels) > 2:
            key = (numbers, tuple(places))
            self._orders[key] = self._orders.get(key, 0) + 1
            return
        (a, pa), (b, pb) = sorted(zip(numbers, places, strict=True))
        slot, column = _slot(a, b), 0 if pa < pb else 1 if pa == pb else 2
        self._counts[slot, column] += 1
        place = int(self._met_place[slot])
        if place < 0:
            place = self._met_place[slot] = self._met
            if place % REFIT_CHUNK == 0:
                self._met_blocks.append((np.zeros(REFIT_CHUNK, dtype=np.int64), np.zeros(REFIT_CHUNK, dtype=np.int64),
                                         np.zeros(REFIT_CHUNK, dtype=np.int64)))
            self._met_blocks[-1][0][place % REFIT_CHUNK] = a
            self._met_blocks[-1][1][place % REFIT_CHUNK] = b
            self._met_blocks[-1][2][place % REFIT_CHUNK] = slot
            self._met += 1
        if self._refitting is not None:
            self._refitting.later.append(3 * place + column)


@functools.lru_cache(maxsize=4)
def _windows(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``m`` entrants in rank order: the first and last rank of each one's density window
    (``DENSITY_HALF_WIDTH`` each side, fewer at the ends), and the entrants it spans less one."""
    r = np.arange(m)
    lo, hi = np.maximum(r - DENSITY_HALF_WIDTH, 0), np.minimum(r + DENSITY_HALF_WIDTH, m - 1)
    return lo, hi, (hi - lo).astype(float)


def _cuts(m: int, chunk: int) -> tuple[list[int], list[int]]:
    """The first and the end of each chunk of ``m`` things cut ``chunk`` at a time."""
    firsts = list(range(0, m, chunk))
    return firsts, [min(first + chunk, m) for first in firsts]


def _slot(a: int, b: int) -> int:
    """The place of the pair of entrants numbered a < b in a ladder's counts (``_slot(0, n)``:
    how many pairs n entrants make)."""
    return b * (b - 1) // 2 + a


def _numbers(slot: int) -> tuple[int, int]:
    """The pair (a, b), a < b, of ``_slot(a, b) == slot``."""
    b = (1 + math.isqrt(1 + 8 * slot)) // 2
    return slot - b * (b - 1) // 2, b


def _slot_numbers(slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_numbers`` of many slots at once (the root's rounding put right in integers)."""
    b = ((1 + np.sqrt(1 + 8 * slots.astype(float))) // 2).astype(np.int64)
    b = np.where(b * (b - 1) // 2 > slots, b - 1, b)
    b = np.where((b + 1) * b // 2 <= slots, b + 1, b)
    return slots - b * (b - 1) // 2, b


class _Refit:
    """A fit of the counts at a snapshot, done a bounded amount at a time (``work``): what the
    running estimate was then (``mu``, ``precision``), the fit's prior, and once the work is
    all done, ``fitted``: the fitted strengths and the diagonal of their information."""

    def __init__(self, mu: np.ndarray, precision: np.ndarray, prior: float,
                 steps: Generator[int, None, tuple[np.ndarray, np.ndarray]]) -> None:
        self.mu = mu
        self.precision = precision
        self.prior = prior
        self.fitted: tuple[np.ndarray, np.ndarray] | None = None
        # The counts added since the snapshot, 3 x place among the pairs met + column: the fit's
        # first pass reads the counts chunk by chunk, less these. (Plain ints: tuples would be
        # objects the garbage collector keeps count of, and at 1,000 bots their number set off
        # a full collection, 33 ms of CPU, once in 40,000 pairings.)
        self.later: list[int] = []
        self._steps = steps
        self._next = next(steps)  # the work of the step to do next (``_fit_steps`` says it first)

    def work(self, budget: float) -> None:
        """The steps whose work counted fits in ``budget`` (at least one: a step is never cut),
        or until the fit is done."""
        spent = 0
        while self.fitted is None and (spent == 0 or spent + self._next <= budget):
            spent += self._next
            try:
                self._next = next(self._steps)
            except StopIteration as done:
                self.fitted = done.value


def _fit_steps(chunks: Sequence[tuple[np.ndarray, np.ndarray]], counts: Callable[[int], np.ndarray], mu: np.ndarray,
               prior: float) -> Generator[int, None, tuple[np.ndarray, np.ndarray]]:
    """The Bradley-Terry fit of the pairs a - b of ``chunks`` (``counts(k)``: those of chunk k,
    [a ahead, level, b ahead] a pair, read once, by the first Newton step), with a
    Gaussian prior of precision ``prior``, from ``mu``: ``REFIT_NEWTON_STEPS`` Newton steps, each
    solved by conjugate gradients preconditioned by the diagonal (at most ``REFIT_CG_STEPS``).
    Returns the fit and the diagonal of its information. Its steps, each a pass over at most
    a chunk's pairs or one over the field, are done one at each resumption: before each it
    yields the work it will count (so that a caller can stop before a step it has no budget for).

    Every float operation is an IEEE one, elementwise (numpy's arithmetic, ``_exp``), a sum in
    order (``np.bincount``, chunk by chunk) or exactly rounded (``math.fsum``): never a BLAS or
    LAPACK call, nor a library's ``exp``, whose last bits may differ from one machine to
    another (a different bit can end the conjugate gradients a step sooner, and the choices
    that follow differ). The same pairs in the same order, cut in the same chunks, give the
    same fit everywhere, however its steps are spread. (In one chunk of pairs in slot order,
    it is the 2026-12-05 build's refit to the last bit: ``LadderRule.REFIT``'s stores replay.)"""
    n = len(mu)
    field_step = REFIT_FIELD_COST * n
    # Per chunk, made by the first pass (nothing here costs more than a step of the field).
    weight: list[np.ndarray] = []
    played: list[np.ndarray] = []
    score: list[np.ndarray] = []
    diagonal = np.full(n, prior)
    for newton in range(REFIT_NEWTON_STEPS):
        gradient, diagonal = np.zeros(n), np.zeros(n)
        for k, (ca, cb) in enumerate(chunks):
            yield REFIT_EXP_COST * len(ca) + n
            if newton == 0:
                those = counts(k)
                played.append(those.sum(axis=1))
                score.append(those[:, 0] + 0.5 * those[:, 1])  # a's
                weight.append(played[k])
            p = 1.0 / (1.0 + _exp(mu[cb] - mu[ca]))
            residual = score[k] - played[k] * p
            gradient += np.bincount(ca, residual, n) - np.bincount(cb, residual, n)
            weight[k] = played[k] * p * (1.0 - p)
            diagonal += np.bincount(ca, weight[k], n) + np.bincount(cb, weight[k], n)
        yield field_step
        gradient -= prior * mu
        diagonal += prior
        # Conjugate gradients for the step x: (information) x = gradient.
        x = np.zeros(n)
        residual = gradient.copy()
        z = residual / diagonal
        direction = z.copy()
        rz = _dot(residual, z)
        for _ in range(REFIT_CG_STEPS):
            moved = np.zeros(n)
            for k, (ca, cb) in enumerate(chunks):
                yield len(ca) + n
                flow = weight[k] * (direction[ca] - direction[cb])
                moved += np.bincount(ca, flow, n) - np.bincount(cb, flow, n)
            yield field_step
            moved += prior * direction
            step = rz / _dot(direction, moved)
            x += step * direction
            residual -= step * moved
            z = residual / diagonal
            rz_next = _dot(residual, z)
            if rz_next < 1e-12 * n:
                break
            direction = z + (rz_next / rz) * direction
            rz = rz_next
        mu = mu + x
    return mu, diagonal


# exp(x) = 2^k exp(r), r = x - k log 2 in [-0.35, 0.35] (log 2 in two parts, Cody and Waite:
# k times the first is exact), exp(r) by its Taylor series to r^14 (a relative error under 1e-16).
_LOG2_HIGH = 0.693145751953125
_LOG2_LOW = 1.4286068203094173e-06
_TAYLOR = [1.0 / math.factorial(k) for k in range(15)]


def _exp(x: np.ndarray) -> np.ndarray:
    """exp of each element by IEEE arithmetic alone, the same bits on every machine (numpy's
    ``exp`` may take a vectorized path of its own on one processor and not on another)."""
    x = np.clip(x, -700.0, 700.0)
    k = np.rint(x * (1.0 / math.log(2.0)))
    r = (x - k * _LOG2_HIGH) - k * _LOG2_LOW
    out = np.full(len(x), _TAYLOR[-1])
    for coefficient in reversed(_TAYLOR[:-1]):
        out = out * r + coefficient
    result: np.ndarray = np.ldexp(out, k.astype(np.int64))
    return result


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    return math.fsum((x * y).tolist())


def _expected_info(mu: np.ndarray, var: np.ndarray, focus: int) -> np.ndarray:
    """Fisher information of one match between ``focus`` and each entrant (Glicko's, with the
    two uncertainties damping the expected score)."""
    g = 1.0 / np.sqrt(1.0 + 3.0 * (var + var[focus]) / math.pi ** 2)
    e = 1.0 / (1.0 + np.exp(-g * (mu - mu[focus])))
    out: np.ndarray = g * g * e * (1.0 - e)
    return out


def bracket_order(slots: int) -> list[int]:
    """Seed numbers (0 is the top seed) in bracket order for ``slots`` (a power of two): the top
    seed meets the last, and the top two can meet only in the final."""
    order = [0]
    while len(order) < slots:
        order = [x for s in order for x in (s, 2 * len(order) - 1 - s)]
    return order


class KnockoutChooser:
    """Single elimination by sets, seeded by ``entrants``' order (best first). A set is won by
    more match wins; tied, by the points difference over the set; still tied, by the better
    seed. A seed without an opponent in the first round (the field is not a power of two)
    goes through with a bye."""

    lag = 0

    def __init__(self, entrants: Sequence[Side], seating: Seating) -> None:
        self.entrants = list(entrants)
        self.seating = seating
        slots = 1
        while slots < len(self.entrants):
            slots *= 2
        self.alive: list[int | None] = [s if s < len(self.entrants) else None for s in bracket_order(slots)]
        self._winners: dict[tuple[str, ...], int] = {}
        self._round: list[tuple[int, int | None]] = []
        self.champion: Side | None = self.entrants[0] if len(self.entrants) == 1 else None

    def choose(self, *, stored: bool = False) -> list[Pairing] | None:
        if self._round:
            self.alive = [self._winners.pop(tuple(self.entrants[s].label for s in (a, b))) if b is not None else a
                          for a, b in self._round]
        if len(self.alive) == 1:
            winner = self.alive[0]
            self.champion = self.entrants[winner] if winner is not None else None
            return None
        pairs: list[tuple[int, int | None]] = []
        for a, b in zip(self.alive[::2], self.alive[1::2], strict=True):
            # Byes are only in the first round, and never two in one pair (bracket_order).
            first, second = (a, b) if b is not None and a is not None else ((a if a is not None else b), None)
            if first is None:
                raise ValueError("a bracket slot pair with no entrant")
            if second is not None and second < first:
                first, second = second, first
            pairs.append((first, second))
        self._round = pairs
        return [(self.entrants[a], self.entrants[b]) for a, b in pairs if b is not None]

    def learn(self, sides: Pairing, rows: Sequence[MatchRow]) -> None:
        scores, points = set_scores(rows, self.seating), set_points(rows)
        numbers = [self.entrants.index(side) for side in sides]
        best = min(numbers, key=lambda i: (-scores.get(self.entrants[i].label, 0.0),
                                           -points.get(self.entrants[i].label, 0), i))
        self._winners[tuple(side.label for side in sides)] = best

    def grow(self, newcomers: Sequence[Side], leaving: Sequence[str] = ()) -> None:
        raise ValueError("a knockout field is fixed")


__all__ = [
    "Chooser",
    "KnockoutChooser",
    "LadderChooser",
    "LadderRule",
    "SwissChooser",
    "bracket_order",
    "group_up",
    "set_points",
    "set_scores",
]
