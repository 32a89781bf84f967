"""The bot kit and the bundled Python policies, in-process through the rules core.

Every policy must return one of the legal moves itself (the kit's fallback is switched off
here), in every table shape and under the rule options that change the legal moves; the kit
must track exactly what the core knows (unseen cards, piles, escobas) at every decision.
"""

import io
import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the bots package lives at the repository root
    sys.path.insert(0, str(ROOT))

from arena.core.game import HandState, hand_view  # noqa: E402
from arena.core.rules import LastRoundEscoba, Rules, Seating  # noqa: E402
from arena.core.seeding import Rng  # noqa: E402
from arena.search import evaluation  # noqa: E402
from bots import expert_bot, greedy_bot, local, random_bot  # noqa: E402
from bots.kit import escoba_kit as kit  # noqa: E402

FAST_EXPERT = expert_bot.Expert(ms=10_000, playouts=12)  # the playout cap, not the clock, ends it

SEATINGS = {
    "2": Seating.alone(2),
    "3": Seating.alone(3),
    "4": Seating.alone(4),
    "4 pairs": Seating.pairs(4),
    "6 in 3 pairs": Seating.pairs(6, 2),
    "6 in 2 teams of 3": Seating.pairs(6, 3),
}
RULES = {
    "default": Rules(),
    "forced_capture": Rules(forced_capture=True),
    "single_capture_priority": Rules(single_capture_priority=True),
    "renuncio": Rules(renuncio=True),
    "subset15": Rules(initial_table="subset15"),
    "variants": Rules(escoba_en_mano=True, last_round_escoba=LastRoundEscoba.NO, sevens="primera", all_sevens_bonus=True,
                      initial_table="sum15_or_30"),
}
POLICIES = {"random": random_bot.choose, "greedy": greedy_bot.choose, "expert": FAST_EXPERT}


def mixed(seating, rng_seed):
    """A policy per seat, every bundled one present."""
    names = list(POLICIES)
    random.Random(rng_seed).shuffle(names)
    return [POLICIES[names[s % len(names)]] for s in range(seating.players)]


@pytest.mark.parametrize("shape", list(SEATINGS))
def test_policies_play_legal_moves_in_every_table_shape(shape):
    seating = SEATINGS[shape]
    for seed in range(3):
        outcome = local.play_hand(mixed(seating, seed), Rules(), seating, seed % seating.players, 100 + seed,
                                  check=True)
        assert outcome.state.is_over
        assert sum(len(p) for p in outcome.state.piles) + len(outcome.state.table) == 40


@pytest.mark.parametrize("rule", list(RULES))
def test_policies_play_legal_moves_under_rule_options(rule):
    rules = RULES[rule]
    phases: dict[str, int] = {}
    wanted = {"renuncio": "claim", "subset15": "take"}.get(rule)
    for seed in range(40):
        seating = Seating.alone(2) if seed % 2 else Seating.pairs(4)
        if seed >= 4 and (wanted is None or phases.get(wanted)):
            break
        outcome = local.play_hand(mixed(seating, seed), rules, seating, seed % seating.players, 500 + seed,
                                  check=True)
        for seat_phases in outcome.phases:
            for phase, n in seat_phases.items():
                phases[phase] = phases.get(phase, 0) + n
    if rule == "renuncio":
        assert phases.get("claim", 0) > 0, "no renuncio decision came up: pick other seeds"
    if rule == "subset15":
        assert phases.get("take", 0) > 0, "no initial-table choice came up: pick other seeds"


def test_each_policy_alone_under_claims_and_takes():
    # Each policy meets claim and take decisions itself (against random, which trails
    # capturing cards and so gives renuncio chances), in either seat.
    rules = Rules(renuncio=True, initial_table="subset15")
    for name, policy in POLICIES.items():
        seen: dict[str, int] = {}
        for seed in range(60):
            seat = seed % 2
            policies = [random_bot.choose, random_bot.choose]
            policies[seat] = policy
            outcome = local.play_hand(policies, rules, Seating.alone(2), seed // 2 % 2, 900 + seed, check=True)
            for phase, n in outcome.phases[seat].items():
                seen[phase] = seen.get(phase, 0) + n
            if seen.get("claim") and seen.get("take"):
                break
        assert seen.get("claim") and seen.get("take"), (name, seen)


def test_a_whole_match_in_pairs_and_with_three():
    for seating in (Seating.pairs(4), Seating.alone(3)):
        policies = [greedy_bot.choose, random_bot.choose, greedy_bot.choose, random_bot.choose][:seating.players]
        outcome = local.play_match(policies, Rules(target=11), seating, seed=3, check=True)
        assert outcome.state.result is not None


def test_a_policy_that_raises_fails_an_in_process_run_instead_of_playing_the_first_legal_move():
    class Broken(Exception):
        pass

    def broken(game, request, rng):
        if game.round == 2:
            raise Broken("a bug in round 2")
        return greedy_bot.choose(game, request, rng)

    with pytest.raises(Broken):
        local.play_hand([broken, greedy_bot.choose], Rules(), Seating.alone(2), 0, 5)


def test_an_in_process_seat_against_bot_processes_raises_what_its_policy_raises():
    def broken(game, request, rng):
        raise ZeroDivisionError("a bug")

    player = local.KitPlayer(broken, "broken")  # the in-process seat strength.py sets against a bot process
    player.send_hello(local.hello(Seating.alone(2), Rules(), 0))
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, 5, events=[])
    for event in state.events:
        if event.audience in (None, 0):
            player.queue(json.dumps({"type": "event", "event": event.to_dict()}).encode())
    with pytest.raises(ZeroDivisionError):
        player.decide(local._view(state, 0, 0, [0, 0]), [str(m) for m in state.legal_moves()], 1000, 0)


def test_same_seeds_same_hand():
    def run():
        seating = Seating.alone(2)
        out = local.play_hand([FAST_EXPERT, random_bot.choose], Rules(), seating, 0, 77)
        return [e.to_dict() for e in out.state.events]

    assert run() == run()


# --- the greedy ordering -------------------------------------------------------------------


def decide_greedy(table, hand, legal_texts, unseen_values=None):
    legal = [kit.parse_move(t) for t in legal_texts]
    values = unseen_values if unseen_values is not None else [0] + [4] * 10
    return greedy_bot.best_move(legal, kit.cards(table.split()), values).text


def core_legal(table: str, hand: str, rules: Rules = Rules()) -> list[str]:
    """The legal moves the core lists for seat 0 holding ``hand`` with ``table`` showing."""
    from arena.core.cards import DECK, parse_cards

    hand_cards, table_cards = list(parse_cards(hand)), list(parse_cards(table))
    rest = [c for c in DECK if c not in hand_cards and c not in table_cards]
    # Dealer 1 deals seat 0 first: seat 0's 3 cards, seat 1's 3 cards, then the 4 table cards.
    deck = hand_cards + rest[:3] + table_cards + rest[3:]
    state = HandState.deal(Rules.from_dict({**rules.to_dict(), "initial_table": "none"}), Seating.alone(2), 1, deck)
    return [str(m) for m in state.legal_moves()]


def test_greedy_prefers_escoba_then_velo_sevens_oros_cards():
    # An escoba (5b sweeps 2o 10e) beats taking the velo (7o+10e... here 7o+2o+6c is not there).
    assert decide_greedy("2o 10e", "", ["5b", "5b+2o+10e", "7o", "7o+10e"]) == "5b+2o+10e"
    # The velo (with a second seven) beats two oros and more cards.
    legal = ["7c", "7c+1c+7o", "5o", "5o+12b", "5o+2o+10e"]
    assert decide_greedy("1c 2o 7o 10e 12b", "", legal) == "7c+1c+7o"
    # No velo on offer: two sevens beat two oros.
    legal = ["7e", "7e+1b+7b", "5o", "5o+2e+10o"]
    assert decide_greedy("1b 2e 7b 10o", "", legal) == "7e+1b+7b"
    # Oros before card count: 5o+2o+10e (3 oros... 2 of them taken) over five cards without an oro.
    legal = ["5o", "5o+2o+10e", "1c", "1c+2b+3e+4c+5e"]
    assert decide_greedy("2o 10e 2b 4c 5e 3e", "", legal) == "5o+2o+10e"
    # Equal on everything above: the most cards.
    legal = ["5c", "5c+12b", "5c+4b+6c"]
    assert decide_greedy("4b 6c 12b 1e", "", legal) == "5c+4b+6c"


def test_greedy_trails_where_the_table_is_hardest_to_sweep():
    # Table 4 (2e+2b). Trailing 11c makes 13 (a 2 sweeps: 4 unseen), 12c makes 14 (a 1 sweeps:
    # 0 unseen in this count) and 1c makes 5 (a 10 sweeps).
    values = [0, 0, 4, 4, 4, 4, 4, 4, 4, 4, 4]
    assert decide_greedy("2e 2b", "", ["1c", "11c", "12c"], values) == "12c"
    # Same risk: keep the valuable cards; the velo is never given away by choice.
    values = [0] * 11
    assert decide_greedy("1e", "", ["7o", "7c", "3o", "3c"], values) == "3c"


def test_greedy_claims_a_renuncio_and_takes_the_best_initial_capture():
    legal = ["renuncio 5e+12b", "renuncio 5e+4c+6c", "pass"]
    assert decide_greedy("4c 5e 6c 12b", "", legal) == "renuncio 5e+4c+6c"
    legal = ["mesa 7o+10b", "mesa 3c+5c+7o"]
    assert decide_greedy("3c 5c 7o 10b", "", legal) == "mesa 3c+5c+7o"


def test_greedy_agrees_with_the_core_legal_moves():
    legal = core_legal("2o 4b 6c 10e", "5e 7o 12c")
    move = decide_greedy("2o 4b 6c 10e", "5e 7o 12c", legal)
    assert move in legal
    assert move.startswith("7o")  # the velo with 2o+6c: velo and two oros


# --- the kit -------------------------------------------------------------------------------


def test_kit_cards_and_moves_parse_and_print():
    assert str(kit.card("12c")) == "12c" and kit.card("10E").value == 8
    assert kit.card("7o").is_velo and kit.card("7o") is kit.card("7o")
    with pytest.raises(ValueError):
        kit.card("8o")
    m = kit.parse_move("5e+6o+4b")
    assert (m.kind, str(m.card), [str(c) for c in m.take]) == ("play", "5e", ["4b", "6o"])
    assert [str(c) for c in m.captured] == ["5e", "4b", "6o"]
    assert kit.parse_move("5e").is_trail and not kit.parse_move("5e").captured
    claim = kit.parse_move("renuncio 5e+10b")
    assert claim.kind == "claim" and claim.is_capture and [str(c) for c in claim.captured] == ["5e", "10b"]
    assert kit.parse_move("pass").kind == "pass"
    assert [str(c) for c in kit.parse_move("mesa 3b+12c").take] == ["3b", "12c"]


def test_kit_captures_agree_with_the_core():
    from arena.core.cards import Card
    from arena.core.game import captures_for

    rng = random.Random(5)
    for _ in range(300):
        cards = rng.sample(kit.DECK, 7)
        played, table = cards[0], cards[1:]
        ours = sorted(tuple(str(c) for c in t) for t in kit.captures(played, table))
        core = sorted(tuple(str(c) for c in t)
                      for t in captures_for(Card.parse(played.text), [Card.parse(c.text) for c in table]))
        assert ours == core


def test_kit_tracks_unseen_cards_like_the_core():
    # check=True compares unseen cards, piles, escobas and the round with the core at every
    # decision of every seat, over many hands and shapes, with escobas and sweeps.
    for seed in range(30):
        seating = list(SEATINGS.values())[seed % len(SEATINGS)]
        rules = list(RULES.values())[seed % len(RULES)]
        policies = [random_bot.choose if (seed + s) % 2 else greedy_bot.choose for s in range(seating.players)]
        local.play_hand(policies, rules, seating, seed % seating.players, 3000 + seed, check=True)


def test_kit_unseen_at_the_start_of_a_hand():
    state = HandState.shuffled(Rules(initial_table="none"), Seating.alone(2), 0, 11, events=[])
    game = kit.Game()
    game.start(local.hello(Seating.alone(2), Rules(), seat=1))
    for e in state.events:
        if e.audience in (None, 1):
            game.on_event(e.to_dict())
    assert len(game.unseen()) == 40 - 3 - 4
    assert set(map(str, game.unseen())) == set(map(str, hand_view(state, 1, [0, 0], ()).unseen))
    assert sum(game.unseen_values()) == 33


def converse(lines, policy, seed=0):
    out, err = io.StringIO(), io.StringIO()
    kit.run(policy, name="t", seed=seed, stdin=io.StringIO("".join(json.dumps(x) + "\n" for x in lines)),
            stdout=out, stderr=err)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


HELLO = local.hello(Seating.alone(2), Rules(), seat=1)
REQUEST = {"type": "request", "id": 7, "time_ms": 2000, "bank_ms": 0,
           "view": {"seat": 1, "side": 1, "hand_number": 0, "dealer": 1, "hand": ["7o", "12c", "4b"],
                    "table": ["2o", "3b", "5c", "10e"], "stock": 30, "hand_sizes": [3, 3], "scores": [0, 0]},
           "legal": ["4b", "4b+3b+10e", "7o", "7o+3b+5c", "7o+10e", "12c", "12c+2o+3b", "12c+5c"]}


def test_kit_loop_answers_hello_and_requests_and_stops_at_goodbye():
    lines = [HELLO, {"type": "event", "event": {"type": "deal", "hand": 0, "round": 0, "dealer": 1,
                                                 "table": ["2o", "3b", "5c", "10e"], "stock": 30}},
             {"type": "event", "event": {"type": "cards", "seat": 1, "cards": ["4b", "7o", "12c"]}},
             {"type": "some_future_message"}, REQUEST,
             {"type": "match_over", "winner": 0, "scores": [21, 3], "reason": "target", "termination": "ok"},
             {"type": "goodbye"}, REQUEST]
    replies, err = converse(lines, greedy_bot.choose)
    assert replies[0] == {"type": "ready", "name": "t", "protocol": 1}
    assert replies[1] == {"type": "move", "id": 7, "move": "7o+3b+5c"}
    assert len(replies) == 2  # nothing after goodbye
    assert err == ""


def test_kit_game_records_the_result_and_logs_timeouts():
    game = kit.Game()
    game.start(HELLO)
    game.on_match_over({"type": "match_over", "winner": 1, "scores": [9, 21], "reason": "target"})
    assert game.over and game.result["winner"] == 1 and game.scores == [9, 21]
    _, err = converse([HELLO, {"type": "timeout", "id": 3, "move": "4b"}], greedy_bot.choose)
    assert "timed out" in err and "'4b'" in err


def test_kit_loop_survives_a_broken_policy():
    def broken(game, request, rng):
        raise RuntimeError("boom")

    def wrong(game, request, rng):
        return "1o+1c"

    replies, err = converse([HELLO, REQUEST], broken)
    assert replies[1]["move"] == "4b" and "boom" in err
    replies, err = converse([HELLO, REQUEST], wrong)
    assert replies[1]["move"] == "4b" and "not a legal move" in err
    # A move named in another order, or as text, is accepted.
    replies, _ = converse([HELLO, REQUEST], lambda g, r, rng: "7o+5c+3b")
    assert replies[1]["move"] == "7o+3b+5c"


def test_kit_corrects_itself_from_the_view():
    # No events at all: the view alone must give the policy the right hand and table.
    seen = {}

    def spy(game, request, rng):
        seen["hand"] = [str(c) for c in game.hand]
        seen["table"] = [str(c) for c in game.table]
        return request.legal[0]

    _, err = converse([HELLO, REQUEST], spy)
    assert seen == {"hand": ["4b", "7o", "12c"], "table": ["2o", "3b", "5c", "10e"]}
    assert "tracked" in err  # the drift is reported on stderr


# --- the expert ----------------------------------------------------------------------------


def test_expert_takes_an_obvious_escoba():
    from arena.core.cards import DECK, parse_cards

    # Dealer 1: seat 0 is dealt 3b 12o 6c, seat 1 three others, then the table 1b 1c 2o 10e (12).
    hand, table = list(parse_cards("3b 12o 6c")), list(parse_cards("1b 1c 2o 10e"))
    rest = [c for c in DECK if c not in hand and c not in table]
    deck = hand + rest[:3] + table + rest[3:]
    state = HandState.deal(Rules(initial_table="none"), Seating.alone(2), 1, deck, events=[])
    view = hand_view(state, 0, [0, 0], ())
    legal = state.legal_moves()
    best, totals, deals = expert_bot.search(view, legal, Rng(1), 5.0, 60)
    assert str(legal[best]) == "3b+1c+1b+2o+10e"


def test_capturing_values_and_constrained_deals():
    # Subsets of 2o 10e add to 2, 8 or 10: a 7 or a 5 could have taken something.
    assert expert_bot.capturing_values(kit.cards(["2o", "10e"])) == {5, 7}
    assert expert_bot.capturing_values([]) == set()
    assert expert_bot.capturing_values(kit.cards(["1o"])) == set()  # nothing adds to 15 with a 1
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, 4, events=[])
    view = hand_view(state, 1, [0, 0], ())
    rng = Rng(3)
    for _ in range(50):
        world = HandState.determinize(view, rng)
        expert_bot.constrain(world, {0: {1, 2, 3, 4, 5}}, rng)
        assert all(c.value > 5 for c in world.hands[0])
        held = world.hands[0] + world.hands[1] + list(world.table) + list(world.stock)
        assert sorted(c.index for c in held) == list(range(40))
        assert world.hands[1] == state.hands[1] and world.table == state.table


def test_expert_estimate_is_a_margin():
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, 9, events=[])
    # A margin for one side is the opposite of the other's (to the rounding of the odds).
    assert expert_bot.estimate(state, 0) == pytest.approx(-expert_bot.estimate(state, 1), abs=1e-12)


def test_majority_odds_are_exact_at_the_bounds_and_ties():
    for table, size in ((evaluation._CARDS, 40), (evaluation._OROS, 10), (evaluation._SEVENS, 4)):
        for r in range(size + 1):
            for d in range(-40, 41):
                odds = table[r][d + 40]
                assert odds == pytest.approx(-table[r][40 - d], abs=1e-12)  # the same for either side
                if abs(d) > r:  # a lead the cards left cannot undo
                    assert odds == pytest.approx(1.0 if d > 0 else -1.0)
        assert table[0][40] == 0  # an even split scores nobody


def test_majority_odds_card_by_card_are_the_binomial_and_lumps_make_a_lead_less_safe():
    by_card = evaluation._edge_table(4, 1.0)
    # 3 cards left, one ahead: behind with none of them (1/8), ahead with two or three (4/8).
    assert by_card[3][40 + 1] == pytest.approx(4 / 8 - 1 / 8)
    lumpy = evaluation._edge_table(40, 4.5)
    by_card = evaluation._edge_table(40, 1.0)
    for r, d in ((25, 3), (31, 5), (10, 2), (3, 1)):
        assert 0 < lumpy[r][40 + d] < by_card[r][40 + d]


def test_majority_odds_fit_greedy_play_better_than_sharing_card_by_card():
    # Where playouts stop (one move into a new round), the odds of each majority against how
    # the hand really ends when greedy players play on: the fitted lumps must be closer.
    by_card = {"cards": evaluation._edge_table(40, 1.0), "oros": evaluation._edge_table(10, 1.0),
               "sevens": evaluation._edge_table(4, 1.0)}
    fitted = {"cards": evaluation._CARDS, "oros": evaluation._OROS, "sevens": evaluation._SEVENS}
    errors = {"by card": dict.fromkeys(fitted, 0.0), "fitted": dict.fromkeys(fitted, 0.0)}
    for seed in range(300):
        state = HandState.shuffled(Rules(), Seating.alone(2), seed % 2, 5000 + seed)
        stops = []
        while True:
            expert_bot.playout(state, state.round)
            if state.is_over:
                break
            counts = {}
            for kind, total, has in (("cards", 40, lambda c: 1), ("oros", 10, lambda c: c.oro),
                                     ("sevens", 4, lambda c: c.seven)):
                mine, theirs = (sum(map(has, pile)) for pile in state.piles)
                counts[kind] = (total - mine - theirs, mine - theirs)
            stops.append(counts)
        won = {k: state.breakdown[0][k] - state.breakdown[1][k] for k in fitted}
        for counts in stops:
            for kind, (left, lead) in counts.items():
                errors["by card"][kind] += (by_card[kind][left][lead + 40] - won[kind]) ** 2
                errors["fitted"][kind] += (fitted[kind][left][lead + 40] - won[kind]) ** 2
    for kind in fitted:
        assert errors["fitted"][kind] < errors["by card"][kind], kind


def test_greedy_playout_plays_exactly_like_the_greedy_bot():
    # The expert's model of a greedy player, on the core's objects, against the real thing
    # through the kit: the same games move for move.
    for rules in (Rules(), Rules(renuncio=True, initial_table="subset15", forced_capture=True)):
        for seed in range(25):
            state = HandState.shuffled(rules, Seating.alone(2), seed % 2, seed, events=[])
            expert_bot.playout(state)
            real = local.play_hand([greedy_bot.choose] * 2, rules, Seating.alone(2), seed % 2, seed)
            assert [e.to_dict() for e in state.events] == [e.to_dict() for e in real.state.events]


def test_distinct_moves_merge_suits_that_score_alike():
    legal = [kit.parse_move(t) for t in ["4c", "4e", "4o", "5c+10e", "5c+10b", "5c+10o", "7e", "7b"]]
    texts = [m.text for m in expert_bot.distinct_moves(legal, Rules())]
    assert texts == ["4c", "4o", "5c+10e", "5c+10o", "7e"]
    assert len(expert_bot.distinct_moves(legal, Rules(sevens="primera"))) == len(legal)


def test_strength_script_reports_points_win_rate_and_times(capsys, benchmark_script):
    strength = benchmark_script("strength")
    assert strength.main(["greedy", "random", "--deals", "6", "--matches", "1", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("arena: ") and ("compiled: " in out or "(pure Python)" in out)  # which build it timed
    assert "points per hand (greedy minus random) over 6 duplicate deals (12 hands)" in out
    assert "match win rate of greedy" in out and "over 2 matches" in out
    assert "time per move, greedy" in out and "time per move, random" in out
    assert strength.main(["greedy", "nobody", "--deals", "1"]) == 2
    mean, low, high = strength.mean_interval([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and low < 2.5 < high and abs((high - low) / 2 - 1.96 * (5 / 3 / 4) ** 0.5) < 1e-9


def test_strength_compares_a_bot_process_with_an_in_process_bot(capsys, benchmark_script):
    """The same policy as a process and in-process plays the same moves: every duplicate deal
    is a tie; against random it is ahead, and the process is named in the failures line."""
    import sys
    from pathlib import Path

    strength = benchmark_script("strength")
    greedy = f"cmd:{sys.executable} {Path(__file__).resolve().parents[2] / 'bots' / 'greedy_bot.py'}"
    assert strength.main([greedy, "greedy", "--deals", "8", "--matches", "0", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert f"points per hand ({greedy} minus greedy) over 8 duplicate deals (16 hands): +0.000" in out
    assert "bot failures: 0" in out
    assert strength.main(["random", greedy, "--deals", "8", "--matches", "0", "--seed", "4"]) == 0
    mean = float(capsys.readouterr().out.split(" minus ")[1].split(": ")[1].split()[0])
    assert mean < 0  # random is behind greedy


def test_kit_rng_follows_the_seed_in_hello():
    def draw(game, request, rng):
        return request.legal[rng.randrange(len(request.legal))]

    def moves(seed):
        hello = dict(HELLO, seed=seed)
        replies, _ = converse([hello] + [dict(REQUEST, id=i) for i in range(1, 30)], draw)
        return [r["move"] for r in replies[1:]]

    assert moves(11) == moves(11)
    assert moves(11) != moves(12)


@pytest.mark.parametrize("late, in_last_round", [
    (True, (True, True, True)), (False, (False, False, False)), ("last_card", (True, False, True)),
])
def test_the_kit_says_whether_a_sweep_scores_under_last_round_escoba(late, in_last_round):
    game = kit.Game()
    game.start(local.hello(Seating.alone(2), Rules.from_dict({"last_round_escoba": late}), seat=0))
    assert game.rules["last_round_escoba"] == late
    sweep, claim = kit.parse_move("5o+2c+10e"), kit.parse_move("renuncio 5o+2c+10e")
    game.hand, game.stock = kit.cards(["5o", "1c"]), 6
    assert game.sweep_scores(sweep) and game.sweep_scores(claim)  # an earlier round: always
    game.stock = 0
    with_cards_left = game.sweep_scores(sweep)
    game.hand = kit.cards(["5o"])
    assert (with_cards_left, game.sweep_scores(sweep), game.sweep_scores(claim)) == in_last_round
