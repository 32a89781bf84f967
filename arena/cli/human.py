"""A person's seat for ``arena play human``: a Player of the referee, played from the terminal.

The referee asks it as it asks a bot process (``arena.match.referee.Player``): it is sent the
events its seat may see and, at each decision, the seat's view and the legal moves. It shows
them (the hand, the table, the score, the piles' counts, the moves numbered) and reads a move: a
number, or the move's text in any order of its taken cards. Anything else is answered and asked
again; the end of input forfeits the seat. Without a clock (no ``--move-ms``) it waits as long as the person thinks; with one, a
move not given in time is a timeout, as for a bot.
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import arena.cli.console as console
from arena.core.rules import Seating
from arena.errors import MoveParseError
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import BotFailure, Termination

if TYPE_CHECKING:
    from arena.harness.botproc import Limits

__all__ = ["HUMAN", "HumanSeat", "Keyboard", "LineSource"]

HUMAN = "human"  # the word that asks ``arena play`` for a person's seat, and the seat's name


class LineSource(Protocol):
    """Where a person's lines come from: a line without its end, or None when ``timeout``
    seconds pass first; raises EOFError at the end of input."""

    def read(self, timeout: float | None) -> str | None: ...


class Keyboard:
    """Lines typed on standard input, read from its descriptor so that a clock can wait on it."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._tty = os.isatty(fd)
        self._buffer = b""

    def read(self, timeout: float | None) -> str | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._fd, 4096)
            if not chunk:
                if self._buffer:  # a last line without its end
                    break
                raise EOFError
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        text = line.decode("utf-8", "replace").strip()
        if not self._tty:  # a terminal shows what was typed; lines from a pipe are shown here
            console.echo(text)
        return text


class _Piles:
    """How many cards each side has captured this hand, and its escobas: counted from the
    public events the seat is sent (``docs/PROTOCOL.md``), as a person at the table would."""

    def __init__(self, seating: Seating) -> None:
        self._side_of = [seating.side_of(s) for s in range(seating.players)]
        self.cards = [0] * seating.sides
        self.escobas = [0] * seating.sides

    def see(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "deal" and event.get("round") == 0:
            self.cards = [0] * len(self.cards)
            self.escobas = [0] * len(self.escobas)
        elif kind in ("initial_capture", "escoba_en_mano"):
            self.cards[self._side_of[event["seat"]]] += len(event["cards"])
        elif kind in ("play", "renuncio") and (event["take"] or kind == "renuncio"):
            self.cards[self._side_of[event["seat"]]] += 1 + len(event["take"])
        elif kind == "sweep" and event.get("side") is not None:
            self.cards[event["side"]] += len(event["cards"])
        elif kind == "escoba":
            self.escobas[event["side"]] += 1


class HumanSeat(LocalBot):
    """A seat played by a person at the terminal (see the module's docstring). An in-process
    player like ``LocalBot``, whose no-op parts (no process, no handshake, no usage) it keeps."""

    def __init__(self, seating: Seating, names: Sequence[str], limits: Limits, *, clock: bool,
                 lines: LineSource | None = None, say: Callable[[str], None] = console.echo) -> None:
        super().__init__(HUMAN, limits=limits)
        self._seating = seating
        self._names = names  # every seat's name, for the score line
        self._clock = clock  # False: the person has all the time they want
        self._lines = lines if lines is not None else Keyboard()
        self._say = say
        self._piles = _Piles(seating)

    def queue(self, line: bytes) -> None:
        message = json.loads(line)
        if message.get("type") == "event":
            self._piles.see(message["event"])

    def decide(self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int,
               idle: Callable[[], None] | None = None) -> tuple[int, str, float]:
        self.last_request_id += 1
        seen = json.loads(view) if isinstance(view, str) else dict(view)
        for shown in self._screen(seen, legal):
            self._say(shown)
        start = time.monotonic()
        budget = (move_ms + bank_ms + self._limits.grace_ms) / 1000 if self._clock else None
        while True:
            left = None if budget is None else budget - (time.monotonic() - start)
            if left is not None and left <= 0:
                raise BotFailure(Termination.TIMEOUT, f"no move within {move_ms + bank_ms} ms")
            console.echo(f"your move (1-{len(legal)} or its text): ", nl=False)
            console.flush()
            try:
                line = self._lines.read(left)
            except EOFError:
                # Nobody is left to play the seat: it forfeits, as a bot that exits does.
                raise BotFailure(Termination.CRASH, "the person's input ended (end of file)") from None
            if line is None:
                continue  # the clock ran out: the loop's first check says so
            chosen, why = choose(line, legal)
            if chosen is not None:
                return self.last_request_id, chosen, time.monotonic() - start
            self._say(f"  {why}")

    def _screen(self, view: dict[str, Any], legal: Sequence[str]) -> list[str]:
        seating = self._seating
        mine = seating.side_of(view["seat"])
        sides = []
        for side in range(seating.sides):
            who = " + ".join("you" if s == view["seat"] else self._names[s] for s in seating.seats_of(side))
            escobas = self._piles.escobas[side]
            sides.append(f"{who} {view['scores'][side]} (pile {self._piles.cards[side]}"
                         + (f", {escobas} escoba{'s' if escobas != 1 else ''}" if escobas else "") + ")")
        others = ", ".join(f"{self._names[s]} {n}" for s, n in enumerate(view["hand_sizes"]) if s != view["seat"])
        numbered = "  ".join(f"{n}) {move}" for n, move in enumerate(legal, 1))
        return [
            "",
            f"== your turn, seat {view['seat']} (side {mine}) | hand {view['hand_number'] + 1} round {view['round'] + 1}"
            f" | dealer seat {view['dealer']} | stock {view['stock']} ==",
            "  score: " + "  ".join(sides),
            f"  cards in hand: {others}",
            f"  table:     {' '.join(view['table']) or '(empty)'}",
            f"  your hand: {' '.join(view['hand']) or '(no cards)'}",
            f"  moves: {numbered}",
        ]


def choose(text: str, legal: Sequence[str]) -> tuple[str | None, str]:
    """The legal move a person's line names: its number, or its text with the taken cards in
    any order; else None and what to tell them."""
    from arena.core.moves import Move

    text = text.strip()
    if not text:
        return None, "type a move's number or its text"
    if text.isdigit():
        n = int(text)
        if 1 <= n <= len(legal):
            return legal[n - 1], ""
        return None, f"no move {n}: give a number from 1 to {len(legal)}"
    if text in legal:
        return text, ""
    try:
        move = Move.parse(text.lower())
    except MoveParseError as exc:
        return None, f"not a move: {exc}"
    for option in legal:
        if Move.parse(option) == move:
            return option, ""
    return None, f"{text} is not one of the legal moves"
