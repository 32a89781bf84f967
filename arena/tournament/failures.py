"""Bot failures as a run reports them: one note per failure, a hint for the common ones,
and a tally per bot for the summary at the end of a run.

A failure's facts come from the game record (its ``failures`` entries); the worker turns
them into ``FailureNote`` values that travel back with each finished match, so the parent
never parses a record to report a failure. Everything here is pure: the command line
decides what to print, and when.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena.harness.protocol import Termination
from arena.match.record import FailureAction, GameRecord

if TYPE_CHECKING:
    from arena.tournament.store import MatchRow

# The memory limit's reason (the containment work names it): matched as text, so this
# module reads records written with or without it.
MEMORY = "memory"


@dataclass(frozen=True)
class FailureNote:
    """One bot failure in a finished match: plain, picklable data."""

    seat: int
    bot: str
    reason: str  # a Termination value: no_handshake, timeout, crash, ...
    detail: str
    action: FailureAction  # what the referee did: the side lost, or a random move was played for it

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "bot": self.bot, "reason": self.reason, "detail": self.detail,
                "action": self.action.value}


def failure_notes(record: GameRecord) -> tuple[FailureNote, ...]:
    """Every failure of a match's record, in the order they happened."""
    return tuple(
        FailureNote(f.seat, record.seats[f.seat], f.termination.value, f.detail, f.action) for f in record.failures
    )


def failure_notes_of(record: Mapping[str, Any]) -> tuple[FailureNote, ...]:
    """``failure_notes`` of a record's JSON form (a stored record)."""
    return failure_notes(GameRecord.from_dict(record))


# --- hints ------------------------------------------------------------------------------------

DEBUG_ON_STDOUT = "stdout is for protocol lines only: print debug output to stderr (it goes to the bot's log)"
SLOW_START = "it did not answer hello within startup_ms: if it is slow to start, raise startup_ms in its entry of the file"
CANNOT_START = "its command cannot start: install the program it runs (the interpreter), or fix cmd and cwd in the file"
NOT_EXECUTABLE = "its program is not executable: chmod +x it, or fix cmd in the file"
TIMEOUT = "it ran out of time: raise move_ms (per move) or bank_ms (a reserve for slow moves), or make it faster"
OUT_OF_MEMORY = "it went over its memory limit: raise memory_mb in its entry of the file, or make it use less"
CRASHED = "it crashed or exited: the end of its stderr log says why"
ILLEGAL = "it played a move the rules do not allow: the detail says why; arena replay RESULTS MATCH shows the position"
WRONG_ID = "it answered with another request's id: reply to each request with its id (docs/PROTOCOL.md)"
OVERSIZED = "it wrote a line over the size limit: print debug output to stderr, not stdout"

_NOT_JSON = re.compile(r"^(not JSON|expected a JSON object)")
_NO_COMMAND = re.compile(r"exited with code 127\b|cannot start .*(No such file|not found)", re.IGNORECASE)
_NOT_EXECUTABLE = re.compile(r"exited with code 126\b|cannot start .*Permission denied", re.IGNORECASE)


def hint(reason: str, detail: str) -> str | None:
    """What to do about a failure, for the common ones; None when the detail says it all."""
    if reason == MEMORY:
        return OUT_OF_MEMORY
    if reason in (Termination.NO_HANDSHAKE.value, Termination.MALFORMED.value) and _NOT_JSON.search(detail):
        return DEBUG_ON_STDOUT
    if _NOT_EXECUTABLE.search(detail):
        return NOT_EXECUTABLE
    if _NO_COMMAND.search(detail) or reason == Termination.NO_HANDSHAKE.value and detail.startswith("cannot start"):
        return CANNOT_START
    if reason == Termination.NO_HANDSHAKE.value and detail.startswith("no ready within"):
        return SLOW_START
    return {
        Termination.TIMEOUT.value: TIMEOUT,
        Termination.CRASH.value: CRASHED,
        Termination.ILLEGAL_MOVE.value: ILLEGAL,
        Termination.WRONG_ID.value: WRONG_ID,
        Termination.OVERSIZED_LINE.value: OVERSIZED,
    }.get(reason)


def describe(note: FailureNote, match_id: str) -> str:
    """One line for a failure as it happens."""
    then = "its side lost the match" if note.action is FailureAction.FORFEIT else "a random legal move was played for it"
    return f"failure: {note.bot} in match {match_id} (seat {note.seat}): {note.reason}: {_one_line(note.detail)}; {then}"


def _one_line(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# --- the tally -----------------------------------------------------------------------------------


@dataclass
class BotFailures:
    """One bot's failures over the results: counts, and the first one with its detail."""

    matches: int = 0  # matches the bot sat in
    failed: int = 0  # matches in which it failed at least once
    reasons: Counter[str] = field(default_factory=Counter)
    first_match: str | None = None
    first: FailureNote | None = None  # None until known (a match stored by an earlier run has no note here)

    @property
    def failed_every_match(self) -> bool:
        return self.matches > 0 and self.failed == self.matches


class FailureTally:
    """Failures counted per bot over a tournament's matches, stored ones and new ones alike.
    Counts only: its size does not grow with the number of matches."""

    def __init__(self, bots: Iterable[str]) -> None:
        self.bots: dict[str, BotFailures] = {name: BotFailures() for name in bots}
        self.matches = 0
        self.failed_matches = 0  # matches with at least one bot failure

    def add(self, row: MatchRow, notes: Sequence[FailureNote] | None = None) -> None:
        """Count a finished match; ``notes`` carry the details when the match was just played."""
        self.matches += 1
        for name in dict.fromkeys(row.seats):
            self.bots.setdefault(name, BotFailures()).matches += 1
        if not row.failures:
            return
        self.failed_matches += 1
        failed_bots: set[str] = set()
        for seat, reason in row.failures:
            name = row.seats[seat]
            stats = self.bots.setdefault(name, BotFailures())
            stats.reasons[reason.value] += 1
            failed_bots.add(name)
            if stats.first_match is None:
                stats.first_match = row.id
                stats.first = next((n for n in notes or () if n.seat == seat), None)
        for name in failed_bots:
            self.bots[name].failed += 1

    def failing(self) -> list[tuple[str, BotFailures]]:
        """The bots that failed at least once, most failed matches first."""
        out = [(name, stats) for name, stats in self.bots.items() if stats.failed]
        return sorted(out, key=lambda item: (-item[1].failed, item[0]))

    def set_first(self, name: str, note: FailureNote) -> None:
        self.bots[name].first = note

    def summary_lines(self, logs: Mapping[str, str], commands: Mapping[str, str]) -> list[str]:
        """The failure summary: per failing bot, counts by reason, its first failure with a
        hint, its stderr log; and a plain call-out for a bot that failed every match.
        ``logs``: bot -> its stderr log path; ``commands``: bot -> the shell command that checks it."""
        failing = self.failing()
        if not failing:
            return []
        lines = [
            f"bot failures: {len(failing)} of {len(self.bots)} bots failed, in {self.failed_matches} of "
            f"{self.matches} matches"
        ]
        for name, stats in failing:
            counts = ", ".join(f"{reason} {n}" for reason, n in sorted(stats.reasons.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"  {name}: failed in {stats.failed} of {stats.matches} matches ({counts})")
            if stats.first is not None:
                first = stats.first
                lines.append(f"    first, match {stats.first_match}: {first.reason}: {_one_line(first.detail)}")
                advice = hint(first.reason, first.detail)
                if advice:
                    lines.append(f"    hint: {advice}")
            if name in logs:
                lines.append(f"    stderr log: {logs[name]}")
            if stats.failed_every_match:
                check = f"; check it with: {commands[name]}" if name in commands else ""
                lines.append(f"    {name} FAILED EVERY ONE OF ITS {stats.matches} MATCHES: none of its results is a "
                             f"game it played{check}")
        return lines


__all__ = [
    "BotFailures",
    "FailureNote",
    "FailureTally",
    "MEMORY",
    "describe",
    "failure_notes",
    "failure_notes_of",
    "hint",
]
