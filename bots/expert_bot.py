"""An expert Escoba bot: determinized Monte-Carlo search over the cards it has not seen.

For each decision it deals the cards it has not seen at random into the other hands and the
stock, consistently with what it knows and has inferred (a "determinization"), plays every
candidate move in that deal followed by a playout (the other seats choosing as
bots/greedy_bot.py does, its own seat by a wary greedy that weighs the sweep it leaves) to the
end of the round and one move into the next, and scores the outcome for its side: the real
points if the hand is over, else the escobas and the velo as they stand and the odds of each
majority (cards, oros, sevens). Every candidate is tried on
the same deals (common random numbers); sequential halving drops the worse half of the
candidates as evidence accumulates, and it plays the best mean. In the last round of a
2-player hand the unseen cards are the other seat's hand, and it solves the rest exactly.

Its budget is a number of playouts (default DEFAULT_PLAYOUTS), not time, so a busy machine
makes it slower but not weaker, and it is deterministic: the deals come from the kit's seeded
rng and the same match replays the same way. Two caps guard the rare position where the
playouts would take long: the CPU time of the search (default DEFAULT_MS ms, measured with
``time.thread_time``, which time spent waiting for a core does not count) and, against the
arena's deadline only, half the wall-clock time the arena gives for the decision. The
playouts, not the caps, end ordinary searches (see docs/BOTS.md for the CPU time per move).

Needs the ``arena`` package (the rules core) for the simulation:
    pip install -e .          (from the repository root), then
    python3 bots/expert_bot.py [--playouts N] [--ms CPU_MS] [--timed]

On the arena's cpu clock (``clock: cpu``) and without ``--playouts`` it budgets by CPU time
instead (``Expert``): the arena then counts only what it spent, so a loaded machine takes
nothing from it. ``--playouts N`` keeps it on playouts, and deterministic, on either clock.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from arena.analysis.budget import ANALYST_ENDGAME, ANALYST_PLAYOUTS, ANALYST_WARY
from arena.game import CLAIM, PLAY, TAKE, Card, Move, SeatView
from arena.rules import Rules, Seating
from arena.search import inference
from arena.search.analysis import move_values, trail_voids
from arena.search.determinized import (  # noqa: F401  # the search's names, as tests and benchmarks import them
    MAX_CANDIDATES,
    capturing_values,
    constrain,
    fast_view,
    search,
    shortlist,
)
from arena.search.evaluation import estimate, evaluate, margin  # noqa: F401
from arena.search.inference import Round, Shown
from arena.search.playout import playout  # noqa: F401
from arena.seeding import Rng

if __package__:
    from .kit import escoba_kit as kit
else:  # run as a script: its directory, bots/, is first on sys.path
    from kit import escoba_kit as kit  # type: ignore[no-redef, import-not-found]  # the script's own folder

DEFAULT_MS = 90.0
DEFAULT_PLAYOUTS = 2000

_CORE = {c.text: Card.parse(c.text) for c in kit.DECK}
_PHASE = {kit.PLAY: PLAY, kit.CLAIM: CLAIM, kit.TAKE: TAKE}


def _core(cards: Sequence[kit.Card]) -> tuple[Card, ...]:
    return tuple(sorted((_CORE[c.text] for c in cards), key=lambda c: c.order))


def seat_view(game: kit.Game, request: kit.Request, rules: Rules, seating: Seating) -> SeatView:
    """The rules core's view of this seat, rebuilt from the kit's tracked state."""
    pending = None
    options: tuple[tuple[Card, ...], ...] = ()
    if request.phase == kit.CLAIM:
        claims = [m for m in request.legal if m.kind == kit.CLAIM]
        claimed = [m.card for m in claims if m.card is not None]  # every claim names the trailed card
        pending = (_CORE[claimed[0].text], tuple(_core(m.take) for m in claims))
    elif request.phase == kit.TAKE:
        options = tuple(_core(m.take) for m in request.legal if m.kind == kit.TAKE)
    return SeatView(
        seat=game.seat, side=game.side, rules=rules, seating=seating, hand_number=game.hand_number,
        round=game.round, dealer=game.dealer, turn=game.seat, phase=_PHASE[request.phase],
        hand=_core(game.hand), table=_core(game.table), stock_count=game.stock,
        hand_sizes=tuple(game.hand_sizes), piles=tuple(_core(p) for p in game.piles),
        escobas=tuple(game.escobas), last_capturer=game.last_capturer, pending=pending, options=options,
        scores=tuple(game.scores), events=())


def inferred_voids(game: kit.Game) -> dict[int, set[int]]:
    """Per other seat: card values it cannot be holding, from its trails this round
    (``arena.search.analysis.trail_voids`` says why)."""
    return trail_voids((p.seat, _core(p.table)) for p in game.played
                       if p.round == game.round and not p.take and p.seat != game.seat)


def other_plays(game: kit.Game, rules: Rules) -> Round | None:
    """The other seats' plays this round, to hold the sampled hands to
    (``arena.search.inference.other_plays``, from the kit's record of the plays)."""
    played = [Shown(p.seat, _CORE[p.card.text], _core(p.take), _core(p.table), p.round) for p in game.played]
    return inference.other_plays(played, game.seat, game.round, ([_CORE[c.text] for c in pile] for pile in game.piles), rules)


def _kind(c: kit.Card) -> tuple[int, int, int]:
    return (c.value, c.oro, c.seven)


def distinct_moves(legal: list[kit.Move], rules: Rules) -> list[kit.Move]:
    """The legal moves, keeping one of each set that differ only by copas/espadas/bastos.

    Those three suits score alike (unless sevens are counted by primera, which looks at
    every suit), so such moves lead to games that differ only by names: searching one of
    them is enough, and the budget goes to moves that really differ."""
    if rules.sevens == "primera":
        return list(legal)
    seen = set()
    out = []
    for m in legal:
        key = (m.kind, None if m.card is None else _kind(m.card), tuple(sorted(map(_kind, m.take))))
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


class Expert:
    """The expert policy with its settings: ``Expert(playouts=2000, ms=90)(game, request, rng)``:
    ``playouts`` is the budget, ``ms`` a cap on the CPU time of one search (see the module doc).

    Without ``playouts`` (None), on the arena's cpu clock (``request.clock``) the budget is CPU
    time instead: ``ms``, at most half the request's ``time_ms``, on its own CPU clock
    (``time.process_time``, which the arena's count of its CPU time matches), however many
    playouts that makes; on the wall clock it is DEFAULT_PLAYOUTS. Given ``playouts``, it is
    them on either clock (deterministic). ``timed=True`` budgets by time on the wall clock
    too, by wall time: what a bot that thinks "until its time is up" does, and what a loaded
    machine then takes from it (benchmarks/clocks.py). ``wary``: its own later moves in the
    playouts by ``arena.search.playout.wary_move`` (else greedy's); ``endgame``: the last
    round of a 2-player hand solved exactly (``arena.search.determinized.solve``). Both pay
    against greedy (benchmarks/RESULTS.md, "Bot strength") and are on by default. Off by
    default, as they did not pay beyond the noise: ``tree``, the rest of the round searched
    over its own moves (``arena.search.infoset``; ``split``: those moves chosen on other deals
    than they are valued on); ``extra``, playouts more for the two best moves while they are
    close; ``after``, the playouts' moves past the round's end (1: the first of the next); ``tail``, in
    the penultimate round the last one solved at the playouts' end (exact, but some fifteen playouts'
    CPU each: benchmarks/RESULTS.md)."""

    def __init__(self, ms: float = DEFAULT_MS, playouts: int | None = None, infer: bool = True,
                 horizon: int = 0, timed: bool = False, wary: bool = True,
                 endgame: bool = True, tree: bool = False, extra: int = 0, split: bool = False,
                 analyst: bool = False, after: int = 1, tail: bool = False) -> None:
        self.ms = ms
        self.playouts = playouts
        self.timed = timed
        self.infer = infer
        self.horizon = horizon
        self.wary = wary
        self.endgame = endgame
        self.tree = tree
        self.extra = extra
        self.split = split
        self.analyst = analyst
        self.after = after
        self.tail = tail
        self._cache: dict[Any, tuple[Rules, Seating]] = {}

    def _setup(self, game: kit.Game) -> tuple[Rules, Seating]:
        key = (repr(sorted(game.rules.items())), repr(game.teams), game.players)
        got = self._cache.get(key)
        if got is None:
            got = (Rules.from_dict(game.rules), Seating(game.players, tuple(tuple(t) for t in game.teams)))
            self._cache = {key: got}
        return got

    def __call__(self, game: kit.Game, request: kit.Request, rng: random.Random) -> kit.Move:
        legal = request.legal
        if len(legal) == 1:
            return legal[0]
        rules, seating = self._setup(game)
        view = seat_view(game, request, rules, seating)
        distinct = distinct_moves(legal, rules)
        if len(distinct) == 1:
            return distinct[0]
        candidates = [Move.parse(m.text) for m in distinct]
        voids = inferred_voids(game) if self.infer else None
        seen = other_plays(game, rules) if self.infer else None
        seed = Rng(rng.getrandbits(63))
        ranked = len(candidates) > MAX_CANDIDATES
        if ranked:
            keep = shortlist(view, candidates, seed)
            distinct, candidates = [distinct[i] for i in keep], [candidates[i] for i in keep]
        if self.analyst:
            # The analyst's judgement (arena analyze, arena/analysis/analyst.py) played: every
            # candidate on the same deals, ``playouts`` of them (default ANALYST_PLAYOUTS), no
            # halving and no cap, the trail voids and the other seat's plays this round as its evidence,
            # the last round against a greedy seat solved exactly.
            budget = ANALYST_PLAYOUTS if self.playouts is None else self.playouts
            values = move_values(view, candidates, seed, budget, voids, seen, wary=ANALYST_WARY, endgame=ANALYST_ENDGAME)
            return distinct[max(range(len(values)), key=values.__getitem__)]
        on_cpu = request.clock == "cpu"
        if self.timed or (on_cpu and self.playouts is None):
            budget = kit.Budget(request, 0.5) if request.time_ms else None
            seconds = min(self.ms / 1000, budget.seconds) if budget is not None else self.ms / 1000
            best, _, _ = search(view, candidates, seed, seconds, 0, voids, self.horizon, None, by_time=True,
                                clock=time.process_time if on_cpu else time.perf_counter, ranked=ranked,
                                seen=seen, wary=self.wary, endgame=self.endgame)
            return distinct[best]
        # Against the arena's deadline only: half its time is far more than the search needs.
        wall_s = request.time_ms * 0.5 / 1000 if request.time_ms else None
        playouts = DEFAULT_PLAYOUTS if self.playouts is None else self.playouts
        best, _, _ = search(view, candidates, seed, self.ms / 1000, playouts, voids, self.horizon, wall_s,
                            ranked=ranked, seen=seen, wary=self.wary, endgame=self.endgame, tree=self.tree,
                            extra=self.extra, split=self.split, after=self.after, tail=self.tail)
        return distinct[best]


choose = Expert()


def main(argv: Sequence[str]) -> None:
    ms, timed, analyst = DEFAULT_MS, False, False
    playouts: int | None = None
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--ms" and args:
            ms = float(args.pop(0))
        elif flag == "--playouts" and args:
            playouts = int(args.pop(0))
        elif flag == "--timed":
            timed = True
        elif flag == "--analyst":
            analyst = True
        else:
            sys.exit(f"usage: expert_bot.py [--playouts N] [--ms CPU_MS] [--timed] [--analyst] "
                     f"(unknown argument {flag!r})")
    kit.run(Expert(ms, playouts, timed=timed, analyst=analyst), name="analyst" if analyst else "expert")


if __name__ == "__main__":
    main(sys.argv[1:])
