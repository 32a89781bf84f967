"""Leagues: ``arena rate`` and ``arena report`` over several results folders and files.

The stores are real tournament stores (the real schedule, referee and store, with seeded
in-process bots standing in for the processes); identities and dates are written into their
meta as ``arena run`` records them.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sqlite3
from datetime import UTC
from pathlib import Path

import pytest
from league_helpers import _drop_meta, _identity, _set_meta, _store
from replay_helpers import make_store
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Rules, Seating
from arena.league.pools import Entry, GameKind, Tournament, assign_entries, open_league, rate_league
from arena.rating.inputs import read_results
from arena.rating.table import fit_ratings
from arena.tournament.export import Results, games_jsonl
from arena.tournament.identity import BotIdentity
from arena.tournament.store import LAST_MATCH_KEY, ResultStore

runner = CliRunner()


def _arena(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _games(folder: Path) -> list[str]:
    with ResultStore.open_existing(str(folder)) as store:
        return list(games_jsonl(Results.of(store)))


def _json(result) -> list[dict]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --------------------------------------------------------------------------- pooling


def test_pooling_two_tournaments_equals_rating_their_concatenated_games(tmp_path: Path):
    league = tmp_path / "league"
    spring = _store(league, "spring", seed=5, date="2026-03-01T10:00:00+00:00")
    summer = _store(league, "summer", bots=("ana", "luis", "pablo"), seed=9, date="2026-06-01T10:00:00+00:00")
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(_games(spring) + _games(summer)) + "\n")
    expected = fit_ratings(read_results(both))
    for args in ([league], [spring, summer], [summer, spring]):
        rows = {row["name"]: row for row in _json(_arena("rate", *args, "--format", "json"))}
        assert set(rows) == {"ana", "luis", "marta", "pablo"}
        for r in expected.ratings:
            got = rows[r.name]
            assert got["elo"] == pytest.approx(r.elo, abs=0.006)
            assert got["ci95"] == pytest.approx(r.ci95, abs=0.006)
            assert (got["matches"], got["wins"], got["draws"], got["losses"]) == (r.matches, r.wins, r.draws, r.losses)
            assert got["rank"] == r.rank and got["pool"] == 1
    # The same as `arena rate` on the concatenated export, column for column.
    alone = {row["name"]: row for row in _json(_arena("rate", both, "--format", "json"))}
    pooled = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    for name, row in alone.items():
        assert {k: pooled[name][k] for k in row} == row


def test_the_table_says_tournaments_and_when_each_bot_last_played(tmp_path: Path):
    league = tmp_path / "league"
    _store(league, "spring", date="2026-03-01T10:00:00+00:00")
    _store(league, "summer", bots=("ana", "luis", "pablo"), seed=9, date="2026-06-01T18:30:00+00:00")
    rows = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert (rows["ana"]["tournaments"], rows["ana"]["last_played"]) == (2, "2026-06-01T18:30:00+00:00")
    assert (rows["marta"]["tournaments"], rows["marta"]["last_played"]) == (1, "2026-03-01T10:00:00+00:00")
    assert (rows["pablo"]["tournaments"], rows["pablo"]["last_played"]) == (1, "2026-06-01T18:30:00+00:00")
    text = _arena("rate", league)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == "2 players alone, standard rules; target 21 · 2 tournaments, 24 matches"
    header = lines[2].split()
    assert header[:9] == ["rank", "bot", "elo", "ci95", "los_next", "matches", "w-d-l", "tournaments", "last_played"]
    marta = next(line for line in lines if " marta " in line).split()
    assert marta[-2:] == ["1", "2026-03-01"]
    # The tournaments, in date order, with their dates.
    assert "Tournaments (date order):" in text.stdout
    spring_line = next(line for line in lines if str(league / "spring") in line)
    assert spring_line.split()[:3] == ["1", "2026-03-01", "10:00"]
    table = list(csv.DictReader(io.StringIO(_arena("rate", league, "--format", "csv").stdout)))
    assert list(table[0])[:12] == ["rank", "name", "elo", "ci95", "los_next", "group", "matches", "wins", "draws",
                                   "losses", "tournaments", "last_played"]
    assert {row["name"]: row["tournaments"] for row in table} == {"ana": "2", "luis": "2", "marta": "1", "pablo": "1"}


def test_a_store_records_when_its_last_match_was_stored(tmp_path: Path):
    folder = Path(make_store(tmp_path / "t", matches=2))
    with ResultStore.open_existing(str(folder)) as store:
        when = store.last_match_at()
    assert when is not None and when.tzinfo is not None
    # A store from before dates were recorded is dated by its file, and says so.
    _drop_meta(folder, LAST_MATCH_KEY)
    with ResultStore.open_existing(str(folder)) as store:
        assert store.last_match_at() is None
    text = _arena("rate", folder)
    assert text.exit_code == 0, text.output
    assert "(file time)" in text.stdout
    _set_meta(folder, LAST_MATCH_KEY, "yesterday")
    bad = _arena("rate", folder)
    assert bad.exit_code == 2 and "last_match_at" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- versions


@pytest.mark.slow
def test_the_same_program_is_one_entry_and_a_changed_one_another(tmp_path: Path):
    league = tmp_path / "league"
    _store(league, "t1", versions={"ana": "a1", "luis": "l1", "marta": "m1"}, date="2026-01-01T00:00:00+00:00")
    _store(league, "t2", seed=7, versions={"ana": "a1", "luis": "l1", "marta": "m1"}, date="2026-02-01T00:00:00+00:00")
    same = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert set(same) == {"ana", "luis", "marta"}
    assert all(row["tournaments"] == 2 and row["version"] is None for row in same.values())
    # ana's program changes in a third tournament: a new entry, under name@version.
    _store(league, "t3", seed=8, versions={"ana": "a2", "luis": "l1", "marta": "m1"}, date="2026-03-01T00:00:00+00:00")
    rows = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    old = BotIdentity.from_dict(_identity("ana", "a1"))
    new = BotIdentity.from_dict(_identity("ana", "a2"))
    assert old.label != new.label
    assert set(rows) == {old.label, new.label, "luis", "marta"}  # BotIdentity.label: name@short hash
    assert (rows[old.label]["tournaments"], rows[new.label]["tournaments"]) == (2, 1)
    assert rows[new.label]["bot"] == "ana" and rows[new.label]["version"] == new.key[:7]
    assert rows[new.label]["identity"] == new.key and rows["luis"]["identity"] is not None
    assert rows[old.label]["matches"] + rows[new.label]["matches"] == rows["luis"]["matches"] == 24
    text = _arena("rate", league)
    assert f"ana: 2 versions ({old.label}, {new.label}); --by-name merges them" in text.stdout
    # --by-name: one entry per name, as the concatenated games would give, and it says so.
    merged = {row["name"]: row for row in _json(_arena("rate", league, "--by-name", "--format", "json"))}
    assert set(merged) == {"ana", "luis", "marta"} and merged["ana"]["matches"] == 24
    said = " ".join(_arena("rate", league, "--by-name").stdout.split())
    assert "--by-name: every version of a name is one entry (merged: ana (2) versions)" in said
    # The anchor names an entry; a name with several versions is ambiguous.
    ambiguous = _arena("rate", league, "--anchor", "ana=100")
    assert ambiguous.exit_code == 2
    assert f"anchor 'ana': it has 2 versions here; name one: {', '.join(sorted([old.label, new.label]))}" in ambiguous.stderr
    pinned = {row["name"]: row for row in _json(_arena("rate", league, "--anchor", f"{new.label}=100", "--format", "json"))}
    assert pinned[new.label]["elo"] == pytest.approx(100.0)


def test_version_rules_for_unknown_identities_ready_names_and_commits():
    def t(index: int, identities: dict | None, bots=("ana",)) -> Tournament:
        from datetime import datetime

        kind = GameKind.of_game(Seating.alone(2), "clones", Rules())
        ids = None if identities is None else {n: BotIdentity.from_dict(d) for n, d in identities.items()}
        return Tournament(f"t{index}", Path(f"t{index}"), index, kind, f"t{index}",
                          datetime(2026, 1, 1 + index, tzinfo=UTC), False, 1, bots, ids)

    # Identity not recorded: matched by name, joining the name's only known version.
    entries, notes = assign_entries([t(0, None), t(1, {"ana": _identity("ana", "a1")})])
    assert entries[0, "ana"] == entries[1, "ana"] and entries[0, "ana"].label == "ana"
    # ... but with two known versions it cannot say which: ana@unknown.
    entries, notes = assign_entries([t(0, None), t(1, {"ana": _identity("ana", "a1")}), t(2, {"ana": _identity("ana", "a2")})])
    assert entries[0, "ana"].label == "ana@unknown"
    assert len({entries[0, "ana"], entries[1, "ana"], entries[2, "ana"]}) == 3
    assert any("did not record which version played" in n for n in notes)
    # A ready name not recorded is the one recorded elsewhere for the same program.
    unknown_ready = _identity("ana", "a1")
    unknown_ready["ready_name"] = None
    entries, _ = assign_entries([t(0, {"ana": unknown_ready}), t(1, {"ana": _identity("ana", "a1")})])
    assert entries[0, "ana"] == entries[1, "ana"] and entries[0, "ana"].label == "ana"
    # A ready name with a version labels the program; one identity under two names is one entry.
    v2 = _identity("ana", "a2", ready="ana 2.0")
    renamed = {**v2, "name": "bob", "cmd": ["python3", "ana.py"]}  # another spelling, another name
    entries, _ = assign_entries([t(0, {"ana": _identity("ana", "a1")}), t(1, {"ana": v2}),
                                 t(2, {"bob": renamed}, bots=("bob",))])
    assert entries[1, "ana"] == entries[2, "bob"] and entries[1, "ana"].label == "ana@2.0"
    assert entries[1, "ana"].version == "2.0" and entries[0, "ana"].label.startswith("ana@")
    # Two programs announcing one version are told apart by their keys.
    twin = _identity("ana", "a3", ready="ana 2.0")
    entries, _ = assign_entries([t(0, {"ana": v2}), t(1, {"ana": twin})])
    labels = sorted(entries[i, "ana"].label for i in (0, 1))
    assert labels[0] != labels[1] and all(label.startswith("ana@2.0(") for label in labels)
    # A bot from a revision is shown with its commit's short id.
    commit = "0123456789abcdef0123456789abcdef01234567"
    from_revision = _identity("ana", "a1", commit=commit)
    entries, _ = assign_entries([t(0, {"ana": from_revision}), t(1, {"ana": _identity("ana", "a2")})])
    assert entries[0, "ana"] == Entry("ana@0123456", "ana", "0123456", BotIdentity.from_dict(from_revision))


def test_a_bot_that_claims_another_bots_name_is_listed_and_merged_under_its_own(tmp_path: Path):
    # evil answers ready as greedy does: the file's name is the bot's, the ready name gives
    # its version only, so it is never listed as greedy nor merged with greedy by name.
    league = tmp_path / "league"
    _store(league, "t1", bots=("greedy", "luis"), date="2026-01-01T00:00:00+00:00")
    _store(league, "t2", bots=("evil", "luis"), seed=7, date="2026-02-01T00:00:00+00:00")
    _set_meta(league / "t1", "identities", {"greedy": _identity("greedy", "g", ready="greedy 1.0"),
                                            "luis": _identity("luis", "l")})
    _set_meta(league / "t2", "identities", {"evil": _identity("evil", "e", ready="greedy 1.0"),
                                            "luis": _identity("luis", "l")})
    rows = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert sorted(rows) == ["evil@1.0", "greedy@1.0", "luis"]
    assert rows["evil@1.0"]["bot"] == "evil"
    merged = {row["name"]: row for row in _json(_arena("rate", league, "--by-name", "--format", "json"))}
    assert sorted(merged) == ["evil", "greedy", "luis"]


def test_an_old_store_without_identities_is_matched_by_name_with_a_note(tmp_path: Path):
    league = tmp_path / "league"
    shutil.copytree(Path(__file__).parents[1] / "golden" / "store", league / "golden")
    _store(league, "new", bots=("greedy", "hash", "luis"), versions={"greedy": "g", "hash": "h", "luis": "l"})
    result = _arena("rate", league)
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())  # a note is wrapped to the table's width
    assert "golden: the bots' identities were not recorded (an earlier arena): its bots are matched by name" in shown
    rows = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert rows["greedy"]["tournaments"] == 2 and rows["crashy"]["tournaments"] == 1


# --------------------------------------------------------------------------- kinds of game


def test_1v1_and_4_player_results_are_rated_as_separate_pools_unless_mixed(tmp_path: Path):
    league = tmp_path / "league"
    duel = _store(league, "duel", bots=("ana", "luis", "marta"))
    four = _store(league, "four", bots=("ana", "luis", "marta", "pablo"), extra="players: 4", seed=3, matches=4)
    text = _arena("rate", league)
    assert text.exit_code == 0, text.output
    first = text.stdout.splitlines()[0]
    assert first.startswith("2 kinds of game, each rated on its own (--mix pools them): ")
    assert f"pool 1: 2 players alone, standard rules; target 21 ({duel})" in first
    assert f"pool 2: 4 players alone, standard rules; target 21 ({four})" in first
    assert "Pool 1 of 2: 2 players alone" in text.stdout and "Pool 2 of 2: 4 players alone" in text.stdout
    rows = _json(_arena("rate", league, "--format", "json"))
    for pool, folder in ((1, duel), (2, four)):
        alone = {row["name"]: row for row in _json(_arena("rate", folder, "--format", "json"))}
        mine = {row["name"]: row for row in rows if row["pool"] == pool}
        assert {n: (r["elo"], r["ci95"], r["matches"]) for n, r in mine.items()} == \
            {n: (r["elo"], r["ci95"], r["matches"]) for n, r in alone.items()}
    assert "places" in rows[-1]  # the 4-player pool has finishing places
    # CSV and JSON keep stdout clean: which pools were found goes to stderr.
    assert "2 kinds of game" in _arena("rate", league, "--format", "json").stderr
    mixed = _json(_arena("rate", league, "--mix", "--format", "json"))
    assert {row["pool"] for row in mixed} == {1} and len(mixed) == 4
    ana = next(row for row in mixed if row["name"] == "ana")
    assert ana["matches"] == sum(row["matches"] for row in rows if row["name"] == "ana") and ana["tournaments"] == 2


def test_rule_options_split_pools_but_the_match_length_does_not(tmp_path: Path):
    league = tmp_path / "league"
    _store(league, "a", rules={"target": 11})
    _store(league, "b", rules={"target": 21, "max_hands": 50}, seed=6)
    _store(league, "c", rules={"renuncio": True}, seed=7)
    pools = open_league([league]).pools
    assert [p.describe() for p in pools] == [
        "2 players alone, standard rules; targets 11, 21",
        "2 players alone, rules: renuncio true; target 21",
    ]
    assert [len(p.tournaments) for p in pools] == [2, 1]


def test_a_results_file_joins_the_one_kind_of_its_shape_or_gets_its_own_pool(tmp_path: Path):
    league = tmp_path / "league"
    spring = _store(league, "spring")
    extra = tmp_path / "extra.csv"
    extra.write_text("side_a,side_b,score_a\nana,zoe,1\nzoe,luis,0.5\n")
    three = tmp_path / "three.jsonl"
    three.write_text('{"sides": [["ana"], ["zoe"], ["luis"]], "scores": [21, 3, 9]}\n'
                     '{"sides": ["ana", "zoe"], "places": [2, 1]}\n')
    league_obj = open_league([spring, extra, three])
    assert [p.describe() for p in league_obj.pools] == [
        "2 players alone, standard rules; target 21",
        "results files: 3 sides of 1 bot (no rules recorded)",
    ]
    assert sorted(t.label for t in league_obj.pools[0].tournaments) == sorted([str(spring), str(extra), str(three)])
    assert [t.label for t in league_obj.pools[1].tournaments] == [str(three)]  # its 3-sided line
    assert any("no rules recorded; pooled with the results folders of the same shape" in n for n in league_obj.pools[0].notes)
    rated = rate_league(league_obj)
    zoe = next(r for r in rated[0].rows if r.rating.name == "zoe")
    assert zoe.rating.matches == 3 and zoe.tournaments == 2  # two lines of extra.csv, the 1v1 line of three.jsonl
    # With two kinds of results folder of that shape, a file cannot say which: a pool of its own.
    renuncio = _store(league, "renuncio", rules={"renuncio": True}, seed=4)
    pools = open_league([spring, renuncio, extra]).pools
    assert [p.describe() for p in pools][-1] == "results files: 2 sides of 1 bot (no rules recorded)"


# --------------------------------------------------------------------------- history


@pytest.mark.slow
def test_the_history_matches_fits_of_the_growing_prefixes(tmp_path: Path):
    league = tmp_path / "league"
    # Given out of date order: the history follows the dates.
    c = _store(league, "c", bots=("ana", "marta", "pablo"), seed=11, date="2026-09-01T00:00:00+00:00")
    a = _store(league, "a", seed=5, date="2026-03-01T00:00:00+00:00")
    b = _store(league, "b", bots=("ana", "luis", "pablo"), seed=9, date="2026-06-01T00:00:00+00:00")
    steps = _json(_arena("rate", c, a, b, "--history", "--format", "json"))
    assert [(s["step"], s["tournament"]) for s in steps] == [(1, str(a)), (2, str(b)), (3, str(c))]
    assert [s["date"] for s in steps] == ["2026-03-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00", "2026-09-01T00:00:00+00:00"]
    games: list[str] = []
    for step, folder in zip(steps, (a, b, c), strict=True):
        games += _games(folder)
        prefix = tmp_path / f"prefix{step['step']}.jsonl"
        prefix.write_text("\n".join(games) + "\n")
        expected = fit_ratings(read_results(prefix))
        got = {r["name"]: r for r in step["ratings"]}
        assert set(got) == set(expected.names)
        for r in expected.ratings:
            assert got[r.name]["elo"] == pytest.approx(r.elo, abs=0.006)
            assert got[r.name]["ci95"] == pytest.approx(r.ci95, abs=0.006)
            assert got[r.name]["rank"] == r.rank and got[r.name]["matches"] == r.matches
    # The last step is the rating list.
    final = {row["name"]: row for row in _json(_arena("rate", a, b, c, "--format", "json"))}
    assert {r["name"]: r["elo"] for r in steps[-1]["ratings"]} == {n: row["elo"] for n, row in final.items()}
    # CSV: one row per bot and step, the same numbers.
    rows = list(csv.DictReader(io.StringIO(_arena("rate", a, b, c, "--history", "--format", "csv").stdout)))
    assert list(rows[0]) == ["pool", "step", "tournament", "date", "rank", "name", "elo", "ci95", "los_next", "matches",
                             "tournaments", "status"]
    assert len(rows) == sum(len(s["ratings"]) for s in steps)
    luis = [(int(r["step"]), float(r["elo"])) for r in rows if r["name"] == "luis"]
    assert luis == [(s["step"], next(x["elo"] for x in s["ratings"] if x["name"] == "luis")) for s in steps
                    if any(x["name"] == "luis" for x in s["ratings"])]
    assert [step for step, _ in luis] == [1, 2, 3]
    # Text: a column per tournament; pablo has no rating before he played.
    text = _arena("rate", league, "--history")
    assert text.exit_code == 0, text.output
    pablo = next(line for line in text.stdout.splitlines() if line.startswith("pablo"))
    assert len(pablo.split()) == 1 + 2 * 2  # name, then elo and interval at steps 2 and 3 only
    assert "1 = " + str(a) in text.stdout


def test_an_anchor_holds_in_every_step_it_played_and_centres_the_others(tmp_path: Path):
    league = tmp_path / "league"
    a = _store(league, "a", seed=5, date="2026-03-01T00:00:00+00:00")
    b = _store(league, "b", bots=("ana", "luis", "pablo"), seed=9, date="2026-06-01T00:00:00+00:00")
    steps = _json(_arena("rate", a, b, "--history", "--anchor", "pablo=1500", "--format", "json"))
    first = [r["elo"] for r in steps[0]["ratings"]]
    assert sum(first) / len(first) == pytest.approx(1500.0, abs=0.05)  # pablo not there yet: centred on 1500
    assert next(r for r in steps[1]["ratings"] if r["name"] == "pablo")["elo"] == pytest.approx(1500.0)


# --------------------------------------------------------------------------- bad input


def _one_line_exit_2(result, fragment: str) -> None:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in result.output
    assert fragment in err, err
    assert result.stdout == ""


def test_bad_inputs_are_one_line_and_exit_2(tmp_path: Path):
    good = _store(tmp_path / "league", "good")
    empty = tmp_path / "empty"
    empty.mkdir()
    not_results = f"{empty}: not a results folder (no results.sqlite), nor a folder of results folders"
    _one_line_exit_2(_arena("rate", good, empty), not_results)
    _one_line_exit_2(_arena("report", empty), f"{empty}: not a results folder")
    _one_line_exit_2(_arena("rate", good, tmp_path / "nope"), "no such results folder or file")
    newer = tmp_path / "newer"
    shutil.copytree(good, newer)
    _set_meta(newer, "schema_version", 2)
    _one_line_exit_2(_arena("rate", good, newer), "schema version 2, this arena reads 1")
    # A folder of results folders that hold no match yet: an empty set.
    unplayed = tmp_path / "unplayed"
    shutil.copytree(good, unplayed / "t")
    conn = sqlite3.connect(unplayed / "t" / "results.sqlite")
    with conn:
        conn.execute("DELETE FROM matches")
    conn.close()
    _one_line_exit_2(_arena("rate", unplayed), f"no matches in {unplayed}: nothing to rate")
    # A bad line in a results file among the folders: the file and line.
    bad = tmp_path / "bad.csv"
    bad.write_text("side_a,side_b,score_a\nana,luis,2\n")
    _one_line_exit_2(_arena("rate", good, bad), f"{bad}:2: score_a must be 1, 0.5 or 0")
    _one_line_exit_2(_arena("rate", good, "--anchor", "nobody"), "anchor 'nobody': no such bot in the results")
    _one_line_exit_2(_arena("report", good, good), "name the league page to write (--html league.html)")


def test_a_folder_given_twice_counts_once(tmp_path: Path):
    league = tmp_path / "league"
    spring = _store(league, "spring")
    once = _json(_arena("rate", league, "--format", "json"))
    twice = _json(_arena("rate", league, spring, "--format", "json"))
    assert once == twice


# --------------------------------------------------------------------------- each match once

_FIT = ("name", "elo", "ci95", "matches", "wins", "draws", "losses", "tournaments")


def _fit(*inputs: object) -> tuple[dict[str, tuple], list[str]]:
    """The rating list's numbers by bot, and the notes (stderr beside JSON)."""
    result = _arena("rate", *inputs, "--format", "json")
    notes = [line.removeprefix("note: ") for line in result.stderr.splitlines()]
    return {row["name"]: tuple(row[k] for k in _FIT) for row in _json(result)}, notes


def _export(folder: Path, path: Path) -> Path:
    done = _arena("export", folder, "--games", path.suffix.lstrip("."), "--output", path)
    assert done.exit_code == 0, done.output
    return path


def test_a_folder_with_its_exports_and_a_copy_counts_each_match_once(tmp_path: Path):
    league = tmp_path / "league"
    spring = _store(league, "spring")
    summer = _store(league, "summer", bots=("ana", "luis", "pablo"), seed=9)
    csv_file, jsonl_file = _export(spring, tmp_path / "spring.csv"), _export(spring, tmp_path / "spring.jsonl")
    copy = tmp_path / "copy"
    shutil.copytree(spring, copy)
    alone, _ = _fit(spring, summer)
    for inputs in ([spring, summer, csv_file], [csv_file, spring, summer], [jsonl_file, summer, spring],
                   [spring, copy, summer], [league, copy, csv_file, jsonl_file]):
        rated, notes = _fit(*inputs)
        assert rated == alone, inputs
    # Each input whose matches were all counted from another is left out, and said so: counted
    # from the first folder given, whichever input came first.
    rated, notes = _fit(jsonl_file, copy, csv_file, league)
    assert rated == alone
    said = [n for n in notes if "(the same results_id and id)" in n]
    assert said == [f"{label}: its 12 matches are all in {copy} too (the same results_id and id): counted once, "
                    "from there; left out" for label in (spring, jsonl_file, csv_file)]
    # A file holding some of them and more: those counted once, the rest as any results.
    both = tmp_path / "both.jsonl"
    both.write_text(jsonl_file.read_text() + _export(summer, tmp_path / "summer.jsonl").read_text())
    rated, notes = _fit(spring, both)
    assert {name: row[:-1] for name, row in rated.items()} == {name: row[:-1] for name, row in alone.items()}
    # The file's tournament holds the summer matches, the spring ones counted from spring.
    assert {name: row[-1] for name, row in rated.items()} == {"ana": 2, "luis": 2, "marta": 1, "pablo": 1}
    assert f"{both}: 12 of its 24 matches are in {spring} too (the same results_id and id): counted once, from " \
           "there" in notes


def test_a_file_holding_a_match_twice_counts_it_once(tmp_path: Path):
    spring = _store(tmp_path / "league", "spring")
    once = _export(spring, tmp_path / "once.jsonl")
    twice = tmp_path / "twice.jsonl"
    twice.write_text(once.read_text() * 2)
    for inputs in ([twice], [twice, "--history"]):  # a file alone, and as a league
        result = _arena("rate", *inputs, "--format", "json")
        plain = _arena("rate", once, *inputs[1:], "--format", "json")
        if "--history" in inputs:  # the same steps, each named after its own file
            assert [s["ratings"] for s in _json(result)] == [s["ratings"] for s in _json(plain)]
        else:
            assert result.exit_code == 0 and result.stdout == plain.stdout, result.output
        assert f"note: {twice}: 12 of its 24 matches are in its earlier lines too (the same results_id and id): " \
               "counted once, from there" in result.stderr.splitlines()


def test_two_folders_of_one_file_are_two_tournaments(tmp_path: Path):
    # The same file played into two folders (a test started afresh after its bot changed, as
    # arena sprt does beside the old one) gives the same match ids: they are other matches.
    first, second = _store(tmp_path / "one", "spring"), _store(tmp_path / "two", "spring")
    with ResultStore.open_existing(str(first)) as a, ResultStore.open_existing(str(second)) as b:
        assert a.fingerprint == b.fingerprint and a.completed_ids() == b.completed_ids()
    alone, _ = _fit(first)
    rated, notes = _fit(first, second, _export(second, tmp_path / "second.csv"))
    assert {name: row[3] for name, row in rated.items()} == {name: 2 * row[3] for name, row in alone.items()}
    assert [n for n in notes if "results_id" in n] == [
        f"{tmp_path / 'second.csv'}: its 12 matches are all in {second} too (the same results_id and id): counted "
        "once, from there; left out"]


def test_results_without_an_identity_are_counted_and_a_note_says_so(tmp_path: Path):
    spring = _store(tmp_path / "league", "spring")
    # An export of an earlier arena: no results_id column.
    rows = list(csv.reader(io.StringIO(_export(spring, tmp_path / "new.csv").read_text())))
    old = tmp_path / "old.csv"
    old.write_text("".join(",".join(row[:-1]) + "\n" for row in rows))
    assert rows[0][-1] == "results_id" and "results_id" not in old.read_text()
    alone, _ = _fit(spring)
    # Its rows still carry each match's id and seed: a row with the id, seed, sides and result
    # of a match of the folder is that match, counted once; one that differs is another game.
    rated, notes = _fit(spring, old)
    assert rated == alone
    assert f"{old}: its 12 matches carry no results_id, but each is the match of {spring} with its id, seed, " \
           "sides and result: counted once, from there; left out" in notes
    flipped = tmp_path / "flipped.csv"
    lines = old.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[2] = {"1": "0", "0": "1", "0.5": "1"}[cells[2]]
    flipped.write_text(lines[0] + ",".join(cells) + "".join(lines[2:]))
    rated, notes = _fit(spring, flipped)
    assert sum(row[3] for row in rated.values()) == sum(row[3] for row in alone.values()) + 2
    assert f"{flipped}: 11 of its 12 matches carry no results_id, but each is the match of {spring} with its id, " \
           "seed, sides and result: counted once, from there" in notes
    assert f"{flipped}: 1 of its 12 matches carries no identity (results_id and id, as arena export writes them), and " \
           f"{spring} holds matches of the same bots: if {flipped} is an export of it, they are counted twice here; " \
           "give one of the two, or an export that keeps those columns" in notes
    # The same of JSON lines.
    old_jsonl = tmp_path / "old.jsonl"
    old_jsonl.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "results_id"}) + "\n"
                                 for line in _export(spring, tmp_path / "new.jsonl").read_text().splitlines()))
    rated, notes = _fit(spring, old_jsonl)
    assert rated == alone and any(note.startswith(f"{old_jsonl}: its 12 matches carry no results_id") for note in notes)
    # Its three columns alone (a hand-trimmed export) say the same, naming both inputs.
    plain = tmp_path / "plain.csv"
    plain.write_text("".join(",".join(row[:3]) + "\n" for row in rows))
    rated, notes = _fit(spring, plain)
    assert {name: row[3] for name, row in rated.items()} == {name: 2 * row[3] for name, row in alone.items()}
    assert any(note.startswith(f"{plain}: its 12 matches carry no identity") and f"if {plain} is an export of it"
               in note for note in notes)
    # Beside a folder of other bots, it repeats nothing it could: the plain note.
    other = _store(tmp_path / "league", "other", bots=("zoe", "yago"))
    _, notes = _fit(other, plain)
    assert f"{plain}: its 12 matches carry no identity (results_id and id, as arena export writes them): each is " \
           "counted, even where another input holds it too" in notes
    # A folder of an earlier arena: its copy is not told from it either, and it says so; a run
    # of it records an id.
    _drop_meta(spring, "results_id")
    copy = tmp_path / "copy"
    shutil.copytree(spring, copy)
    rated, notes = _fit(spring, copy)
    assert {name: row[3] for name, row in rated.items()} == {name: 2 * row[3] for name, row in alone.items()}
    assert f"{spring}: no results_id recorded (an earlier arena; a run of it records one): its matches are " \
           "counted, even where a copy of it is given too (an export of it is told by each match's id and seed)" in notes
    # Its export (no results_id to write) is still told by each match's id and seed.
    rated, notes = _fit(spring, _export(spring, tmp_path / "older.csv"))
    assert rated == alone and any(note.startswith(f"{tmp_path / 'older.csv'}: its 12 matches carry no results_id")
                                  for note in notes)


def test_one_results_file_keeps_the_plain_table(tmp_path: Path):
    path = tmp_path / "r.csv"
    path.write_text("side_a,side_b,score_a\na,b,1\nb,a,0.5\n")
    result = _arena("rate", path)
    assert result.exit_code == 0
    assert "tournaments" not in result.stdout  # a single file is not a league
    history = _arena("rate", path, "--history")
    assert history.exit_code == 0, history.output
    assert "Ratings after each tournament:" in history.stdout and f"1 = {path} (" in history.stdout


# --------------------------------------------------------------------------- the league page


@pytest.mark.slow
def test_report_on_a_folder_of_results_writes_the_league_page(tmp_path: Path):
    league = tmp_path / "league"
    a = _store(league, "a", seed=5, date="2026-03-01T00:00:00+00:00")
    _store(league, "b", bots=("ana", "luis", "pablo"), seed=9, date="2026-06-01T00:00:00+00:00")
    assert _arena("report", a).exit_code == 0  # one tournament: its own report page, linked from the league's
    result = _arena("report", league)
    assert result.exit_code == 0, result.output
    page = (league / "league.html").read_text()
    assert f"wrote {league / 'league.html'}" in result.stdout
    assert page.count('<g class="series"') == 4
    assert 'href="a/report.html"' in page
    assert "Content-Security-Policy" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)


def test_a_results_file_naming_a_version_by_its_label_joins_that_version(tmp_path: Path):
    league = tmp_path / "league"
    label = BotIdentity.from_dict(_identity("ana", "a1")).label
    _store(league, "t1", versions={"ana": "a1", "luis": "l", "marta": "m"})
    _store(league, "t2", seed=7, versions={"ana": "a2", "luis": "l", "marta": "m"})
    # Names in a tournament file cannot hold '@'; an export of a folder of versions writes labels.
    extra = tmp_path / "extra.csv"
    extra.write_text(f"side_a,side_b,score_a\n{label},luis,1\n")
    rows = {row["name"]: row for row in _json(_arena("rate", league, extra, "--format", "json"))}
    alone = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert rows[label]["matches"] == alone[label]["matches"] + 1 and len(rows) == len(alone) == 4


def test_two_programs_in_a_tournament_a_gauntlet_and_an_sprt_folder_are_exactly_two_entries(tmp_path: Path):
    league = tmp_path / "league"
    field = {"luis": "l", "marta": "m"}
    _store(league, "t1", versions={"ana": "a1", **field}, date="2026-01-01T00:00:00+00:00")
    # v2 under another name (and so another command) in a gauntlet...
    _store(league, "t2", bots=("anav2", "luis", "marta"), extra="format: gauntlet\nchallenger: anav2",
           versions={"anav2": "a2", **field}, date="2026-02-01T00:00:00+00:00")
    # ... and both head to head in a folder named as arena sprt names its bots.
    _store(league, "t3", bots=("bot", "bot_v1"), versions={"bot": "a2", "bot_v1": "a1"},
           date="2026-03-01T00:00:00+00:00")
    rows = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert sorted(rows) == ["ana", "anav2", "luis", "marta"]
    assert rows["ana"]["tournaments"] == rows["anav2"]["tournaments"] == 2
    assert rows["ana"]["identity"] != rows["anav2"]["identity"] and {r["group"] for r in rows.values()} == {1}


def test_by_name_merges_every_version_of_a_name_wherever_it_played_and_leaves_out_their_own_matches(tmp_path: Path):
    league = tmp_path / "league"
    _store(league, "t1", date="2026-01-01T00:00:00+00:00")
    _store(league, "t2", seed=7, date="2026-02-01T00:00:00+00:00")
    _store(league, "t3", bots=("bot", "bot_v1"), date="2026-03-01T00:00:00+00:00")  # named as arena sprt names them
    field = {"luis": _identity("luis", "l"), "marta": _identity("marta", "m")}
    _set_meta(league / "t1", "identities", {"ana": _identity("ana", "a1", ready="ana 1.0"), **field})
    _set_meta(league / "t2", "identities", {"ana": _identity("ana", "a2", ready="ana 2.0"), **field})
    _set_meta(league / "t3", "identities", {"bot": _identity("bot", "a2", ready="ana 2.0"),
                                            "bot_v1": _identity("bot_v1", "a1", ready="ana 1.0")})
    apart = {row["name"]: row for row in _json(_arena("rate", league, "--format", "json"))}
    assert sorted(apart) == ["ana@1.0", "ana@2.0", "luis", "marta"]
    merged = {row["name"]: row for row in _json(_arena("rate", league, "--by-name", "--format", "json"))}
    assert sorted(merged) == ["ana", "luis", "marta"]
    # The versions' matches against the field, not those of one version against the other.
    against_field = {
        name: sum(1 for t in ("t1", "t2") for line in _games(league / t) if name in line) for name in ("ana",)}
    assert merged["ana"]["matches"] == against_field["ana"] == apart["ana@1.0"]["matches"] + apart["ana@2.0"][
        "matches"] - 2 * 4
    said = " ".join(_arena("rate", league, "--by-name").stdout.split())
    assert "--by-name: 4 matches between versions of one name (an entry against itself) left out" in said
    assert "--by-name: every version of a name is one entry (merged: ana (2) versions)" in said


def test_one_program_entered_under_two_names_is_one_entry_and_its_matches_against_itself_are_left_out(tmp_path: Path):
    # The same bot entered twice (a self-play check): one program, so one entry; the matches it
    # played against itself say nothing of its strength, and they refused the whole league.
    league = tmp_path / "league"
    _store(league, "t1", bots=("ana", "anna", "luis"), versions={"ana": "p", "anna": "p", "luis": "l"})
    result = _arena("rate", league / "t1", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert len(rows) == 2 and "luis" in rows
    [program] = [row for name, row in rows.items() if name != "luis"]
    assert program["matches"] == rows["luis"]["matches"] == 8
    [label] = [name for name in rows if name != "luis"]
    said = " ".join(_arena("rate", league).stdout.split())
    assert f"4 matches of {label} against itself (one program entered under two names) left out" in said


def test_two_copies_of_a_folder_that_went_on_apart_keep_the_matches_each_played_with_another_program(tmp_path: Path):
    # A copy resumed elsewhere after its bot changed another way holds the same match ids (and
    # results_id) for matches another program played: those are no duplicates of the first's.
    league = tmp_path / "league"
    first = _store(league, "a", versions={"ana": "a1", "luis": "l", "marta": "m"})
    copy = league / "b"
    shutil.copytree(first, copy)
    _set_meta(copy, "identities", {"ana": _identity("ana", "a2"), "luis": _identity("luis", "l"),
                                   "marta": _identity("marta", "m")})
    result = _arena("rate", first, copy, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    ana = sorted(name for name in rows if name.startswith("ana@"))
    assert len(ana) == 2 and all(rows[name]["matches"] == 8 for name in ana)
    assert rows["luis"]["matches"] == rows["marta"]["matches"] == 4 + 4 + 4  # against each ana, and each other once
    said = " ".join(_arena("rate", first, copy).stdout.split())
    assert f"{copy}: 4 of its 12 matches are in {first} too (the same results_id and id): counted once" in said
