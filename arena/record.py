"""The game record: everything about one match, as a plain JSON-able value.

A record carries what is needed to replay the match through the rules core (seed, rules,
seating and every move) and what happened around it: the events, how long each decision
took, each seat's termination and the result. Times are kept apart from the game itself
(``to_dict(times=False)``) so that the same seed with deterministic bots gives identical
records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.errors import ArenaError, ExitCode
from arena.game import MatchState
from arena.protocol import Termination
from arena.rules import Rules, Seating

SCHEMA_VERSION = 1
_TIME_KEYS = ("ms", "t_ms")


class RecordError(ArenaError, ValueError):
    """A game record is malformed or does not replay to what it says."""

    exit_code = ExitCode.CHECK_FAILED  # the record is refused


@dataclass(frozen=True)
class SeatOutcome:
    """How one seat's part in the match ended."""

    seat: int
    bot: str
    termination: Termination = Termination.OK
    detail: str = ""
    strikes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "bot": self.bot, "termination": self.termination.value,
                "detail": self.detail, "strikes": self.strikes}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SeatOutcome:
        return cls(int(data["seat"]), str(data["bot"]), Termination(data["termination"]),
                   str(data.get("detail", "")), int(data.get("strikes", 0)))


@dataclass(frozen=True)
class Result:
    """``winner`` is a side or None (draw); ``reason`` is target, max_hands or forfeit."""

    winner: int | None
    scores: tuple[int, ...]
    reason: str
    hands: int
    forfeited: tuple[int, ...] = ()  # sides that lost by a bot failure

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "scores": list(self.scores), "reason": self.reason,
                "hands": self.hands, "forfeited": list(self.forfeited)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        winner = data["winner"]
        return cls(None if winner is None else int(winner), tuple(int(s) for s in data["scores"]),
                   str(data["reason"]), int(data["hands"]), tuple(int(s) for s in data.get("forfeited", ())))


@dataclass(frozen=True)
class GameRecord:
    """One match. ``moves`` entries: ``{"seat", "move", "by", "ms", "t_ms"}`` where ``by`` is
    ``bot`` or ``substitute`` and ``ms`` the bot's decision time; ``events`` are the core's
    event dicts (private ones included) each with ``t_ms``, the time since the match began;
    ``failures`` list every bot failure with what the referee did about it."""

    seed: int
    rules: dict[str, Any]
    seating: dict[str, Any]
    seats: tuple[str, ...]
    moves: tuple[dict[str, Any], ...]
    events: tuple[dict[str, Any], ...]
    outcomes: tuple[SeatOutcome, ...]
    result: Result
    failures: tuple[dict[str, Any], ...] = ()
    limits: tuple[dict[str, Any], ...] = ()
    policy: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0

    @property
    def winner(self) -> int | None:
        return self.result.winner

    def to_dict(self, times: bool = True) -> dict[str, Any]:
        def strip(items: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
            if times:
                return [dict(x) for x in items]
            return [{k: v for k, v in x.items() if k not in _TIME_KEYS} for x in items]

        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "seed": self.seed,
            "rules": dict(self.rules),
            "seating": dict(self.seating),
            "seats": list(self.seats),
            "limits": [dict(x) for x in self.limits],
            "policy": dict(self.policy),
            "moves": strip(self.moves),
            "events": strip(self.events),
            "failures": [dict(x) for x in self.failures],
            "outcomes": [o.to_dict() for o in self.outcomes],
            "result": self.result.to_dict(),
        }
        if times:
            data["duration_ms"] = self.duration_ms
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameRecord:
        try:
            version = data["schema_version"]
            if version != SCHEMA_VERSION:
                raise RecordError(f"record schema_version {version!r} is not supported (expected {SCHEMA_VERSION})")
            return cls(
                seed=int(data["seed"]),
                rules=dict(data["rules"]),
                seating=dict(data["seating"]),
                seats=tuple(str(s) for s in data["seats"]),
                moves=tuple(dict(m) for m in data["moves"]),
                events=tuple(dict(e) for e in data["events"]),
                outcomes=tuple(SeatOutcome.from_dict(o) for o in data["outcomes"]),
                result=Result.from_dict(data["result"]),
                failures=tuple(dict(f) for f in data.get("failures", ())),
                limits=tuple(dict(x) for x in data.get("limits", ())),
                policy=dict(data.get("policy", {})),
                duration_ms=float(data.get("duration_ms", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"malformed game record: {exc.__class__.__name__}: {exc}") from None


def replay(record: GameRecord) -> MatchState:
    """Replay the record's moves through the rules core and check that they produce exactly
    the recorded events; returns the final state. Raises ``RecordError`` on any mismatch."""
    try:
        state = MatchState.new(Rules.from_dict(record.rules), Seating.from_dict(record.seating), record.seed)
    except ValueError as exc:
        raise RecordError(f"record cannot be replayed: {exc}") from None
    for i, entry in enumerate(record.moves):
        if state.current_seat != entry["seat"]:
            raise RecordError(f"move {i}: recorded for seat {entry['seat']}, but seat {state.current_seat} is to play")
        try:
            state.apply(entry["move"])
        except ValueError as exc:
            raise RecordError(f"move {i} ({entry['move']!r}) does not replay: {exc}") from None
    produced = [e.to_dict() for e in state.events]
    recorded = [{k: v for k, v in e.items() if k not in _TIME_KEYS} for e in record.events]
    if produced != recorded:
        pairs = enumerate(zip(produced, recorded, strict=False))
        first = next((i for i, (a, b) in pairs if a != b), min(len(produced), len(recorded)))
        raise RecordError(f"replayed events differ from the record at event {first}")
    return state
