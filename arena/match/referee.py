"""The referee: one complete match between bots, through the rules core, to a GameRecord.

It sends each seat the public events and its own private ones, asks the seat to move, checks
every reply against the legal moves, and applies the failure policy. A bot's failure is
recorded as a value; nothing a bot does makes an exception escape ``play_match``. How a match
ends (the failure policy, the forfeit rule, the record itself) is ``arena.match.record``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from arena.core.game import MatchState
from arena.core.moves import Move
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng, derive_seed
from arena.errors import ArenaError, IllegalMoveError, MoveParseError
from arena.harness.botproc import BotProcess, lost_with_their_launcher, reset_usages, usages
from arena.harness.protocol import (
    BotFailure,
    Info,
    Ready,
    Termination,
    card_list,
    core_event_out,
    match_over_line,
    match_start,
    move_texts,
    timeout_line,
)
from arena.harness.resources import Usage
from arena.match import collector
from arena.match.record import (
    FailureAction,
    FailureEntry,
    FailurePolicy,
    GameRecord,
    MoveEntry,
    PlayedBy,
    Result,
    SeatOutcome,
    SeatUsage,
    StderrLine,
    forfeit_result,
)

__all__ = ["FailurePolicy", "Observer", "Player", "RefereeError", "play_match"]

_MAX_DETAIL = 500

class RefereeError(ArenaError, ValueError):
    """A match cannot be set up as asked (the wrong number of bots for the seats)."""


class Player(Protocol):
    """What the referee needs from a seat's bot (``BotProcess``, or ``LocalBot`` in-process).

    ``process`` is the bot process the seat plays through, or None: the referee does some
    things for all of a match's processes at once, one message to each launcher rather than
    one per seat (start them, reset and read what they used, ask whether their launcher
    lives), so ``send_hello`` is asked not to reset the usage itself (``reset=False``)."""

    seat: int | None

    @property
    def name(self) -> str: ...
    @property
    def limits(self) -> Any: ...
    @property
    def last_request_id(self) -> int: ...
    @property
    def last_info(self) -> Info | None: ...  # the notes of the reply ``decide`` last returned
    @property
    def process(self) -> BotProcess | None: ...
    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None: ...
    def await_ready(self) -> Ready: ...
    def queue(self, line: bytes) -> None: ...
    def decide(self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int,
               idle: Callable[[], None] | None = None) -> tuple[int, str, float]: ...
    def flush(self) -> None: ...
    def kill(self) -> None: ...
    def usage(self) -> Usage: ...


Observer = Callable[[str, dict[str, Any]], None]
"""Called as ``observer(kind, item)`` with kind ``event``, ``move`` or ``failure``; ``item`` is
the entry's JSON form, as the record will hold it."""

_Fail = Callable[[int, BotFailure, FailureAction], None]  # records a seat's failure (play_match's ``fail``)


def _view(state: MatchState, seat: int, side: int) -> dict[str, Any]:
    """The ``view`` of a request (docs/PROTOCOL.md), as a dict."""
    hand = state.hand
    return {
        "seat": seat, "side": side, "hand_number": hand.number, "round": hand.round,
        "dealer": hand.dealer, "hand": [str(c) for c in hand.hands[seat]],
        "table": [str(c) for c in hand.table], "stock": hand.stock_count,
        "hand_sizes": [len(h) for h in hand.hands], "scores": list(state.scores),
    }


_N = tuple(str(n) for n in range(41))  # hand sizes as text, without formatting an int each time
_SIZES: dict[int, Callable[[Sequence[Sequence[Any]]], str]] = {
    2: lambda h: f"{_N[len(h[0])]},{_N[len(h[1])]}",
    3: lambda h: f"{_N[len(h[0])]},{_N[len(h[1])]},{_N[len(h[2])]}",
    4: lambda h: f"{_N[len(h[0])]},{_N[len(h[1])]},{_N[len(h[2])]},{_N[len(h[3])]}",
}


class _Views:
    """Each seat's ``view`` (``_view``, docs/PROTOCOL.md) as JSON text, for one match.

    Built from the hand directly, because MatchState.view() filters the whole match's event
    log, which the bot was sent as it happened. A seat's own fields are formatted once per
    match, what holds for a whole deal (the hand's number, the dealer, the stock, the scores)
    once per deal, and only the cards and hand sizes at each decision."""

    __slots__ = ("_state", "_seats", "_sizes", "_hand", "_round", "_deal", "_middle", "_tail")

    def __init__(self, state: MatchState, sides: Sequence[int]) -> None:
        self._state = state
        self._seats = [f'{{"seat":{s},"side":{side},"hand_number":' for s, side in enumerate(sides)]
        players = len(sides)
        self._sizes = _SIZES.get(players) or (lambda h: ",".join([str(len(x)) for x in h]))
        self._hand: Any = None  # the HandState the deal texts are for, and its round
        self._round = -1
        self._deal = self._middle = self._tail = ""

    def json(self, seat: int) -> str:
        hand = self._state.hand
        if hand.round != self._round or hand is not self._hand:  # a new deal (a new hand is a new HandState)
            self._hand, self._round = hand, hand.round
            self._deal = f'{hand.number},"round":{hand.round},"dealer":{hand.dealer},"hand":['
            self._middle = f'],"stock":{hand.stock_count},"hand_sizes":['
            self._tail = f'],"scores":[{",".join(map(str, self._state.scores))}]}}'
        hands = hand.hands
        return (f'{self._seats[seat]}{self._deal}{card_list(hands[seat])}],"table":[{card_list(hand.table)}'
                f'{self._middle}{self._sizes(hands)}{self._tail}')


_new_tuple = tuple.__new__


def play_match(
    bots: Sequence[Player],
    rules: Rules,
    seating: Seating,
    seed: int,
    policy: FailurePolicy = FailurePolicy(),
    observer: Observer | None = None,
) -> GameRecord:
    """Play one match; ``bots[i]`` sits at seat ``i``. Bots are started (or restarted) as
    needed and left running for their next match, except those whose failure ended this one,
    which are killed. Returns the complete record, with what each bot used (``usage``) where
    its player measures it."""
    players = seating.players
    if len(bots) != players:
        raise RefereeError(f"{players} seats but {len(bots)} bots")
    collector.settle()  # a match's containers are freed together by their counts
    monotonic = time.monotonic
    t0 = monotonic()
    state = MatchState.new(rules, seating, seed)
    rng = Rng(derive_seed(seed, "substitute"))
    side_of = [seating.side_of(s) for s in range(players)]
    moves: list[MoveEntry] = []
    events: list[dict[str, Any]] = []
    failures: list[FailureEntry] = []
    strikes = [0] * players
    banks = [bot.limits.bank_ms for bot in bots]
    log = state.events  # the core appends every event of the match here
    sent = 0  # events of ``log`` sent to the bots and recorded
    queues = [bot.queue for bot in bots]

    def fail(seat: int, failure: BotFailure, action: FailureAction, substitute: str | None = None) -> None:
        detail = failure.detail
        if len(detail) > _MAX_DETAIL:  # a bot's text may end up here: keep records small
            failure.detail = detail = detail[:_MAX_DETAIL] + f"... [{len(detail)} chars]"
        item = FailureEntry(seat, failure.termination, detail, len(moves), action, substitute)
        failures.append(item)
        if observer is not None:
            observer("failure", item.to_dict())

    rules_dict = rules.to_dict()
    fatal = _handshake(bots, seating, rules_dict, seed, side_of, fail)  # seat -> the failure that made it lose

    t_ms = int((monotonic() - t0) * 1e6) / 1000  # the time of the events not yet sent: the deal's, then each move's
    substitute_ok = policy.substitutes
    max_strikes = policy.strikes
    move_ms_of = [bot.limits.move_ms for bot in bots]
    by_bot, by_substitute = PlayedBy.BOT, PlayedBy.SUBSTITUTE
    views = _Views(state, side_of)
    # The hot path: everything a decision costs beyond the pipe is here, and benchmarks/harness.py
    # measures it. Per decision: the last move's events queued and recorded, the legal moves'
    # texts, the view, one write and one read (in decide), one entry, the move applied.
    while True:
        logged = len(log)
        if sent < logged:
            # The events not yet sent, queued for the seats that may see them (sent with their
            # next write), each encoded once, and recorded with the time of the move that made them.
            for event in log[sent:logged]:
                line, data = core_event_out(event)
                data["t_ms"] = t_ms
                audience = event.audience
                if audience is None:
                    for queue in queues:
                        queue(line)
                else:
                    queues[audience](line)
                events.append(data)
                if observer is not None:
                    observer("event", data)
            sent = logged
        if fatal or state.result is not None:  # a seat lost by failing, or the match is over
            break
        hand = state.hand  # the hand in play, asked directly (a finished one is never left in play)
        if hand.is_over:
            break
        seat = hand.turn
        legal = hand.legal_moves()
        texts = move_texts(legal)
        bot = bots[seat]
        move_ms = move_ms_of[seat]
        by = by_bot
        ms = 0.0  # the bot's time for its move, to the microsecond
        info: Info | None = None
        try:
            _, text, elapsed = bot.decide(views.json(seat), texts, move_ms, banks[seat])
            ms = int(elapsed * 1e6) / 1000  # recorded with the move, substituted or not
            try:
                chosen = legal[texts.index(text)]
            except ValueError:
                chosen = _match_move(state, legal, text)
                text = str(chosen)
            info = bot.last_info  # a refused move's notes go with it
            if ms > move_ms:
                banks[seat] = max(0, int(banks[seat] - (ms - move_ms)))
        except BotFailure as exc:
            strikes[seat] += 1
            if not substitute_ok or strikes[seat] > max_strikes:
                fatal[seat] = exc
                fail(seat, exc, FailureAction.FORFEIT)
                break
            chosen = legal[rng.below(len(legal))]
            text = str(chosen)
            by = by_substitute
            fail(seat, exc, FailureAction.SUBSTITUTE, text)
            if exc.termination is Termination.TIMEOUT:
                bot.queue(timeout_line(bot.last_request_id, text))
        t_ms = int((monotonic() - t0) * 1e6) / 1000
        entry: MoveEntry = _new_tuple(MoveEntry, (seat, text, by, ms, t_ms, info))
        moves.append(entry)
        if observer is not None:
            observer("move", entry.to_dict())
        state.apply(chosen)

    result, outcomes = _ending(bots, state, fatal, strikes, side_of, fail)
    return GameRecord(
        seed=int(seed),
        rules=rules_dict,
        seating=seating.to_dict(),
        seats=tuple(bot.name for bot in bots),
        moves=tuple(moves),
        events=tuple(events),
        outcomes=tuple(outcomes),
        result=result,
        failures=tuple(failures),
        limits=tuple(bot.limits.to_dict() for bot in bots),
        policy=policy,
        duration_ms=round((monotonic() - t0) * 1000, 3),
        usage=_usage(bots),
        **_stderr(bots, t0),
    )


def _handshake(bots: Sequence[Player], seating: Seating, rules_dict: dict[str, Any], seed: int,
               side_of: Sequence[int], fail: _Fail) -> dict[int, BotFailure]:
    """Start and greet every bot; the seats whose failure lost the match before it began.

    Every bot is started and greeted first, then each answer is awaited, so the start-up times
    overlap instead of adding up. Bot processes are started before any is greeted, so that what
    they use is counted from one message to each launcher."""
    players = seating.players
    fatal: dict[int, BotFailure] = {}
    unstarted: dict[int, BotFailure] = {}
    procs: list[BotProcess] = []
    for seat, bot in enumerate(bots):
        bot.seat = seat
        proc = bot.process
        if proc is not None:
            try:
                proc.prepare()
                procs.append(proc)
            except BotFailure as exc:
                unstarted[seat] = exc
    reset_usages(procs)
    greeted = []
    for seat, bot in enumerate(bots):
        hello = match_start(first=True, match=0, seat=seat, side=side_of[seat], players=players,
                            teams=seating.teams, rules=rules_dict, time=bot.limits.time,
                            max_line_bytes=bot.limits.max_line_bytes,
                            # One-way from the match seed: it tells nothing about the deal.
                            seed=derive_seed(seed, "bot", seat))
        try:
            failed = unstarted.get(seat)
            if failed is not None:
                raise failed
            bot.send_hello(hello, reset=False)
            greeted.append(seat)
        except BotFailure as exc:
            fatal[seat] = exc
            fail(seat, exc, FailureAction.FORFEIT)
    for seat in greeted:
        try:
            bots[seat].await_ready()
        except BotFailure as exc:
            fatal[seat] = exc
            fail(seat, exc, FailureAction.FORFEIT)
    return fatal


def _ending(bots: Sequence[Player], state: MatchState, fatal: dict[int, BotFailure], strikes: list[int],
            side_of: Sequence[int], fail: _Fail) -> tuple[Result, list[SeatOutcome]]:
    """The match's result and each seat's outcome, once play has stopped; every bot told how
    it ended, or killed if its failure ended it. Adds to ``fatal`` and ``strikes`` the bots
    that died with their launcher."""
    # Bots that died with their launcher lose, all of them, however far the match got: the
    # arena cannot tell which of them killed it (see lost_with_their_launcher).
    alive = [(seat, proc) for seat, proc in enumerate([bot.process for bot in bots])
             if seat not in fatal and proc is not None]
    for index, lost in lost_with_their_launcher([proc for _, proc in alive]).items():
        seat = alive[index][0]
        strikes[seat] += 1
        fatal[seat] = lost
        fail(seat, lost, FailureAction.FORFEIT)
    end = state.result
    if end is not None and not fatal:
        result = Result(end.winner, tuple(end.scores), end.reason, end.hands)
    else:  # play stops only at the match's end or on a failure that loses it
        result = forfeit_result(state.scores, [side_of[seat] for seat in fatal], state.hand_number)
    outcomes = []
    for seat, bot in enumerate(bots):
        failure = fatal.get(seat)
        if failure is not None:
            outcomes.append(SeatOutcome(seat, bot.name, failure.termination, failure.detail, strikes[seat]))
        else:
            outcomes.append(SeatOutcome(seat, bot.name, Termination.OK, "", strikes[seat]))
    for seat, bot in enumerate(bots):
        if seat in fatal:
            # Whatever state it is in (hung, flooding, half-way through a line), it starts
            # afresh for its next match.
            bot.kill()
            continue
        bot.queue(match_over_line(result.winner, result.scores, result.reason.value, outcomes[seat].termination))
        bot.flush()
    return result, outcomes


def _usage(bots: Sequence[Player]) -> tuple[SeatUsage, ...]:
    """What each bot used in the match, for the players that measure it; bot processes are
    asked together (see ``botproc.usages``), other players one by one. A bot that never ran
    has nothing to say."""
    procs = {seat: proc for seat, proc in enumerate(bot.process for bot in bots) if proc is not None}
    measured = dict(zip(procs, usages(list(procs.values())), strict=True))
    entries = []
    for seat, bot in enumerate(bots):
        usage = measured.get(seat)
        if usage is None:
            usage = bot.usage()
        if usage.source:
            entries.append(SeatUsage.of(seat, usage))
    return tuple(entries)


def _stderr(bots: Sequence[Player], t0: float) -> dict[str, Any]:
    """What each bot process wrote on stderr during the match (``BotProcess.match_stderr``),
    as the record's ``stderr`` and ``stderr_dropped``; nothing when no bot wrote any."""
    lines: list[StderrLine] = []
    dropped = [0] * len(bots)
    for seat, bot in enumerate(bots):
        proc = bot.process
        if proc is not None:
            written, dropped[seat] = proc.match_stderr(t0)
            lines.extend(StderrLine(seat, t_ms, text) for t_ms, text in written)
    if not lines and not any(dropped):
        return {}
    lines.sort(key=lambda line: line.t_ms)  # stable: each seat's lines keep their order
    return {"stderr": tuple(lines), "stderr_dropped": tuple(dropped)}


def _match_move(state: MatchState, legal: list[Move], text: str) -> Move:
    """The legal move a reply names, however its taken cards are ordered; else ILLEGAL_MOVE."""
    shown = text if len(text) <= 60 else text[:60] + "..."
    try:
        move = Move.parse(text)
    except MoveParseError as exc:
        raise BotFailure(Termination.ILLEGAL_MOVE, str(exc)) from None
    if move in legal:
        return move
    # The rules core says why, without a copy of the state to try the move on.
    try:
        state.check(move)
    except IllegalMoveError as exc:
        raise BotFailure(Termination.ILLEGAL_MOVE, str(exc)) from None
    raise BotFailure(Termination.ILLEGAL_MOVE, f"illegal move {shown!r}: not among the legal moves")

