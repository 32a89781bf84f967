"""Adaptive formats played in-process: matches decided by the rating model from known
strengths, finished in a seeded random order with up to ``concurrency`` in play."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from arena.core.outcome import EndReason
from arena.harness.protocol import Termination
from arena.tournament.adaptive import AdaptiveRun, Replay
from arena.tournament.config import TournamentConfig, parse_config
from arena.tournament.executors import NOT_YET, Completed
from arena.tournament.pairing import LadderRule
from arena.tournament.schedule import MatchSpec
from arena.tournament.store import MatchRow


def field(names, extra: str = "", **kw) -> TournamentConfig:
    lines = "\n".join(f"  - {{name: {b}, cmd: x}}" for b in names)
    return parse_config(f"name: t\nseed: 5\n{extra}\nbots:\n{lines}\n", **kw)


def outcome_row(spec: MatchSpec, strength: Mapping[str, float], rng: random.Random) -> MatchRow:
    """The match decided by Bradley-Terry (strengths in Elo), from the seed of its deal and its
    rotation (so a spec always has the same result), winner to 21."""
    luck = random.Random(spec.seed * 7 + spec.rotation)
    sides = spec.sides
    if len(sides) == 2:
        a, b = (strength[s.split("+")[0]] for s in sides)
        p = 1 / (1 + 10 ** (-(a - b) / 400))
        winner = 0 if luck.random() < p else 1
    else:
        weights = [math.exp(strength[s.split("+")[0]] * math.log(10) / 400) for s in sides]
        winner = luck.choices(range(len(sides)), weights)[0]
    scores = tuple(21 if i == winner else luck.randrange(21) for i in range(len(sides)))
    return MatchRow(id=spec.id, index=spec.index, pairing=spec.pairing, deal=spec.deal, rotation=spec.rotation,
                    seed=spec.seed, sides=spec.sides, seats=spec.seats, winner=winner, scores=scores,
                    reason=EndReason.TARGET, terminations=(Termination.OK,) * len(spec.seats),
                    escobas=(0,) * len(sides), hands=3)


def play(config: TournamentConfig, strength: Mapping[str, float], *, concurrency: int = 1, order_seed: int = 0,
         stored: list[MatchRow] | None = None, stop_after: int | None = None,
         rule: LadderRule = LadderRule.SPREAD) -> list[MatchRow]:
    """Every row the format plays (in the order they finish), resumed from ``stored``;
    ``stop_after``: a kill after that many new rows (what was in play is lost);
    ``rule``: a ladder's choices as an arena of that rule made them."""
    replay = Replay(config, rule=rule)
    for row in sorted(stored or [], key=lambda r: r.index):
        replay.add(row)
    run = AdaptiveRun(config, replay)
    rng = random.Random(order_seed)
    in_play: list[MatchSpec] = []
    out = list(stored or [])
    source = run.pending
    exhausted = False
    while True:
        while not exhausted and len(in_play) < concurrency:
            spec = next(source, None)
            if spec is None:
                exhausted = True
            elif spec is NOT_YET:
                assert in_play, "waits with nothing in play"
                break
            else:
                in_play.append(spec)
        if not in_play:
            return out
        spec = in_play.pop(rng.randrange(len(in_play)))
        row = outcome_row(spec, strength, rng)
        out.append(row)
        run.on_completed(Completed(spec, row, "{}", 0.0, "w"), len(out))
        if stop_after is not None and len(out) - len(stored or []) >= stop_after:
            return out
