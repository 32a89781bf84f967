"""Play kit policies in-process through the rules core: no processes, no pipes.

Each seat gets its own ``escoba_kit.Game`` fed with exactly the events and requests a real
bot process would receive (public events, its own cards, the referee's view and legal
moves), so a policy plays here as it would through ``arena play``, only faster. Used by
``benchmarks/strength.py`` and the bot tests. Needs the ``arena`` package.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.game import HandState, MatchState, hand_view
from arena.harness.local_bot import LocalBot
from arena.rules import Rules, Seating

from .kit import escoba_kit as kit

Policy = Callable[[kit.Game, kit.Request, random.Random], Any]


@dataclass
class Timing:
    """Decision times of one seat, in seconds: wall clock, and the CPU time of this process
    (which a busy machine does not inflate)."""

    count: int = 0
    total: float = 0.0
    worst: float = 0.0
    cpu_total: float = 0.0
    cpu_worst: float = 0.0

    def add(self, seconds: float, cpu: float) -> None:
        self.count += 1
        self.total += seconds
        self.cpu_total += cpu
        if seconds > self.worst:
            self.worst = seconds
        if cpu > self.cpu_worst:
            self.cpu_worst = cpu


@dataclass
class Outcome:
    """A finished hand or match: the core state it ended in, and per seat its decision times
    and how many decisions of each phase (play, claim, take) it was asked for."""

    state: Any
    timings: list[Timing] = field(default_factory=list)
    phases: list[dict[str, int]] = field(default_factory=list)


class DriftError(AssertionError):
    """In check mode: a seat's kit state differs from the core's, or a policy played an illegal move."""


def _check_state(game: kit.Game, hand: HandState, seat: int, request: kit.Request) -> None:
    """The kit's tracking against the truth: unseen cards, piles, escobas, last capturer."""
    if game.warnings:
        raise DriftError(f"seat {seat}: kit state drifted from the view: {game.warnings}")
    truth = hand_view(hand, seat, [0] * hand.seating.sides, ())
    checks = (("unseen", sorted(map(str, game.unseen())), sorted(map(str, truth.unseen))),
              ("piles", [sorted(map(str, p)) for p in game.piles], [sorted(map(str, p)) for p in truth.piles]),
              ("escobas", list(game.escobas), list(truth.escobas)),
              ("last_capturer", game.last_capturer, truth.last_capturer),
              ("round", game.round, truth.round))
    for name, got, want in checks:
        if got != want:
            raise DriftError(f"seat {seat}: kit {name} {got!r}, core {want!r}")


def hello(seating: Seating, rules: Rules, seat: int, match: int = 1, move_ms: int = 2000) -> dict[str, Any]:
    return {"type": "hello", "protocol": 1, "match": match, "seat": seat, "side": seating.side_of(seat),
            "players": seating.players, "teams": [list(t) for t in seating.teams], "rules": rules.to_dict(),
            "time": {"startup_ms": 10000, "move_ms": move_ms, "bank_ms": 0, "grace_ms": 200},
            "max_line_bytes": 65536}


def _view(hand: HandState, seat: int, side: int, scores: Sequence[int]) -> dict[str, Any]:
    # The same fields as the referee's request view.
    return {"seat": seat, "side": side, "hand_number": hand.number, "round": hand.round, "dealer": hand.dealer,
            "hand": [str(c) for c in hand.hands[seat]], "table": [str(c) for c in hand.table],
            "stock": hand.stock_count, "hand_sizes": [len(h) for h in hand.hands], "scores": list(scores)}


def decide(policy: Policy, game: kit.Game, request: kit.Request, rng: random.Random) -> kit.Move:
    """The policy's move, made legal as the kit makes it (``escoba_kit.decide``), except that an
    exception of the policy is raised: the kit's safety net (the first legal move) would hide the
    bug behind figures that look like a weak bot's (a setting mistyped into benchmarks/strength.py
    once played -2.34 points a hand for +1.2, without a word)."""
    chosen = policy(game, request, rng)
    return kit.decide(lambda *_: chosen, game, request, rng)


def _drive(state: Any, policies: Sequence[Policy], rngs: Sequence[random.Random], seating: Seating,
           rules: Rules, move_ms: int, check: bool, phases: list[dict[str, int]]) -> list[Timing]:
    players = seating.players
    games = [kit.Game() for _ in range(players)]
    for seat, game in enumerate(games):
        game.start(hello(seating, rules, seat, move_ms=move_ms))
    timings = [Timing() for _ in range(players)]
    events = state.events
    sent = 0
    request_id = 0
    is_match = isinstance(state, MatchState)
    perf = time.perf_counter
    cpu = time.process_time
    while True:
        for event in events[sent:]:
            data = event.to_dict()
            audience = event.audience
            if audience is None:
                for game in games:
                    game.on_event(data)
            else:
                games[audience].on_event(data)
        sent = len(events)
        if state.is_over:
            break
        seat = state.current_seat
        hand = state.hand if is_match else state
        scores = state.scores if is_match else [0] * seating.sides
        legal = state.legal_moves()
        texts = [str(m) for m in legal]
        request_id += 1
        game = games[seat]
        request = game.on_request({"type": "request", "id": request_id, "time_ms": move_ms, "bank_ms": 0,
                                   "view": _view(hand, seat, seating.side_of(seat), scores), "legal": texts})
        phases[seat][request.phase] = phases[seat].get(request.phase, 0) + 1
        if check:
            _check_state(game, hand, seat, request)
        game.warnings.clear()
        t0 = perf()
        c0 = cpu()
        if check:
            # The policy itself, without the kit's safety net, must return a legal move.
            move = policies[seat](game, request, rngs[seat])
            if move not in request.legal:
                raise DriftError(f"seat {seat}: policy played {move!r}, not one of {[m.text for m in request.legal]}")
        else:
            move = decide(policies[seat], game, request, rngs[seat])
        timings[seat].add(perf() - t0, cpu() - c0)
        state.apply(legal[texts.index(move.text)])
    return timings


def play_hand(policies: Sequence[Policy], rules: Rules, seating: Seating, dealer: int, seed: int,
              policy_seeds: Sequence[int] | None = None, move_ms: int = 2000, check: bool = False) -> Outcome:
    """One hand from the deck shuffled by ``seed``; ``policies[i]`` plays seat ``i``.
    ``check`` (for tests) raises ``DriftError`` if a seat's tracked state ever disagrees with
    the core or a policy returns an illegal move (normally the kit would play a legal one).
    A policy's exception is raised, never turned into a move."""
    state = HandState.shuffled(rules, seating, dealer, seed, number=0, events=[])
    seeds = policy_seeds or [seed + s for s in range(seating.players)]
    rngs = [random.Random(f"{s}/{seat}") for seat, s in enumerate(seeds)]
    phases: list[dict[str, int]] = [{} for _ in range(seating.players)]
    return Outcome(state, _drive(state, policies, rngs, seating, rules, move_ms, check, phases), phases)


def play_match(policies: Sequence[Policy], rules: Rules, seating: Seating, seed: int,
               policy_seeds: Sequence[int] | None = None, move_ms: int = 2000, check: bool = False) -> Outcome:
    """A whole match (``MatchState``) from ``seed``; ``outcome.state.result`` is its result."""
    state = MatchState.new(rules, seating, seed)
    seeds = policy_seeds or [seed + s for s in range(seating.players)]
    rngs = [random.Random(f"{s}/{seat}") for seat, s in enumerate(seeds)]
    phases: list[dict[str, int]] = [{} for _ in range(seating.players)]
    return Outcome(state, _drive(state, policies, rngs, seating, rules, move_ms, check, phases), phases)


class KitPlayer(LocalBot):
    """A kit policy as a seat of the arena's referee (``arena.match.referee.Player``): it is fed
    the very lines a bot process would read (hello, events, requests, match_over), parsed by
    the kit as ``escoba_kit.run`` parses them, so that one side of a match can be a real bot
    process and the other a policy in this process (``benchmarks/strength.py``). The rest of
    a seat (its name, limits, no process, no usage) is the arena's in-process player's."""

    def __init__(self, policy: Policy, name: str, limits: Any = None, seed: int = 0) -> None:
        super().__init__(name, limits=limits)
        self._policy = policy
        self._seed = seed
        self._game = kit.Game()
        self._kit_rng = kit.match_rng(seed, self._game)

    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None:
        self._game = kit.Game()
        self._game.start(hello)
        self._kit_rng = kit.match_rng(self._seed, self._game)

    def queue(self, line: bytes) -> None:
        msg = json.loads(line)
        if msg.get("type") == "event":
            self._game.on_event(msg["event"])
        elif msg.get("type") == "match_over":
            self._game.on_match_over(msg)

    def decide(self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int,
               idle: Callable[[], None] | None = None) -> tuple[int, str, float]:
        if idle is not None:
            idle()
        self.last_request_id += 1
        request = self._game.on_request({"id": self.last_request_id, "time_ms": move_ms, "bank_ms": bank_ms,
                                         "view": json.loads(view) if isinstance(view, str) else view,
                                         "legal": list(legal)})
        started = time.perf_counter()
        move = decide(self._policy, self._game, request, self._kit_rng)
        return self.last_request_id, move.text, time.perf_counter() - started

    def close(self) -> None:
        pass  # as a bot process closes: nothing to stop
