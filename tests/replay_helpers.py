"""Real game records for the replay, render and HTML tests: matches played by the referee
between in-process seeded random bots (no processes, so hundreds cost a few seconds)."""

from __future__ import annotations

import copy
from typing import Any

from arena.core.cards import Card
from arena.core.moves import Move, MoveKind
from arena.core.rules import Rules, Seating
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import BotFailure, Termination
from arena.match.record import GameRecord
from arena.match.referee import FailurePolicy, play_match

SEATINGS = {
    "1v1": Seating.alone(2),
    "3 alone": Seating.alone(3),
    "4 alone": Seating.alone(4),
    "4 in pairs": Seating.pairs(4),
    "6 in pairs": Seating.pairs(6, 2),
    "6 in threes": Seating.pairs(6, 3),
}

# Every rule option moved off its default at least once, a few together.
RULE_VARIANTS = {
    "defaults": {},
    "renuncio+single": {"renuncio": True, "single_capture_priority": True, "target": 11},
    "en_mano+subset15": {"escoba_en_mano": True, "initial_table": "subset15", "target": 11},
    "forced+sum30": {"forced_capture": True, "initial_table": "sum15_or_30", "target": 11},
    "primera+bonus": {"sevens": "primera", "all_sevens_bonus": True, "last_round_escoba": False, "target": 11},
    "last_card": {"last_round_escoba": "last_card", "target": 11},
    "tiebreak+none": {"sevens": "most_tiebreak", "initial_table": "none", "target": 11},
    "max_hands draw": {"target": 1000, "max_hands": 2},
}


class FailingBot(LocalBot):
    """A random bot that fails (crashes) on its ``fail_on``-th decision and every one after."""

    def __init__(self, name: str, seed: int, fail_on: int) -> None:
        super().__init__(name, seed)
        self._left = fail_on

    def decide(self, *args, **kwargs):  # noqa: ANN002, ANN003 - whatever the referee passes
        self._left -= 1
        if self._left <= 0:
            raise BotFailure(Termination.CRASH, "exited with code 3")
        return super().decide(*args, **kwargs)


def play(seating: Seating, rules: Rules | dict | None = None, seed: int = 1, *, failing_seat: int | None = None,
         fail_on: int = 5, policy: FailurePolicy = FailurePolicy()) -> GameRecord:
    """One complete match between seeded random bots, as the referee records it."""
    if not isinstance(rules, Rules):
        rules = Rules.from_dict(rules or {})
    bots = []
    for seat in range(seating.players):
        name = f"bot{seat}"
        if seat == failing_seat:
            bots.append(FailingBot(name, seed * 7 + seat, fail_on))
        else:
            bots.append(LocalBot(name, seed=seed * 7 + seat))
    return play_match(bots, rules, seating, seed, policy)


def record_dict(record: GameRecord) -> dict[str, Any]:
    return copy.deepcopy(record.to_dict())


def other_card(card: str) -> str:
    """A different card of the same rank (a one-card change)."""
    parsed = Card.parse(card)
    suits = "ocebo"
    return f"{parsed.rank}{suits[suits.index(parsed.suit.value) + 1]}"


def change_one_card(data: dict[str, Any], *, capture: bool) -> int:
    """Change one card in one move of the record (a capture's taken card, or a trailed card);
    returns the index of the changed move."""
    for i, entry in enumerate(data["moves"]):
        move = Move.parse(entry["move"])
        if move.kind is not MoveKind.PLAY:
            continue
        if capture and move.take:
            parts = entry["move"].split("+")
            parts[-1] = other_card(parts[-1])
            entry["move"] = "+".join(parts)
            return i
        if not capture and not move.take and i > 3:
            entry["move"] = other_card(entry["move"])
            return i
    raise LookupError("no suitable move to change")


def make_store(folder, *, bots=("ana", "luis", "marta"), extra: str = "", matches: int = 2,
               rules: dict | None = None, seed: int = 5) -> str:
    """A tournament results store filled in-process: the real schedule, store and rows, with
    seeded random bots standing in for the bot processes. Returns the results folder."""
    from pathlib import Path

    from arena.tournament.config import load_config
    from arena.tournament.runner import open_store
    from arena.tournament.schedule import build_schedule
    from arena.tournament.worker import row_from_record

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["name: replaytest", f"seed: {seed}", f"output: {folder / 'out'}", f"matches_per_pairing: {matches}"]
    if rules:
        lines.append("rules:")
        lines += [f"  {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in rules.items()]
    lines += [extra, "bots:"] + [f'  - {{name: {b}, cmd: "$PYTHON none.py"}}' for b in bots]
    path = folder / "t.yaml"
    path.write_text("\n".join(lines) + "\n")
    config = load_config(path, check_commands=False)  # in-process bots stand in for none.py
    with open_store(config) as store:
        for spec in build_schedule(config):
            players = [LocalBot(name, seed=spec.seed + i) for i, name in enumerate(spec.seats)]
            record = play_match(players, config.rules, config.seating, spec.seed)
            store.add(row_from_record(spec, record.to_dict(), 0.0), record.to_dict())
    return config.output
