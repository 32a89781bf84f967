"""The bot protocol (docs/PROTOCOL.md): message shapes, their encoding and the checks on replies.

Pure: builds bytes to send and judges bytes received; it never touches a process or a clock.
A reply that breaks the protocol raises ``BotFailure`` carrying a ``Termination`` value, which
the referee records (it never escapes the referee).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from operator import attrgetter
from typing import Any, NamedTuple, TypeAlias

from arena.core.moves import Move, MoveKind
from arena.errors import ArenaError, ExitCode

PROTOCOL_VERSION = 1
DEFAULT_MAX_LINE_BYTES = 65536

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_loads = json.loads
# The C encoder that ``_ENCODER.encode`` builds anew at every call, built once: the same text,
# without a Python-level setup per line (a hand's score, the hello, match_over are encoded
# whole). Messages are the arena's own values, never circular: no marker dict is kept.
_c_encoder = json.encoder.c_make_encoder  # type: ignore[attr-defined]  # None without the C module
_encode_once = None if _c_encoder is None else _c_encoder(
    None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)


def _dumps(message: Any) -> str:
    if _encode_once is None:  # pragma: no cover - a Python without the json C module
        return _ENCODER.encode(message)
    return "".join(_encode_once(message, 0))


class Termination(Enum):
    """How one seat's part in a match ended. Every value but OK is a bot failure."""

    OK = "ok"
    NO_HANDSHAKE = "no_handshake"
    TIMEOUT = "timeout"
    CRASH = "crash"
    MALFORMED = "malformed"
    WRONG_ID = "wrong_id"
    ILLEGAL_MOVE = "illegal_move"
    OVERSIZED_LINE = "oversized_line"
    MEMORY = "memory"  # the bot's process tree went over its memory limit and was killed

    @property
    def is_failure(self) -> bool:
        return self is not Termination.OK

    @property
    def kills_bot(self) -> bool:
        """After these the conversation cannot go on: the bot is (or must be) gone."""
        return self in (Termination.CRASH, Termination.OVERSIZED_LINE, Termination.NO_HANDSHAKE, Termination.MEMORY)


class BotFailure(ArenaError):
    """A bot broke the protocol or its limits. Caught by the referee and recorded as a value."""

    exit_code = ExitCode.FAULT  # never reaches the command line unless the arena is broken

    def __init__(self, termination: Termination, detail: str) -> None:
        super().__init__(f"{termination.value}: {detail}")
        self.termination = termination
        self.detail = detail


class ClockOut(BotFailure):
    """A timeout on the cpu clock, its detail final: the CPU the move took, or the wall-clock
    backstop (``BotProcess.decide`` words the wall clock's own). Here, beside ``BotFailure``:
    the compiled build makes both native classes, which a class of an interpreted module
    cannot extend (its instances fail the compiled ``BotFailure``'s own type check)."""


class Clock(Enum):
    """What a bot's ``move_ms`` and ``bank_ms`` measure (docs/PROTOCOL.md, "Time").

    ``cpu``: the CPU time of the bot's whole process tree from the request to the reply, so
    that a loaded machine or a busy neighbour takes nothing from it; a wall-clock backstop
    (``wall_backstop_ms``) still ends a bot that sleeps or blocks. ``wall``: time on the
    arena's clock from the request to the reply."""

    CPU = "cpu"
    WALL = "wall"


# The wall-clock backstop of the cpu clock: a bot that waits (sleeps, blocks on a lock) uses no
# CPU, so without it one could hold a match for ever. Ten times the budget leaves a bot that
# shares a busy machine ample room; two seconds more keeps a short budget from ending a bot
# that is only descheduled.
BACKSTOP_FACTOR = 10
BACKSTOP_EXTRA_MS = 2000


def wall_backstop_ms(time_ms: int) -> int:
    """How long a request on the cpu clock may take on the wall clock, grace not included:
    the larger of ten times its ``time_ms`` and ``time_ms`` + 2 s."""
    return max(BACKSTOP_FACTOR * time_ms, time_ms + BACKSTOP_EXTRA_MS)


class TimeLimits(NamedTuple):
    """Time limits in milliseconds, as the handshake announces them, and the clock that
    measures them."""

    startup_ms: int = 10000
    move_ms: int = 2000
    bank_ms: int = 0
    grace_ms: int = 200
    clock: Clock = Clock.WALL

    def to_dict(self) -> dict[str, Any]:
        return {"startup_ms": self.startup_ms, "move_ms": self.move_ms, "bank_ms": self.bank_ms,
                "grace_ms": self.grace_ms, "clock": self.clock.value}


class Ready(NamedTuple):
    name: str | None
    protocol: int


# A move reply's ``info`` (docs/PROTOCOL.md, "The bot's notes"): any JSON object, at most this
# many bytes as compact UTF-8 JSON and this deep (the reply's own object not counted), so that
# a record, a replay and a page can hold and show every note without a recursion or a flood.
MAX_INFO_BYTES = 4096
MAX_INFO_DEPTH = 32


class InfoDrop(Enum):
    """Why a move reply's ``info`` was dropped (the move itself stands): recorded with the move."""

    NOT_OBJECT = "not_object"  # a JSON value that is not an object
    TOO_LARGE = "too_large"  # over MAX_INFO_BYTES encoded
    TOO_DEEP = "too_deep"  # nested deeper than MAX_INFO_DEPTH
    INVALID = "invalid"  # what JSON cannot carry on: NaN, Infinity, a lone surrogate


Info: TypeAlias = "dict[str, Any] | InfoDrop"
"""A reply's notes as the record keeps them: the object itself, or why it was dropped."""


class MoveReply(NamedTuple):
    id: int
    move: str
    info: Info | None = None  # None: the reply had no ``info``


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar 0, ``{}`` 1), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level > MAX_INFO_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def check_info(value: Any) -> Info:
    """A reply's ``info`` as it is kept: the object, or why it is dropped."""
    if not isinstance(value, dict):
        return InfoDrop.NOT_OBJECT
    if _depth(value) > MAX_INFO_DEPTH:
        return InfoDrop.TOO_DEEP
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8"))
    except (ValueError, UnicodeEncodeError):
        return InfoDrop.INVALID
    return value if size <= MAX_INFO_BYTES else InfoDrop.TOO_LARGE


def _shallow(line: bytes, depth: int) -> bytes:
    """``line`` with every value nested deeper than ``depth`` replaced by ``0``, strings kept
    whole: a reply whose ``info`` nests too deep for the JSON parser still yields its move."""
    out = bytearray()
    level = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # a backslash
                escaped = True
            elif byte == 0x22:  # a quote
                in_string = False
        elif byte == 0x5B or byte == 0x7B:  # [ {
            level += 1
            if level == depth + 1:
                out += b"0"
        elif byte == 0x5D or byte == 0x7D:  # ] }
            level -= 1
            if level >= depth:
                continue
        elif byte == 0x22:
            in_string = True
        if level <= depth:
            out.append(byte)
    return bytes(out)


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line: compact JSON, UTF-8, newline-terminated."""
    return (_dumps(message) + "\n").encode("utf-8")


def match_start(
    *,
    first: bool,
    match: int,
    seat: int,
    side: int,
    players: int,
    teams: Sequence[Sequence[int]],
    rules: Mapping[str, Any],
    time: TimeLimits,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    seed: int | None = None,
) -> dict[str, Any]:
    """``hello`` (the first match of a process) or ``new_match``; the bot answers ``ready``.

    ``seed`` seeds the bot's own random choices, so that a random bot replays the same
    match the same way whichever process, worker or resume plays it.
    """
    return {
        "type": "hello" if first else "new_match",
        "protocol": PROTOCOL_VERSION,
        "match": match,
        "seat": seat,
        "side": side,
        "players": players,
        "teams": [list(t) for t in teams],
        "rules": dict(rules),
        "time": time.to_dict(),
        "max_line_bytes": max_line_bytes,
        "seed": seed,
    }


def event_line(event: Mapping[str, Any]) -> bytes:
    return encode({"type": "event", "event": event})


# Cards and moves in JSON without a Python-level call per card: a request and the events of
# every decision are built here, and the arena's cost per decision is measured against a bare
# pipe round trip (benchmarks/harness.py). Card and move texts never need escaping (letters,
# digits, '+' and spaces), which is what makes the hand-built lines below safe.
_card_text: Callable[[Any], str] = attrgetter("text")  # Card.text, the public field


_SEP = '","'


def card_list(cards: Sequence[Any]) -> str:
    """The cards as the inside of a JSON list: ``"5e","12c"``, empty for none. A hand holds at
    most three cards: those lists are written out, without a join (a card's ``text`` is a
    field, read without a call)."""
    n = len(cards)
    if n == 1:
        return f'"{cards[0].text}"'
    if n == 2:
        return f'"{cards[0].text}","{cards[1].text}"'
    if n == 3:
        return f'"{cards[0].text}","{cards[1].text}","{cards[2].text}"'
    return f'"{_SEP.join(map(_card_text, cards))}"' if n else ""


def cards_json(cards: Sequence[Any]) -> str:
    """A JSON list of cards."""
    return f'["{_SEP.join(map(_card_text, cards))}"]' if cards else "[]"


_PLAY = MoveKind.PLAY


def move_texts(moves: Iterable[Move]) -> list[str]:
    """The text of each move, equal to ``[str(m) for m in moves]``: built from the cards'
    texts in place (a call per move costs more than the text itself)."""
    out: list[str] = []
    append = out.append
    for move in moves:
        kind, card, take = move
        if kind is not _PLAY:
            append(str(move))
        elif not take:
            append(card.text)  # type: ignore[union-attr]  # a play names its card
        elif len(take) == 1:
            append(f"{card.text}+{take[0].text}")  # type: ignore[union-attr]  # a play names its card
        else:
            append(card.text + "+" + "+".join(map(_card_text, take)))  # type: ignore[union-attr]  # a play names its card
    return out


def texts_json(texts: Sequence[str]) -> str:
    """A JSON list of card or move texts."""
    if not texts:
        return "[]"
    return '["' + '","'.join(texts) + '"]'


# Lines as f-strings: compiled once, they are built twice as fast as a %-format. The numbers
# are the core's ints (never bools), which print as JSON does.
def core_event_out(event: Any) -> tuple[bytes, dict[str, Any]]:
    """A rules-core event's line and its JSON object: byte for byte
    ``event_line(event.to_dict())``, and equal to ``event.to_dict()`` (keys in its order). The
    events of every decision are built here from the cards' texts, each text made once."""
    kind = event.kind
    if kind == "play" or kind == "renuncio":
        seat = event.seat
        card = event.card.text
        take = event.take
        if not take:  # a trail: most plays
            return ((f'{{"type":"event","event":{{"type":"{kind}","seat":{seat},"card":"{card}","take":[]}}}}\n').encode(),
                    {"type": kind, "seat": seat, "card": card, "take": []})
        texts = [c.text for c in take]
        return ((f'{{"type":"event","event":{{"type":"{kind}","seat":{seat},"card":"{card}",'
                 f'"take":["{_SEP.join(texts)}"]}}}}\n').encode(),
                {"type": kind, "seat": seat, "card": card, "take": texts})
    if kind == "cards":
        seat, cards = event
        if len(cards) == 3:  # a deal's three cards: what every round deals
            first, second, third = cards
            texts = [first.text, second.text, third.text]
        else:
            texts = [c.text for c in cards]
        return (f'{{"type":"event","event":{{"type":"cards","seat":{seat},"cards":["{_SEP.join(texts)}"]}}}}\n'.encode(),
                {"type": kind, "seat": seat, "cards": texts})
    if kind == "deal":
        texts = [c.text for c in event.table] if event.table else []  # only a hand's first deal lays the table
        table = f'"{_SEP.join(texts)}"' if texts else ""
        return ((f'{{"type":"event","event":{{"type":"deal","hand":{event.hand},"round":{event.round},'
                 f'"dealer":{event.dealer},"table":[{table}],"stock":{event.stock}}}}}\n').encode(),
                {"type": kind, "hand": event.hand, "round": event.round, "dealer": event.dealer, "table": texts,
                 "stock": event.stock})
    if kind == "sweep":  # every hand ends with one
        side = "null" if event.side is None else event.side
        texts = [c.text for c in event.cards]
        cards = f'"{_SEP.join(texts)}"' if texts else ""
        return (f'{{"type":"event","event":{{"type":"sweep","side":{side},"cards":[{cards}]}}}}\n'.encode(),
                {"type": kind, "side": event.side, "cards": texts})
    if kind == "escoba":  # its source is one of the core's own words
        return ((f'{{"type":"event","event":{{"type":"escoba","seat":{event.seat},"side":{event.side},'
                 f'"source":"{event.source}"}}}}\n').encode(),
                {"type": kind, "seat": event.seat, "side": event.side, "source": event.source})
    data: dict[str, Any] = event.to_dict()
    return event_line(data), data


def core_event_line(event: Any) -> bytes:
    """The event line for a rules-core event; byte for byte ``event_line(event.to_dict())``."""
    return core_event_out(event)[0]


def request_line(request_id: int, time_ms: int, bank_ms: int, view: Mapping[str, Any] | str,
                 legal: Sequence[str], clock: Clock = Clock.WALL) -> bytes:
    """A request; ``view`` is a mapping, or its JSON text already built by the caller."""
    if not isinstance(view, str):
        view = _dumps(view)
    times = _TIMES.get((time_ms, bank_ms, clock))
    if times is None:  # a bot's times change only when it spends its bank
        if len(_TIMES) > 10_000:
            _TIMES.clear()
        times = _TIMES[time_ms, bank_ms, clock] = (f'"time_ms":{time_ms:d},"bank_ms":{bank_ms:d},'
                                                   f'"clock":"{clock.value}"')
    if not legal:
        return f'{{"type":"request","id":{request_id},{times},"view":{view},"legal":[]}}\n'.encode()
    return f'{{"type":"request","id":{request_id},{times},"view":{view},"legal":["{_SEP.join(legal)}"]}}\n'.encode()


_TIMES: dict[tuple[int, int, Clock], str] = {}


def timeout_line(request_id: int, move: str) -> bytes:
    return encode({"type": "timeout", "id": request_id, "move": move})


def match_over_line(winner: int | None, scores: Sequence[int], reason: str, termination: Termination) -> bytes:
    return encode({"type": "match_over", "winner": winner, "scores": list(scores), "reason": reason,
                   "termination": termination.value})


GOODBYE_LINE = encode({"type": "goodbye"})


def _show(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace").rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse_object(line: bytes, termination: Termination = Termination.MALFORMED) -> dict[str, Any]:
    """A reply line as a JSON object, or ``BotFailure(termination)`` saying what was wrong."""
    try:
        obj = _loads(line)
    except (ValueError, RecursionError) as exc:  # deep nesting is a bot's trick too
        raise BotFailure(termination, f"not JSON ({exc.__class__.__name__}: {exc}): {_show(line)}") from None
    if not isinstance(obj, dict):
        raise BotFailure(termination, f"expected a JSON object, got {_show(line)}")
    return obj


def parse_ready(line: bytes) -> Ready:
    """The answer to hello/new_match; any problem is a failed handshake."""
    obj = parse_object(line, Termination.NO_HANDSHAKE)
    if obj.get("type") != "ready":
        raise BotFailure(Termination.NO_HANDSHAKE, f'expected {{"type":"ready"}}, got {_show(line)}')
    protocol = obj.get("protocol", PROTOCOL_VERSION)
    if protocol != PROTOCOL_VERSION:
        raise BotFailure(Termination.NO_HANDSHAKE,
                         f"bot speaks protocol {protocol!r}, the arena speaks {PROTOCOL_VERSION}")
    name = obj.get("name")
    return Ready(name if isinstance(name, str) else None, PROTOCOL_VERSION)


# The reply as the examples write it; anything else goes through the JSON parser.
_CANONICAL_MOVE = re.compile(rb'\{"type": ?"move", ?"id": ?(0|[1-9][0-9]{0,17}), ?"move": ?"([0-9a-z +]{1,60})"\}\r?')


def quick_reply(chunk: bytes, request_id: int, legal: Sequence[str]) -> str | None:
    """The move when ``chunk`` is exactly one line ``{"type":"move","id":N,"move":"M"}`` and its
    newline, with N ``request_id`` and M one of ``legal``: what ``parse_move`` would read, found
    without a parser. Move texts never need escaping, so the bytes are the text, and hold no
    newline: the line's is the chunk's only one. None for anything else (``parse_move`` then
    judges it)."""
    head = b'{"type":"move","id":%d,"move":"' % request_id
    cut = len(head)
    if chunk[:cut] == head and chunk[-3:] == b'"}\n':
        move = chunk[cut:-3].decode("latin-1")
        if move in legal:
            return move
    return None


def parse_move(line: bytes) -> MoveReply:
    """The answer to a request: ``{"type":"move","id":N,"move":"..."}``.

    Only the shape is checked here; whether the id is the expected one and the move legal is
    the referee's business.
    """
    fast = _CANONICAL_MOVE.fullmatch(line)
    if fast is not None:
        return MoveReply(int(fast.group(1)), fast.group(2).decode())
    deep = False
    try:
        obj = parse_object(line)
    except BotFailure:
        # Notes nested too deep to parse are dropped, not the move: read the reply without them.
        shallow = _shallow(line, MAX_INFO_DEPTH + 1)
        if shallow == line:
            raise
        obj = parse_object(shallow)
        deep = True
    if obj.get("type") != "move":
        raise BotFailure(Termination.MALFORMED, f'expected {{"type":"move",...}}, got {_show(line)}')
    request_id = obj.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        raise BotFailure(Termination.MALFORMED, f"reply has no integer id: {_show(line)}")
    move = obj.get("move")
    if not isinstance(move, str):
        raise BotFailure(Termination.MALFORMED, f"reply has no move text: {_show(line)}")
    if obj.get("info") is None:  # none, or null: a kit's way of saying none
        return MoveReply(request_id, move)
    return MoveReply(request_id, move, InfoDrop.TOO_DEEP if deep else check_info(obj["info"]))
