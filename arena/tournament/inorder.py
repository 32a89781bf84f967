"""Results in any order, groups out in order: what keeps a schedule chosen from results
deterministic when workers finish matches in any order.

A group (a deal pair of a sequential test, a pairing of an adaptive format) is released only
once it is complete and every group before it has been released, so whatever reads the
released groups sees the same sequence at any concurrency.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class InOrder(Generic[T]):
    """Parts of numbered groups of ``size`` parts in, in any order; ``pop`` gives the next
    group's parts (in part order) once it is complete."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.next = 0  # the group pop gives next
        self._held: dict[int, dict[int, T]] = {}

    def add(self, group: int, part: int, value: T) -> None:
        """Raises ``ValueError`` for a group already given out, a part out of range or given twice."""
        if group < self.next or not 0 <= part < self.size:
            raise ValueError(f"group {group}, part {part} was already counted or is not one of its {self.size} parts")
        parts = self._held.setdefault(group, {})
        if part in parts:
            raise ValueError(f"group {group}, part {part} is given twice")
        parts[part] = value

    def ready(self) -> bool:
        return len(self._held.get(self.next, ())) == self.size

    def pop(self) -> list[T] | None:
        """The next group's parts, or None while it is incomplete."""
        if not self.ready():
            return None
        parts = self._held.pop(self.next)
        self.next += 1
        return [parts[i] for i in range(self.size)]

    @property
    def held(self) -> int:
        """Parts waiting for their group, or for a group before it."""
        return sum(len(parts) for parts in self._held.values())


__all__ = ["InOrder"]
