"""Exports and machine-readable tables: `arena export`, `arena table --format csv|json`, per-hand
figures over hands played, forfeit columns, and the round trip export -> `arena rate` == `arena table`."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from replay_helpers import play
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Seating
from arena.errors import ExitCode
from arena.harness.protocol import Termination
from arena.match.record import derive_row_values
from arena.render.standings import format_crosstable, format_standings
from arena.tournament import runner as tr
from arena.tournament.config import load_config
from arena.tournament.export import GAMES_CSV_KEYS, GAMES_JSONL_KEYS
from arena.tournament.standings import (
    FAILURE_REASONS,
    compute_standings,
    hands_played,
    standings_from_store,
    unscored_escobas,
)
from arena.tournament.store import MatchRow, ResultStore

pytestmark = pytest.mark.slow  # plays tournaments through the arena

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
GOLDEN_STORE = Path(__file__).parents[1] / "golden" / "store"
cli = CliRunner()

# A bot that writes debug text on stdout: it forfeits every match at the handshake.
DEBUG_BOT = "import sys\nprint('DEBUG got hello', flush=True)\nfor line in sys.stdin:\n    pass\n"


def _bot(name: str, policy: str) -> str:
    return f'  - {{name: {name}, cmd: "$PYTHON policybot.py {policy}", cwd: "{BOTS}"}}'


TOURNAMENTS = {
    "1v1": ("matches_per_pairing: 2", [_bot("greedy", "greedy"), _bot("hash", "hash"), "DEBUG"]),
    "pairs": ("mode: pairs\nteams: rotating\nmatches_per_pairing: 2",
              [_bot("greedy", "greedy"), _bot("hash", "hash"), _bot("first", "first"), _bot("last", "last")]),
    "three": ("players: 3\nmatches_per_pairing: 3",
              [_bot("greedy", "greedy"), _bot("hash", "hash"), _bot("first", "first"), _bot("last", "last")]),
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three small real tournaments (bot processes), played once for the module."""
    folder = tmp_path_factory.mktemp("export")
    (folder / "debugbot.py").write_text(DEBUG_BOT)
    out = {}
    for name, (extra, bots) in TOURNAMENTS.items():
        lines = [b if b != "DEBUG" else f'  - {{name: debug, cmd: "$PYTHON {folder / "debugbot.py"}"}}' for b in bots]
        path = folder / f"{name}.yaml"
        path.write_text(f"name: {name}\nseed: 7\noutput: {folder / 'out' / name}\nrules: {{target: 11}}\n"
                        f"concurrency: 2\n{extra}\nbots:\n" + "\n".join(lines) + "\n")
        tr.run_tournament(load_config(path))
        out[name] = folder / "out" / name
    return out


def _invoke(*args: str):
    return cli.invoke(app, [*args])


def _ratings(stdout: str) -> dict[str, tuple]:
    return {r["name"]: (r["elo"], r["ci95"], r["matches"], r["status"]) for r in json.loads(stdout)}


def _same_ratings(a: dict[str, tuple], b: dict[str, tuple]) -> None:
    assert set(a) == set(b)
    for name in a:
        (ea, ca, ma, sa), (eb, cb, mb, sb) = a[name], b[name]
        assert (ma, sa) == (mb, sb), name
        for x, y in ((ea, eb), (ca, cb)):
            assert (x is None) == (y is None), name
            if x is not None:
                assert x == pytest.approx(y, abs=0.011), name


# --- the round trip: export -> arena rate gives the ratings of arena table ---------------------------


@pytest.mark.parametrize(("name", "forms"), [("1v1", ("csv", "jsonl")), ("pairs", ("csv", "jsonl")),
                                             ("three", ("jsonl",))])
@pytest.mark.slow
@pytest.mark.parametrize("prior", [None, "0", "5"])
def test_exported_games_rate_as_the_table_does(played, tmp_path, name, forms, prior):
    results = played[name]
    options = [] if prior is None else ["--prior", prior]
    table = _invoke("table", str(results), "--format", "json", *options)
    assert table.exit_code == 0, table.output
    expected = _ratings(table.stdout)
    for form in forms:
        path = tmp_path / f"games.{form}"
        done = _invoke("export", str(results), "--games", form, "--output", str(path))
        assert done.exit_code == 0, done.output
        assert done.stdout == ""
        rated = _invoke("rate", str(path), "--format", "json", *options)
        assert rated.exit_code == 0, rated.output
        _same_ratings(_ratings(rated.stdout), expected)


def test_pairs_export_names_both_members_of_each_side(played):
    done = _invoke("export", str(played["pairs"]), "--games", "csv")
    assert done.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert rows and all(len(r["side_a"].split("+")) == 2 and len(r["side_b"].split("+")) == 2 for r in rows)


def test_games_csv_has_the_rate_columns_then_the_match(played):
    results = played["1v1"]
    done = _invoke("export", str(results), "--games", "csv")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == ",".join(GAMES_CSV_KEYS) and lines[0].startswith("side_a,side_b,score_a,")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    with ResultStore.open_existing(str(results)) as store:
        stored = store.results()
    assert [r["id"] for r in rows] == [row.id for row in stored]
    for r, row in zip(rows, stored, strict=True):
        assert int(r["hands"]) == hands_played(row)
        assert (int(r["points_a"]), int(r["points_b"])) == row.scores
        assert r["reason"] == row.reason
        if "debug" in row.seats:
            # The debug bot's side lost every match by its own failure, at the handshake.
            assert r["reason"] == "forfeit" and r["forfeited_by"] == "debug" and r["failures"] == "debug:no_handshake"
            assert r["score_a"] == ("0" if row.seats[0] == "debug" else "1") and r["hands"] == "0"


def test_every_exported_match_carries_the_stores_results_id(played, tmp_path):
    with ResultStore.open_existing(str(played["1v1"])) as store:
        results_id = store.results_id
    assert results_id
    rows = list(csv.DictReader(io.StringIO(_invoke("export", str(played["1v1"]), "--games", "csv").stdout)))
    lines = [json.loads(line) for line in _invoke("export", str(played["1v1"]), "--games", "jsonl").stdout.splitlines()]
    assert rows and {r["results_id"] for r in rows} == {line["results_id"] for line in lines} == {results_id}


def test_games_jsonl_keys_and_places(played):
    done = _invoke("export", str(played["three"]), "--games", "jsonl")
    assert done.exit_code == 0
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    with ResultStore.open_existing(str(played["three"])) as store:
        assert len(lines) == store.count()
    for line in lines:
        assert tuple(line) == GAMES_JSONL_KEYS
        assert len(line["sides"]) == 3 and sorted(line["places"])[0] == 1
        best = max(line["points"])
        assert [line["places"][k] for k, p in enumerate(line["points"]) if p == best] == [1] * line["points"].count(best)


def test_a_csv_of_three_sided_matches_is_refused_with_the_way_out(played, tmp_path):
    out = tmp_path / "three.csv"
    for args in (["export", str(played["three"]), "--games", "csv"],
                 ["export", str(played["three"]), "--games", "csv", "--output", str(out)]):
        done = _invoke(*args)
        assert done.exit_code == ExitCode.BAD_INPUT
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "3 sides" in lines[0] and "--games jsonl" in lines[0]
        assert done.stdout == ""
    assert not out.exists() and not list(tmp_path.iterdir())


def test_export_needs_exactly_one_form_and_a_results_folder(played, tmp_path):
    for args in ([], ["--games", "csv", "--records", "jsonl"]):
        done = _invoke("export", str(played["1v1"]), *args)
        assert done.exit_code == ExitCode.BAD_INPUT and "--games csv|jsonl or --records jsonl" in done.stderr
    missing = _invoke("export", str(tmp_path / "nowhere"), "--games", "csv")
    assert missing.exit_code == ExitCode.BAD_INPUT and "nowhere" in missing.stderr
    unwritable = _invoke("export", str(played["1v1"]), "--games", "csv", "--output", str(tmp_path / "no" / "dir.csv"))
    assert unwritable.exit_code == ExitCode.FAULT and "cannot write" in unwritable.stderr


# --- records: one per line, read back by verify and replay ---------------------------------------------


def test_exported_records_verify_and_replay(played, tmp_path):
    results = played["1v1"]
    path = tmp_path / "records.jsonl"
    assert _invoke("export", str(results), "--records", "jsonl", "-o", str(path)).exit_code == 0
    lines = path.read_text().splitlines()
    with ResultStore.open_existing(str(results)) as store:
        rows = store.results()
        assert [json.loads(line) for line in lines] == [{"id": r.id, "record": store.record(r.id)} for r in rows]
    verified = _invoke("verify", str(path))
    assert verified.exit_code == 0, verified.output
    assert f"all {len(rows)} records replay" in verified.stdout
    for row in (rows[0], rows[-1]):
        from_file = _invoke("replay", str(path), row.id)
        from_folder = _invoke("replay", str(results), row.id)
        assert from_file.exit_code == 0, from_file.output
        assert from_file.stdout == from_folder.stdout and "Result:" in from_file.stdout
    several = _invoke("replay", str(path))
    assert several.exit_code == ExitCode.BAD_INPUT and rows[0].id in several.stderr
    unknown = _invoke("replay", str(path), "nope")
    assert unknown.exit_code == ExitCode.BAD_INPUT and "no record 'nope'" in unknown.stderr
    # One damaged line is refused by itself; the others still verify.
    lines[2] = lines[2][:40]
    path.write_text("\n".join(lines) + "\n")
    damaged = _invoke("verify", str(path))
    assert damaged.exit_code == ExitCode.CHECK_FAILED
    assert [line for line in damaged.stdout.splitlines() if line.startswith("refused")] == [
        "refused line 3: not JSON (JSONDecodeError)"]
    assert f"1 of {len(rows)} records refused" in damaged.stderr


def test_a_file_of_bare_records_is_read_by_line_number(tmp_path):
    records = [play(Seating.alone(2), {"target": 5}, seed).to_dict() for seed in (1, 2)]
    path = tmp_path / "bare.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _invoke("verify", str(path)).exit_code == 0
    second = _invoke("replay", str(path), "2")
    assert second.exit_code == 0 and "seed 2" in second.stdout


# --- per-hand figures and forfeits -----------------------------------------------------------------


def test_per_hand_figures_count_only_hands_played(played):
    results = played["1v1"]
    with ResultStore.open_existing(str(results)) as store:
        standings = {s.name: s for s in standings_from_store(store).bots}
        rows = store.results()
        # Independently of the rows' summary: the hands each bot's records scored.
        scored = dict.fromkeys(standings, 0)
        for row in rows:
            events = store.record(row.id)["events"]
            for name in set(row.seats):
                scored[name] += sum(e["type"] == "hand_score" for e in events)
    debug, greedy = standings["debug"], standings["greedy"]
    assert debug.hands == 0 and debug.points_per_hand is None and debug.escobas_per_hand is None
    assert all(standings[name].hands == scored[name] for name in standings)
    assert greedy.hands < sum(row.hands for row in rows if "greedy" in row.seats)  # the forfeits' "hands" left out
    assert greedy.points_per_hand == pytest.approx(greedy.points_for / greedy.hands)
    assert (debug.forfeits, debug.opponent_forfeits) == (4, 0)
    assert (greedy.forfeits, greedy.opponent_forfeits) == (0, 2)
    assert dict(debug.failures) == {"no_handshake": 4}
    text = _invoke("table", str(results), "--wide").stdout
    header = text.splitlines()[0].split()
    debug_row = next(line.split() for line in text.splitlines() if line.split()[1:2] == ["debug"])
    assert debug_row[header.index("forfeits")] == "4" and debug_row[header.index("hands")] == "0"
    assert debug_row[header.index("pts/hand")] == "-"


def test_a_forfeits_unfinished_hand_and_its_escobas_are_left_out():
    # Bots failing on their 1st to 40th decision: forfeits before any hand ends, later ones, and
    # some with an escoba already made in the hand that never scored.
    cases = []
    for seed in range(1, 41):
        record = play(Seating.alone(2), {"target": 15}, seed, failing_seat=seed % 2, fail_on=seed)
        values = derive_row_values(record)
        row = MatchRow(id="m", index=0, pairing=0, deal=0, rotation=0, seed=record.seed, sides=("bot0", "bot1"),
                       seats=record.seats, winner=values.winner, scores=values.scores, reason=values.reason,
                       terminations=values.terminations, escobas=values.escobas, hands=values.hands,
                       failures=values.failures)
        data = record.to_dict()
        scores = [e for e in data["events"] if e["type"] == "hand_score"]
        assert hands_played(row) == len(scores)
        cut = unscored_escobas(data, 2)
        # Counted independently: the escobas in the breakdown of every scored hand.
        in_scored_hands = [sum(e["breakdown"][side]["escobas"] for e in scores) for side in range(2)]
        assert [row.escobas[side] - cut[side] for side in range(2)] == in_scored_hands
        standings = {s.name: s for s in compute_standings([row], Seating.alone(2), ["bot0", "bot1"],
                                                          unscored={"m": cut}).bots}
        assert [standings[f"bot{side}"].escobas for side in range(2)] == in_scored_hands
        assert standings["bot0"].hands == standings["bot1"].hands == len(scores)
        failed, other = standings[f"bot{seed % 2}"], standings[f"bot{1 - seed % 2}"]
        forfeit = row.reason == "forfeit"
        assert (failed.forfeits, failed.opponent_forfeits) == (int(forfeit), 0)
        assert (other.forfeits, other.opponent_forfeits) == (0, int(forfeit))
        cases.append((forfeit, len(scores), any(cut)))
    assert (True, 0, False) in cases  # a forfeit before any hand was scored
    assert any(forfeit and hands > 0 for forfeit, hands, _ in cases)
    assert any(cut for _, _, cut in cases)  # an escoba in a hand that never scored


def test_a_partners_failure_is_not_the_bots_own_forfeit():
    row = MatchRow(id="0", index=0, pairing=0, deal=0, rotation=0, seed=1, sides=("s0", "s1"),
                   seats=("a", "c", "b", "d"), winner=1, scores=(3, 5), reason="forfeit",
                   terminations=(Termination.OK, Termination.OK, Termination.TIMEOUT, Termination.OK), escobas=(0, 0),
                   hands=3, failures=((2, Termination.TIMEOUT),))
    standings = {s.name: s for s in compute_standings([row], Seating.pairs(4), "abcd").bots}
    assert (standings["b"].forfeits, standings["a"].forfeits) == (1, 0)  # a's partner b failed
    assert standings["a"].losses == standings["b"].losses == 1
    assert [standings[n].opponent_forfeits for n in "abcd"] == [0, 0, 1, 1]
    assert all(standings[n].hands == 2 for n in "abcd")


# --- tables: csv and json with plain numbers, one table per output --------------------------------------

STANDINGS_KEYS_2 = ["rank", "name", "elo", "ci95", "los_next", "group", "matches", "wins", "draws", "losses",
                    "forfeits", "opponent_forfeits", "points_for", "points_against", "hands", "points_per_hand",
                    "escobas", "escobas_per_hand", "failures", "cpu_s", "cpu_per_wall", "status", "note",
                    "version", "identity"]
TEXT_COLUMNS = {"name", "status", "note", "version", "identity"}


@pytest.mark.parametrize("name", ["1v1", "pairs", "three"])
def test_table_csv_is_one_table_of_plain_numbers(played, name):
    done = _invoke("table", str(played[name]), "--format", "csv")
    assert done.exit_code == 0
    assert not re.search(r"[±%]|inf|\+\d", done.stdout)
    rows = list(csv.reader(io.StringIO(done.stdout)))
    header = rows[0]
    assert header[:5] == ["rank", "name", "elo", "ci95", "los_next"]
    assert sum(r == header for r in rows) == 1 and len(rows) == 1 + len(TOURNAMENTS[name][1])
    assert [f"failures_{r}" for r in FAILURE_REASONS] == [h for h in header if h.startswith("failures_")]
    if name == "three":
        assert ["place_1", "place_2", "place_3"] == [h for h in header if h.startswith("place_")]
    for row in rows[1:]:
        assert len(row) == len(header)
        for key, cell in zip(header, row, strict=True):
            if key not in TEXT_COLUMNS and cell != "":
                float(cell)  # a plain number
    assert "note: prior" in done.stderr  # the caveats go to stderr


def test_table_json_keys_are_stable(played):
    data = json.loads(_invoke("table", str(played["1v1"]), "--format", "json").stdout)
    assert [list(row) for row in data] == [STANDINGS_KEYS_2] * len(data)
    multi = json.loads(_invoke("table", str(played["three"]), "--format", "json").stdout)
    keys = [k for k in STANDINGS_KEYS_2 if k not in ("wins", "draws", "losses")]
    keys.insert(keys.index("forfeits"), "places")
    assert [list(row) for row in multi] == [keys] * len(multi)


def test_table_what_selects_one_table(played):
    results = str(played["pairs"])
    crosstable = _invoke("table", results, "--format", "csv", "--what", "crosstable")
    assert crosstable.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(crosstable.stdout)))
    assert list(rows[0]) == ["name", "opponent", "points", "games"]
    as_json = json.loads(_invoke("table", results, "--format", "json", "--what", "crosstable").stdout)
    assert [{k: str(v) for k, v in r.items()} for r in as_json] == rows
    assert all(0 <= float(r["points"]) <= int(r["games"]) for r in rows)
    plain = _invoke("table", results).stdout
    assert "w-d-l" in plain and "opponent" not in plain and "score" in plain  # both tables by default
    assert "Note: partners rotate" in plain  # what a cell of the rotating-pairs crosstable is
    only = _invoke("table", results, "--what", "standings").stdout
    assert "w-d-l" in only and "Note: partners rotate" not in only
    legacy = _invoke("table", results, "--crosstable", "--format", "csv")
    assert legacy.exit_code == 0 and legacy.stdout == crosstable.stdout
    clash = _invoke("table", results, "--crosstable", "--what", "standings")
    assert clash.exit_code == ExitCode.BAD_INPUT


def test_crosstable_notes_say_what_a_cell_is(played):
    with ResultStore.open_existing(str(played["three"])) as store:
        three = standings_from_store(store)
    assert "1 when the row finished ahead of the column" in " ".join(format_crosstable(three, "plain").split())
    with ResultStore.open_existing(str(played["1v1"])) as store:
        two = standings_from_store(store)
    assert "the row's score against the column (a win 1, a draw 1/2)" in format_crosstable(two, "github")
    assert "Note" not in format_crosstable(two, "csv")


NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(\.0*)?(?![\w.])")


def test_no_negative_zero_in_any_format(tmp_path):
    # The golden store's middle bot is rated exactly between the two others: an Elo of about -1e-14.
    folder = tmp_path / "golden"
    import shutil

    shutil.copytree(GOLDEN_STORE, folder)
    with ResultStore.open_existing(str(folder)) as store:
        standings = standings_from_store(store)
    assert any(s.elo is not None and abs(s.elo) < 1e-6 for s in standings.bots)
    for fmt in ("plain", "github", "csv", "json"):
        for text in (format_standings(standings, fmt), format_crosstable(standings, fmt)):
            assert not NEGATIVE_ZERO.search(text), (fmt, text)
    symmetric = tmp_path / "r.csv"
    symmetric.write_text("side_a,side_b,score_a\na,b,1\nb,c,1\nc,a,1\nb,a,1\nc,b,1\na,c,1\n")
    for fmt in ("plain", "github", "csv", "json"):
        done = _invoke("rate", str(symmetric), "--format", fmt)
        assert done.exit_code == 0 and not NEGATIVE_ZERO.search(done.stdout), (fmt, done.stdout)


def test_rate_and_table_share_the_ratings_headers_and_keys(played, tmp_path):
    results = str(played["1v1"])
    path = tmp_path / "g.csv"
    _invoke("export", results, "--games", "csv", "-o", str(path))
    table_header = _invoke("table", results).stdout.splitlines()[0].split()
    rate_header = _invoke("rate", str(path)).stdout.splitlines()[0].split()
    assert table_header[:7] == rate_header[:7] == ["rank", "bot", "elo", "ci95", "los_next", "matches", "w-d-l"]
    table_keys = next(csv.reader(io.StringIO(_invoke("table", results, "--format", "csv").stdout)))
    rate_keys = next(csv.reader(io.StringIO(_invoke("rate", str(path), "--format", "csv").stdout)))
    assert table_keys[:10] == rate_keys[:10]
    table_json = json.loads(_invoke("table", results, "--format", "json").stdout)[0]
    rate_json = json.loads(_invoke("rate", str(path), "--format", "json").stdout)[0]
    assert list(rate_json)[:10] == list(table_json)[:10]
