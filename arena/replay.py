"""Re-play a game record through the rules core, checking it, as a list of frames.

Pure: a record (or its dict) in, frames out; no I/O. The record is never trusted: the match
is played again from its seed, rules and seating with its moves, and every event the core
produces must equal the recorded one, and the end must equal the recorded result. The first
thing that differs is refused with a ``ReplayMismatch`` naming the move (numbered from 1, as
``arena replay`` shows them), its seat and its text.

A frame is the whole table after one step (a deal, a play, a sweep, a hand's score...): every
seat's hand, the table, each side's pile and escobas this hand, and the match score. Frames are
built from the verified events, so what is drawn is exactly what the core did.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from arena.cards import Card
from arena.events import Event, HandScore
from arena.game import MatchState
from arena.record import GameRecord, RecordError, Result
from arena.rules import Rules, Seating

_TIME_KEYS = ("ms", "t_ms")
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


def side_names(record: GameRecord, seating: Seating) -> tuple[str, ...]:
    return tuple(" & ".join(record.seats[s] for s in seating.seats_of(side)) for side in range(seating.sides))


def coerce_record(record: GameRecord | Mapping[str, Any]) -> GameRecord:
    """A ``GameRecord`` from itself or from its dict; ``RecordError`` when malformed."""
    if isinstance(record, GameRecord):
        return record
    if not isinstance(record, Mapping):
        raise RecordError(f"a game record must be a JSON object, got {type(record).__name__}")
    return GameRecord.from_dict(record)


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


def iter_frames(record: GameRecord | Mapping[str, Any]) -> Iterator[Frame]:
    """The frames of the match, each yielded once the events behind it are verified."""
    rec = coerce_record(record)
    rules, seating = _setup(rec)
    board = _Board(seating)
    return _walk(rec, board)


# --- the walk --------------------------------------------------------------------------------


def _setup(rec: GameRecord) -> tuple[Rules, Seating]:
    try:
        rules = Rules.from_dict(rec.rules)
        seating = Seating.from_dict(rec.seating)
    except ValueError as exc:
        raise ReplayMismatch(f"its rules or seating are not valid: {exc}") from None
    if len(rec.seats) != seating.players:
        raise ReplayMismatch(f"it names {len(rec.seats)} bots for {seating.players} seats")
    return rules, seating


def _walk(rec: GameRecord, board: _Board | None) -> Iterator[Frame]:
    rules, seating = _setup(rec)
    try:
        state = MatchState(rules, seating, rec.seed)
    except ValueError as exc:
        raise ReplayMismatch(f"the match cannot be set up: {exc}") from None
    recorded = [_strip(e, i) for i, e in enumerate(rec.events)]
    produced_count = 0
    total = len(rec.moves)

    def check_events(index: int | None, seat: int | None, text: str | None) -> list[Event]:
        nonlocal produced_count
        new = state.events[produced_count:]
        for offset, event in enumerate(new):
            i = produced_count + offset
            mine = event.to_dict()
            if i >= len(recorded):
                raise ReplayMismatch(f"the record's events end at event {i}, but the rules core goes on with "
                                     f"{_show(mine)}", move_index=index, seat=seat, move=text, moves=total)
            theirs = recorded[i]
            if theirs != mine:
                raise ReplayMismatch(_event_diff(i, theirs, mine), move_index=index, seat=seat, move=text,
                                     moves=total)
        produced_count = len(state.events)
        return new

    new = check_events(None, None, None)
    if board is not None:
        yield from board.step(new, None, None, None, state)
    for index, entry in enumerate(rec.moves):
        seat, text = _entry(entry, index, total)
        if state.result is not None:
            raise ReplayMismatch("the match is already over, yet the record goes on",
                                 move_index=index, seat=seat, move=text, moves=total)
        if seat != state.current_seat:
            raise ReplayMismatch(f"it is seat {state.current_seat}'s turn, not seat {seat}'s",
                                 move_index=index, seat=seat, move=text, moves=total)
        try:
            state.apply(text)
        except ValueError as exc:
            raise ReplayMismatch(str(exc), move_index=index, seat=seat, move=text, moves=total) from None
        new = check_events(index, seat, text)
        if board is not None:
            yield from board.step(new, index, seat, text, state)
    last = total - 1 if total else None
    last_seat, last_text = _entry(rec.moves[last], last, total) if last is not None else (None, None)

    def fail(reason: str) -> ReplayMismatch:
        return ReplayMismatch(reason, move_index=last, seat=last_seat, move=last_text, moves=total)

    if produced_count < len(recorded):
        extra = recorded[produced_count]
        raise fail(f"the record has {len(recorded) - produced_count} more events than the replay, "
                   f"from event {produced_count}: {_show(extra)}")
    _check_result(rec, state, seating, fail)
    if board is not None and state.result is None:
        yield board.forfeit(last)


def _check_result(rec: GameRecord, state: MatchState, seating: Seating, fail: Any) -> None:
    result = rec.result
    if state.result is not None:
        mine = state.result
        got = (mine.winner, tuple(mine.scores), mine.reason, mine.hands)
        said = (result.winner, tuple(result.scores), result.reason, result.hands)
        if got != said:
            raise fail(f"the record's result is {_result_text(*said)}, but the replay ends {_result_text(*got)}")
        return
    if result.reason != "forfeit":
        raise fail(f"the record ends with the match unfinished, yet its result is {result.reason!r}, not 'forfeit'")
    scores = tuple(state.scores)
    hands = state.hand_number + 1
    failed = sorted({seating.side_of(o.seat) for o in rec.outcomes if o.termination.is_failure})
    if not failed:
        raise fail("the record ends with the match unfinished and no bot failure to end it")
    if tuple(result.forfeited) != tuple(failed):
        raise fail(f"the record says sides {list(result.forfeited)} forfeited, but the failed bots sit on sides {failed}")
    others = [s for s in range(seating.sides) if s not in failed]
    winner = None
    if others:
        best = max(scores[s] for s in others)
        leaders = [s for s in others if scores[s] == best]
        winner = leaders[0] if len(leaders) == 1 else None
    got = (winner, scores, "forfeit", hands)
    said = (result.winner, tuple(result.scores), result.reason, result.hands)
    if got != said:
        raise fail(f"the record's result is {_result_text(*said)}, but the replay ends {_result_text(*got)}")


def _result_text(winner: int | None, scores: tuple[int, ...], reason: str, hands: int) -> str:
    who = "a draw" if winner is None else f"side {winner} winning"
    return f"{who} {'-'.join(map(str, scores))} ({reason}, {hands} hands)"


def _entry(entry: Any, index: int, total: int) -> tuple[int, str]:
    if isinstance(entry, Mapping):
        seat, text = entry.get("seat"), entry.get("move")
        if isinstance(seat, int) and not isinstance(seat, bool) and isinstance(text, str):
            return seat, text
    raise ReplayMismatch(f"malformed move entry {entry!r}: expected {{'seat': N, 'move': TEXT}}",
                         move_index=index, moves=total)


def _strip(event: Any, index: int) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise ReplayMismatch(f"event {index} is not an object: {event!r}")
    return {k: v for k, v in event.items() if k not in _TIME_KEYS}


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
        kind = event.kind
        side_of = self.seating.side_of
        if kind == "deal":
            self.round, self.dealer, self.stock = event.round, event.dealer, event.stock  # type: ignore[union-attr]
            if event.round == 0:  # type: ignore[union-attr]
                self.hand = event.hand  # type: ignore[union-attr]
                self.table = list(event.table)  # type: ignore[union-attr]
                self.piles = [[] for _ in self.piles]
                self.escobas = [0] * len(self.escobas)
        elif kind == "cards":
            self.hands[event.seat] = list(event.cards)  # type: ignore[union-attr]
        elif kind == "initial_capture":
            for c in event.cards:  # type: ignore[union-attr]
                self.table.remove(c)
            self.piles[side_of(event.seat)].extend(event.cards)  # type: ignore[union-attr]
        elif kind == "escoba_en_mano":
            self.hands[event.seat] = []  # type: ignore[union-attr]
            self.piles[side_of(event.seat)].extend(event.cards)  # type: ignore[union-attr]
        elif kind == "play":
            self.hands[event.seat].remove(event.card)  # type: ignore[union-attr]
            if event.take:  # type: ignore[union-attr]
                for c in event.take:  # type: ignore[union-attr]
                    self.table.remove(c)
                self.piles[side_of(event.seat)].extend((event.card, *event.take))  # type: ignore[union-attr]
            else:
                insort(self.table, event.card, key=_order)  # type: ignore[union-attr]
        elif kind == "renuncio":
            for c in (event.card, *event.take):  # type: ignore[union-attr]
                self.table.remove(c)
            self.piles[side_of(event.seat)].extend((event.card, *event.take))  # type: ignore[union-attr]
        elif kind == "escoba":
            self.escobas[event.side] += 1  # type: ignore[union-attr]
        elif kind == "sweep":
            if event.side is not None:  # type: ignore[union-attr]
                self.piles[event.side].extend(event.cards)  # type: ignore[union-attr]
                self.table = []
        elif kind == "hand_score":
            self.scores = list(event.totals)  # type: ignore[union-attr]
            self.breakdown = event.breakdown  # type: ignore[union-attr]


__all__ = ["Frame", "Replay", "ReplayMismatch", "replay", "verify", "iter_frames", "coerce_record", "side_names"]
