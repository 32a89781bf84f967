"""Builders shared by the rules-core tests: decks in a chosen order, random playouts."""

from __future__ import annotations

from itertools import combinations

from arena.core.cards import DECK, Card, parse_cards
from arena.core.game import HandState
from arena.core.rules import Rules, Seating


def stacked_deck(hands: list[str], table: str, later: list[str] | None = None) -> list[Card]:
    """A deck dealt in this order: ``hands`` in deal order (from the seat after the dealer),
    then the table, then ``later`` rounds (each a list of hands in deal order flattened), then
    every other card in deck order."""
    first = [c for h in hands for c in parse_cards(h)] + list(parse_cards(table))
    for h in later or []:
        first += list(parse_cards(h))
    if len(set(first)) != len(first):
        raise ValueError("a card is stacked twice")
    return first + [c for c in DECK if c not in first]


def hand_from(hands: list[str], table: str, *, rules: Rules | None = None, players: int = 2,
              seating: Seating | None = None, dealer: int | None = None,
              later: list[str] | None = None) -> HandState:
    seating = seating or Seating.alone(players)
    n = seating.players
    dealer = n - 1 if dealer is None else dealer
    return HandState.deal(rules or Rules(), seating, dealer, stacked_deck(hands, table, later))


def brute_force_captures(card: Card, table: list[Card]) -> set[frozenset[Card]]:
    """Every subset of the table adding to 15 with ``card``: the slow, obviously right way."""
    found = set()
    for k in range(1, len(table) + 1):
        for subset in combinations(table, k):
            if card.value + sum(c.value for c in subset) == 15:
                found.add(frozenset(subset))
    return found
