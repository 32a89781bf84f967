"""Two bots (two versions, most often) of one results folder side by side: ``arena compare``.

Everything comes from what the standings already derive (rating, points and escobas per
hand, failures) over every version the folder holds, plus two things read from the records:
the CPU time per move of each (its measured CPU over the moves its seats made), and the
duplicate deals where the two met and one of them won from both seats, each match named by
id so that it can be replayed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from arena.errors import ArenaError
from arena.tournament.store import ResultStore, StoreError


class CompareError(ArenaError):
    """A bot to compare that the folder does not hold (or holds as several versions)."""


@dataclass(frozen=True)
class CompareSide:
    label: str
    version: str | None
    elo: float | None
    ci95: float | None
    matches: int
    points_per_hand: float | None
    escobas_per_hand: float | None
    failures: int
    cpu_ms_per_move: float | None  # None: no CPU time measured


@dataclass(frozen=True)
class Sweep:
    """A duplicate deal the two played from both seats, won both times by ``winner``."""

    deal: int
    winner: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    a: CompareSide
    b: CompareSide
    deals_met: int  # duplicate deals the two played against each other, from every seat
    sweeps: tuple[Sweep, ...]


def _resolve(wanted: str, labels: list[str], folder: str) -> str:
    """A label, or a bot name of which the folder holds one version."""
    if wanted in labels:
        return wanted
    versions = [label for label in labels if label.split("@", 1)[0] == wanted]
    if len(versions) == 1:
        return versions[0]
    if versions:
        raise CompareError(f"{folder}: {wanted!r} has {len(versions)} versions here; name one: {', '.join(versions)}")
    raise CompareError(f"{folder}: no bot {wanted!r} (its bots: {', '.join(labels)})")


def compare(store: ResultStore, a: str, b: str) -> Comparison:
    """``a`` and ``b`` (labels as ``arena table --versions all`` shows them, or bot names) in
    the results of ``store``."""
    from arena.tournament.standings import standings_from_store, versioned_rows

    standings = standings_from_store(store, every_version=True)
    labels = [s.name for s in standings.bots]
    a, b = _resolve(a, labels, store.folder), _resolve(b, labels, store.folder)
    if a == b:
        raise CompareError(f"{store.folder}: give two different bots to compare (both are {a!r})")
    game = store.meta().get("game") or {}
    rows = versioned_rows(store, [bot["name"] for bot in game.get("bots", [])]).rows
    cpu: dict[str, float] = defaultdict(float)
    moves: dict[str, int] = defaultdict(int)
    by_deal: dict[tuple[int, int], list[tuple[str, str | None]]] = defaultdict(list)
    for row in rows:
        mine = {seat: name for seat, name in enumerate(row.seats) if name in (a, b)}
        if not mine:
            continue
        measured = {seat: cpu_ms for seat, cpu_ms, _wall in row.usage if seat in mine}
        if measured:
            try:
                record = store.record(row.id)
            except StoreError:
                record = {}
            for move in record.get("moves", []):
                seat = move.get("seat") if isinstance(move, dict) else None
                if seat in measured:
                    moves[mine[seat]] += 1
            for seat, cpu_ms in measured.items():
                cpu[mine[seat]] += cpu_ms
        sides = set(row.sides)
        if len(row.sides) == 2 and sides == {a, b}:
            winner = row.sides[row.winner] if row.winner is not None else None
            by_deal[row.pairing, row.deal].append((row.id, winner))
    sweeps = []
    deals_met = 0
    for (_pairing, deal), played in sorted(by_deal.items(), key=lambda item: item[0][1]):
        if len(played) < 2:
            continue
        deals_met += 1
        winners = {winner for _, winner in played}
        if len(winners) == 1 and None not in winners:
            sweeps.append(Sweep(deal, str(next(iter(winners))), tuple(match_id for match_id, _ in played)))
    by_label = {s.name: s for s in standings.bots}

    def side(label: str) -> CompareSide:
        s = by_label[label]
        return CompareSide(label, s.version, s.elo, s.ci95, s.matches, s.points_per_hand, s.escobas_per_hand,
                           sum(count for _, count in s.failures),
                           cpu[label] / moves[label] if moves.get(label) else None)

    return Comparison(side(a), side(b), deals_met, tuple(sweeps))


__all__ = ["CompareError", "CompareSide", "Comparison", "Sweep", "compare"]
