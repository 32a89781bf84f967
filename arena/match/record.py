"""The game record: everything about one finished match, as typed values with a JSON form.

A record carries what is needed to replay the match through the rules core (seed, rules,
seating and every move) and what happened around it: the events, how long each decision
took, every bot failure and what the referee did about it, each seat's termination and the
result. Times are kept apart from the game itself (``to_dict(times=False)``) so that the same
seed with deterministic bots gives identical records. Its versions (``SCHEMA_VERSIONS``: 2 adds
the bot's notes with a move) are listed in docs/REPLAY.md, "The record's versions".

This module owns what the referee adds to how a match ends (the rules core's ``EndReason``,
re-exported here): the ``FailurePolicy`` the referee applies, and the forfeit rule
(``forfeit_result``) that both the referee and verification (``arena.match.replay``) use. It is
pure and sits below the rules core's users: it imports neither ``arena.core.game`` nor
``arena.core.rules``, so rules and seating are kept here as their dicts.

A record read back (``GameRecord.from_dict``) is untrusted input: every field's type and
range is checked, and anything malformed raises ``RecordError`` with a one-line message
naming the field. Whether the record is *true* (its moves replay to its events and result)
is ``arena.match.replay``'s business.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, NamedTuple, NoReturn

from arena.core.outcome import EndReason, TextEnum
from arena.errors import ArenaError, ExitCode
from arena.harness.protocol import Info, InfoDrop, Termination, check_info
from arena.harness.resources import Usage

# The newest schema this arena writes and reads (docs/REPLAY.md, "The record's versions"). A
# record is written with the oldest version that holds it: one without version 2's additions
# (a move's notes) is written as version 1, byte for byte what an arena before them wrote.
SCHEMA_VERSION = 2
SCHEMA_VERSIONS = (1, 2)
TIME_KEYS = ("ms", "t_ms")  # what to_dict(times=False) leaves out of moves and events


def untimed(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an event's (or a move's) dict without its times (``TIME_KEYS``): what
    verification compares and pages show. A copy then a deletion per time key, where a
    comprehension would test every key of the event in Python."""
    out = dict(entry)
    for key in TIME_KEYS:
        out.pop(key, None)
    return out


class RecordError(ArenaError, ValueError):
    """A game record is malformed or does not replay to what it says."""

    exit_code = ExitCode.CHECK_FAILED  # the record is refused


class PolicyError(ArenaError, ValueError):
    """A failure policy that is not ``loss`` or ``substitute``, or strikes that are not an integer >= 0."""


class PlayedBy(TextEnum):
    """Who chose a recorded move: the seat's bot, or the referee in its place (a substitute)."""

    BOT = "bot"
    SUBSTITUTE = "substitute"


class FailureAction(TextEnum):
    """What the referee did about a bot failure."""

    SUBSTITUTE = "substitute"  # played a random legal move for the bot; the match went on
    FORFEIT = "forfeit"  # the bot's side lost the match there


# --- the failure policy --------------------------------------------------------------------------


class Policy(TextEnum):
    """What the referee does about a bot failure (see ``FailurePolicy``)."""

    LOSS = "loss"
    SUBSTITUTE = "substitute"


POLICIES = tuple(p.value for p in Policy)
DEFAULT_STRIKES = 3


@dataclass(frozen=True)
class FailurePolicy:
    """``loss``: a failing bot's side loses the match at once. ``substitute``: a random legal
    move is played instead, for the first ``strikes`` failures of a seat; the next one loses."""

    policy: Policy = Policy.LOSS  # its text is accepted too, and parsed here (a YAML file, a test)
    strikes: int = DEFAULT_STRIKES

    def __post_init__(self) -> None:
        given: object = self.policy  # typed Policy, but untyped callers hand in text
        if not isinstance(given, Policy):
            member = _POLICIES.get(given) if isinstance(given, str) else None
            if member is None:
                raise PolicyError(f"failure policy {_show(given)}: expected one of {', '.join(POLICIES)}")
            object.__setattr__(self, "policy", member)
        if not isinstance(self.strikes, int) or isinstance(self.strikes, bool) or self.strikes < 0:
            raise PolicyError(f"strikes: expected an integer >= 0, got {_show(self.strikes)}")

    @property
    def substitutes(self) -> bool:
        return self.policy is Policy.SUBSTITUTE

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy.value, "strikes": self.strikes}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailurePolicy:
        """Inverse of ``to_dict``; a missing key takes its default. Raises ``PolicyError``."""
        if not isinstance(data, Mapping):
            raise PolicyError(f"failure policy: expected an object with policy and strikes, got {_show(data)}")
        unknown = [k for k in data if k not in ("policy", "strikes")]
        if unknown:
            raise PolicyError(f"failure policy: unknown key {_show(unknown[0])} (allowed: policy, strikes)")
        return cls(data.get("policy", Policy.LOSS), data.get("strikes", DEFAULT_STRIKES))


# --- the entries of a record ---------------------------------------------------------------------


class MoveEntry(NamedTuple):
    """One move as played: ``ms`` is the bot's decision time and ``t_ms`` the time since the
    match began (both None in a record written without times).

    A named tuple rather than a frozen dataclass: the referee makes one per decision, and a
    tuple is built several times faster, which the per-decision budget of the arena notices."""

    seat: int
    move: str
    by: PlayedBy = PlayedBy.BOT
    ms: float | None = None
    t_ms: float | None = None
    info: Info | None = None  # the bot's notes with its move (schema 2), or why they were dropped

    def to_dict(self, times: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"seat": self.seat, "move": self.move, "by": self.by.value}
        if times:
            if self.ms is not None:
                data["ms"] = self.ms
            if self.t_ms is not None:
                data["t_ms"] = self.t_ms
        info = self.info
        if info is not None:
            if isinstance(info, InfoDrop):
                data["info_dropped"] = info.value
            else:
                data["info"] = info
        return data


@dataclass(frozen=True)
class FailureEntry:
    """One bot failure: the seat, why (``termination`` and its ``detail``), before which move it
    happened (``move_index``: the number of moves played so far), and what the referee did:
    ``substitute`` names the move it played instead."""

    seat: int
    termination: Termination
    detail: str
    move_index: int
    action: FailureAction
    substitute: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"seat": self.seat, "termination": self.termination.value, "detail": self.detail,
                                "move_index": self.move_index, "action": self.action.value}
        if self.substitute is not None:
            data["substitute"] = self.substitute
        return data


@dataclass(frozen=True)
class SeatOutcome:
    """How one seat's part in the match ended; ``strikes`` counts its failures in play."""

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
        return _read_outcome(data, "outcome", None)


class StderrLine(NamedTuple):
    """A line a seat's bot wrote on stderr during the match (schema 2), at ``t_ms`` since the
    match began: the time the arena read it, on the clock of the moves' ``t_ms``."""

    seat: int
    t_ms: float
    text: str


@dataclass(frozen=True)
class SeatUsage:
    """What one seat's bot used during the match: a measurement, like the times. ``cpu_ms`` is
    user + system time of the bot's whole process tree (its exited processes included),
    ``wall_ms`` the time from the match's start to its end as the launcher saw it, and
    ``cpu_per_wall`` their ratio: above 1, the bot ran on more than one CPU at once while its
    match was timed. ``peak_memory_mb`` is the highest memory of the tree seen; ``source``
    says where the CPU time comes from (``cgroup`` or ``proc``, see ``arena.harness.resources``)."""

    seat: int
    cpu_ms: float
    user_ms: float
    system_ms: float
    wall_ms: float
    cpu_per_wall: float
    peak_memory_mb: float
    source: str

    @classmethod
    def of(cls, seat: int, usage: Usage) -> SeatUsage:
        """The entry for ``seat`` from what its bot's launcher measured."""
        return cls(seat, round(usage.cpu_s * 1000, 1), round(usage.user_s * 1000, 1), round(usage.system_s * 1000, 1),
                   round(usage.wall_s * 1000, 1), round(usage.cpu_per_wall, 3), round(usage.peak_memory_mb, 1),
                   usage.source)

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "cpu_ms": self.cpu_ms, "user_ms": self.user_ms, "system_ms": self.system_ms,
                "wall_ms": self.wall_ms, "cpu_per_wall": self.cpu_per_wall, "peak_memory_mb": self.peak_memory_mb,
                "source": self.source}


@dataclass(frozen=True)
class Result:
    """``winner`` is a side or None (draw); ``forfeited`` the sides that lost by a bot failure."""

    winner: int | None
    scores: tuple[int, ...]
    reason: EndReason
    hands: int
    forfeited: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "scores": list(self.scores), "reason": self.reason.value,
                "hands": self.hands, "forfeited": list(self.forfeited)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        return _read_result(data, "result")


def forfeit_result(scores: Sequence[int], failed_sides: Iterable[int], hand_index: int) -> Result:
    """The result of a match that bot failures ended: the failed bots' sides lose; among the
    other sides the one with the strictly highest score wins, else nobody does (a shared lead,
    or no side left). ``scores`` are per side when play stopped, ``failed_sides`` the side of
    each failed seat (teammates may repeat a side), and ``hand_index`` the 0-based number of
    the hand in play, which counts as a hand of the match."""
    sides = len(scores)
    losers = tuple(sorted(set(failed_sides)))
    if not losers:
        raise RecordError("a forfeit needs at least one failed side")
    if losers[0] < 0 or losers[-1] >= sides:
        raise RecordError(f"failed sides {list(losers)}: a match of {sides} sides has sides 0 to {sides - 1}")
    others = [side for side in range(sides) if side not in losers]
    winner = None
    if others:
        best = max(scores[side] for side in others)
        leaders = [side for side in others if scores[side] == best]
        if len(leaders) == 1:
            winner = leaders[0]
    return Result(winner, tuple(scores), EndReason.FORFEIT, hand_index + 1, losers)


# --- the record ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameRecord:
    """One match. ``events`` are the core's event dicts (private ones included) each with
    ``t_ms``, the time since the match began; ``failures`` list every bot failure with what
    the referee did about it; ``policy`` is None only in a record that does not say.

    ``usage`` holds what each seat's bot used (``SeatUsage``), for the seats whose player
    measures it (a bot process; not an in-process player). Like the times it is a measurement:
    ``to_dict(times=False)`` leaves it out, records written before it existed have none, and
    verification ignores it. So are ``stderr``, the lines each bot process wrote on stderr
    during the match, and ``stderr_dropped``, the bytes per seat past their caps (all zeros, or
    empty, when none were)."""

    seed: int
    rules: dict[str, Any]
    seating: dict[str, Any]
    seats: tuple[str, ...]
    moves: tuple[MoveEntry, ...]
    events: tuple[dict[str, Any], ...]
    outcomes: tuple[SeatOutcome, ...]
    result: Result
    failures: tuple[FailureEntry, ...] = ()
    limits: tuple[dict[str, Any], ...] = ()
    policy: FailurePolicy | None = None
    duration_ms: float = 0.0
    usage: tuple[SeatUsage, ...] = ()
    stderr: tuple[StderrLine, ...] = ()
    stderr_dropped: tuple[int, ...] = ()

    @property
    def winner(self) -> int | None:
        return self.result.winner

    @property
    def schema_version(self) -> int:
        """The oldest schema that holds this record (``SCHEMA_VERSIONS``)."""
        return self._version(True)

    def _version(self, times: bool) -> int:
        """The oldest schema that holds ``to_dict(times)``: without times, the stderr goes too."""
        if times and (self.stderr or any(self.stderr_dropped)):
            return 2
        return 2 if any(m.info is not None for m in self.moves) else 1

    def to_dict(self, times: bool = True) -> dict[str, Any]:
        if times:
            events = [dict(e) for e in self.events]
        else:
            events = list(map(untimed, self.events))
        data: dict[str, Any] = {
            "schema_version": self._version(times),
            "seed": self.seed,
            "rules": dict(self.rules),
            "seating": dict(self.seating),
            "seats": list(self.seats),
            "limits": [dict(x) for x in self.limits],
            "policy": self.policy.to_dict() if self.policy is not None else {},
            "moves": [m.to_dict(times) for m in self.moves],
            "events": events,
            "failures": [f.to_dict() for f in self.failures],
            "outcomes": [o.to_dict() for o in self.outcomes],
            "result": self.result.to_dict(),
        }
        if times:
            data["duration_ms"] = self.duration_ms
            if self.usage:
                data["usage"] = [u.to_dict() for u in self.usage]
            if self.stderr or any(self.stderr_dropped):
                data["stderr"] = {"lines": [list(line) for line in self.stderr],
                                  "dropped": list(self.stderr_dropped) or [0] * len(self.seats)}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, events_replayed: bool = False) -> GameRecord:
        """Read a record's dict, checking every field; ``RecordError`` names the first bad one.

        ``events_replayed``: for a caller that compares every event with the rules core's
        (arena.match.replay, which refuses the record at the first that differs, and reads each
        event as it compares it: ``read_event`` where it is not the core's with a time): the
        events are taken as they are, unread and uncopied, and the record is not to be used
        before that walk has accepted it. Most of a record is its events: a report reads each
        one once."""
        if not isinstance(data, Mapping):
            raise RecordError(f"a game record must be a JSON object, got {_show(data)}")
        _keys(data, "record", _RECORD_KEYS, _RECORD_REQUIRED)
        version = data["schema_version"]
        if type(version) is not int or version not in SCHEMA_VERSIONS:
            raise RecordError(f"record schema_version {_show(version)} is not supported "
                              f"(expected {' or '.join(map(str, SCHEMA_VERSIONS))})")
        seats = tuple(_str(s, "seats", i) for i, s in enumerate(_list(data["seats"], "seats")))
        if not seats:
            _bad("seats", None, "at least one bot name", data["seats"])
        players = len(seats)
        policy_data = _object(data.get("policy", {}), "policy")
        try:
            policy = FailurePolicy.from_dict(policy_data) if policy_data else None
        except PolicyError as exc:
            raise RecordError(f"malformed game record: policy: {exc}") from None
        result = _read_result(data["result"], "result")
        moves, events = _list(data["moves"], "moves"), _list(data["events"], "events")
        return cls(
            seed=_int(data["seed"], "seed", None, -(2**63), 2**64 - 1, "an integer seed of at most 64 bits"),
            rules=_plain_object(data["rules"], "rules", None, 1),
            seating=_read_seating(data["seating"]),
            seats=seats,
            moves=_read_moves(moves, players, version),
            events=tuple(events) if events_replayed else tuple([read_event(e, i) for i, e in enumerate(events)]),
            outcomes=tuple(_read_outcome(o, f"outcomes[{i}]", players)
                           for i, o in enumerate(_list(data["outcomes"], "outcomes"))),
            result=result,
            failures=tuple(_read_failure(f, f"failures[{i}]", players)
                           for i, f in enumerate(_list(data.get("failures", []), "failures"))),
            limits=tuple(_plain_object(x, "limits", i, 1) for i, x in enumerate(_list(data.get("limits", []), "limits"))),
            policy=policy,
            duration_ms=_time(data.get("duration_ms", 0.0), "duration_ms"),
            usage=_read_usage(data.get("usage", []), players),
            **_read_stderr(data, players, version),
        )


@dataclass(frozen=True)
class RowValues:
    """What a tournament's store row says about its match, derived from the record alone:
    the schedule's values it must agree with (seed, seats) and the summary columns."""

    seed: int
    seats: tuple[str, ...]
    winner: int | None
    scores: tuple[int, ...]
    reason: EndReason
    terminations: tuple[Termination, ...]  # per seat: OK or the termination that lost the match
    escobas: tuple[int, ...]  # per side
    hands: int
    failures: tuple[tuple[int, Termination], ...]  # (seat, termination) of every failure, substituted ones too


def derive_row_values(record: GameRecord) -> RowValues:
    """The values of the match's store row, as the record says them (see ``RowValues``)."""
    result = record.result
    sides = len(result.scores)
    escobas = [0] * sides
    for i, event in enumerate(record.events):
        if event.get("type") == "escoba":
            side = event.get("side")
            if not isinstance(side, int) or isinstance(side, bool) or not 0 <= side < sides:
                raise RecordError(f"malformed game record: events[{i}]: an escoba for side {_show(side)} "
                                  f"in a match of {sides} sides")
            escobas[side] += 1
    terminations = [Termination.OK] * len(record.seats)
    for outcome in record.outcomes:
        terminations[outcome.seat] = outcome.termination
    return RowValues(
        seed=record.seed,
        seats=record.seats,
        winner=result.winner,
        scores=result.scores,
        reason=result.reason,
        terminations=tuple(terminations),
        escobas=tuple(escobas),
        hands=result.hands,
        failures=tuple((f.seat, f.termination) for f in record.failures),
    )


# --- reading untrusted dicts ---------------------------------------------------------------------
#
# Each reader takes the value, where it sits (``where``) and its key there; the path in a message
# ("moves[3].seat") is only spelled out when something is wrong, since records are read in bulk.

_RECORD_KEYS = ("schema_version", "seed", "rules", "seating", "seats", "limits", "policy", "moves", "events",
                "failures", "outcomes", "result", "duration_ms", "usage", "stderr")
_RECORD_REQUIRED = ("schema_version", "seed", "rules", "seating", "seats", "moves", "events", "outcomes", "result")
_MOVE_KEYS = frozenset(("seat", "move", "by", "ms", "t_ms", "info", "info_dropped"))
_FAILURE_KEYS = frozenset(("seat", "termination", "detail", "move_index", "action", "substitute"))
_OUTCOME_KEYS = frozenset(("seat", "bot", "termination", "detail", "strikes"))
_USAGE_KEYS = ("seat", "cpu_ms", "user_ms", "system_ms", "wall_ms", "cpu_per_wall", "peak_memory_mb", "source")
_RESULT_KEYS = frozenset(("winner", "scores", "reason", "hands", "forfeited"))
_INT_MAX = 2**63 - 1
# The deepest an event nests: hand_score.breakdown[side][name].
_EVENT_DEPTH = 3
_PLAYED_BY = {m.value: m for m in PlayedBy}
_ACTIONS = {m.value: m for m in FailureAction}
_REASONS = {m.value: m for m in EndReason}
_TERMINATIONS = {m.value: m for m in Termination}
_POLICIES = {m.value: m for m in Policy}
_INFO_DROPS = {m.value: m for m in InfoDrop}


def _show(value: Any) -> str:
    """A value in a one-line message, short whatever its size (a huge int cannot even be printed)."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < 10**18 else "a huge integer"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _path(where: str, key: str | int | None) -> str:
    if key is None:
        return where
    return f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key


def _bad(where: str, key: str | int | None, expected: str, value: Any) -> NoReturn:
    raise RecordError(f"malformed game record: {_path(where, key)}: expected {expected}, got {_show(value)}")


def _keys(data: Mapping[str, Any], where: str, allowed: Iterable[str], required: tuple[str, ...]) -> None:
    for key in data:
        if key not in allowed:
            raise RecordError(f"malformed game record: {where}: unknown key {_show(key)}")
    for key in required:
        if key not in data:
            raise RecordError(f"malformed game record: {where}: missing {key!r}")


def _object(value: Any, where: str, key: str | int | None = None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _bad(where, key, "an object", value)
    return value


def _list(value: Any, where: str, key: str | int | None = None) -> Sequence[Any]:
    if not isinstance(value, (list, tuple)):
        _bad(where, key, "a list", value)
    return value


def _int(value: Any, where: str, key: str | int | None = None, low: int = 0, high: int = _INT_MAX,
         what: str | None = None) -> int:
    if type(value) is not int or not low <= value <= high:
        if what is None:
            what = f"an integer >= {low}" if high == _INT_MAX else f"an integer from {low} to {high}"
        _bad(where, key, what, value)
    return value


def _str(value: Any, where: str, key: str | int | None = None) -> str:
    if not isinstance(value, str):
        _bad(where, key, "a string", value)
    return value


def _time(value: Any, where: str, key: str | int | None = None) -> float:
    """A duration in ms: a finite number >= 0, kept as written (an int stays an int in JSON)."""
    if type(value) is not float and type(value) is not int or not (0 <= value <= _INT_MAX and math.isfinite(value)):
        _bad(where, key, "a number of milliseconds >= 0", value)
    return value


def _choice(members: Mapping[str, Any], value: Any, where: str, key: str | int | None = None) -> Any:
    member = members.get(value) if type(value) is str else None
    if member is None:
        _bad(where, key, "one of " + ", ".join(members), value)
    return member


class _NotPlain(Exception):
    """Raised by the fast copy; the careful walk then says where and why."""


def _copy_plain(value: Any, depth: int) -> Any:
    """The common case fast: plain JSON (dict, list, str, int, float, bool, None) nested at most
    ``depth`` levels, copied; anything else, ``_NotPlain``. Text and small ints, most of a
    record, are taken in line rather than by a call each."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if -_INT_MAX <= value <= _INT_MAX:
            return value
    elif kind is float:
        if math.isfinite(value):
            return value
    elif depth > 0:
        inner = depth - 1
        if kind is list:
            return [v if type(v) is str else _copy_plain(v, inner) for v in value]
        if kind is dict:
            out = {}
            for k, v in value.items():
                if type(k) is not str:
                    raise _NotPlain
                item = type(v)
                if item is str or item is int and -_INT_MAX <= v <= _INT_MAX:
                    out[k] = v
                elif item is list and inner > 0:
                    out[k] = [x if type(x) is str else _copy_plain(x, inner - 1) for x in v]
                else:
                    out[k] = _copy_plain(v, inner)
            return out
    raise _NotPlain


def _plain(value: Any, where: str, key: str | int | None, depth: int) -> Any:
    """A JSON value nested at most ``depth`` levels below here, copied; refused otherwise (a
    record is untrusted: deep nesting would overflow whatever walks it later)."""
    try:
        return _copy_plain(value, depth)
    except _NotPlain:
        pass
    if value is None or isinstance(value, (bool, str)):
        return value
    path = _path(where, key)
    if isinstance(value, int):
        return _int(value, path, None, -_INT_MAX, _INT_MAX, "an integer of at most 63 bits")
    if isinstance(value, float):
        if not math.isfinite(value):
            _bad(path, None, "a finite number", value)
        return value
    if depth <= 0:
        _bad(path, None, "a plain value (nested too deep)", value)
    if isinstance(value, (list, tuple)):
        return [_plain(v, path, i, depth - 1) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return _plain_object(value, path, None, depth)
    _bad(path, None, "a JSON value", value)


def _plain_object(value: Any, where: str, key: str | int | None, depth: int) -> dict[str, Any]:
    if type(value) is dict:
        try:
            copied: dict[str, Any] = _copy_plain(value, depth)
            return copied
        except _NotPlain:
            pass
    path = _path(where, key)
    out = {}
    for name, item in _object(value, path).items():
        if not isinstance(name, str):
            _bad(path, None, "an object with text keys", name)
        out[name] = _plain(item, path, name, depth - 1)
    return out


def _read_seating(value: Any) -> dict[str, Any]:
    data = _object(value, "seating")
    _keys(data, "seating", ("players", "teams"), ("players",))
    out: dict[str, Any] = {"players": _int(data["players"], "seating", "players", 0, 1000)}
    if "teams" in data:
        teams = data["teams"]
        out["teams"] = None if teams is None else [
            [_int(s, f"seating.teams[{i}]", j, 0, 1000) for j, s in enumerate(_list(team, "seating.teams", i))]
            for i, team in enumerate(_list(teams, "seating", "teams"))
        ]
    return out


def _seat(value: Any, where: str, players: int | None) -> int:
    if players is None:
        return _int(value, where, "seat")
    return _int(value, where, "seat", 0, players - 1)


def _read_moves(moves: Sequence[Any], players: int, version: int) -> tuple[MoveEntry, ...]:
    plain = _plain_moves(moves, players)
    if plain is not None:
        return plain  # no notes: any version holds them
    entries = tuple([_read_move(m, "moves", i, players) for i, m in enumerate(moves)])
    if version < 2:
        for i, entry in enumerate(entries):
            if entry.info is not None:
                raise RecordError(f"malformed game record: moves[{i}]: a move's notes need schema_version 2")
    return entries


_PLAIN_MOVE_KEYS = frozenset(("seat", "move", "by", "ms", "t_ms"))
_NONE_OR_FLOAT = frozenset((type(None), float))


def _plain_moves(moves: Sequence[Any], players: int) -> tuple[MoveEntry, ...] | None:
    """The moves of the common case read all at once, each check asked of every move in one pass
    (a record's moves are most of what is read of it besides its events): each an object of
    ``seat``, ``move`` and ``by`` with times as floats in range and no notes. None where any move
    is not, and ``_read_move`` reads them one by one and names what is wrong."""
    if not moves:
        return ()
    if {type(m) for m in moves} != {dict} or not _PLAIN_MOVE_KEYS.issuperset(set().union(*moves)):
        return None
    try:
        seats = [m["seat"] for m in moves]
        texts = [m["move"] for m in moves]
        by = [_PLAYED_BY[m["by"]] for m in moves]
    except (KeyError, TypeError):  # a key missing, or a "by" that is no name of one
        return None
    if {type(s) for s in seats} != {int} or min(seats) < 0 or max(seats) >= players or {type(t) for t in texts} != {str}:
        return None
    ms = [m.get("ms") for m in moves]
    t_ms = [m.get("t_ms") for m in moves]
    for times in (ms, t_ms):
        if not _NONE_OR_FLOAT.issuperset({type(t) for t in times}):
            return None
        given = [t for t in times if t is not None]
        # fsum: not finite where any time is not (a NaN compares as neither smaller nor larger)
        if given and not (math.isfinite(math.fsum(given)) and min(given) >= 0 and max(given) < _INT_MAX):
            return None
    return tuple(map(_new_tuple, repeat(MoveEntry), zip(seats, texts, by, ms, t_ms, repeat(None))))


def _read_info(value: Mapping[str, Any], path: str) -> Info | None:
    """A move's ``info`` (an object within the protocol's limits) or ``info_dropped``."""
    if "info" in value:
        if "info_dropped" in value:
            raise RecordError(f"malformed game record: {path}: both info and info_dropped")
        info = check_info(value["info"])
        if isinstance(info, InfoDrop):
            _bad(path, "info", "a JSON object within the notes' limits (docs/PROTOCOL.md)", value["info"])
        return info
    if "info_dropped" in value:
        drop: InfoDrop = _choice(_INFO_DROPS, value["info_dropped"], path, "info_dropped")
        return drop
    return None


_new_tuple = tuple.__new__


def _read_move(value: Any, where: str, index: int, players: int) -> MoveEntry:
    if type(value) is not dict:
        value = _object(value, where, index)
    if not value.keys() <= _MOVE_KEYS or "by" not in value or "move" not in value or "seat" not in value:
        _keys(value, _path(where, index), _MOVE_KEYS, ("seat", "move", "by"))
    seat, move, by, ms, t_ms = value["seat"], value["move"], value["by"], value.get("ms"), value.get("t_ms")
    # The common case checked at once; the careful checks below name what is wrong.
    if (type(seat) is int and 0 <= seat < players and type(move) is str and type(by) is str and by in _PLAYED_BY
            and (ms is None or type(ms) is float and 0 <= ms < _INT_MAX)
            and (t_ms is None or type(t_ms) is float and 0 <= t_ms < _INT_MAX)):
        if len(value) <= 5 or ("info" not in value and "info_dropped" not in value):
            # tuple.__new__: half the time of the named tuple's own __new__, here for every move read
            return _new_tuple(MoveEntry, (seat, move, _PLAYED_BY[by], ms, t_ms, None))
        return MoveEntry(seat, move, _PLAYED_BY[by], ms, t_ms, _read_info(value, _path(where, index)))
    path = _path(where, index)
    return MoveEntry(
        seat=_seat(seat, path, players),
        move=_str(move, path, "move"),
        by=_choice(_PLAYED_BY, by, path, "by"),
        ms=_time(ms, path, "ms") if "ms" in value else None,
        t_ms=_time(t_ms, path, "t_ms") if "t_ms" in value else None,
        info=_read_info(value, path),
    )


def _read_failure(value: Any, where: str, players: int) -> FailureEntry:
    data = _object(value, where)
    _keys(data, where, _FAILURE_KEYS, ("seat", "termination", "detail", "move_index", "action"))
    termination = _choice(_TERMINATIONS, data["termination"], where, "termination")
    if termination is Termination.OK:
        _bad(where, "termination", "a failure, not ok", data["termination"])
    return FailureEntry(
        seat=_seat(data["seat"], where, players),
        termination=termination,
        detail=_str(data["detail"], where, "detail"),
        move_index=_int(data["move_index"], where, "move_index"),
        action=_choice(_ACTIONS, data["action"], where, "action"),
        substitute=_str(data["substitute"], where, "substitute") if "substitute" in data else None,
    )


def _read_outcome(value: Any, where: str, players: int | None) -> SeatOutcome:
    data = _object(value, where)
    _keys(data, where, _OUTCOME_KEYS, ("seat", "bot", "termination"))
    return SeatOutcome(
        seat=_seat(data["seat"], where, players),
        bot=_str(data["bot"], where, "bot"),
        termination=_choice(_TERMINATIONS, data["termination"], where, "termination"),
        detail=_str(data.get("detail", ""), where, "detail"),
        strikes=_int(data.get("strikes", 0), where, "strikes"),
    )


def _amount(value: Any, where: str, key: str) -> float:
    """A measured amount: a finite number >= 0, kept as written."""
    if type(value) is not float and type(value) is not int or not (0 <= value <= _INT_MAX and math.isfinite(value)):
        _bad(where, key, "a number >= 0", value)
    return value


def _read_stderr(data: Mapping[str, Any], players: int, version: int) -> dict[str, Any]:
    """``stderr`` and ``stderr_dropped`` of a record that has its bots' stderr (schema 2)."""
    if "stderr" not in data:
        return {}
    if version < 2:
        raise RecordError("malformed game record: stderr: a record's stderr needs schema_version 2")
    value = _object(data["stderr"], "stderr")
    _keys(value, "stderr", ("lines", "dropped"), ("lines", "dropped"))
    lines = []
    for i, item in enumerate(_list(value["lines"], "stderr", "lines")):
        where = f"stderr.lines[{i}]"
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            _bad(where, None, "[seat, t_ms, text]", item)
        lines.append(StderrLine(_seat(item[0], where, players), _time(item[1], where), _str(item[2], where)))
    dropped = tuple(_int(n, "stderr.dropped", i) for i, n in enumerate(_list(value["dropped"], "stderr", "dropped")))
    if len(dropped) != players:
        _bad("stderr", "dropped", f"a count per seat ({players})", value["dropped"])
    return {"stderr": tuple(lines), "stderr_dropped": dropped}


def _read_usage(value: Any, players: int) -> tuple[SeatUsage, ...]:
    entries = []
    seen: set[int] = set()
    for i, item in enumerate(_list(value, "usage")):
        where = f"usage[{i}]"
        data = _object(item, where)
        _keys(data, where, _USAGE_KEYS, _USAGE_KEYS)
        seat = _seat(data["seat"], where, players)
        if seat in seen:
            raise RecordError(f"malformed game record: {where}: a second entry for seat {seat}")
        seen.add(seat)
        cpu, user, system, wall, per_wall, peak = (_amount(data[key], where, key) for key in _USAGE_KEYS[1:-1])
        entries.append(SeatUsage(seat, cpu, user, system, wall, per_wall, peak, _str(data["source"], where, "source")))
    return tuple(entries)


def _read_result(value: Any, where: str) -> Result:
    data = _object(value, where)
    _keys(data, where, _RESULT_KEYS, ("winner", "scores", "reason", "hands"))
    scores = tuple(_int(s, f"{where}.scores", i) for i, s in enumerate(_list(data["scores"], where, "scores")))
    if not scores:
        _bad(where, "scores", "a score per side", data["scores"])
    sides = len(scores)
    winner = data["winner"]
    forfeited = _list(data.get("forfeited", []), where, "forfeited")
    return Result(
        winner=None if winner is None else _int(winner, where, "winner", 0, sides - 1),
        scores=scores,
        reason=_choice(_REASONS, data["reason"], where, "reason"),
        hands=_int(data["hands"], where, "hands"),
        forfeited=tuple(_int(s, f"{where}.forfeited", i, 0, sides - 1) for i, s in enumerate(forfeited)),
    )


def read_event(value: Any, index: int) -> dict[str, Any]:
    """Event ``index`` of a record, copied with every value in it checked (``GameRecord.from_dict``)."""
    return _event_shape(_plain_object(value, "events", index, _EVENT_DEPTH), index)


def _event_shape(value: Any, index: int) -> dict[str, Any]:
    """Event ``index`` itself, once it is an object naming its type, with a time if any."""
    event: dict[str, Any] = value if type(value) is dict else dict(_object(value, "events", index))
    kind, t_ms = event.get("type"), event.get("t_ms")
    if type(kind) is not str:
        _bad(_path("events", index), "type", "an event type", kind)
    if t_ms is not None and (type(t_ms) is not float or not 0 <= t_ms < _INT_MAX):
        _time(t_ms, _path("events", index), "t_ms")
    return event
