"""The conformance check of one bot (``arena check-bot``): a script of handshakes and matches
against in-process opponents that covers what a tournament will ask of the bot, long requests
included (docs/PROTOCOL.md, "The wire").

The bot is checked as it was started: the caller gives it the spec (limits, sandbox) a
tournament would (``arena/cli/play.py``).

No printing here: each step's outcome is handed to a callback as a ``Step`` value, and the
command line words it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.core.rules import Rules, Seating
from arena.core.seeding import derive_seed
from arena.errors import ArenaError, ExitCode
from arena.harness.botproc import BotProcess
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import BotFailure, Info, Ready, Termination, match_start, request_line
from arena.match.referee import FailurePolicy, play_match

# Go's bufio.Scanner gives up on a longer line by default (bufio.MaxScanTokenSize), and other
# fixed line buffers are often as large; requests are longer on a table nobody clears.
FIXED_BUFFER_BYTES = 64 * 1024


class ScriptError(ArenaError):
    """The script itself is wrong (a deal that no longer makes the request it is there for):
    a bug of the arena, not of the bot."""

    exit_code = ExitCode.INTERNAL


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
    hint: str | None = None  # the likely cause of the problem, when the script can tell

    @property
    def passed(self) -> bool:
        return self.problem is None


class _Probe:
    """Wraps the bot under test for the referee: counts its forced choices (requests with one
    legal move) and, on its ``stale_at``-th decision, sends the request and abandons it at once
    (a ``timeout`` message naming a substitute move), as the arena does after a timeout.

    With ``long_from``, the probe plays a trail for the bot, without a request, until the first
    request of at least that many bytes: from there on the bot decides. Its opponents trailing
    too, nobody clears the table, and that request is as long as a real match makes them (a
    table of 30-odd cards, thousands of legal moves). The bot sees those trails as its own
    plays in the events. Not as abandoned requests: a bot that thinks about each would fall
    behind by all that thinking, which no tournament asks of it (a timeout comes after its
    time)."""

    def __init__(self, bot: BotProcess, stale_at: int = 0, long_from: int = 0) -> None:
        self.bot = bot
        self.stale_at = stale_at
        self.long_from = long_from
        self.count = 0
        self.forced = 0
        self.substituted = 0
        self.seat: int | None = None
        self.answered: list[tuple[int, int]] = []  # (bytes, legal moves) of each request the bot answered
        self.failed_at = 0  # the bytes of the request the bot failed on, 0 if none
        self.last_info: Info | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)

    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None:
        self.bot.seat = self.seat
        self.bot.send_hello(hello, reset=reset)

    def decide(
        self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int, idle: Callable[[], None] | None = None
    ) -> tuple[int, str, float]:
        self.count += 1
        self.last_info = None  # what a move the bot was not asked for carries
        if len(legal) == 1:
            self.forced += 1
        if self.count == self.stale_at:
            move = legal[-1]
            return self.bot.abandon(view, legal, move), move, 0.0
        size = len(request_line(self.bot.last_request_id + 1, move_ms + bank_ms, bank_ms, view, legal))
        if self.long_from and size < self.long_from and not self.answered:
            self.substituted += 1
            return self.bot.last_request_id, next((m for m in legal if "+" not in m and " " not in m), legal[-1]), 0.0
        try:
            reply = self.bot.decide(view, legal, move_ms, bank_ms, idle)
        except BotFailure:
            self.failed_at = size
            raise
        self.answered.append((size, len(legal)))
        self.last_info = self.bot.last_info
        return reply


class _Trailer(LocalBot):
    """An opponent that never captures: it trails the first card of its hand."""

    def decide(self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int,
               idle: Callable[[], None] | None = None) -> tuple[int, str, float]:
        self.last_request_id += 1
        return self.last_request_id, next((m for m in legal if "+" not in m and " " not in m), legal[0]), 0.0


def _kb(size: int) -> str:
    return f"{size / 1024:.0f} KB"


def _long_line_hint(termination: Termination, failed_at: int, answered: int) -> str:
    """Why a bot that answered requests up to ``answered`` bytes failed on one of ``failed_at``."""
    if termination is Termination.TIMEOUT:
        return (f"no reply to a {_kb(failed_at)} request (thousands of legal moves): either the bot is too slow "
                "with that many moves, or it stopped at a fixed-size line buffer; requests reach about 140 KB "
                "(docs/PROTOCOL.md, \"The wire\")")
    if answered <= FIXED_BUFFER_BYTES:
        cause = (f"it stopped at its first request over 64 KB ({_kb(failed_at)}): it likely reads lines through "
                 "a fixed 64 KB buffer (Go's bufio.Scanner default)")
    else:
        cause = (f"it answered a {_kb(answered)} request but stopped at one of {_kb(failed_at)}: it likely reads "
                 "lines through a fixed-size buffer")
    return (f"{cause}. Read whole lines of any length (Go: scanner.Buffer(buf, 1<<20), or bufio.Reader); "
            "max_line_bytes in hello limits only the lines the bot sends (docs/PROTOCOL.md, \"The wire\")")


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


# Deals (match seed, seat) where, everyone trailing, the bot's first request over 64 KB comes
# on its 16th decision and is about 100 KB, and about 140 KB (as long as requests get:
# docs/PROTOCOL.md); tests/match/test_conformance.py keeps them so.
LONG_DEALS = ((44, 0), (74, 1))


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
        # The hello a match's first seat gets (the referee's own words, arena.match.referee).
        hello = match_start(first=True, match=0, seat=0, side=0, players=2, teams=Seating.alone(2).teams,
                            rules=Rules().to_dict(), time=limits.time, max_line_bytes=limits.max_line_bytes,
                            seed=derive_seed(0, "bot", 0))
        bot.seat = 0
        bot.send_hello(hello)
        ready: Ready = bot.await_ready()
        return f"ready, name {ready.name!r}"

    forced = 0
    longest = 0  # the longest request the bot answered so far, in bytes
    failed_at = 0  # the request the bot failed on, in bytes

    def play(probe: _Probe, players: list[Any], seat: int, seating: Seating, rules: Rules,
             seed: int) -> tuple[_Counter, Any]:
        nonlocal forced, longest, failed_at
        players[seat] = probe
        counter = _Counter(seat)
        record = play_match(players, rules, seating, seed, FailurePolicy(), observer=counter)
        forced += probe.forced
        longest = max([longest, *(size for size, _ in probe.answered)])
        failed_at = probe.failed_at
        outcome = record.outcomes[seat]
        if outcome.termination is not Termination.OK:
            raise BotFailure(outcome.termination, outcome.detail)
        return counter, record

    def match(seat: int, seating: Seating, rules: Rules, seed: int, stale_at: int = 0) -> Callable[[], str]:
        def run() -> str:
            players: list[Any] = [LocalBot(f"random{i}", seed=seed + i) for i in range(seating.players)]
            counter, record = play(_Probe(bot, stale_at), players, seat, seating, rules, seed)
            kinds = ", ".join(sorted(counter.kinds))
            hands = record.result.hands
            return (
                f"{hands} hand{'s' if hands != 1 else ''}, {counter.decisions} decisions ({kinds}), "
                f"slowest {counter.slowest:.0f} ms"
            )

        return run

    def long_request(seed: int, seat: int) -> Callable[[], str]:
        def run() -> str:
            probe = _Probe(bot, long_from=FIXED_BUFFER_BYTES + 1)
            players: list[Any] = [_Trailer(f"trailer{i}") for i in range(2)]
            play(probe, players, seat, Seating.alone(2), Rules(max_hands=1), seed)
            if not probe.answered:  # the deal no longer makes a long request: the script is wrong, not the bot
                raise ScriptError(f"conformance deal {seed}: no request over {FIXED_BUFFER_BYTES} bytes")
            size, moves = probe.answered[0]
            return f"answered a {_kb(size)} request ({moves} legal moves) after {probe.substituted} trails played for it"

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
        ("long request: a table nobody clears, over 64 KB", long_request(*LONG_DEALS[0])),
        ("long request: a table nobody clears, about 140 KB", long_request(*LONG_DEALS[1])),
    ]
    # The handshake step greets the bot for "match 1"; the first match then re-greets it
    # (new_match), which is exactly what a tournament does.
    for label, run in script:
        start = time.monotonic()
        failed_at = 0
        try:
            detail = run()
        except BotFailure as exc:
            note(Step(label, False, f"{exc.termination.value}: {exc.detail}"))
            hint = None
            if failed_at > FIXED_BUFFER_BYTES and exc.termination in (Termination.CRASH, Termination.TIMEOUT):
                hint = _long_line_hint(exc.termination, failed_at, longest)
            return Verdict(tuple(steps), f"first problem: {exc.termination.value} in step '{label}'", hint)
        note(Step(label, True, detail, (time.monotonic() - start) * 1000))
    if forced == 0:
        note(Step("forced choice", False, "no request with a single legal move came up"))
        return Verdict(tuple(steps), "first problem: no forced choice came up")
    note(Step("forced choices", True, f"{forced} requests with a single legal move answered"))
    return Verdict(tuple(steps), None)


__all__ = ["FIXED_BUFFER_BYTES", "LONG_DEALS", "Step", "Verdict", "check_bot"]
