"""The matches behind the golden files in tests/golden/ (see make_golden.py and test_golden.py).

The bots here are deliberately defined in this file, on top of the pinned ``Rng`` only, so
that the golden games depend on the rules core, the deal generator and the referee, and on
nothing a test helper might change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.core.cards import DECK
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng, derive_seed
from arena.harness.botproc import Limits
from arena.harness.protocol import BotFailure, Ready, Termination
from arena.harness.resources import Usage
from arena.match.record import GameRecord
from arena.match.referee import FailurePolicy, play_match


class GoldenBot:
    """A seeded random player that can be told to fail on chosen decisions (1-based)."""

    def __init__(self, name: str, seed: int, faults: dict[int, str] | None = None) -> None:
        self.seat: int | None = None
        self._name = name
        self._rng = Rng(seed)
        self._faults = dict(faults or {})
        self._decisions = 0
        self.last_request_id = 0
        self.last_info = None
        self._limits = Limits()

    @property
    def name(self) -> str:
        return self._name

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def process(self) -> None:
        return None

    def usage(self) -> Usage:
        return Usage()

    def send_hello(self, hello: dict[str, Any], *, reset: bool = True) -> None:
        if self._faults.get(0) == "no_handshake":
            raise BotFailure(Termination.NO_HANDSHAKE, "no ready within 10000 ms (+200 ms grace)")

    def await_ready(self) -> Ready:
        return Ready(self._name, 1)

    def queue(self, line: bytes) -> None:
        pass

    def decide(self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int,
               idle: Callable[[], None] | None = None) -> tuple[int, str, float]:
        if idle is not None:
            idle()
        self._decisions += 1
        self.last_request_id += 1
        move = legal[self._rng.below(len(legal))]
        fault = self._faults.get(self._decisions)
        if fault == "timeout":
            raise BotFailure(Termination.TIMEOUT, f"request {self.last_request_id}: no reply within 2000 ms (+200 ms grace)")
        if fault == "crash":
            raise BotFailure(Termination.CRASH, "bot exited with code 3")
        if fault == "malformed":
            raise BotFailure(Termination.MALFORMED, "not JSON (JSONDecodeError: Expecting value): 'DEBUG'")
        if fault == "illegal":
            return self.last_request_id, "1o+2o+3o", 0.0
        if fault == "reordered" and "+" in move:
            card, *take = move.split("+")
            move = "+".join([card, *reversed(take)])
        return self.last_request_id, move, 0.0

    def flush(self) -> None:
        pass

    def kill(self) -> None:
        pass


@dataclass(frozen=True)
class Case:
    name: str
    seating: Seating
    rules: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    policy: FailurePolicy = FailurePolicy()
    faults: dict[int, dict[int, str]] = field(default_factory=dict)  # seat -> decision -> fault


RECORD_CASES: tuple[Case, ...] = (
    # One per table shape, default rules.
    Case("shape-1v1", Seating.alone(2), seed=101),
    Case("shape-3-alone", Seating.alone(3), seed=102),
    Case("shape-4-alone", Seating.alone(4), seed=103),
    Case("shape-4-pairs", Seating.pairs(4), seed=104),
    Case("shape-6-pairs", Seating.pairs(6, 2), seed=105),
    Case("shape-6-threes", Seating.pairs(6, 3), seed=106),
    # One per option family: every option off its default at least once.
    Case("options-renuncio-single", Seating.alone(2),
         {"renuncio": True, "single_capture_priority": True, "target": 11}, seed=201),
    Case("options-en-mano-subset15", Seating.pairs(4),
         {"escoba_en_mano": True, "initial_table": "subset15", "target": 11}, seed=202),
    Case("options-forced-sum30", Seating.alone(3),
         {"forced_capture": True, "initial_table": "sum15_or_30", "target": 11}, seed=203),
    Case("options-primera-bonus", Seating.alone(2),
         {"sevens": "primera", "all_sevens_bonus": True, "last_round_escoba": False, "target": 11}, seed=204),
    Case("options-tiebreak-none", Seating.alone(4),
         {"sevens": "most_tiebreak", "initial_table": "none", "target": 11}, seed=205),
    Case("options-max-hands-draw", Seating.alone(2), {"target": 1000, "max_hands": 2}, seed=206),
    # Seeds whose matches sweep in hands' last rounds, 2 and 3 times under the default.
    Case("options-last-round-false", Seating.alone(2), {"last_round_escoba": False, "target": 11}, seed=217),
    Case("options-last-round-last-card", Seating.alone(2), {"last_round_escoba": "last_card", "target": 11}, seed=230),
    # Bot failures, under both policies.
    Case("failure-forfeit-crash", Seating.pairs(4), {"target": 11}, seed=301, faults={1: {9: "crash"}}),
    Case("failure-forfeit-handshake", Seating.alone(3), {"target": 11}, seed=302, faults={2: {0: "no_handshake"}}),
    Case("failure-substitute", Seating.alone(2), {"target": 11}, seed=303,
         policy=FailurePolicy("substitute", 3),
         faults={0: {3: "timeout", 5: "malformed", 8: "illegal"}, 1: {2: "reordered", 4: "reordered"}}),
    Case("failure-substitute-then-forfeit", Seating.alone(2), {"target": 11}, seed=304,
         policy=FailurePolicy("substitute", 1), faults={1: {2: "timeout", 6: "crash"}}),
)


def play_case(case: Case) -> GameRecord:
    bots = [GoldenBot(f"bot{seat}", derive_seed(case.seed, "golden-bot", seat), case.faults.get(seat))
            for seat in range(case.seating.players)]
    return play_match(bots, Rules.from_dict(case.rules), case.seating, case.seed, case.policy)


def rng_samples() -> dict[str, Any]:
    """Outputs of the deal generator that every version must reproduce exactly."""
    out: dict[str, Any] = {"derive_seed": [], "next_u64": {}, "below": {}, "random": {}, "shuffle": {}}
    for seed, labels in ((0, ()), (1, ("deal", 3)), (20261130, ("hand", 0)), (2**63 - 1, ("bot", 2)),
                         (42, ("substitute",)), (7, ("dealer",))):
        out["derive_seed"].append({"seed": seed, "labels": list(labels), "value": derive_seed(seed, *labels)})
    for seed in (0, 1, 12345, 2**64 - 1):
        rng = Rng(seed)
        out["next_u64"][str(seed)] = [rng.next_u64() for _ in range(8)]
        rng = Rng(seed)
        out["below"][str(seed)] = [rng.below(n) for n in (1, 2, 3, 10, 40, 1000, 2**40, 7)]
        rng = Rng(seed)
        out["random"][str(seed)] = [rng.random() for _ in range(4)]
    for seed in (0, 1, 99, 20261130):
        deck = list(DECK)
        Rng(seed).shuffle(deck)
        out["shuffle"][str(seed)] = [str(c) for c in deck]
    return out
