"""The schedule: pairings, seats, duplicate deals and seeds, all pure and deterministic."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from math import comb

import pytest

from arena.core.seeding import derive_seed
from arena.tournament.config import ConfigError, parse_config
from arena.tournament.schedule import MAX_MATCHES, MatchSpec, build_schedule, pairings, schedule_size


def config(extra: str = "", bots: str = "abcd", **kw):
    lines = "\n".join(f"  - {{name: {b}, cmd: x}}" for b in bots)
    return parse_config(f"name: t\nseed: 99\n{extra}\nbots:\n{lines}\n", **kw)


def test_round_robin_two_players_with_duplicate_deals():
    c = config("matches_per_pairing: 4")
    sched = build_schedule(c)
    assert len(sched) == 6 * 4
    assert len({s.id for s in sched}) == len(sched)
    assert [s.index for s in sched] == list(range(len(sched)))
    pairs = Counter(frozenset(s.seats) for s in sched)
    assert set(pairs) == {frozenset(p) for p in combinations("abcd", 2)}
    assert set(pairs.values()) == {4}
    by_deal: dict[int, list[MatchSpec]] = {}
    for s in sched:
        by_deal.setdefault(s.deal, []).append(s)
    assert len(by_deal) == 12
    for deal, specs in by_deal.items():
        # The same deal from both seats: luck cancels.
        assert [s.rotation for s in specs] == [0, 1]
        assert specs[0].seats == tuple(reversed(specs[1].seats))
        assert {s.seed for s in specs} == {derive_seed(99, "deal", deal)}
    assert len({s.seed for s in sched}) == 12


def test_same_file_same_schedule_whatever_the_concurrency():
    assert build_schedule(config("concurrency: 1")) == build_schedule(config("concurrency: 8"))
    assert build_schedule(config()) != build_schedule(parse_config(
        "name: t\nseed: 100\nbots:\n" + "\n".join(f"  - {{name: {b}, cmd: x}}" for b in "abcd") + "\n"))


def test_double_round_robin_and_gauntlet():
    single = build_schedule(config())
    double = build_schedule(config("format: double_round_robin"))
    assert len(double) == 2 * len(single)
    gauntlet = build_schedule(config("format: gauntlet\nchallenger: c"))
    assert len(gauntlet) == 3 * 2
    assert all("c" in s.seats for s in gauntlet)
    assert Counter(s.seats[0] for s in gauntlet)["c"] == 3  # half the time in seat 0


def test_three_players_rotate_through_every_seat():
    c = config("players: 3", bots="abcd")
    sched = build_schedule(c)
    assert c.matches_per_pairing == 3
    assert len(sched) == 4 * 3  # C(4,3) tables, one deal each, three rotations
    for deal in {s.deal for s in sched}:
        specs = [s for s in sched if s.deal == deal]
        assert len(specs) == 3
        for seat in range(3):
            assert len({s.seats[seat] for s in specs}) == 3


def test_four_players_alone():
    sched = build_schedule(config("players: 4", bots="abcde"))
    assert len(sched) == 5 * 4
    assert all(len(set(s.seats)) == 4 for s in sched)


def test_without_duplicates_seats_still_alternate():
    sched = build_schedule(config("duplicate: false\nmatches_per_pairing: 3", bots="ab"))
    assert [s.seats for s in sched] == [("a", "b"), ("b", "a"), ("a", "b")]
    assert len({s.seed for s in sched}) == 3
    assert {s.rotation for s in sched} == {0}


def test_pairs_clones_sit_opposite_each_other():
    c = config("mode: pairs", bots="abc")
    sched = build_schedule(c)
    assert len(sched) == 3 * 2
    for s in sched:
        assert s.seats[0] == s.seats[2] and s.seats[1] == s.seats[3]
        assert s.sides == (s.seats[0], s.seats[1])


def test_pairs_rotating_partners_every_pair_partners_once():
    c = config("mode: pairs\nteams: rotating", bots="abcd")
    assert len(pairings(c)) == 3
    sched = build_schedule(c)
    partners = Counter()
    for s in sched:
        assert len(set(s.seats)) == 4
        partners[frozenset((s.seats[0], s.seats[2]))] += 1
        partners[frozenset((s.seats[1], s.seats[3]))] += 1
        assert s.sides[0] == "+".join(sorted((s.seats[0], s.seats[2]))) or "+" in s.sides[0]
    assert set(partners) == {frozenset(p) for p in combinations("abcd", 2)}
    assert set(partners.values()) == {2}


def test_pairs_rotating_with_five_bots_and_gauntlet():
    c = config("mode: pairs\nteams: rotating\nformat: gauntlet\nchallenger: e", bots="abcde")
    groups = pairings(c)
    assert len(groups) == 4 * 3  # C(4,3) companions for e, 3 splits each
    assert all(any("e" in side.members for side in g) for g in groups)


def test_pairs_fixed_teams_and_six_players():
    c = config(
        "mode: pairs\nplayers: 6\nteam_size: 3\nteams:\n"
        "  - {name: red, members: [a, b, c]}\n  - {name: blue, members: [d, e, f]}",
        bots="abcdef",
    )
    sched = build_schedule(c)
    assert len(sched) == 2
    first = sched[0]
    assert first.sides == ("red", "blue")
    assert (first.seats[0], first.seats[2], first.seats[4]) == ("a", "b", "c")
    assert (first.seats[1], first.seats[3], first.seats[5]) == ("d", "e", "f")
    assert sched[1].sides == ("blue", "red")


def test_pairs_three_teams_of_two():
    c = config("mode: pairs\nplayers: 6", bots="abc")
    sched = build_schedule(c)
    assert c.sides == 3 and len(sched) == 3
    for s in sched:
        assert s.seats[0] == s.seats[3] and s.seats[1] == s.seats[4] and s.seats[2] == s.seats[5]


def test_spec_round_trips_as_a_dict():
    for s in build_schedule(config("mode: pairs\nteams: rotating")):
        assert MatchSpec.from_dict(s.to_dict()) == s


def _shapes():
    """Many small tournaments: every mode, team mode and format, gauntlets, duplicates."""
    bots = "abcdefg"
    out = []
    for fmt in ("round_robin", "double_round_robin", "gauntlet"):
        gauntlet = "\nchallenger: a" if fmt == "gauntlet" else ""
        for players in (2, 3, 4):
            for n in range(players, 7):
                for mpp, dup in ((players, "true"), (2 * players, "true"), (1, "false"), (3, "false")):
                    out.append((f"players: {players}\nformat: {fmt}{gauntlet}\nmatches_per_pairing: {mpp}\nduplicate: {dup}",
                                bots[:n]))
        for players, size in ((4, 2), (6, 2), (6, 3)):
            sides = players // size
            for teams in ("clones", "rotating"):
                for n in range(sides if teams == "clones" else players, 8):
                    for mpp, dup in ((sides, "true"), (1, "false"), (2, "false")):
                        out.append((f"mode: pairs\nplayers: {players}\nteam_size: {size}\nteams: {teams}\n"
                                    f"format: {fmt}{gauntlet}\nmatches_per_pairing: {mpp}\nduplicate: {dup}", bots[:n]))
        for players, size, groups in ((4, 2, ("ab", "cd", "ef")), (6, 3, ("abc", "def", "g")), (6, 2, ("ab", "cd", "ef"))):
            members = [g for g in groups if len(g) == size]
            for k in range(players // size, len(members) + 1):
                teams = "".join(f"\n  - {{name: t{g}, members: [{', '.join(g)}]}}" for g in members[:k])
                fixed_gauntlet = f"\nchallenger: t{members[0]}" if gauntlet else ""
                out.append((f"mode: pairs\nplayers: {players}\nteam_size: {size}\nteams:{teams}\n"
                            f"format: {fmt}{fixed_gauntlet}", bots))
    return out


def test_the_closed_form_count_is_the_schedule_length():
    shapes = _shapes()
    assert len(shapes) > 300
    for extra, bots in shapes:
        c = config(extra, bots=bots)
        assert schedule_size(c) == len(build_schedule(c)), extra


def test_a_schedule_too_large_is_refused_with_its_size():
    forty = [f"b{i}" for i in range(40)]
    text = "name: t\nseed: 1\nplayers: 4\nmatches_per_pairing: 100000\nbots:\n" + "".join(
        f"  - {{name: {b}, cmd: x}}\n" for b in forty)
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert (info.value.line, info.value.key) == (4, "matches_per_pairing")
    assert f"the schedule would have {comb(40, 4) * 100000:,} matches; at most {MAX_MATCHES:,}" in str(info.value)
    # At the cap exactly, the file is valid (and not built here: counting is the point).
    cap = parse_config(text.replace("players: 4\nmatches_per_pairing: 100000", f"format: gauntlet\nchallenger: b0\n"
                                    f"duplicate: false\nmatches_per_pairing: {MAX_MATCHES // 39}"))
    assert schedule_size(cap) == 39 * (MAX_MATCHES // 39) <= MAX_MATCHES
