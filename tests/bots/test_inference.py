"""The other seats' plays as evidence (arena.search.inference): greedy's plays are always
explained by the hand it held, a random bot's seldom, and the search's deals then fit them."""

from __future__ import annotations

from arena.core.cards import Card
from arena.core.rules import Rules, Seating
from arena.search.inference import Decision, Round
from bots import expert_bot, greedy_bot, local, random_bot


def _cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def _watch(opponent, hands: int) -> tuple[int, int]:
    """(decisions, those where the opponent's shown rounds were not greedy's), over ``hands``."""
    seen = [0, 0]

    def spy(game, request, rng):
        seen[0] += 1
        seen[1] += expert_bot.other_plays(game, Rules.from_dict(game.rules)) is None
        return greedy_bot.choose(game, request, rng)

    for i in range(hands):
        local.play_hand([spy, opponent], Rules(), Seating.alone(2), i % 2, 500 + i, policy_seeds=[i, i + 1])
    return seen[0], seen[1]


def test_greedy_always_plays_as_its_hand_explains_and_random_seldom_does():
    decisions, unexplained = _watch(greedy_bot.choose, 20)
    assert decisions > 300 and unexplained == 0
    decisions, unexplained = _watch(random_bot.choose, 20)
    assert unexplained > decisions / 2


def test_a_trail_says_there_was_no_capture_and_nothing_safer_to_trail():
    # Table 3o 4c (7): trailing 1e leaves 8, open to any of the four 7s.
    play = Decision(1, Card.parse("1e"), (), _cards("3o 4c"), [0] * 11, Rules())
    assert play.greedy_would(_cards("1e 2b"))  # 2b would leave 9, as open (to the 6s), and is worth more
    assert not play.greedy_would(_cards("1e 12b"))  # 12b (worth 10) would leave 17: no sweep
    assert not play.greedy_would(_cards("1e 10c"))  # 10c (worth 8) takes 3o 4c
    assert Round([play]).consistent([[], _cards("2b")])
    assert not Round([play]).consistent([[], _cards("10c")])


def _plays(found: Round | None) -> list[tuple] | None:
    if found is None:
        return None
    return [(d.seat, str(d.card), sorted(map(str, d.take)), sorted(map(str, d.table)), d.public) for d in found.plays]


def test_the_analyst_reads_from_a_record_the_plays_the_expert_reads_from_its_kit():
    """One inference (arena.search.inference.other_plays), two readers of the same plays: the
    expert's from its kit's record of the game, the analyst's from the rules core's view that the
    verifier rebuilds from a match record. At every decision of seat 0 they agree."""
    from arena.match.referee import play_match
    from arena.match.replay import verify_decisions
    from arena.search.analysis import inferred_round
    from bots.local import KitPlayer

    expert_saw: list[list[tuple] | None] = []

    def spy(game, request, rng):
        expert_saw.append(_plays(expert_bot.other_plays(game, Rules.from_dict(game.rules))))
        return greedy_bot.choose(game, request, rng)

    explained = 0
    # A renuncio changes the table off the plays, and an escoba en mano fills a pile before any.
    for seed, options in ((3, {}), (8, {}), (3, {"renuncio": True}), (1, {"escoba_en_mano": True})):
        expert_saw.clear()
        record = play_match([KitPlayer(spy, "spy"), KitPlayer(greedy_bot.choose, "greedy", seed=1)],
                            Rules(target=11, **options), Seating.alone(2), seed)
        _, decisions = verify_decisions(record)
        analyst_saw = [_plays(inferred_round(d.view)) for d in decisions if d.view.seat == 0]
        assert analyst_saw == expert_saw
        explained += sum(1 for plays in analyst_saw if plays)
    assert explained > 20  # greedy's plays this round, read and explained, not only empty rounds
