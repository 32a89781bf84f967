"""One hand of Escoba: the deal, the legal moves, applying them, the score.

The hot core of every simulation, and the one module of the rules that ``pip install .``
compiles (setup.py): it is written so that mypyc can compile it (instances are made with
``cls()``, never ``cls.__new__``) and stays the reference as Python source.

Pure: no I/O, no clock, no global random. The deal comes from a seed through ``arena.core.seeding``.
A ``HandState`` mutates in place when a move is applied and offers ``copy()`` for simulation;
there is no undo. It answers for a move as pokerkit does for an action: ``check(move)`` (the
legal move, or ``IllegalMoveError`` with the precise reason), ``is_legal(move)``, and
``apply(move)``, which accepts exactly what ``check`` accepts.

``table`` is kept sorted and is read-only outside this module: its capture-value key
(``_key``) is updated with every change the rules make to it.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Sequence
from itertools import chain, compress, repeat
from operator import and_, itemgetter
from typing import Final, TypeVar

from arena.core.cards import DECK, DECK_BITS, Card
from arena.core.events import Cards, Claim, Deal, Escoba, EscobaEnMano, Event, InitialCapture, Play, Sweep
from arena.core.moves import PASS, Move, MoveKind
from arena.core.outcome import Phase
from arena.core.rules import LastRoundEscoba, Rules, Seating
from arena.core.scoring import score_hand
from arena.core.seeding import Rng
from arena.core.view import SeatView
from arena.errors import IllegalMoveError, MoveParseError

# The phases as module constants: compiled, a comparison with one is a pointer test, where
# ``Phase.CLAIM`` would be an attribute lookup on the class at every use.
PLAY: Final = Phase.PLAY
CLAIM: Final = Phase.CLAIM
TAKE: Final = Phase.TAKE
OVER: Final = Phase.OVER
# Option last_round_escoba's values, compared by identity for the same reason.
_LATE_YES: Final = LastRoundEscoba.YES
_LATE_LAST_CARD: Final = LastRoundEscoba.LAST_CARD

T = TypeVar("T")

_PLAY = MoveKind.PLAY
# The hot path builds moves and events with tuple.__new__, skipping NamedTuple.__new__'s
# Python-level wrapper, and sorts by a C-level key instead of Card.__lt__.
_new = tuple.__new__
# Fields of a card read as items of its tuple: an item costs less than an attribute.
_order = itemgetter(Card._fields.index("order"))
_value = itemgetter(Card._fields.index("value"))
_bit = itemgetter(Card._fields.index("bit"))
_flat = chain.from_iterable
_total = itemgetter("total")
_BITS = tuple(c.bit for c in DECK)


_TRAILS: tuple[Move, ...] = tuple(Move(_PLAY, card, ()) for card in DECK)
# The Play event of each trail, per seat (at most 6) and card: events are immutable, so one
# instance serves every game.
_TRAIL_PLAYS: tuple[tuple[Play, ...], ...] = tuple(tuple(Play(seat, card, ()) for card in DECK) for seat in range(6))


def _sorted(cards: Sequence[Card]) -> list[Card]:
    return sorted(cards, key=_order)


# --- capture enumeration -------------------------------------------------------------------
# Captures depend only on the capture values of the table, so they are enumerated once per
# multiset of values and cached. The table is kept sorted by value, so a capture set is a set of
# indexes into it, and the order of the sets (see _extend) is a pure function of the values,
# hence the same on every run. The key of a multiset of values is one integer, a base-5 digit
# per value (at most 4 cards share one), kept up to date as cards come and go.

_KEY_WEIGHT: tuple[int, ...] = (0,) + tuple(5 ** i for i in range(10))  # by capture value


# Per card (by deck index): the sum a capture set must have with it, and its trail. Read with
# one attribute of the card (``index``): on the hot path an attribute of a card costs several
# times an item of a plain tuple.
_BY_CARD: tuple[tuple[int, Move], ...] = tuple((15 - card.value, _TRAILS[card.index]) for card in DECK)
# Per card (by deck index): its weight in the table key.
_CARD_WEIGHT: tuple[int, ...] = tuple(_KEY_WEIGHT[card.value] for card in DECK)


def _table_key(cards: Sequence[Card]) -> int:
    return sum(map(_KEY_WEIGHT.__getitem__, map(_value, cards)))


# A set of table cards is a bitmask of their indexes in the (sorted) table: bit i is table[i].
# Ordering the sets by the highest index in a set, then the next highest, and so on, is then
# ordering the masks as numbers.
#
# A capture set as a C-level function of the table (as a tuple) that returns the cards taken,
# in table order: ``itemgetter(1, 3)(table) == (table[1], table[3])``. A one-card set is a
# one-card slice, since ``itemgetter(i)`` alone would return the card, not a tuple.
_Take = Callable[[tuple[Card, ...]], tuple[Card, ...]]


def _picker(mask: int) -> _Take:
    combo = [i for i in range(mask.bit_length()) if mask >> i & 1]
    i = combo[0]
    return itemgetter(slice(i, i + 1)) if len(combo) == 1 else itemgetter(*combo)


# The picker of each mask met so far (a few hundred): a plain dict, so that the hot path's lookup
# is the interpreter's specialized one. legal_moves adds the pickers it misses.
_TAKES: dict[int, _Take] = {}


def _add_takes(by_sum: _Sets) -> None:
    takes = _TAKES
    for masks in by_sum:
        for mask in masks:
            if mask not in takes:
                takes[mask] = _picker(mask)


# Per table key: the sets of table cards as masks, by their sum (1 to 14; index 0 unused). A
# card of value v captures the sets of sum 15 - v, so this one tuple also answers which sets
# each card captures. single_capture_priority, which drops sets, has its own cache.
# Only tuples of plain ints: the garbage collector stops tracking them, and these caches grow to
# many thousands of entries that it would otherwise traverse again and again. The pickers
# (``_TAKES``) stay apart, one per mask.
_Sets = tuple[tuple[int, ...], ...]
_NO_SETS: _Sets = ((),) * 15
_SETS: dict[int, _Sets] = {0: _NO_SETS}
_SINGLE_SETS: dict[int, _Sets] = {}
_CACHE_LIMIT = 200_000  # entries per cache; cleared when full


def _extend(key: int, values: tuple[int, ...], size: int) -> _Sets:
    """The entry of a table of the first ``size`` of these values (ascending), whose key is
    ``key``, built from the entry of the table without its highest card: a miss costs one pass
    over that entry.

    The sets that gain the new card have its bit, the highest yet, so they come after the sets
    without it and every list stays in the order of the masks.
    """
    sets = _SETS.get(key)
    if sets is not None:
        return sets
    if len(_SETS) >= _CACHE_LIMIT:
        _SETS.clear()
        _SINGLE_SETS.clear()
        _SETS[0] = _NO_SETS
    last = size - 1
    top = values[last]
    bit = 1 << last
    prefix = _extend(key - _KEY_WEIGHT[top], values, last)
    # Sets without the new card keep their lists (it sorts last, so indexes do not move);
    # only the lists that gain sets with it are copied.
    # A level adds a handful of sets (about five, in two or three sums): tuples grown one set at
    # a time cost less than a comprehension's function and closure each.
    by_sum = list(prefix)
    for total in range(1, 15 - top):
        below = prefix[total]
        if below:
            grown = by_sum[total + top]
            for mask in below:
                grown += (mask | bit,)
            by_sum[total + top] = grown
    by_sum[top] += (bit,)
    sets = tuple(by_sum)
    _SETS[key] = sets
    return sets


# Tables longer than this (only when players keep trailing) are enumerated for the cards in hand
# alone and not cached: their subsets number in the tens of thousands.
_CACHED_TABLE_SIZE = 12


def _enumerate_sums(values: tuple[int, ...], limit: int) -> dict[int, list[tuple[int, ...]]]:
    """Index tuples of the subsets of ``values`` (ascending) by their sum, up to ``limit``."""
    found: dict[int, list[tuple[int, ...]]] = {}
    n = len(values)

    def walk(start: int, total: int, chosen: tuple[int, ...]) -> None:
        for i in range(start, n):
            t = total + values[i]
            if t > limit:
                break  # values are ascending: every later one overshoots too
            c = chosen + (i,)
            found.setdefault(t, []).append(c)
            walk(i + 1, t, c)

    walk(0, 0, ())
    return found


def _subsets_summing(values: tuple[int, ...], target: int) -> list[tuple[int, ...]]:
    """Index tuples of the subsets of ``values`` (ascending) that add to ``target``, in
    lexicographic order."""
    found: list[tuple[int, ...]] = []
    n = len(values)

    def walk(start: int, left: int, chosen: tuple[int, ...]) -> None:
        for i in range(start, n):
            v = values[i]
            if v > left:
                break
            if v == left:
                found.append(chosen + (i,))
            else:
                walk(i + 1, left - v, chosen + (i,))

    walk(0, target, ())
    return found


def _prefer_single_masks(masks: Sequence[int]) -> Sequence[int]:
    """``_prefer_single`` for sets as masks: a one-card set is a power of two."""
    singles = [m for m in masks if not m & (m - 1)]
    return singles or masks


def _prefer_single(combos: Sequence[tuple[T, ...]]) -> Sequence[tuple[T, ...]]:
    """Option single_capture_priority: a one-card capture, where one exists, excludes sets."""
    singles = [c for c in combos if len(c) == 1]
    return singles or combos


def _captures(key: int, table: Sequence[Card], hand: Sequence[Card], single: bool) -> _Sets:
    """The sets on ``table`` (whose key is ``key``) by their sum, on a miss of the caches: every
    sum, or, on a table too long to cache, the sums that complete the values in ``hand``."""
    values = tuple(map(_value, table))
    if len(values) > _CACHED_TABLE_SIZE:
        by_sum: list[tuple[int, ...]] = [()] * 15
        for v in {c.value for c in hand}:
            combos = _subsets_summing(values, 15 - v)
            masks = [sum(1 << i for i in combo) for combo in combos]
            by_sum[15 - v] = tuple(_prefer_single_masks(masks) if single else masks)
        return tuple(by_sum)
    found = _extend(key, values, len(values))
    if single:
        found = tuple(tuple(_prefer_single_masks(sets)) for sets in found)
        _SINGLE_SETS[key] = found
    return found


def captures_for(card: Card, table: Sequence[Card]) -> list[tuple[Card, ...]]:
    """Every set of table cards that adds to 15 with ``card`` (table sorted by value)."""
    table = sorted(table, key=_order)
    idx = _subsets_summing(tuple(map(_value, table)), 15 - card.value)
    return [tuple(map(table.__getitem__, combo)) for combo in idx]


# --- a hand ----------------------------------------------------------------------------------


class HandState:
    """One deal, from the shuffle to the score. Seats are numbered in play order."""

    __slots__ = ("rules", "seating", "dealer", "number", "deck", "stock_pos", "hands", "table",
                 "piles", "escobas", "last_capturer", "turn", "phase", "pending", "round",
                 "events", "breakdown", "_legal", "_options", "_trailer", "_side_of", "_deal_order", "_key", "is_over",
                 "_next_seat", "_single", "_forced", "_late")

    rules: Rules
    seating: Seating
    dealer: int
    number: int
    deck: tuple[Card, ...]
    stock_pos: int
    hands: list[list[Card]]
    table: list[Card]
    piles: list[list[Card]]
    escobas: list[int]
    last_capturer: int | None
    turn: int
    phase: Phase
    pending: tuple[Card, tuple[tuple[Card, ...], ...]] | None
    round: int
    events: list[Event]
    breakdown: tuple[dict[str, int], ...] | None
    is_over: bool  # phase is OVER, as a plain attribute: every simulation loop asks it after each move
    _legal: list[Move] | None
    _options: list[tuple[Card, ...]] | None
    _trailer: int
    _side_of: tuple[int, ...]  # per seat, its side
    _deal_order: tuple[int, ...]  # the seats from the one after the dealer, in play order
    _key: int  # _table_key(table), kept up to date by every change to the table
    # Read from the rules and the seating once per hand (``_bind``), not at every move:
    _next_seat: tuple[int, ...]  # per seat, the next in play order
    _single: bool  # rules.single_capture_priority (a plain flag: a state holds no cache, so it copies and pickles small)
    _forced: bool  # rules.forced_capture
    _late: LastRoundEscoba  # rules.last_round_escoba

    def _bind(self, rules: Rules, seating: Seating, dealer: int, number: int) -> None:
        """The hand's rules, seating, dealer and number, and what the hot paths read of them."""
        self.rules, self.seating, self.dealer, self.number = rules, seating, dealer, number
        self._side_of, self._deal_order = seating._side_of, seating.deal_order[dealer]
        self._next_seat = seating._next_seat
        self._single = rules.single_capture_priority
        self._forced = rules.forced_capture
        self._late = rules.last_round_escoba

    @classmethod
    def deal(cls, rules: Rules, seating: Seating, dealer: int, deck: Sequence[Card],
             number: int = 0, events: list[Event] | None = None) -> HandState:
        """Start a hand from an already shuffled deck (40 cards, dealt from the front)."""
        if sorted(c.index for c in deck) != list(range(40)):
            raise ValueError("a deck must hold each of the 40 cards exactly once")
        return cls._start(rules, seating, dealer, deck, number, events)

    @classmethod
    def _start(cls, rules: Rules, seating: Seating, dealer: int, deck: Sequence[Card],
               number: int, events: list[Event] | None) -> HandState:
        self = cls()
        self._bind(rules, seating, dealer, number)
        self.deck = tuple(deck)
        self.stock_pos = 0
        n = seating.players
        self.hands = [[]] * n  # placeholders: the deal below gives every seat its own list
        self.table = []
        self._key = 0
        # Two sides, the common case, without the frame of a comprehension.
        self.piles = [[], []] if seating.sides == 2 else [[] for _ in range(seating.sides)]
        self.escobas = [0] * seating.sides
        self.last_capturer = None
        self.turn = (dealer + 1) % n
        self.phase = PLAY
        self.is_over = False
        self.pending = None
        self.round = -1
        self.events = [] if events is None else events
        self.breakdown = None
        self._legal = None
        self._options = None
        self._trailer = 0
        self._deal_round()
        return self

    @classmethod
    def shuffled(cls, rules: Rules, seating: Seating, dealer: int, seed: int, number: int = 0,
                 events: list[Event] | None = None) -> HandState:
        """Start a hand from the deck shuffled by ``seed`` (a permutation by construction)."""
        deck = list(DECK)
        Rng(seed).shuffle(deck)
        return cls._start(rules, seating, dealer, deck, number, events)

    # -- queries --

    @property
    def current_seat(self) -> int | None:
        return None if self.phase is OVER else self.turn

    @property
    def stock_count(self) -> int:
        return 40 - self.stock_pos

    @property
    def stock(self) -> tuple[Card, ...]:
        return self.deck[self.stock_pos:]

    def copy(self) -> HandState:
        other = HandState()
        other.rules, other.seating, other.dealer, other.number = self.rules, self.seating, self.dealer, self.number
        other.deck, other.stock_pos = self.deck, self.stock_pos
        other.hands = [h[:] for h in self.hands]
        other.table = self.table[:]
        other._key = self._key
        other.piles = [p[:] for p in self.piles]
        other.escobas = self.escobas[:]
        other.last_capturer, other.turn, other.phase = self.last_capturer, self.turn, self.phase
        other.is_over = self.is_over
        other.pending, other.round = self.pending, self.round
        other._trailer = self._trailer
        other._side_of, other._deal_order = self._side_of, self._deal_order
        other._next_seat, other._single, other._forced = self._next_seat, self._single, self._forced
        other._late = self._late
        other.events = self.events[:]
        other.breakdown = self.breakdown
        other._legal = self._legal
        other._options = self._options
        return other

    def legal_moves(self) -> list[Move]:
        """Every legal move for the seat to play, in a stable order.

        For each card in hand (in value order): its captures, then its trail.
        """
        legal = self._legal
        if legal is not None:
            return legal
        if self.phase is not PLAY:
            return self._special_moves()
        # The hot path of every simulation: kept flat on purpose.
        table = self.table
        hand = self.hands[self.turn]
        single = self._single
        by_sum = (_SINGLE_SETS if single else _SETS).get(self._key)
        if by_sum is None:
            by_sum = _captures(self._key, table, hand, single)
        take = _TAKES
        by_card = _BY_CARD
        forced = self._forced
        # legal.append called as a method, not bound to a local: Python 3.11 specializes
        # the method form into an inline list append.
        legal = self._legal = []
        cards: tuple[Card, ...] = ()
        try:
            for card in hand:
                need, trail = by_card[card.index]
                masks = by_sum[need]
                if masks:
                    if not cards:
                        cards = tuple(table)
                    for mask in masks:
                        legal.append(_new(Move, (_PLAY, card, take[mask](cards))))
                    if forced:
                        continue
                legal.append(trail)
        except KeyError:  # a mask met for the first time (a few hundred in all): add its picker
            _add_takes(by_sum)
            self._legal = None
            return self.legal_moves()
        return legal

    def _special_moves(self) -> list[Move]:
        phase = self.phase
        if phase is CLAIM:
            card, options = self.pending  # type: ignore[misc]  # pending is set in the claim phase; no check on this hot path
            legal = [Move(MoveKind.CLAIM, card, take) for take in options]
            legal.append(PASS)
        elif phase is TAKE:
            legal = [Move(MoveKind.TAKE, None, take) for take in self._options or ()]
        else:
            legal = []
        self._legal = legal
        return legal

    # -- applying moves --

    # The verifier takes any object, not only a Move or its text: whatever it is given, its
    # answer is a legal move or IllegalMoveError, in the compiled build too (where a narrower
    # parameter type would be enforced with a TypeError before the first line runs).

    def check(self, move: object) -> Move:
        """The rules' verdict on ``move`` for the seat to play, changing nothing.

        Returns the legal move (parsed, when given as text); raises ``IllegalMoveError``
        with the precise reason otherwise (text that is not a move at all, or no text, included).
        ``apply`` plays exactly the moves this accepts.
        """
        if isinstance(move, str):
            try:
                parsed = Move.parse(move)
            except MoveParseError as exc:
                raise IllegalMoveError(move, str(exc)) from None
            move = parsed
        legal = self.legal_moves()
        if move in legal:
            return legal[legal.index(move)]  # the Move itself, even for a tuple equal to it
        if not isinstance(move, Move):
            raise IllegalMoveError(repr(move), "expected a Move or its text, such as '5e+4b+6o'")
        raise IllegalMoveError(str(move), self._why_illegal(move))

    def is_legal(self, move: object) -> bool:
        """Whether ``check`` would accept ``move``."""
        if move in self.legal_moves():
            return True
        try:
            self.check(move)
        except IllegalMoveError:
            return False
        return True

    def apply(self, move: object) -> None:
        """Play ``move`` for the current seat and run every automatic step that follows.

        Raises ``IllegalMoveError`` (saying why) for a move the rules do not allow now: the
        reason ``check`` gives, and the state is left unchanged.
        """
        legal = self._legal
        if legal is None:
            legal = self.legal_moves()
        if move in legal:
            played: Move = move  # equal to a legal move (mypy narrows by the "in"): its three fields
        else:
            played = self.check(move)  # a move given as text, or a refusal with its reason
        self._legal = None
        kind, card, take = played
        if kind is not _PLAY or card is None:  # a play always names its card: this is TAKE, CLAIM or PASS
            if kind is MoveKind.TAKE:
                self._take_initial(take)
            else:
                self._claim(played)
            return
        # A play from hand, inline: this is the other half of every simulation's hot path.
        seat = self.turn
        hands = self.hands
        hands[seat].remove(card)
        table = self.table
        events = self.events
        if take:
            events.append(_new(Play, (seat, card, take)))
            key = self._key
            for c in take:
                table.remove(c)
                key -= _KEY_WEIGHT[c.value]
            self._key = key
            side = self._side_of[seat]
            pile = self.piles[side]
            pile.append(card)
            pile.extend(take)
            self.last_capturer = side
            # The stock is empty only in the hand's last round (option last_round_escoba).
            if not table and (self.stock_pos < 40 or self._late_escoba_counts(seat)):
                self.escobas[side] += 1
                events.append(_new(Escoba, (seat, side, "play")))
        else:
            index = card.index
            events.append(_TRAIL_PLAYS[seat][index])
            if self.rules.renuncio:
                self._note_renuncio(card)
            insort(table, card)  # cards compare by order, in C
            self._key += _CARD_WEIGHT[index]
        nxt = self._next_seat[seat]
        if hands[nxt] and self.pending is None:
            self.turn = nxt  # the common case, without the general search
        else:
            self._next_turn(seat)

    def _late_escoba_counts(self, seat: int) -> bool:
        """Whether a sweep made in the last round by ``seat``'s play scores an escoba. With
        ``last_card`` it does unless the card played was the seat's final card of the hand (its
        hand is empty now that the stock is spent)."""
        late = self._late
        return late is _LATE_YES or (late is _LATE_LAST_CARD and len(self.hands[seat]) > 0)

    def _why_illegal(self, move: Move) -> str:
        phase = self.phase
        if phase is OVER:
            return "the hand is over"
        if phase is CLAIM and move.kind is _PLAY:
            return "a renuncio claim is pending: answer with a 'renuncio ...' move or 'pass' first"
        if phase is TAKE:
            return "the dealer must choose which initial table cards to take ('mesa ...')"
        if move.kind is not _PLAY:
            return f"no {move.kind.value} is possible now"
        card, take = move.card, move.take
        if card is None:
            return "a play names the card played"
        if card not in self.hands[self.turn]:
            return f"{card} is not in the hand of seat {self.turn}"
        missing = [c for c in take if c not in self.table]
        if missing:
            return f"{' '.join(map(str, missing))} not on the table"
        if take:
            if len(set(take)) != len(take):
                return "a table card is taken twice"
            if list(take) != _sorted(take):
                return "the taken cards must be listed in table order (Move.play sorts them)"
            total = card.value + sum(c.value for c in take)
            if total != 15:
                return f"the cards add up to {total}, not 15"
            return "a single-card capture is available, so a multi-card set may not be taken (single_capture_priority)"
        return f"{card} can capture, so it must capture (forced_capture)"

    def _claimable(self) -> bool:
        """A renuncio goes to the next player only when that player is on another side (with
        escobas en mano the next player to play can be the trailer's partner, or the trailer).
        Otherwise the missed capture is simply dropped."""
        if self._side_of[self.turn] == self._side_of[self._trailer]:
            self.pending = None
            return False
        return True

    def _note_renuncio(self, card: Card) -> None:
        """Option renuncio: remember the captures a trailed card could have made."""
        options: Sequence[tuple[Card, ...]] = captures_for(card, self.table)
        if self.rules.single_capture_priority:
            options = _prefer_single(options)
        self.pending = (card, tuple(options)) if options else None
        self._trailer = self.turn

    def _claim(self, move: Move) -> None:
        seat = self.turn
        self.pending = None
        self.phase = PLAY
        if move.kind is MoveKind.CLAIM:
            card = move.card
            take = move.take
            table = self.table
            table.remove(card)  # type: ignore[arg-type]  # claims are only built from the pending card, never None
            for c in take:
                table.remove(c)
            self._key = _table_key(table)
            side = self._side_of[seat]
            self.piles[side].append(card)  # type: ignore[arg-type]  # claims are only built from the pending card, never None
            self.piles[side].extend(take)
            self.last_capturer = side
            self.events.append(Claim(seat, card, take))  # type: ignore[arg-type]  # claims are only built from the pending card, never None
            # A claim is a capture, so in the last round it scores no escoba under
            # last_round_escoba false; it plays no card of the claimer's, so last_card keeps it.
            if not table and (self.stock_pos < 40 or self._late is not LastRoundEscoba.NO):
                self.escobas[side] += 1
                self.events.append(Escoba(seat, side, "renuncio"))

    def _take_initial(self, take: tuple[Card, ...]) -> None:
        self.phase = PLAY
        self._options = None
        self._capture_initial(take, escobas=1 if len(take) == len(self.table) else 0)
        self._after_deal()

    def _capture_initial(self, take: tuple[Card, ...], escobas: int) -> None:
        dealer = self.dealer
        side = self._side_of[dealer]
        for c in take:
            self.table.remove(c)
        self._key = _table_key(self.table)
        self.piles[side].extend(take)
        self.escobas[side] += escobas
        self.last_capturer = side
        self.events.append(InitialCapture(dealer, take, escobas))
        for _ in range(escobas):
            self.events.append(Escoba(dealer, side, "initial_table"))

    # -- automatic steps --

    def _next_turn(self, seat: int) -> None:
        """After ``seat`` played, off the common path: the next seat with cards (which may face
        a renuncio claim first), else a new round, else the end of the hand."""
        hands = self.hands
        if any(hands):
            n = len(hands)
            for step in range(1, n + 1):
                nxt = (seat + step) % n
                if hands[nxt]:
                    self.turn = nxt
                    if self.pending is not None and self._claimable():
                        self.phase = CLAIM
                    return
        self._next_round()

    def _next_round(self) -> None:
        """Every hand is empty: deal the next round, or, with the stock spent, end the hand."""
        if self.stock_pos < 40:
            self._deal_round()
        else:
            self._finish()

    def _deal_round(self) -> None:
        """Deal 3 cards to each seat from the one after the dealer; round 0 also lays the table."""
        self.round = number = self.round + 1
        deck = self.deck
        pos = self.stock_pos
        order = self._deal_order
        end = pos + 3 * len(order)  # the table comes after the hands
        table: tuple[Card, ...] = ()
        if not number:
            table = tuple(sorted(deck[end:end + 4]))
            end += 4
            self.table = list(table)
            self._key = _table_key(table)
        self.stock_pos = end
        events = self.events
        events.append(_new(Deal, (self.number, number, self.dealer, table, 40 - end)))
        hands = self.hands
        full = end <= 40  # three cards for every seat (a position's stock may run short)
        for seat in order:
            if full:
                # Three cards put in order by hand: two or three comparisons, without sorted()'s
                # setup.
                a, b, c = deck[pos:pos + 3]
                if b < a:
                    a, b = b, a
                if c < b:
                    b, c = c, b
                    if b < a:
                        a, b = b, a
                cards = [a, b, c]
            else:
                cards = sorted(deck[pos:pos + 3])
            hands[seat] = cards
            events.append(_new(Cards, (seat, tuple(cards))))
            pos += 3
        if not number and self._initial_table():
            return  # the dealer must choose which table cards to take first (subset15)
        first = order[0]
        if hands[first] and not self.rules.escoba_en_mano:
            # _after_deal's verdict, without its search: the first seat has just been dealt cards.
            self.turn = first
            self.phase = CLAIM if self.pending is not None and self._claimable() else PLAY
        else:
            self._after_deal()

    def _after_deal(self) -> None:
        """Escobas en mano, then the first seat after the dealer with cards plays."""
        hands = self.hands
        if self.rules.escoba_en_mano:
            for seat in self._deal_order:
                hand = hands[seat]
                if sum(c.value for c in hand) == 15:
                    side = self._side_of[seat]
                    self.piles[side].extend(hand)
                    self.escobas[side] += 1
                    self.events.append(EscobaEnMano(seat, tuple(hand)))
                    self.events.append(Escoba(seat, side, "en_mano"))
                    hands[seat] = []
        for seat in self._deal_order:
            if hands[seat]:
                self.turn = seat
                self.phase = CLAIM if self.pending is not None and self._claimable() else PLAY
                return
        self._next_round()  # every seat sat out this round (escoba en mano)

    def _initial_table(self) -> bool:
        """Apply option initial_table; True when the dealer has a choice to make first."""
        mode = self.rules.initial_table
        if mode == "none":
            return False
        table = self.table
        total = sum(map(_value, table))
        if mode == "subset15":
            options = [tuple(table[i] for i in combo)
                       for combo in sorted(_enumerate_sums(tuple(c.value for c in table), 15).get(15, []))]
            if len(options) == 1:
                self._capture_initial(options[0], escobas=int(len(options[0]) == len(table)))
            elif options:
                self.phase = TAKE
                self.turn = self.dealer
                self._options = options
                return True
            return False
        if total == 15 or (total == 30 and mode == "sum15_or_30"):
            self._capture_initial(tuple(table), escobas=total // 15)
        return False

    def _finish(self) -> None:
        rest = tuple(self.table)
        side = self.last_capturer
        if side is not None:
            self.piles[side].extend(rest)
            self.table = []
            self._key = 0
        # With no capture in the whole hand the cards go to nobody: they stay on the table.
        self.events.append(_new(Sweep, (side, rest)))
        self.pending = None
        self.phase = OVER
        self.is_over = True
        self.breakdown = score_hand(self.piles, self.escobas, self.rules)

    def points(self) -> tuple[int, ...]:
        """Points per side for this hand (the hand must be over)."""
        if self.breakdown is None:
            raise IllegalMoveError("score", "the hand is not over")
        return tuple(map(_total, self.breakdown))  # a generator would cost a frame

    # -- simulation from a seat's view --

    @classmethod
    def position(cls, rules: Rules, seating: Seating, *, hands: Sequence[Sequence[Card]],
                 table: Sequence[Card], stock: Sequence[Card] = (), dealer: int = 0,
                 turn: int | None = None, piles: Sequence[Sequence[Card]] | None = None,
                 escobas: Sequence[int] | None = None, last_capturer: int | None = None,
                 round: int = 0, number: int = 0) -> HandState:
        """A hand set up in any position (for analysis, tests and search). ``stock`` is dealt
        from its front. The 40 cards must each be somewhere exactly once; with the piles left
        out, every card not in the hands, the table or the stock is put in side 0's pile."""
        # Sets of cards as bitmasks (Card.bit), in loops that run in C: the expert builds a
        # position for every deal it samples.
        if piles is None:
            seen = sum(map(_bit, chain(_flat(hands), table, stock)))
            rest = [c for c in DECK if not c.bit & seen]
            piles = [rest] + [[] for _ in range(seating.sides - 1)]
        count = sum(map(len, hands)) + len(table) + len(stock) + sum(map(len, piles))
        # 40 powers of two add up to 2**40 - 1 only if they are 40 distinct ones: the whole deck.
        if count != 40 or sum(map(_bit, chain(_flat(hands), table, stock, _flat(piles)))) != DECK_BITS:
            raise ValueError("a position must hold each of the 40 cards exactly once")
        if len(hands) != seating.players or len(piles) != seating.sides:
            raise ValueError("one hand per seat and one pile per side are needed")
        self = cls()
        self._bind(rules, seating, dealer, number)
        dealt = DECK_BITS ^ sum(map(_bit, stock))
        self.deck = (*compress(DECK, map(and_, _BITS, repeat(dealt))), *stock)
        self.stock_pos = 40 - len(stock)
        self.hands = [_sorted(h) for h in hands]
        self.table = _sorted(table)
        self._key = _table_key(self.table)
        self.piles = [list(p) for p in piles]
        self.escobas = list(escobas) if escobas is not None else [0] * seating.sides
        self.last_capturer = last_capturer
        self.turn = (dealer + 1) % seating.players if turn is None else turn
        self.phase = PLAY
        self.is_over = False
        self.pending = None
        self.round = round
        self.events = []
        self.breakdown = None
        self._legal = None
        self._options = None
        self._trailer = 0
        if not self.hands[self.turn]:
            raise ValueError(f"seat {self.turn} is to play but has no cards")
        return self

    @classmethod
    def determinize(cls, view: SeatView, rng: Rng) -> HandState:
        """A full hand consistent with ``view``: the unseen cards dealt at random to the other
        seats and the stock. For bots that search by sampling the hidden information."""
        unseen = list(view.unseen)
        rng.shuffle(unseen)
        hands: list[Sequence[Card]] = []
        pos = 0
        for seat, size in enumerate(view.hand_sizes):
            if seat == view.seat:
                hands.append(view.hand)
            else:
                hands.append(unseen[pos:pos + size])
                pos += size
        if len(unseen) - pos != view.stock_count:
            raise ValueError("view is inconsistent: unseen cards do not match hand sizes and stock")
        self = cls.position(view.rules, view.seating, hands=hands, table=view.table, stock=unseen[pos:],
                            dealer=view.dealer, turn=view.turn, piles=view.piles, escobas=view.escobas,
                            last_capturer=view.last_capturer, round=view.round, number=view.hand_number)
        # A pending decision (a renuncio claim, the dealer's choice) is the current seat's to make.
        self.phase = view.phase
        self.is_over = view.phase is OVER
        self.pending = view.pending
        self._options = list(view.options) if view.options else None
        return self
