"""Standings of tournaments with three or four sides: places, honest counts, the model, JSON keys."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from arena.core.rules import Seating
from arena.harness.protocol import Termination
from arena.rating.table import DEFAULT_PRIOR, MatchResult, Model, PairResult, Status, fit_ratings
from arena.render.standings import (
    STANDINGS_HEADERS,
    format_standings,
    places_header,
    standings_headers,
    standings_rows,
)
from arena.tournament.standings import compute_standings, match_places, match_result
from arena.tournament.store import MatchRow


def _row(k: int, seats: tuple[str, ...], scores: tuple[int, ...], winner: int | None, *, reason: str = "target",
         terminations: tuple[str, ...] | None = None, sides: tuple[str, ...] | None = None) -> MatchRow:
    n_sides = len(scores)
    return MatchRow(
        id=f"{k}.0", index=k, pairing=k, deal=0, rotation=0, seed=k, sides=sides or seats[:n_sides], seats=seats,
        winner=winner, scores=scores, reason=reason, terminations=terminations or ("ok",) * len(seats),
        escobas=(0,) * n_sides, hands=3,
    )


def _four_player_rows() -> list[MatchRow]:
    names = ("a", "b", "c", "d")
    rows = []
    orders = [(21, 15, 9, 3), (15, 21, 3, 9), (21, 9, 15, 3), (3, 9, 21, 15), (21, 15, 15, 3), (9, 21, 15, 3)]
    for k, scores in enumerate(orders):
        rot = names[k % 4:] + names[: k % 4]
        rows.append(_row(k, rot, scores, scores.index(max(scores))))
    return rows


def test_places_from_a_row():
    seating = Seating.alone(4)
    assert match_places(_row(0, ("a", "b", "c", "d"), (21, 15, 15, 3), 0), seating) == (1, 2, 2, 4)
    # A side that forfeited finishes behind the others whatever its points.
    forfeit = _row(1, ("a", "b", "c"), (30, 10, 21), 2, reason="forfeit",
                   terminations=(Termination.TIMEOUT, Termination.OK, Termination.OK))
    assert match_places(forfeit, Seating.alone(3)) == (3, 2, 1)
    assert match_result(forfeit, Seating.alone(3)) == MatchResult((("a",), ("b",), ("c",)), (3, 2, 1))
    two = _row(2, ("a", "b"), (9, 21), 1)
    assert match_result(two, Seating.alone(2)) == PairResult(("a",), ("b",), 0.0)


def test_four_player_standings_count_matches_and_places():
    rows = _four_player_rows()
    standings = compute_standings(rows, Seating.alone(4), ["a", "b", "c", "d"])
    assert standings.sides == 4 and standings.model is Model.PLACKETT_LUCE and standings.prior == DEFAULT_PRIOR
    for s in standings.bots:
        assert s.matches == 6  # every bot played all 6 matches, counted once each
        assert sum(s.places) == 6 and len(s.places) == 4
        assert (s.wins, s.draws, s.losses) == (0, 0, 0)
    # The fit is the joint Plackett-Luce fit of the rows' finishing orders.
    table = fit_ratings([match_result(r, Seating.alone(4)) for r in rows])
    for s in standings.bots:
        assert s.elo == pytest.approx(table[s.name].elo, abs=1e-9)
        assert s.places == table[s.name].places
    assert any(note.startswith("model: Plackett-Luce") for note in standings.notes)
    headers = standings_headers(standings)
    assert "1st-2nd-3rd-4th" in headers and "w-d-l" not in headers
    cell = standings_rows(standings)[0][headers.index("1st-2nd-3rd-4th")]
    assert cell == "-".join(map(str, standings.bots[0].places))
    data = json.loads(format_standings(standings, "json"))
    assert all("places" in row and "wins" not in row and "losses" not in row for row in data)
    assert data[0]["places"] == list(standings.bots[0].places)
    text = format_standings(standings, "plain", wide=True)
    assert "1st-2nd-3rd-4th" in text and "Note: model: Plackett-Luce" in text


def test_three_teams_of_two():
    seating = Seating.pairs(players=6, team_size=2)
    rows = []
    for k, (seats, scores) in enumerate([
        (("a", "b", "c", "d", "e", "f"), (21, 10, 5)),
        (("a", "c", "e", "b", "d", "f"), (9, 21, 12)),
        (("b", "a", "d", "c", "f", "e"), (4, 8, 21)),
        (("f", "e", "a", "d", "c", "b"), (21, 12, 3)),
    ]):
        rows.append(_row(k, seats, scores, scores.index(max(scores)), sides=("s0", "s1", "s2")))
    standings = compute_standings(rows, seating, list("abcdef"), by_bot_crosstable=True)
    assert standings_headers(standings)[STANDINGS_HEADERS.index("w-d-l")] == "1st-2nd-3rd"
    assert all(s.matches == 4 and sum(s.places) == 4 for s in standings.bots)
    assert all(s.status == Status.RATED.value for s in standings.bots)


def test_two_sided_standings_keep_their_keys():
    rows = [_row(k, ("a", "b") if k % 2 else ("b", "a"), (21, 9) if k < 3 else (9, 21), 0 if k < 3 else 1) for k in range(4)]
    standings = compute_standings(rows, Seating.alone(2), ["a", "b"])
    assert standings_headers(standings) == STANDINGS_HEADERS
    data = json.loads(format_standings(standings, "json"))
    assert {"wins", "draws", "losses"} <= set(data[0]) and "places" not in data[0]
    assert [n for n in standings.notes if n.startswith("model:")] == [f"model: {Model.BRADLEY_TERRY.description}"]
    plain = compute_standings(rows, Seating.alone(2), ["a", "b"], prior=0)
    assert plain.prior == 0.0 and not any(note.startswith("prior:") for note in plain.notes)


def test_equal_ratings_are_ranked_by_points_difference_with_a_note():
    # zed and amy split their games and both beat low twice: equal ratings; zed scored more.
    seating = Seating.alone(2)
    games = [(("zed", "amy"), (21, 20), 0), (("amy", "zed"), (21, 3), 0), (("zed", "low"), (21, 0), 0),
             (("low", "zed"), (0, 21), 1), (("amy", "low"), (21, 19), 0), (("low", "amy"), (19, 21), 1)]
    rows = [_row(k, seats, scores, winner) for k, (seats, scores, winner) in enumerate(games)]
    standings = compute_standings(rows, seating, ["amy", "low", "zed"])
    top = standings.bots[:2]
    assert top[0].elo == pytest.approx(top[1].elo, abs=1e-9)
    assert [s.name for s in standings.bots] == ["zed", "amy", "low"]  # not the alphabetical amy, zed
    assert [s.rank for s in standings.bots] == [1, 2, 3]
    table = fit_ratings([match_result(r, seating) for r in rows])
    assert [r.name for r in table.ratings] == ["amy", "zed", "low"]  # the fit alone: by name
    assert top[0].los_next == pytest.approx(0.5)
    assert standings.bots[1].los_next == pytest.approx(table.los("amy", "low"))
    assert "zed, amy have equal ratings: ranked by points difference per match, then name" in standings.notes


@pytest.mark.parametrize("sides", [2, 3, 4])
@pytest.mark.parametrize("names", [("escoba-go@2.0", "expert-v2", "java-greedy", "c-firstmove"),
                                   ("go@2.0.1", "expert-v2", "java-greedy", "c-firstmove")])
def test_the_default_standings_fit_100_columns_and_wide_has_every_column(sides: int, names: tuple[str, ...]):
    fails = len(names[0]) <= 10  # names of up to 10 characters beside failures of two kinds; 13 without
    rows = []
    for k in range(8):
        seats = (names[k % 4:] + names[:k % 4])[:sides]
        scores = (21, 15, 9, 3)[:sides]
        failures = (((0, Termination.TIMEOUT),) if k % 3 else ((0, Termination.CRASH),)) if fails else ()
        rows.append(replace(_row(k, seats, scores, 0), failures=failures))
    standings = compute_standings(rows, Seating.alone(sides), list(names))
    text = format_standings(standings, "plain")
    assert max(len(line) for line in text.splitlines()) <= 100, text
    assert "forfeits" not in text and "pts_against" not in text
    wide = format_standings(standings, "plain", wide=True)
    assert all(header in wide for header in ("forfeits", "opp_forfeits", "pts_for", "pts_against", "hands"))
    if sides > 2:
        assert "places" in text and places_header(sides) in wide
    if fails:  # the default names the commonest reason, --wide every one
        failing = next(s for s in standings.bots if len(s.failures) > 1)
        reason, n = max(failing.failures, key=lambda f: f[1])
        assert f"{reason} {n} +1" in text
        assert all(f"{reason} {n}" in wide for reason, n in failing.failures)
