"""Re-play a game record through the rules core, checking it, as a list of frames.

Pure: a record (or its dict) in, frames out; no I/O. The record is never trusted: the match
is played again from its seed, rules and seating with its moves, and every event the core
produces must equal the recorded one, and the end must equal the recorded result (a forfeit
by ``arena.match.record.forfeit_result``, the rule the referee applied). What the record says
about bot failures must agree with its moves and outcomes: every substituted move has its
failure entry and every failure entry its consequence. The first thing that differs is
refused with a ``ReplayMismatch`` naming the move (numbered from 1, as ``arena replay`` shows
them), its seat and its text, and the failure entry when one is at fault.

This is the only verifier: ``arena verify``, ``arena replay`` and the tests all use it.

A frame is the whole table after one step (a deal, a play, a sweep, a hand's score...): every
seat's hand, the table, each side's pile and escobas this hand, and the match score. Frames are
built from the verified events, so what is drawn is exactly what the core did.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import Any, Protocol

from arena.core.cards import Card
from arena.core.events import (
    Cards,
    Claim,
    Deal,
    Escoba,
    EscobaEnMano,
    Event,
    HandScore,
    InitialCapture,
    Play,
    Sweep,
)
from arena.core.game import MatchState, SeatView
from arena.core.moves import Move
from arena.core.outcome import EndReason
from arena.core.rules import Rules, Seating
from arena.harness.protocol import move_texts
from arena.match.record import (
    TIME_KEYS,
    FailureAction,
    FailureEntry,
    GameRecord,
    PlayedBy,
    RecordError,
    Result,
    forfeit_result,
    read_event,
    untimed,
)

_order = attrgetter("order")

# Events that start a new frame; the others (a seat's dealt cards, an escoba) belong to the
# frame of the event they follow.
_PRIMARY = frozenset({"deal", "initial_capture", "escoba_en_mano", "play", "renuncio", "sweep",
                      "hand_score", "match_end"})


class ReplayMismatch(RecordError):
    """The record does not replay to what it says: altered, damaged, or from other rules.

    ``move_index`` is 0-based (``None``: before the first move, at the deal); the message
    numbers moves from 1. ``seat`` and ``move`` are the recorded ones.
    """

    def __init__(self, reason: str, *, move_index: int | None = None, seat: int | None = None,
                 move: str | None = None, moves: int | None = None) -> None:
        self.reason = reason
        self.move_index = move_index
        self.seat = seat
        self.move = move
        if move_index is None:
            where = "before the first move"
        else:
            of = f" of {moves}" if moves is not None else ""
            where = f"move {move_index + 1}{of} (seat {seat} plays {move!r})"
        super().__init__(f"record does not replay: {where}: {reason}")

    @property
    def move_number(self) -> int | None:
        return None if self.move_index is None else self.move_index + 1


@dataclass(frozen=True)
class Frame:
    """The whole table after one step of the match.

    ``kind`` is the step: deal, initial_capture, escoba_en_mano, play, renuncio, pass, sweep,
    hand_score, match_end, or forfeit (the record ends on a bot's failure). ``events`` are the
    core's events of this step; ``move``/``seat`` are set on the frame a move produced.
    ``turn`` is the seat to play next, known on the last frame before a decision.
    ``piles`` and ``escobas`` are per side and for the current hand; ``scores`` are the match
    totals (including this hand once its score is in).
    """

    step: int
    kind: str
    move_index: int | None
    move: str | None
    seat: int | None
    hand: int
    round: int
    dealer: int
    turn: int | None
    stock: int
    hands: tuple[tuple[Card, ...], ...]
    table: tuple[Card, ...]
    piles: tuple[tuple[Card, ...], ...]
    escobas: tuple[int, ...]
    scores: tuple[int, ...]
    events: tuple[Event, ...]
    breakdown: tuple[dict[str, int], ...] | None = None

    @property
    def escoba(self) -> int:
        """How many escobas this step scored."""
        return sum(1 for e in self.events if e.kind == "escoba")


@dataclass(frozen=True)
class Replay:
    """A verified match: its record, the rules it was played by, and every frame."""

    record: GameRecord
    rules: Rules
    seating: Seating
    frames: tuple[Frame, ...]

    @property
    def result(self) -> Result:
        return self.record.result

    @property
    def moves(self) -> int:
        return len(self.record.moves)

    def side_names(self) -> tuple[str, ...]:
        """A label per side: its bot, or its bots joined by ``&`` in seat order."""
        return side_names(self.record, self.seating)

    def hand_scores(self) -> tuple[HandScore, ...]:
        return tuple(e for f in self.frames for e in f.events if isinstance(e, HandScore))

    @cached_property
    def afterwards(self) -> Afterwards:
        """The decks and the legal moves offered (``afterwards``), computed once when asked."""
        return afterwards(self.record)


@dataclass(frozen=True)
class Afterwards:
    """What no seat could see during play, recomputed from a verified record's seed and moves
    through the rules core (the record stores none of it): each hand's shuffled deck, and the
    legal moves each decision offered, exactly as the referee sent them.

    ``decks[h]`` is hand ``h``'s deck in dealing order (the table and every round are dealt
    from its front); ``offered[i]`` the legal moves of move ``i``'s decision."""

    decks: tuple[tuple[Card, ...], ...]
    offered: tuple[tuple[str, ...], ...]

    def stock(self, frame: Frame) -> tuple[Card, ...]:
        """The stock at ``frame``, the card dealt next first."""
        deck = self.decks[frame.hand]
        return deck[len(deck) - frame.stock:]

    def legal(self, frame: Frame) -> tuple[str, ...]:
        """The legal moves offered to ``frame.turn`` after this frame (none when nobody is to play)."""
        if frame.turn is None:
            return ()
        following = 0 if frame.move_index is None else frame.move_index + 1
        return self.offered[following] if following < len(self.offered) else ()


def afterwards(record: GameRecord | Mapping[str, Any]) -> Afterwards:
    """``Afterwards`` of a record ``verify`` accepts (this walk does not check it again)."""
    rec = coerce_record(record)
    rules, seating = _setup(rec)
    state = MatchState(rules, seating, rec.seed)
    seen = _Seen()
    seen.start(state)
    for index, entry in enumerate(rec.moves):
        seen.before(index, state)
        state.apply(entry.move)
        seen.after(state)
    return seen.done(state, rec)


class _Seen:
    """Gathers an ``Afterwards`` along a walk through the match: told before and after each move."""

    __slots__ = ("decks", "offered", "value")

    def __init__(self) -> None:
        self.decks: list[tuple[Card, ...]] = []
        self.offered: list[tuple[str, ...]] = []
        self.value: Afterwards | None = None

    def start(self, state: MatchState) -> None:
        self.decks.append(state.hand.deck)

    def before(self, index: int, state: MatchState) -> None:
        self.offered.append(tuple(move_texts(state.legal_moves())))

    def after(self, state: MatchState) -> None:
        if state.result is None and state.hand.number == len(self.decks):  # the move ended a hand: the next one's deck
            self.decks.append(state.hand.deck)

    def done(self, state: MatchState, rec: GameRecord) -> Afterwards:
        if state.result is None and rec.moves:
            # A forfeit: the decision the failing seat never answered was offered too.
            self.before(len(rec.moves), state)
        self.value = Afterwards(tuple(self.decks), tuple(self.offered))
        return self.value


def side_names(record: GameRecord, seating: Seating) -> tuple[str, ...]:
    return tuple(" & ".join(record.seats[s] for s in seating.seats_of(side)) for side in range(seating.sides))


def coerce_record(record: GameRecord | Mapping[str, Any]) -> GameRecord:
    """A ``GameRecord`` from itself or from its dict, to walk (``RecordError`` when malformed):
    its events are read as the walk takes them, which compares each one with the rules core's."""
    if isinstance(record, GameRecord):
        return record
    if not isinstance(record, Mapping):
        raise RecordError(f"a game record must be a JSON object, got {type(record).__name__}")
    return GameRecord.from_dict(record, events_replayed=True)


def replay(record: GameRecord | Mapping[str, Any]) -> Replay:
    """Re-play and check the record; every frame of the match. Raises ``ReplayMismatch``."""
    rec = coerce_record(record)
    rules, seating = _setup(rec)
    frames = tuple(iter_frames(rec))
    return Replay(rec, rules, seating, frames)


def verify(record: GameRecord | Mapping[str, Any]) -> Result:
    """Re-play and check the record without building frames; its result when it holds."""
    rec = coerce_record(record)
    for _ in _walk(rec, None):
        pass
    return rec.result


def verify_steps(record: GameRecord | Mapping[str, Any]) -> tuple[GameRecord, tuple[tuple[int, int | None], ...]]:
    """``verify``, and where the record's events split into steps: after the first deal and
    after each move, how many of its events had happened and whose turn it was then (None once
    the match is over). What a page needs to draw the match from the verified events alone."""
    rec = coerce_record(record)
    steps: list[tuple[int, int | None]] = []
    for _ in _walk(rec, None, steps):
        pass
    return rec, tuple(steps)


def verify_afterwards(record: GameRecord | Mapping[str, Any]) -> tuple[GameRecord, tuple[tuple[int, int | None], ...],
                                                                      Afterwards, tuple[dict[str, Any], ...]]:
    """``verify_steps``, the record's ``Afterwards`` gathered on the same walk (what a page
    needs to show what no seat saw), and its events without their times (``untimed``): the
    rules core's own, which the walk found equal to the record's (what a page draws)."""
    rec = coerce_record(record)
    steps: list[tuple[int, int | None]] = []
    seen = _Seen()
    shown: list[dict[str, Any]] = []
    for _ in _walk(rec, None, steps, seen, shown):
        pass
    if seen.value is None:  # _walk gathers it whenever the record holds
        raise ReplayMismatch("the walk ended early")
    return rec, tuple(steps), seen.value, tuple(shown)


def iter_frames(record: GameRecord | Mapping[str, Any]) -> Iterator[Frame]:
    """The frames of the match, each yielded once the events behind it are verified."""
    rec = coerce_record(record)
    rules, seating = _setup(rec)
    board = _Board(seating)
    return _walk(rec, board)


# --- the walk --------------------------------------------------------------------------------


def _setup(rec: GameRecord) -> tuple[Rules, Seating]:
    try:
        rules = Rules.from_record(rec.rules)  # an old name as it meant when the record was made
        seating = Seating.from_dict(rec.seating)
    except ValueError as exc:
        raise ReplayMismatch(f"its rules or seating are not valid: {exc}") from None
    if len(rec.seats) != seating.players:
        raise ReplayMismatch(f"it names {len(rec.seats)} bots for {seating.players} seats")
    return rules, seating


def verify_decisions(record: GameRecord | Mapping[str, Any]) -> tuple[GameRecord, tuple[Decision, ...]]:
    """``verify``, and every decision of the match: before each move, what its seat knew (the
    rules core's view of it) and the legal moves it had. What an analysis of the moves needs,
    rebuilt from the record alone."""
    rec = coerce_record(record)
    watch = _Decisions(rec)
    for _ in _walk(rec, None, None, watch):
        pass
    return rec, tuple(watch.decisions)


@dataclass(frozen=True)
class Decision:
    """Move ``index`` (0-based) of a verified record, before it was played: its seat's ``view``,
    the ``legal`` moves it had, in the rules core's order, and the one ``played``."""

    index: int
    view: SeatView
    legal: tuple[Move, ...]
    played: Move


class _Watcher(Protocol):
    """What a walk tells along the way: the match's start, before and after each move, its end."""

    def start(self, state: MatchState) -> None: ...

    def before(self, index: int, state: MatchState) -> None: ...

    def after(self, state: MatchState) -> None: ...

    def done(self, state: MatchState, rec: GameRecord) -> object: ...


class _Decisions:
    """Gathers each move's ``Decision`` along a walk."""

    def __init__(self, rec: GameRecord) -> None:
        self.rec = rec
        self.decisions: list[Decision] = []

    def start(self, state: MatchState) -> None:
        pass

    def before(self, index: int, state: MatchState) -> None:
        seat = state.current_seat
        try:
            played = state.check(self.rec.moves[index].move)
        except ValueError:
            return  # the walk refuses the move next
        if seat is not None:
            self.decisions.append(Decision(index, state.view(seat), tuple(state.legal_moves()), played))

    def after(self, state: MatchState) -> None:
        pass

    def done(self, state: MatchState, rec: GameRecord) -> None:
        pass


def _walk(rec: GameRecord, board: _Board | None, steps: list[tuple[int, int | None]] | None = None,
          seen: _Watcher | None = None, shown: list[dict[str, Any]] | None = None) -> Iterator[Frame]:
    rules, seating = _setup(rec)
    try:
        state = MatchState(rules, seating, rec.seed)
    except ValueError as exc:
        raise ReplayMismatch(f"the match cannot be set up: {exc}") from None
    recorded: Sequence[object] = rec.events  # as read: each is checked here, against the core's (coerce_record)
    total = len(rec.moves)
    produced_count = _check_events(state, recorded, 0, None, None, None, total, shown)
    if steps is not None:
        steps.append((produced_count, state.current_seat))
    if seen is not None:
        seen.start(state)
    if board is not None:
        yield from board.step(state.events[:produced_count], None, None, None, state)
    for index, entry in enumerate(rec.moves):
        seat, text = entry.seat, entry.move
        if state.result is not None:
            raise ReplayMismatch("the match is already over, yet the record goes on",
                                 move_index=index, seat=seat, move=text, moves=total)
        turn = state.current_seat  # compared as a local: mypy would take the property as narrowed to an int
        if seat != turn:  # after it, and mypyc would check that it is one where the match has ended
            raise ReplayMismatch(f"it is seat {turn}'s turn, not seat {seat}'s",
                                 move_index=index, seat=seat, move=text, moves=total)
        if seen is not None:
            seen.before(index, state)
        try:
            state.apply(text)
        except ValueError as exc:
            raise ReplayMismatch(str(exc), move_index=index, seat=seat, move=text, moves=total) from None
        if seen is not None:
            seen.after(state)
        before = produced_count
        produced_count = _check_events(state, recorded, before, index, seat, text, total, shown)
        if steps is not None:
            steps.append((produced_count, state.current_seat))
        if board is not None:
            yield from board.step(state.events[before:produced_count], index, seat, text, state)
    if produced_count < len(recorded):
        extra = untimed(read_event(recorded[produced_count], produced_count))
        raise _at_move(rec, total - 1, f"the record has {len(recorded) - produced_count} more events than the replay, "
                                        f"from event {produced_count}: {_show(extra)}")
    _check_result(rec, state, seating)
    _check_failures(rec, state)
    if seen is not None:
        seen.done(state, rec)
    if board is not None and state.result is None:
        yield board.forfeit(total - 1 if total else None)


def _check_events(state: MatchState, recorded: Sequence[object], produced: int, index: int | None,
                  seat: int | None, text: str | None, total: int, shown: list[dict[str, Any]] | None) -> int:
    """Compare the events the rules core made since the first ``produced`` with the record's;
    how many it has made now. Each of the core's, without times, goes to ``shown`` (when given).
    The record's events are read here (``GameRecord.from_dict`` with ``events_replayed``): one
    equal to the core's is an object of its type, and only its time is left to check; any other
    is read in full (``read_event``), which names what is malformed in it before the difference
    is told. (A function of its own, not a closure of the walk: mypyc compiles a generator's
    closures wrongly.)"""
    events = state.events
    for i in range(produced, len(events)):
        mine = events[i].to_dict()
        if i >= len(recorded):
            raise ReplayMismatch(f"the record's events end at event {i}, but the rules core goes on with "
                                 f"{_show(mine)}", move_index=index, seat=seat, move=text, moves=total)
        found = recorded[i]
        theirs = found if type(found) is dict else read_event(found, i)
        timed = False
        for key in TIME_KEYS:  # when it happened is the record's to say, not the core's
            if key in theirs:
                mine[key] = theirs[key]
                timed = True
        if theirs != mine:
            diff = _event_diff(i, untimed(read_event(theirs, i)), untimed(mine))
            raise ReplayMismatch(diff, move_index=index, seat=seat, move=text, moves=total)
        if timed:
            t_ms = theirs.get("t_ms")
            if t_ms is not None and (type(t_ms) is not float or not 0 <= t_ms < _TIME_MAX):
                read_event(theirs, i)  # refuses a time that is not a number of milliseconds >= 0
            for key in TIME_KEYS:
                mine.pop(key, None)
        if shown is not None:
            shown.append(mine)
    return len(events)


_TIME_MAX = 2**63 - 1  # a record's times are below this (arena.match.record)


def _at_move(rec: GameRecord, index: int, reason: str) -> ReplayMismatch:
    """A mismatch naming move ``index`` (the last one past the end; none in a record without moves)."""
    total = len(rec.moves)
    if total == 0:
        return ReplayMismatch(reason)
    entry = rec.moves[min(index, total - 1)]
    return ReplayMismatch(reason, move_index=min(index, total - 1), seat=entry.seat, move=entry.move, moves=total)


def _check_result(rec: GameRecord, state: MatchState, seating: Seating) -> None:
    result = rec.result
    said = (result.winner, tuple(result.scores), result.reason, result.hands)
    last = len(rec.moves) - 1
    end = state.result
    if end is not None:
        got = (end.winner, tuple(end.scores), end.reason, end.hands)
        if got != said:
            raise _at_move(rec, last, _result_difference(said, got))
        return
    if result.reason is not EndReason.FORFEIT:
        raise _at_move(rec, last, f"the record ends with the match unfinished, yet its result is "
                                  f"{result.reason.value!r}, not 'forfeit'")
    failed = [seating.side_of(o.seat) for o in rec.outcomes if o.termination.is_failure]
    if not failed:
        raise _at_move(rec, last, "the record ends with the match unfinished and no bot failure to end it")
    expected = forfeit_result(state.scores, failed, state.hand_number)
    if result.forfeited != expected.forfeited:
        raise _at_move(rec, last, f"the record says sides {list(result.forfeited)} forfeited, but the failed bots sit "
                                  f"on sides {list(expected.forfeited)}")
    got = (expected.winner, expected.scores, expected.reason, expected.hands)
    if got != said:
        raise _at_move(rec, last, _result_difference(said, got))


def _result_difference(said: tuple[Any, ...], got: tuple[Any, ...]) -> str:
    """What the record's result says and the replay does not, field by field (the sentence for
    a match's end is the renderer's: this names only what differs)."""
    names = ("winner", "scores", "reason", "hands")
    shown = [(name, _field_text(a), _field_text(b)) for name, a, b in zip(names, said, got, strict=True) if a != b]
    return "the record's result says " + ", ".join(f"{name} {a}" for name, a, _ in shown) + \
        ", but the replay ends with " + ", ".join(f"{name} {b}" for name, _, b in shown)


def _field_text(value: Any) -> str:
    if value is None:
        return "none (a draw)"
    if isinstance(value, tuple):
        return "-".join(map(str, value))
    return str(value)


def _failure_name(i: int, entry: FailureEntry) -> str:
    return (f"failure {i + 1} (seat {entry.seat}, {entry.termination.value}, {entry.action.value} "
            f"at move {entry.move_index + 1})")


def _check_failures(rec: GameRecord, state: MatchState) -> None:
    """The failure entries, the substituted moves, the outcomes and the policy tell one story:
    each substituted move has exactly its failure entry and each failure entry its consequence
    (the substituted move, or the end of the match for that seat's side)."""
    moves, total = rec.moves, len(rec.moves)
    substituted: dict[int, FailureEntry] = {}  # move index -> its failure
    forfeits: dict[int, FailureEntry] = {}  # seat -> the failure that lost the match
    previous = 0
    for i, entry in enumerate(rec.failures):
        name = _failure_name(i, entry)
        index = entry.move_index
        if index < previous or index > total:
            raise _at_move(rec, index, f"{name} is out of place: failures are in move order, from move 1 to "
                                       f"move {total + 1} (the one never played)")
        previous = index
        if entry.action is FailureAction.SUBSTITUTE:
            move = moves[index] if index < total else None
            if move is None or entry.substitute is None or index in substituted:
                raise _at_move(rec, index, f"{name} has no substituted move of its own")
            if move.by is not PlayedBy.SUBSTITUTE or move.seat != entry.seat or move.move != entry.substitute:
                raise _at_move(rec, index, f"{name} says the referee played {entry.substitute!r} for seat {entry.seat}, "
                                           f"but the move is seat {move.seat}'s {move.move!r} by {move.by.value}")
            substituted[index] = entry
        else:
            if entry.substitute is not None or index != total or entry.seat in forfeits:
                raise _at_move(rec, index, f"{name} does not end the match: a forfeit comes once per seat, after the "
                                           "last move, with no substitute")
            forfeits[entry.seat] = entry
    for index, move in enumerate(moves):
        if move.by is PlayedBy.SUBSTITUTE and index not in substituted:
            raise _at_move(rec, index, "the record says the referee chose this move, but no failure entry says why")

    players = len(rec.seats)
    if [o.seat for o in rec.outcomes] != list(range(players)):
        raise _at_move(rec, total - 1, f"the outcomes must be one per seat, in seat order (seats 0 to {players - 1})")
    if state.result is not None and forfeits:
        raise _at_move(rec, total - 1, f"{_failure_name(*_first(rec, forfeits))} ends the match, yet the match "
                                       "reached its end")
    in_play = total > 0  # after a move, the only forfeit is of the seat to play: handshakes come first
    if in_play and forfeits and (len(forfeits) > 1 or state.current_seat not in forfeits):
        raise _at_move(rec, total - 1, f"{_failure_name(*_first(rec, forfeits))} ends the match, but seat "
                                       f"{state.current_seat} was the one to play")
    policy = rec.policy
    for outcome in rec.outcomes:
        seat = outcome.seat
        if outcome.bot != rec.seats[seat]:
            raise _at_move(rec, total - 1, f"seat {seat}'s outcome names bot {outcome.bot!r}, the record's seats "
                                           f"{rec.seats[seat]!r}")
        forfeit = forfeits.get(seat)
        said = (outcome.termination.value, outcome.detail)
        wanted = ("ok", "") if forfeit is None else (forfeit.termination.value, forfeit.detail)
        if said != wanted:
            why = "no failure ended its match" if forfeit is None else "its forfeit says otherwise"
            raise _at_move(rec, total - 1, f"seat {seat}'s outcome is {said[0]} {said[1]!r}, but {why} "
                                           f"({wanted[0]} {wanted[1]!r})")
        subs = sum(1 for f in substituted.values() if f.seat == seat)
        strikes = {subs + 1} if forfeit is not None and in_play else {subs, subs + 1} if forfeit is not None else {subs}
        if outcome.strikes not in strikes:
            raise _at_move(rec, total - 1, f"seat {seat}'s outcome counts {outcome.strikes} strikes, but its failures "
                                           f"in play count {' or '.join(map(str, sorted(strikes)))}")
        if policy is not None and subs > (policy.strikes if policy.substitutes else 0):
            raise _at_move(rec, total - 1, f"seat {seat} has {subs} substituted moves, more than its failure policy "
                                           f"({policy.policy}, {policy.strikes} strikes) allows")
        if policy is not None and policy.substitutes and forfeit is not None and in_play and subs != policy.strikes:
            raise _at_move(rec, total - 1, f"seat {seat} forfeits after {subs} substituted moves, but its failure "
                                           f"policy substitutes {policy.strikes} first")


def _first(rec: GameRecord, forfeits: Mapping[int, FailureEntry]) -> tuple[int, FailureEntry]:
    """The first of these forfeit entries, with its place among the record's failures."""
    return next((i, f) for i, f in enumerate(rec.failures) if forfeits.get(f.seat) is f)


def _show(event: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in event.items()) + "}"


def _short(value: Any) -> str:
    if isinstance(value, list):
        return "[" + " ".join(map(str, value)) + "]"
    return str(value)


def _event_diff(index: int, theirs: Mapping[str, Any], mine: Mapping[str, Any]) -> str:
    kind = mine.get("type")
    if theirs.get("type") != kind:
        return f"event {index} is recorded as {_show(theirs)}, but the rules core produces {_show(mine)}"
    keys = [k for k in mine if theirs.get(k, object()) != mine[k]]
    keys += [k for k in theirs if k not in mine]
    parts = [f"{k} {_short(theirs.get(k, '(missing)'))} recorded, {_short(mine.get(k, '(none)'))} replayed" for k in keys]
    return f"event {index} ({kind}) differs: " + "; ".join(parts)


# --- the board, rebuilt from the verified events -----------------------------------------------


class _Board:
    """The table as the events describe it; snapshotted into frames."""

    def __init__(self, seating: Seating) -> None:
        self.seating = seating
        n = seating.players
        self.hands: list[list[Card]] = [[] for _ in range(n)]
        self.table: list[Card] = []
        self.piles: list[list[Card]] = [[] for _ in range(seating.sides)]
        self.escobas = [0] * seating.sides
        self.scores = [0] * seating.sides
        self.hand = 0
        self.round = 0
        self.dealer = 0
        self.stock = 0
        self.count = 0
        self.breakdown: tuple[dict[str, int], ...] | None = None

    def step(self, events: list[Event], index: int | None, seat: int | None, text: str | None,
             state: MatchState) -> Iterator[Frame]:
        groups: list[list[Event]] = []
        for event in events:
            if event.kind in _PRIMARY or not groups:
                groups.append([event])
            else:
                groups[-1].append(event)
        if not groups:
            groups.append([])  # a move with no visible effect: a declined renuncio
        turn = state.current_seat
        for g, group in enumerate(groups):
            self.breakdown = None
            for event in group:
                self._apply(event)
            first = g == 0 and text is not None
            kind = group[0].kind if group else "pass"
            yield self._frame(kind, group, index, text if first else None, seat if first else None,
                              turn if g == len(groups) - 1 else None)

    def forfeit(self, index: int | None) -> Frame:
        return self._frame("forfeit", [], index, None, None, None)

    def _frame(self, kind: str, events: list[Event], index: int | None, move: str | None, seat: int | None,
               turn: int | None) -> Frame:
        frame = Frame(
            step=self.count, kind=kind, move_index=index, move=move, seat=seat, hand=self.hand,
            round=self.round, dealer=self.dealer, turn=turn, stock=self.stock,
            hands=tuple(tuple(h) for h in self.hands), table=tuple(self.table),
            piles=tuple(tuple(p) for p in self.piles), escobas=tuple(self.escobas),
            scores=tuple(self.scores), events=tuple(events), breakdown=self.breakdown,
        )
        self.count += 1
        return frame

    def _apply(self, event: Event) -> None:
        side_of = self.seating.side_of
        if isinstance(event, Deal):
            self.round, self.dealer, self.stock = event.round, event.dealer, event.stock
            if event.round == 0:
                self.hand = event.hand
                self.table = list(event.table)
                self.piles = [[] for _ in self.piles]
                self.escobas = [0] * len(self.escobas)
        elif isinstance(event, Cards):
            self.hands[event.seat] = list(event.cards)
        elif isinstance(event, InitialCapture):
            for c in event.cards:
                self.table.remove(c)
            self.piles[side_of(event.seat)].extend(event.cards)
        elif isinstance(event, EscobaEnMano):
            self.hands[event.seat] = []
            self.piles[side_of(event.seat)].extend(event.cards)
        elif isinstance(event, Play):
            self.hands[event.seat].remove(event.card)
            if event.take:
                for c in event.take:
                    self.table.remove(c)
                self.piles[side_of(event.seat)].extend((event.card, *event.take))
            else:
                insort(self.table, event.card, key=_order)
        elif isinstance(event, Claim):
            for c in (event.card, *event.take):
                self.table.remove(c)
            self.piles[side_of(event.seat)].extend((event.card, *event.take))
        elif isinstance(event, Escoba):
            self.escobas[event.side] += 1
        elif isinstance(event, Sweep):
            if event.side is not None:
                self.piles[event.side].extend(event.cards)
                self.table = []
        elif isinstance(event, HandScore):
            self.scores = list(event.totals)
            self.breakdown = event.breakdown


__all__ = ["Afterwards", "Decision", "Frame", "Replay", "ReplayMismatch", "afterwards", "coerce_record", "iter_frames",
           "replay", "side_names", "verify", "verify_afterwards", "verify_decisions", "verify_steps"]
