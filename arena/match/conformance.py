"""The conformance check of one bot (``arena check-bot``): a script of handshakes and matches
against in-process opponents that covers what a tournament will ask of the bot.

No printing here: each step's outcome is handed to a callback as a ``Step`` value, and the
command line words it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import BotFailure, Ready, Termination
from arena.match.referee import FailurePolicy, play_match


@dataclass(frozen=True)
class Step:
    """One step of the script: passed or not, what was seen, and how long it took."""

    label: str
    passed: bool
    detail: str  # on a pass, what the bot did; on a failure, "<termination>: <detail>"
    ms: float | None = None  # None for a step that is a count over the whole script


@dataclass(frozen=True)
class Verdict:
    """The whole check: every step run (the script stops at the first failure)."""

    steps: tuple[Step, ...]
    problem: str | None  # the first problem found, or None on a pass

    @property
    def passed(self) -> bool:
        return self.problem is None


class _Probe:
    """Wraps the bot under test for the referee: counts its forced choices (requests with one
    legal move) and, on its ``stale_at``-th decision, sends the request and abandons it at once
    (a ``timeout`` message naming a substitute move), as the arena does after a timeout."""

    def __init__(self, bot: BotProcess, stale_at: int = 0) -> None:
        self.bot = bot
        self.stale_at = stale_at
        self.count = 0
        self.forced = 0
        self.seat: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)

    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None:
        self.bot.seat = self.seat
        self.bot.send_hello(hello, reset=reset)

    def decide(
        self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int, idle: Callable[[], None] | None = None
    ) -> tuple[int, str, float]:
        self.count += 1
        if len(legal) == 1:
            self.forced += 1
        if self.count == self.stale_at:
            move = legal[-1]
            return self.bot.abandon(view, legal, move), move, 0.0
        return self.bot.decide(view, legal, move_ms, bank_ms, idle)


class _Counter:
    """Observer for the bot under test: its decisions, the slowest, the kinds of moves."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.decisions = 0
        self.slowest = 0.0
        self.kinds: set[str] = set()

    def __call__(self, kind: str, item: dict[str, Any]) -> None:
        if kind == "move" and item["seat"] == self.seat and item["by"] == "bot":
            self.decisions += 1
            self.slowest = max(self.slowest, item["ms"])
            move = item["move"]
            if " " in move or move == "pass":
                self.kinds.add(move.split(" ")[0])
            else:
                self.kinds.add("capture" if "+" in move else "trail")


def check_bot(bot: BotProcess, on_step: Callable[[Step], None] | None = None) -> Verdict:
    """Run the script on ``bot`` (started, not yet greeted); ``on_step`` sees each step as it
    ends. The caller closes the bot."""
    limits = bot.limits
    steps: list[Step] = []

    def note(step: Step) -> None:
        steps.append(step)
        if on_step is not None:
            on_step(step)

    def handshake() -> str:
        hello = {
            "protocol": 1,
            "seat": 0,
            "side": 0,
            "players": 2,
            "teams": [[0], [1]],
            "rules": Rules().to_dict(),
            "time": limits.time.to_dict(),
            "max_line_bytes": limits.max_line_bytes,
        }
        bot.seat = 0
        bot.send_hello(hello)
        ready: Ready = bot.await_ready()
        return f"ready, name {ready.name!r}"

    forced = 0

    def match(seat: int, seating: Seating, rules: Rules, seed: int, stale_at: int = 0) -> Callable[[], str]:
        def run() -> str:
            nonlocal forced
            probe = _Probe(bot, stale_at)
            players: list[Any] = [LocalBot(f"random{i}", seed=seed + i) for i in range(seating.players)]
            players[seat] = probe
            counter = _Counter(seat)
            record = play_match(players, rules, seating, seed, FailurePolicy(), observer=counter)
            forced += probe.forced
            outcome = record.outcomes[seat]
            if outcome.termination is not Termination.OK:
                raise BotFailure(outcome.termination, outcome.detail)
            kinds = ", ".join(sorted(counter.kinds))
            hands = record.result.hands
            return (
                f"{hands} hand{'s' if hands != 1 else ''}, {counter.decisions} decisions ({kinds}), "
                f"slowest {counter.slowest:.0f} ms"
            )

        return run

    variants = Rules(renuncio=True, initial_table="subset15", escoba_en_mano=True, target=11)
    script: list[tuple[str, Callable[[], str]]] = [
        (f"handshake: ready within {limits.startup_ms} ms", handshake),
        ("1v1 match as seat 0, several deals", match(0, Seating.alone(2), Rules(target=6), 1)),
        ("new_match: 1v1 as seat 1", match(1, Seating.alone(2), Rules(target=6), 2)),
        ("3 players as seat 2, variant rules (renuncio, subset15, escoba en mano)", match(2, Seating.alone(3), variants, 3)),
        ("pairs as seat 1 with forced captures", match(1, Seating.pairs(4), Rules(forced_capture=True, target=6), 4)),
        (
            "stale request: one request abandoned at once, play goes on",
            match(0, Seating.alone(2), Rules(target=4), 5, stale_at=3),
        ),
    ]
    # The handshake step greets the bot for "match 1"; the first match then re-greets it
    # (new_match), which is exactly what a tournament does.
    for label, run in script:
        start = time.monotonic()
        try:
            detail = run()
        except BotFailure as exc:
            note(Step(label, False, f"{exc.termination.value}: {exc.detail}"))
            return Verdict(tuple(steps), f"first problem: {exc.termination.value} in step '{label}'")
        note(Step(label, True, detail, (time.monotonic() - start) * 1000))
    if forced == 0:
        note(Step("forced choice", False, "no request with a single legal move came up"))
        return Verdict(tuple(steps), "first problem: no forced choice came up")
    note(Step("forced choices", True, f"{forced} requests with a single legal move answered"))
    return Verdict(tuple(steps), None)


__all__ = ["Step", "Verdict", "check_bot"]
