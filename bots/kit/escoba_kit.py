"""escoba_kit: everything a Python Escoba Arena bot needs except its strategy.

Copy this one file next to your bot. It needs only the Python standard library (3.8+) and
speaks protocol 1 (docs/PROTOCOL.md). You write one function::

    import escoba_kit as kit

    def choose(game, request, rng):
        # game: a kit.Game, the public state of the match as this seat sees it
        # request: a kit.Request; request.legal is the list of legal kit.Move values
        # rng: a random.Random seeded for this match
        return request.legal[0]

    if __name__ == "__main__":
        kit.run(choose, name="mybot")

``run`` reads the arena's messages from stdin, keeps ``game`` up to date with every event,
calls ``choose`` for each request and writes the reply. Whatever ``choose`` does, the bot
answers: if it raises or returns something that is not a legal move, the kit logs why on
stderr and plays the first legal move instead, so a bug costs a move, not the match.

To keep notes with a move (an evaluation, a plan: shown under the move in ``arena replay``),
return ``kit.Noted(move, {"eval": 0.4, "plan": "keep the 7o"})``: the arena stores the object
(any JSON object of at most 4 KB encoded, nested at most 32 deep) with the move in the record.

What ``game`` tracks (from the events alone, checked against each request's view):
the table, your hand, every seat's hand size, the stock, each side's captured cards
(``game.piles``) and escobas, who captured last, the match scores, every card played with
what it took and the table it met (``game.played``), and the cards you have not seen yet (``game.unseen()``): the other hands
and the stock together.

Nothing here is shared between games running side by side: all state lives in ``Game``.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

PROTOCOL = 1

# --- cards -----------------------------------------------------------------------------------

SUITS = "oceb"  # oros, copas, espadas, bastos
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
# A sota is worth 8, a caballo 9, a rey 10 when adding up to 15.
CAPTURE_VALUE = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 10: 8, 11: 9, 12: 10}


class Card:
    """One of the 40 cards. Interned: ``card("7o") is card("7o")``, so ``==`` and sets are cheap.

    Attributes: ``text`` ("7o"), ``rank`` (1-7, 10-12), ``suit`` (a letter of "oceb"),
    ``value`` (what it counts towards 15), ``oro`` and ``seven`` (1 or 0, handy to sum),
    ``is_velo`` (the siete de oros). Cards sort by value, then suit.
    """

    __slots__ = ("text", "rank", "suit", "value", "oro", "seven", "is_velo", "order")

    def __init__(self, rank: int, suit: str) -> None:
        self.text = f"{rank}{suit}"
        self.rank = rank
        self.suit = suit
        self.value = CAPTURE_VALUE[rank]
        self.oro = int(suit == "o")
        self.seven = int(rank == 7)
        self.is_velo = rank == 7 and suit == "o"
        self.order = self.value * 4 + SUITS.index(suit)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"card({self.text!r})"

    def __lt__(self, other: Card) -> bool:
        return self.order < other.order

    def __hash__(self) -> int:
        return self.order

    def __reduce__(self) -> tuple:
        return (card, (self.text,))


DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUITS for rank in RANKS)
_BY_TEXT: dict[str, Card] = {c.text: c for c in DECK}


def card(text: str) -> Card:
    """The card named ``text`` ("7o", "12c"); ``ValueError`` if there is no such card."""
    try:
        return _BY_TEXT[text.strip().lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"not a card: {text!r}") from None


def cards(texts: Iterable[str]) -> list[Card]:
    return [card(t) for t in texts]


def captures(played: Card, table: Sequence[Card]) -> list[tuple[Card, ...]]:
    """Every set of table cards that adds up to 15 with ``played`` (what it could take)."""
    need = 15 - played.value
    ordered = sorted(table)
    found: list[tuple[Card, ...]] = []

    def walk(start: int, left: int, chosen: tuple[Card, ...]) -> None:
        for i in range(start, len(ordered)):
            v = ordered[i].value
            if v > left:
                break
            if v == left:
                found.append(chosen + (ordered[i],))
            else:
                walk(i + 1, left - v, chosen + (ordered[i],))

    walk(0, need, ())
    return found


# --- moves -----------------------------------------------------------------------------------

PLAY, CLAIM, PASS, TAKE = "play", "claim", "pass", "take"


class Move(NamedTuple):
    """A legal move as the arena lists it.

    ``kind``: ``play`` (a card from your hand, taking ``take``; nothing taken is a trail),
    ``claim`` (option renuncio: take ``card``, just trailed by the previous player, with
    ``take``), ``pass`` (decline a claim) or ``take`` (initial_table subset15: the dealer takes
    ``take`` from the table). ``text`` is what goes back to the arena.
    """

    kind: str
    card: Card | None
    take: tuple[Card, ...]
    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def is_capture(self) -> bool:
        return bool(self.take) or self.kind == CLAIM

    @property
    def is_trail(self) -> bool:
        return self.kind == PLAY and not self.take

    @property
    def captured(self) -> tuple[Card, ...]:
        """The cards this move puts in your side's pile (none for a trail or a pass)."""
        if self.kind == PLAY:
            return (self.card,) + self.take if self.take else ()  # type: ignore[operator]  # a play always names its card
        if self.kind == CLAIM:
            return (self.card,) + self.take  # type: ignore[operator]  # a claim always names its card
        return self.take


_MOVES: dict[str, Move] = {}


def parse_move(text: str) -> Move:
    """A move from its text form (``5e``, ``5e+4b+6o``, ``renuncio 5e+4b``, ``pass``, ``mesa 3b+12c``)."""
    move = _MOVES.get(text)
    if move is not None:
        return move
    raw = text.strip()
    if raw == "pass":
        move = Move(PASS, None, (), text)
    elif raw.startswith("renuncio "):
        parts = cards(raw[len("renuncio "):].split("+"))
        move = Move(CLAIM, parts[0], tuple(sorted(parts[1:])), text)
    elif raw.startswith("mesa"):
        rest = raw[len("mesa"):].strip()
        move = Move(TAKE, None, tuple(sorted(cards(rest.split("+")))) if rest else (), text)
    else:
        parts = cards(raw.split("+"))
        move = Move(PLAY, parts[0], tuple(sorted(parts[1:])), text)
    if len(_MOVES) < 100_000:
        _MOVES[text] = move
    return move


# --- the public state ------------------------------------------------------------------------


class Played(NamedTuple):
    """A card played from a hand: by ``seat`` in ``round``, taking ``take`` (empty: a trail),
    onto ``table``, the table as it was just before."""

    seat: int
    card: Card
    take: tuple[Card, ...]
    table: tuple[Card, ...]
    round: int


class Request(NamedTuple):
    """One decision. ``legal`` is never empty; ``phase`` is ``play``, ``claim`` (answer a
    renuncio chance: the legal moves are claims and ``pass``) or ``take`` (the dealer's
    initial-table choice). ``view`` is the raw view the arena sent. ``time_ms`` is on
    ``clock``: ``cpu`` (this bot's CPU time, all its threads and processes) or ``wall``."""

    id: int
    time_ms: int
    bank_ms: int
    legal: list[Move]
    phase: str
    view: dict[str, Any]
    clock: str = "wall"


class Budget:
    """A share of a request's time, on the clock the arena times it by::

        budget = kit.Budget(request, share=0.5)
        while not budget.over():
            ...think...

    On the ``cpu`` clock it reads ``time.process_time`` (this process's CPU time, every
    thread's; a child process's time counts for the arena but not here), so that waiting for
    a core on a busy machine costs nothing; on the ``wall`` clock, ``time.monotonic``. The
    share leaves room for reading the request and writing the reply."""

    def __init__(self, request: Request, share: float = 0.5) -> None:
        self.now: Callable[[], float] = time.process_time if request.clock == "cpu" else time.monotonic
        self.seconds = request.time_ms * share / 1000
        self.start = self.now()

    def used(self) -> float:
        return self.now() - self.start

    def over(self) -> bool:
        return self.now() - self.start >= self.seconds


class Game:
    """The state of a match as one seat sees it. Plain values, updated by ``start``,
    ``on_event`` and ``on_request`` (``run`` calls them for you).

    Match: ``seat``, ``side``, ``players``, ``teams`` (list of lists of seats), ``rules`` (dict
    of every rule option), ``time`` (dict), ``match`` (its number on this process), ``seed``
    (the arena's seed for this seat's own random choices, or None),
    ``scores`` (match totals per side), ``last_hand`` (the last ``hand_score`` event),
    ``over`` and ``result`` (the ``match_over`` message, once it came).
    Hand: ``hand_number``, ``round``, ``dealer``, ``hand`` (your cards), ``table``, ``stock``,
    ``hand_sizes`` (per seat), ``piles`` (cards captured, per side), ``escobas`` (per side),
    ``last_capturer`` (a side or None), ``played`` (every ``Played`` card of this hand, in
    order: who, what it took, onto which table), ``events`` (this hand's events as dicts).
    """

    def __init__(self) -> None:
        self.seat = 0
        self.side = 0
        self.players = 2
        self.teams: list[list[int]] = [[0], [1]]
        self.rules: dict[str, Any] = {}
        self.time: dict[str, Any] = {}
        self.match = 0
        self.scores: list[int] = [0, 0]
        self.last_hand: dict[str, Any] | None = None
        self.over = False
        self.result: dict[str, Any] | None = None
        self.seed: int | None = None
        self._side_of: list[int] = [0, 1]
        self._new_hand(0, 0, [], 0)
        self.warnings: list[str] = []

    # -- derived facts --

    def side_of(self, seat: int) -> int:
        return self._side_of[seat]

    @property
    def sides(self) -> int:
        return len(self.teams)

    @property
    def partners(self) -> list[int]:
        """The other seats of your side (empty when you play alone)."""
        return [s for s in self.teams[self.side] if s != self.seat]

    def next_seat(self, seat: int | None = None) -> int:
        return ((self.seat if seat is None else seat) + 1) % self.players

    def sweep_scores(self, move: Move) -> bool:
        """Whether ``move``, should it empty the table, scores an escoba: the rules' option
        ``last_round_escoba`` withholds it in the hand's last round (no stock left), with
        ``false`` from every capture, with ``"last_card"`` from a player's final card of the
        hand. A ``last_play_escoba`` of an older arena never withheld one that could happen."""
        if self.stock > 0:
            return True
        late = self.rules.get("last_round_escoba", True)
        if late is True:
            return True
        if late == "last_card":
            return move.kind == CLAIM or len(self.hand) > 1
        return False

    def seen(self) -> set:
        """Every card you have seen this hand: your hand, the table and all captured cards."""
        seen = set(self.hand)
        seen.update(self.table)
        for pile in self.piles:
            seen.update(pile)
        seen.update(self._gone)
        return seen

    def unseen(self) -> list[Card]:
        """Cards you have not seen this hand: the other players' hands and the stock, together."""
        seen = self.seen()
        return [c for c in DECK if c not in seen]

    def unseen_values(self) -> list[int]:
        """``counts[v]``: how many unseen cards have capture value ``v`` (index 0 unused)."""
        counts = [0] * 11
        for c in self.unseen():
            counts[c.value] += 1
        return counts

    # -- updates --

    def start(self, hello: dict[str, Any]) -> None:
        """A match starts (``hello`` or ``new_match``): forget the last one."""
        self.seat = int(hello["seat"])
        self.side = int(hello["side"])
        self.players = int(hello["players"])
        self.teams = [list(t) for t in hello["teams"]]
        self.rules = dict(hello.get("rules") or {})
        self.time = dict(hello.get("time") or {})
        self.match = int(hello.get("match", 0))
        given = hello.get("seed")
        self.seed = given if isinstance(given, int) and not isinstance(given, bool) else None
        self._side_of = [0] * self.players
        for side, team in enumerate(self.teams):
            for s in team:
                self._side_of[s] = side
        self.scores = [0] * len(self.teams)
        self.last_hand = None
        self.over = False
        self.result = None
        self.warnings = []
        self._new_hand(0, 0, [], 0)

    def _new_hand(self, number: int, dealer: int, table: list[Card], stock: int) -> None:
        self.hand_number = number
        self.round = 0
        self.dealer = dealer
        self.hand: list[Card] = []
        self.table: list[Card] = sorted(table)
        self.stock = stock
        self.hand_sizes: list[int] = [0] * self.players
        self.piles: list[list[Card]] = [[] for _ in self.teams]
        self.escobas: list[int] = [0] * len(self.teams)
        self.last_capturer: int | None = None
        self.played: list[Played] = []
        self.events: list[dict[str, Any]] = []
        self._gone: list[Card] = []  # table cards swept to nobody at the end of a hand

    def on_event(self, event: dict[str, Any]) -> None:
        """Apply one event (the ``event`` object of an ``event`` message)."""
        kind = event.get("type")
        if kind == "deal":
            if int(event["round"]) == 0:
                self._new_hand(int(event["hand"]), int(event["dealer"]), cards(event["table"]),
                               int(event["stock"]))
            else:
                self.round = int(event["round"])
                self.stock = int(event["stock"])
            self.hand_sizes = [3] * self.players
        elif kind == "cards":
            if int(event["seat"]) == self.seat:
                self.hand = sorted(cards(event["cards"]))
        elif kind == "initial_capture":
            self._capture(int(event["seat"]), cards(event["cards"]), None)
        elif kind == "escoba_en_mano":
            seat = int(event["seat"])
            self.piles[self.side_of(seat)].extend(cards(event["cards"]))
            self.hand_sizes[seat] = 0
            if seat == self.seat:
                self.hand = []
        elif kind == "play":
            seat = int(event["seat"])
            played = card(event["card"])
            take = cards(event["take"])
            self.played.append(Played(seat, played, tuple(sorted(take)), tuple(self.table), self.round))
            self.hand_sizes[seat] = max(0, self.hand_sizes[seat] - 1)
            if seat == self.seat and played in self.hand:
                self.hand.remove(played)
            if take:
                self._capture(seat, take, played)
            else:
                self.table.append(played)
                self.table.sort()
        elif kind == "renuncio":
            claimed = card(event["card"])
            if claimed in self.table:
                self.table.remove(claimed)
            self._capture(int(event["seat"]), cards(event["take"]), claimed)
        elif kind == "escoba":
            self.escobas[int(event["side"])] += 1
        elif kind == "sweep":
            swept = cards(event["cards"])
            side = event.get("side")
            if side is not None:
                self.piles[int(side)].extend(swept)
            else:
                self._gone.extend(swept)
            self.table = []
        elif kind == "hand_score":
            self.scores = [int(t) for t in event["totals"]]
            self.last_hand = event
        elif kind == "match_end":
            self.scores = [int(t) for t in event["scores"]]
            self.over = True
        self.events.append(event)

    def on_match_over(self, msg: dict[str, Any]) -> None:
        """The match is over: ``result`` keeps the message (winner, scores, reason, termination)."""
        self.over = True
        self.result = dict(msg)
        if isinstance(msg.get("scores"), list):
            self.scores = [int(x) for x in msg["scores"]]

    def _capture(self, seat: int, take: list[Card], played: Card | None) -> None:
        side = self.side_of(seat)
        for c in take:
            if c in self.table:
                self.table.remove(c)
        pile = self.piles[side]
        if played is not None:
            pile.append(played)
        pile.extend(take)
        self.last_capturer = side

    def on_request(self, msg: dict[str, Any]) -> Request:
        """Parse a request and bring the state in line with its view (the arena is right)."""
        view = msg.get("view") or {}
        legal = [parse_move(t) for t in msg["legal"]]
        self._check(view)
        first = legal[0].kind
        phase = CLAIM if first in (CLAIM, PASS) else TAKE if first == TAKE else PLAY
        return Request(int(msg["id"]), int(msg.get("time_ms", 0)), int(msg.get("bank_ms", 0)),
                       legal, phase, view, "cpu" if msg.get("clock") == "cpu" else "wall")

    def _check(self, view: dict[str, Any]) -> None:
        for key, attr, convert in (("hand", "hand", lambda v: sorted(cards(v))),
                                   ("table", "table", lambda v: sorted(cards(v))),
                                   ("stock", "stock", int),
                                   ("hand_sizes", "hand_sizes", lambda v: [int(x) for x in v]),
                                   ("scores", "scores", lambda v: [int(x) for x in v]),
                                   ("dealer", "dealer", int)):
            if key in view:
                value = convert(view[key])
                if value != getattr(self, attr):
                    self.warnings.append(f"tracked {attr} {getattr(self, attr)!r} but the view says {value!r}")
                    setattr(self, attr, value)


# --- the protocol loop -----------------------------------------------------------------------

Policy = Callable[[Game, Request, random.Random], Any]
MAX_INFO_BYTES = 4096  # what the arena keeps of a move's notes (docs/PROTOCOL.md, "The bot's notes")


class Noted(NamedTuple):
    """What a policy may return instead of a move: the move and its notes, ``info``, a JSON
    object of at most ``MAX_INFO_BYTES`` encoded, that the arena keeps with the move."""

    move: Any
    info: dict


def _info_text(info: Any, log: Callable[[str], None]) -> str | None:
    """The notes as the reply's JSON text, or None (and why, on stderr) when the arena would
    drop them."""
    if not isinstance(info, dict):
        log(f"notes must be a dict, got {type(info).__name__}; sent without them")
        return None
    try:  # ASCII on the wire: never longer than the arena's own count (UTF-8)
        text = json.dumps(info, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        log(f"notes are not JSON ({exc}); sent without them")
        return None
    if len(text) > MAX_INFO_BYTES:
        log(f"notes over {MAX_INFO_BYTES} bytes encoded; sent without them")
        return None
    return text


def decide(policy: Policy, game: Game, request: Request, rng: random.Random,
           log: Callable[[str], None] = lambda s: None) -> Move:
    """Call the policy and turn whatever it returns into one of the legal moves."""
    return decide_noted(policy, game, request, rng, log)[0]


def decide_noted(policy: Policy, game: Game, request: Request, rng: random.Random,
                 log: Callable[[str], None] = lambda s: None) -> tuple[Move, str | None]:
    """``decide``, and the JSON text of the notes the policy returned with its move (``Noted``),
    if the arena will keep them."""
    try:
        chosen = policy(game, request, rng)
    except Exception:  # the author's bug must not cost the match
        log("policy raised; playing the first legal move:\n" + traceback.format_exc())
        return request.legal[0], None
    info = None
    if isinstance(chosen, Noted):
        chosen, info = chosen.move, _info_text(chosen.info, log)
    return _legal(chosen, request, log), info


def _legal(chosen: Any, request: Request, log: Callable[[str], None]) -> Move:
    if isinstance(chosen, Move) and chosen in request.legal:
        return chosen
    text = str(chosen)
    for move in request.legal:
        if move.text == text:
            return move
    try:
        wanted = parse_move(text)
        for move in request.legal:
            if (move.kind, move.card, move.take) == (wanted.kind, wanted.card, wanted.take):
                return move
    except ValueError:
        pass
    log(f"policy returned {chosen!r}, not a legal move; playing the first legal move")
    return request.legal[0]


def match_rng(seed: int, game: Game) -> random.Random:
    """The rng handed to the policy. From the seed the arena gives this seat in ``hello`` (so a
    match replays the same on any machine), else from the match number and seat; ``seed``
    (``run``'s own) is mixed in, so a bot can still vary its play on purpose."""
    if game.seed is not None:
        return random.Random(f"{seed}/{game.seed}")
    return random.Random(f"{seed}/{game.match}/{game.seat}")


def run(policy: Policy, name: str = "kit-bot", seed: int = 0, stdin: Any = None, stdout: Any = None,
        stderr: Any = None) -> None:
    """Play protocol 1 on stdin/stdout until ``goodbye`` or end of input."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr

    def log(text: str) -> None:
        stderr.write(f"[{name}] {text}\n")
        stderr.flush()

    def send(obj: dict[str, Any]) -> None:
        stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        stdout.flush()

    game = Game()
    rng = match_rng(seed, game)
    for line in stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log(f"ignoring a line that is not JSON: {line[:80]!r}")
            continue
        if not isinstance(msg, dict):
            continue
        kind = msg.get("type")
        if kind in ("hello", "new_match"):
            game.start(msg)
            rng = match_rng(seed, game)
            send({"type": "ready", "name": name, "protocol": PROTOCOL})
        elif kind == "event":
            event = msg.get("event")
            if isinstance(event, dict):
                game.on_event(event)
        elif kind == "request":
            request = game.on_request(msg)
            for warning in game.warnings:
                log(warning)
            game.warnings.clear()
            move, info = decide_noted(policy, game, request, rng, log)
            if info is None:
                send({"type": "move", "id": request.id, "move": move.text})
            else:  # already checked JSON text: written as it is, not encoded again
                stdout.write(f'{{"type":"move","id":{request.id},"move":"{move.text}","info":{info}}}\n')
                stdout.flush()
        elif kind == "match_over":
            game.on_match_over(msg)
        elif kind == "timeout":
            log(f"request {msg.get('id')} timed out; the arena played {msg.get('move')!r}")
        elif kind == "goodbye":
            return
        # Unknown message types need no answer.
