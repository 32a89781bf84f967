"""An in-process player for the referee: no process, no pipe, and it never fails.

It plays a seeded random legal move (or always the first one): the opponent of ``arena
check-bot`` and the test double that tests subclass. It lives apart from the referee because
the referee's module may be compiled (setup.py), and a compiled class cannot be subclassed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena.core.seeding import Rng
from arena.harness.botproc import Limits
from arena.harness.protocol import Info, Ready
from arena.harness.resources import Usage

__all__ = ["LocalBot"]


class LocalBot:
    """A seat played in-process: a seeded random legal move, or with ``first`` always the first."""

    def __init__(self, name: str = "local-random", seed: int = 0, first: bool = False,
                 limits: Limits | None = None) -> None:
        self.seat: int | None = None
        self._name = name
        self._rng = Rng(seed)
        self._first = first
        self._limits = limits if limits is not None else Limits()
        self.last_request_id = 0
        self.last_info: Info | None = None  # its moves carry no notes

    @property
    def name(self) -> str:
        return self._name

    @property
    def limits(self) -> Any:
        return self._limits

    @property
    def process(self) -> None:
        """No process to start or measure (the referee's ``Player.process``)."""
        return None

    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None:
        pass

    def await_ready(self) -> Ready:
        return Ready(self._name, 1)

    def queue(self, line: bytes) -> None:
        pass

    def decide(self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int,
               idle: Callable[[], None] | None = None) -> tuple[int, str, float]:
        if idle is not None:
            idle()
        self.last_request_id += 1
        move = legal[0] if self._first else legal[self._rng.below(len(legal))]
        return self.last_request_id, move, 0.0

    def flush(self) -> None:
        pass

    def usage(self) -> Usage:
        return Usage()  # no source: the record says nothing of what it used

    def kill(self) -> None:
        pass
