"""``arena verify`` checks everything a table is computed from: every column of every store row
against its record and the schedule, the set of match ids against the schedule, the record's
rules and failures; ``arena table`` refuses a row that is not the schedule's. Stores and records
are tampered with here the way a hand (or a forger) would: sqlite edits of one column each."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.core.rules import Rules, Seating
from arena.errors import ExitCode
from arena.harness.local_bot import LocalBot
from arena.match.record import derive_row_values
from arena.match.referee import play_match
from arena.tournament.audit import DERIVED_COLUMNS, config_from_game, schedule_size
from arena.tournament.config import load_config
from arena.tournament.schedule import build_schedule
from arena.tournament.store import ResultStore

BOTS = Path(__file__).parents[1] / "data" / "tournament_bots"
cli = CliRunner()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three bots, six matches; ``crashy`` exits part-way through its matches (forfeits);
    ``greedy`` has time limits of its own."""
    folder = tmp_path_factory.mktemp("audit")
    path = folder / "audit.yaml"
    path.write_text(
        f"name: audit\nseed: 31\nrules: {{target: 7}}\noutput: {folder / 'out'}\nconcurrency: 2\n"
        "matches_per_pairing: 2\nbots:\n"
        f'  - {{name: first, cmd: "$PYTHON policybot.py first", cwd: "{BOTS}"}}\n'
        # Time limits of its own: what its records hold is what the file gives it.
        f'  - {{name: greedy, cmd: "$PYTHON policybot.py greedy", cwd: "{BOTS}", move_ms: 1500, startup_ms: 8000}}\n'
        f'  - {{name: crashy, cmd: "$PYTHON policybot.py hash", cwd: "{BOTS}", env: {{POLICYBOT_CRASH_AFTER: "9"}}}}\n'
    )
    result = cli.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    return folder / "out"


def _copy(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    copy.mkdir()
    with sqlite3.connect(finished / "results.sqlite") as a, sqlite3.connect(copy / "results.sqlite") as b:
        a.backup(b)
    return copy


def _sql(results: Path, statement: str, args: tuple = ()) -> None:
    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        conn.execute(statement, args)
    conn.close()


def _row(results: Path, where: str = "idx = 0") -> dict:
    conn = sqlite3.connect(results / "results.sqlite")
    conn.row_factory = sqlite3.Row
    row = dict(conn.execute(f"SELECT * FROM matches WHERE {where}").fetchone())
    conn.close()
    return row


def _verify(results: Path):
    return cli.invoke(app, ["verify", str(results)])


def _refusals(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith(("refused", "missing"))]


@pytest.mark.slow
def test_the_untouched_store_verifies(finished: Path):
    result = _verify(finished)
    assert result.exit_code == 0, result.output
    assert "all 6 records replay" in result.stdout
    with ResultStore.open_existing(str(finished)) as store:
        assert any(row.failures for row in store.results())  # the forfeits are there to be tampered with


def _failing_row_id(results: Path) -> str:
    conn = sqlite3.connect(results / "results.sqlite")
    found = conn.execute("SELECT id FROM matches WHERE failures != '[]' ORDER BY idx LIMIT 1").fetchone()
    conn.close()
    return str(found[0])


# Each column's edit: a plausible forgery that changes the standings (or where a match counts).
EDITS = {
    "escobas": lambda r: json.dumps([e + 3 for e in json.loads(r["escobas"])]),
    "failures": lambda r: json.dumps([]) if json.loads(r["failures"]) else json.dumps([[0, "timeout"]]),
    "terminations": lambda r: json.dumps(["ok"] * len(json.loads(r["terminations"])))
    if set(json.loads(r["terminations"])) != {"ok"} else json.dumps(["crash", "ok"]),
    "winner": lambda r: 1 - r["winner"] if r["winner"] is not None else 0,
    "scores": lambda r: json.dumps([s + 5 for s in json.loads(r["scores"])]),
    "reason": lambda r: "target" if r["reason"] != "target" else "max_hands",
    "hands": lambda r: r["hands"] + 1,
    "seats": lambda r: json.dumps(list(reversed(json.loads(r["seats"])))),
    "seed": lambda r: r["seed"] + 1,
    "sides": lambda r: json.dumps(list(reversed(json.loads(r["sides"])))),
    "pairing": lambda r: r["pairing"] + 1,
    "deal": lambda r: r["deal"] + 1,
}


@pytest.mark.parametrize("column", list(EDITS))
def test_an_edited_column_is_refused_naming_the_match_and_the_column(finished: Path, tmp_path: Path, column: str):
    results = _copy(finished, tmp_path)
    match_id = _failing_row_id(results)
    row = _row(results, f"id = '{match_id}'")
    _sql(results, f"UPDATE matches SET {column} = ? WHERE id = ?", (EDITS[column](row), match_id))
    result = _verify(results)
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    refused = _refusals(result)
    assert len(refused) == 1 and refused[0].startswith(f"refused {match_id}: "), result.stdout
    assert f" {column} " in refused[0], refused[0]
    assert "1 of 6 records refused" in result.stderr


def test_every_derived_column_is_compared():
    assert set(DERIVED_COLUMNS) == {"seed", "seats", "winner", "scores", "reason", "terminations", "escobas",
                                    "hands", "failures"}


def test_an_extra_row_is_refused_by_verify_and_not_counted_by_table(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    row = _row(results)
    row.update(id="99999.0", idx=99)
    _sql(results, f"INSERT INTO matches({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    result = _verify(results)
    assert result.exit_code == ExitCode.CHECK_FAILED
    refused = _refusals(result)
    assert len(refused) == 1 and refused[0].startswith("refused 99999.0: not in the tournament's schedule")
    for command in (["table", str(results)], ["report", str(results)]):
        table = cli.invoke(app, command)
        assert table.exit_code == ExitCode.BAD_INPUT, table.output
        lines = table.stderr.strip().splitlines()
        assert len(lines) == 1 and "'99999.0' is not in the tournament's schedule" in lines[0], lines


def test_a_row_moved_to_another_id_is_refused(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    first, second = _row(results, "idx = 0"), _row(results, "idx = 1")
    _sql(results, "DELETE FROM matches WHERE idx = 1")
    _sql(results, "UPDATE matches SET id = ? WHERE idx = 0", (second["id"],))  # match 0 stored as match 1
    result = _verify(results)
    assert result.exit_code == ExitCode.CHECK_FAILED
    lines = _refusals(result)
    assert f"missing {first['id']}: in the schedule, not in the store" in "\n".join(lines)
    assert any(line.startswith(f"refused {second['id']}:") for line in lines), lines
    assert cli.invoke(app, ["table", str(results)]).exit_code == ExitCode.BAD_INPUT


def test_a_deleted_row_is_reported_missing(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    gone = _row(results, "idx = 3")["id"]
    _sql(results, "DELETE FROM matches WHERE idx = 3")
    result = _verify(results)
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert _refusals(result) == [f"missing {gone}: in the schedule, not in the store (deleted, or not played yet: "
                                 "arena run resumes)"]
    assert "0 of 5 records refused; 1 scheduled match missing" in result.stderr
    # A store with a match still to play is what an interrupted run leaves: its table is shown.
    assert cli.invoke(app, ["table", str(results)]).exit_code == 0


def _set_record(results: Path, match_id: str, record: dict) -> None:
    _sql(results, "UPDATE matches SET record = ? WHERE id = ?", (json.dumps(record), match_id))


def _record(results: Path, match_id: str) -> dict:
    return json.loads(_row(results, f"id = '{match_id}'")["record"])


def test_a_faked_termination_in_a_stored_record_is_refused(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    conn = sqlite3.connect(results / "results.sqlite")
    match_id = conn.execute("SELECT id FROM matches WHERE failures = '[]' ORDER BY idx LIMIT 1").fetchone()[0]
    conn.close()
    record = _record(results, match_id)
    record["outcomes"][0].update(termination="timeout", detail="no answer in 2000 ms")  # a loss invented
    _set_record(results, match_id, record)
    _sql(results, "UPDATE matches SET terminations = ? WHERE id = ?",
         (json.dumps(["timeout"] + ["ok"] * (len(record["seats"]) - 1)), match_id))
    refused = _refusals(_verify(results))
    assert len(refused) == 1 and refused[0].startswith(f"refused {match_id}: record does not replay")
    assert "outcome is timeout" in refused[0]


def test_an_invented_failure_entry_in_a_stored_record_is_refused(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    match_id = _failing_row_id(results)
    record = _record(results, match_id)
    record["failures"].insert(0, {"seat": 0, "termination": "illegal_move", "detail": "invented", "move_index": 0,
                                  "action": "substitute", "substitute": record["moves"][0]["move"]})
    _set_record(results, match_id, record)
    refused = _refusals(_verify(results))
    assert len(refused) == 1 and refused[0].startswith(f"refused {match_id}: record does not replay")
    assert "failure 1 (seat 0, illegal_move" in refused[0]


def test_a_true_record_of_another_match_is_refused(finished: Path, tmp_path: Path):
    # The record of match 1 stored under match 0, its row's summary made to agree with it.
    results = _copy(finished, tmp_path)
    first, second = _row(results, "idx = 0"), _row(results, "idx = 1")
    _sql(results, "UPDATE matches SET record = ?, winner = ?, scores = ?, reason = ?, terminations = ?, escobas = ?,"
                  " hands = ?, failures = ? WHERE idx = 0",
         tuple(second[c] for c in ("record", "winner", "scores", "reason", "terminations", "escobas", "hands",
                                   "failures")))
    refused = _refusals(_verify(results))
    assert len(refused) == 1 and refused[0].startswith(f"refused {first['id']}: ")
    assert "seed" in refused[0] or "seats" in refused[0]


def test_a_record_played_under_other_rules_is_refused(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    row = _row(results, "failures = '[]'")
    seats = json.loads(row["seats"])
    # A real match, with this row's seed and seats, to 11 points instead of the tournament's 7.
    record = play_match([LocalBot(name, seed=i) for i, name in enumerate(seats)], Rules(target=11),
                        Seating.alone(2), row["seed"])
    derived = derive_row_values(record)
    _sql(results, "UPDATE matches SET record = ?, winner = ?, scores = ?, reason = ?, hands = ?, escobas = ?,"
                  " terminations = ?, failures = ? WHERE id = ?",
         (json.dumps(record.to_dict()), derived.winner, json.dumps(derived.scores), derived.reason, derived.hands,
          json.dumps(derived.escobas), json.dumps([t.value for t in derived.terminations]),
          json.dumps([[seat, t.value] for seat, t in derived.failures]), row["id"]))
    refused = _refusals(_verify(results))
    # (Its in-process players had the default time limits too, not the file's: said after.)
    assert len(refused) == 1
    assert refused[0].startswith(f"refused {row['id']}: its record was played under other rules than the tournament's")


def test_a_meta_that_describes_no_tournament_is_one_line(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    _sql(results, "UPDATE meta SET value = json_set(value, '$.matches_per_pairing', 1000000, '$.bots',"
                  " json('[" + ",".join(f'{{"name": "b{i}"}}' for i in range(40)) + "]')) WHERE key = 'game'")
    for command in ("verify", "table"):
        result = cli.invoke(app, [command, str(results)])
        assert result.exit_code == ExitCode.BAD_INPUT, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "meta 'game' does not describe a tournament" in lines[0], lines


@pytest.mark.parametrize("extra", [
    "",
    "format: double_round_robin\n",
    "format: gauntlet\nchallenger: c\n",
    "duplicate: false\nmatches_per_pairing: 3\n",
    "players: 3\nmatches_per_pairing: 6\n",
    "mode: pairs\nplayers: 4\n",
    "mode: pairs\nplayers: 4\nteams: rotating\n",
    "mode: pairs\nplayers: 6\nteam_size: 3\nteams: rotating\n",
    "mode: pairs\nplayers: 4\nteams: [{name: x, members: [a, b]}, {name: y, members: [c, d]}]\n",
])
def test_the_schedule_rebuilt_from_a_stores_meta_is_the_runs(tmp_path: Path, extra: str):
    (tmp_path / "b.py").write_text("")
    bots = "".join(f"  - {{name: {n}, cmd: python3 b.py}}\n" for n in "abcdef")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 3\n{extra}bots:\n{bots}")
    config = load_config(path)
    again = config_from_game(json.loads(json.dumps(config.game_dict())))
    schedule = build_schedule(config)
    assert build_schedule(again) == schedule
    assert schedule_size(again) == len(schedule)


@pytest.mark.parametrize("duration", [-5.0, float("inf"), 0.000001])
def test_a_duration_no_clock_gives_is_refused(finished: Path, tmp_path: Path, duration: float):
    # -5 s, infinity, and 1 us: shorter than the referee's own time inside the row's match.
    results = _copy(finished, tmp_path)
    row = _row(results)
    assert json.loads(row["record"])["duration_ms"] > 0.01
    _sql(results, "UPDATE matches SET duration = ? WHERE idx = 0", (duration,))
    refused = _refusals(_verify(results))
    assert len(refused) == 1 and refused[0].startswith(f"refused {row['id']}: the store's summary row does not match"), \
        refused
    assert ("a duration is a non-negative number of seconds" if duration != 0.000001
            else "which it contains") in refused[0]


def test_a_move_longer_than_its_match_in_a_stored_record_is_refused(finished: Path, tmp_path: Path):
    # (A negative time is refused by the record's own parsing: malformed.)
    results = _copy(finished, tmp_path)
    row = _row(results)
    record = json.loads(row["record"])
    record["moves"][0]["ms"] = record["duration_ms"] + 50
    _set_record(results, row["id"], record)
    refused = _refusals(_verify(results))
    assert len(refused) == 1 and refused[0].startswith(f"refused {row['id']}: ") and "move 1 took " in refused[0], \
        refused


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, "longer"])
def test_the_first_move_whose_time_no_clock_gives_is_named(finished: Path, bad: object):
    """Every move's time is checked at once, and where one is wrong the first of them is named:
    one not finite, negative, or longer than its match (a negative one read in a stored record
    is refused as malformed first)."""
    from dataclasses import replace

    from arena.match.record import GameRecord
    from arena.tournament.audit import duration_differences
    from arena.tournament.store import ResultStore

    with ResultStore.open_existing(str(finished)) as store:
        row = store.results()[0]
        record = GameRecord.from_dict(store.record(row.id))
    assert duration_differences(row, record) == []
    wrong = record.duration_ms + 50 if bad == "longer" else bad
    moves = list(record.moves)
    for index in (5, 9):
        moves[index] = moves[index]._replace(ms=wrong)
    found = duration_differences(row, replace(record, moves=tuple(moves)))
    assert len(found) == 1 and found[0].startswith("move 6 took "), found


def test_a_record_with_edited_limits_is_refused(finished: Path, tmp_path: Path):
    results = _copy(finished, tmp_path)
    row = _row(results)
    record = json.loads(row["record"])
    record["limits"][1]["move_ms"] = record["limits"][1]["move_ms"] * 10  # more time than the file gave
    _set_record(results, row["id"], record)
    refused = _refusals(_verify(results))
    seat_bot = record["seats"][1]
    assert len(refused) == 1 and refused[0].startswith(
        f"refused {row['id']}: its record's limits of seat 1 ({seat_bot}) are not the tournament file's: move_ms "), refused


@pytest.mark.parametrize("column,value", [("terminations", '["ok", "sulking"]'), ("failures", '[[0, "sulking"]]')])
def test_a_failure_reason_the_arena_has_not_is_a_damaged_store(finished: Path, tmp_path: Path, column: str, value: str):
    """The store's rows parse to the arena's own failure reasons (``Termination``): another
    word is a damaged row, one line naming the column and what it may hold."""
    results = _copy(finished, tmp_path)
    _sql(results, f"UPDATE matches SET {column} = ? WHERE idx = 0", (value,))
    result = cli.invoke(app, ["table", str(results)])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    line = result.stderr.strip()
    assert "\n" not in line and f"column {column}: expected one of ok, no_handshake, timeout" in line, line
    assert "'sulking'" in line


def test_verify_by_worker_processes_says_what_verify_in_process_says(finished: Path, tmp_path: Path, monkeypatch):
    """A large store is verified by worker processes (as the report checks it): the same lines,
    in the same order, and the same exit code, for an extra row, a missing match, a damaged
    record and an untouched one."""
    import arena.cli.replay as cli_replay

    results = _copy(finished, tmp_path)
    extra = _row(results)
    extra.update(id="99999.0", idx=99)
    _sql(results, f"INSERT INTO matches({', '.join(extra)}) VALUES ({', '.join('?' * len(extra))})", tuple(extra.values()))
    _sql(results, "DELETE FROM matches WHERE idx = 1")
    third = _row(results, "idx = 2")
    record = json.loads(third["record"])
    record["moves"][0]["move"] = "nonsense"
    _sql(results, "UPDATE matches SET record = ? WHERE id = ?", (json.dumps(record), third["id"]))
    alone = cli.invoke(app, ["verify", "-v", str(results)])
    monkeypatch.setattr(cli_replay, "REPORT_POOL_FROM", 1)
    pooled = cli.invoke(app, ["verify", "-v", str(results)])
    assert alone.exit_code == pooled.exit_code == ExitCode.CHECK_FAILED
    assert alone.stdout == pooled.stdout
    lines = alone.stdout.splitlines()
    assert [line.split(":")[0].split()[0] for line in lines] == ["ok", "refused", "ok", "ok", "ok", "refused", "missing"]
    assert "2 of 6 records refused; 1 scheduled match missing" in pooled.stderr
