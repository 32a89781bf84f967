"""The search's fast deals (arena/search/dealing.py): whole positions of the seat's view, the
other seat's hand uniform over the hands that fit what it showed, drawn from all of them when
they are rare."""

from __future__ import annotations

from collections import Counter

from arena.core.cards import DECK, Card
from arena.core.game import HandState, hand_view
from arena.core.rules import Rules, Seating
from arena.core.seeding import Rng
from arena.search.dealing import Dealer
from arena.search.determinized import fast_view
from arena.search.inference import Decision, Round


def _cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def _after_a_trail() -> tuple[HandState, Round]:
    """Seat 1 has trailed 1e onto 3o 4c (leaving 8: any 7 sweeps it); seat 0 is to play."""
    hands = [_cards("5c 6b 12o"), _cards("1e 2e 11c")]
    table = _cards("3o 4c")
    used = {*hands[0], *hands[1], *table}
    rest = [c for c in DECK if c not in used]
    # 18 cards in the stock, the others already in a pile: 20 unseen once seat 1 has played,
    # 190 hands of two, few enough to be worked out one by one (MAX_POOL).
    state = HandState.position(Rules(), Seating.alone(2), hands=hands, table=table, stock=rest[:18],
                               piles=[rest[18:], []], dealer=0, turn=1, round=3)
    play = Decision(1, Card.parse("1e"), (), _cards("3o 4c"), [0] * 11, Rules())
    state.apply(state.legal_moves()[[str(m) for m in state.legal_moves()].index("1e")])
    return state, Round([play])


def _view(state: HandState):
    return fast_view(hand_view(state, state.turn, [0, 0], ()))


def test_a_deal_is_the_seats_view_with_the_unseen_cards_dealt():
    state = HandState.shuffled(Rules(), Seating.alone(2), 0, 3, events=[])
    state.apply(state.legal_moves()[0])
    view = _view(state)
    dealer = Dealer(view, Rng(1), None, None, front=6)
    for _ in range(50):
        world = dealer.deal()
        assert sorted(c.index for c in world.deck) == list(range(40))
        assert world.hands[view.seat] == list(view.hand)
        assert world.table == list(view.table)
        assert [len(h) for h in world.hands] == list(view.hand_sizes)
        assert world.stock_count == view.stock_count
        held = set(world.hands[1 - view.seat]) | set(world.stock)
        assert held == set(view.unseen)
        assert world.legal_moves() == state.legal_moves()


def test_the_other_hand_always_explains_its_plays_and_every_hand_that_does_is_dealt_alike():
    state, seen = _after_a_trail()
    view = _view(state)
    dealer = Dealer(view, Rng(2), None, seen, front=6)
    counts: Counter[frozenset[Card]] = Counter()
    for _ in range(6000):
        world = dealer.deal()
        hand = world.hands[1]
        assert seen.consistent([world.hands[0], hand])
        counts[frozenset(hand)] += 1
    fitting = {frozenset(h) for h in dealer._pool()}
    assert set(counts) == fitting
    expected = 6000 / len(fitting)
    assert all(abs(n - expected) < 5 * expected ** 0.5 for n in counts.values())


def test_a_rare_hand_is_drawn_from_all_that_fit_after_the_misses():
    state, seen = _after_a_trail()
    view = _view(state)
    # Voids of every value but the 1s and the 7s: few of the hands left fit.
    voids = {1: set(range(1, 11)) - {1, 7}}
    rng = Rng(4)
    dealer = Dealer(view, rng, voids, seen, front=6)
    hands = {frozenset(dealer.deal().hands[1]) for _ in range(300)}
    assert dealer.pool is not None and len(dealer.pool) < 190  # TRIES misses happened, the pool was worked out
    assert hands == {frozenset(h) for h in dealer.pool}
    assert all(c.value in (1, 7) for h in hands for c in h)
