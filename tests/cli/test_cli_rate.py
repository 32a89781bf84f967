"""Tests for ``arena rate`` through typer's CliRunner."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.cli.rate import ResultsCsvError, format_ratings, parse_results_csv
from arena.rating.table import PairResult, fit_ratings
from arena.render.tables import TableFormat

runner = CliRunner()


def _invoke(*args: str):
    return runner.invoke(app, ["rate", *args])


GOOD = """side_a,side_b,score_a
alpha,beta,1
beta,alpha,0.5
alpha,gamma,0
beta,gamma,1
gamma,beta,0
gamma,alpha,0.5
"""


@pytest.fixture
def good_csv(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(GOOD)
    return path


def test_plain_table(good_csv):
    result = _invoke(str(good_csv))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # The same headers as the ratings columns of `arena table`.
    assert lines[0].split()[:7] == ["rank", "bot", "elo", "ci95", "los_next", "matches", "w-d-l"]
    body = [line.split() for line in lines[2:5]]
    table = fit_ratings(parse_results_csv(GOOD)[0])
    assert [row[1] for row in body] == [r.name for r in table.ratings]
    assert body[0][2] == f"{table.ratings[0].elo:+.0f}"
    assert body[0][3] == f"±{table.ratings[0].ci95:.0f}"
    assert body[0][4] == f"{100 * table.ratings[0].los_next:.1f}%"
    assert "group" not in lines[0]  # one group only: no group column


def test_github_format(good_csv):
    result = _invoke(str(good_csv), "--format", "github")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| ") and lines[1].startswith("|--")
    assert len(lines) == 8  # header, rule, three bots, a blank line, the notes naming the model and the prior
    assert lines[6].startswith("Note: model: Bradley-Terry") and lines[7].startswith("Note: prior: 2 virtual draws per bot")


def test_json_keys_and_values(good_csv):
    result = _invoke(str(good_csv), "--format", "json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert len(rows) == 3
    for key in ("name", "elo", "ci95", "matches", "wins", "losses", "draws", "los_next", "rank", "note", "group"):
        assert all(key in row for row in rows), key
    by_name = {row["name"]: row for row in rows}
    assert (by_name["alpha"]["matches"], by_name["alpha"]["wins"], by_name["alpha"]["draws"],
            by_name["alpha"]["losses"]) == (4, 1, 2, 1)
    assert sum(row["elo"] for row in rows) == pytest.approx(0.0, abs=0.02)
    assert [row["rank"] for row in rows] == [1, 2, 3]


def test_csv_format_round_trips(good_csv):
    result = _invoke(str(good_csv), "--format", "csv")
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == ["rank", "name", "elo", "ci95", "los_next", "group", "matches", "wins", "draws",
                             "losses", "status", "note"]
    assert {row["name"] for row in rows} == {"alpha", "beta", "gamma"}
    assert rows[-1]["los_next"] == ""


def test_anchor_and_prior_options(good_csv):
    result = _invoke(str(good_csv), "--format", "json", "--anchor", "beta=1500", "--prior", "2")
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["beta"]["elo"] == pytest.approx(1500.0)
    plain = _invoke(str(good_csv), "--anchor", "gamma")
    assert plain.exit_code == 0
    assert "anchor: gamma = 0" in plain.stdout


def test_perfect_record_and_groups_are_explained(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(GOOD + "champ,alpha,1\nchamp,beta,1\nx+y,z+w,1\nz+x,y+w,0\nx+w,y+z,0.5\nz+w,x+y,1\n")
    result = _invoke(str(path), "--prior", "0")  # the pure maximum-likelihood fit
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[2]
    assert "champ" in first and "+inf" in first
    assert "won all 2 matches: rating unbounded above; a positive --prior (the default) gives a finite estimate" in first
    assert "group" in result.stdout.splitlines()[0]
    assert "never met" in result.stdout
    rows = {row["name"]: row for row in json.loads(_invoke(str(path), "--format", "json", "--prior", "0").stdout)}
    assert rows["champ"]["elo"] is None and rows["champ"]["status"] == "unbounded_above"
    # By default the weak prior makes the same perfect record finite, with a wide interval.
    default = {row["name"]: row for row in json.loads(_invoke(str(path), "--format", "json").stdout)}
    assert default["champ"]["status"] == "rated" and default["champ"]["elo"] > default["alpha"]["elo"]
    assert default["champ"]["ci95"] > default["alpha"]["ci95"]  # 2 matches against alpha's 4
    assert rows["x"]["group"] == 2


def test_named_columns_after_score_a_are_ignored(tmp_path):
    # What `arena export --games csv` writes: the three columns, then the match for people.
    extra = "side_a,side_b,score_a,id,reason\n" + "".join(
        f"{line},m{k},target\n" for k, line in enumerate(GOOD.splitlines()[1:]))
    assert parse_results_csv(extra)[0] == parse_results_csv(GOOD)[0]
    path = tmp_path / "extra.csv"
    path.write_text(extra)
    plain = tmp_path / "plain.csv"
    plain.write_text(GOOD)
    assert _invoke(str(path), "--format", "json").stdout == _invoke(str(plain), "--format", "json").stdout
    path.write_text(extra + "alpha,beta,1,short\n")
    short = _invoke(str(path))
    assert short.exit_code == 2 and "expected 5 columns" in short.stderr and ":8:" in short.stderr
    path.write_text("side_a,side_b,score_a,,reason\nalpha,beta,1,x,y\n")
    assert _invoke(str(path)).exit_code == 2  # an unnamed column is not a header


def test_teams_are_parsed():
    results, lines = parse_results_csv("side_a,side_b,score_a\n a + b ,c+d,0.5\n\nc+a,b+d,1\n")
    assert results == (PairResult(("a", "b"), ("c", "d"), 0.5), PairResult(("c", "a"), ("b", "d"), 1.0))
    assert lines == (2, 4)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 1, "empty file; expected the header 'side_a,side_b,score_a'"),
        ("\n\n", 1, "empty file"),
        ("a,b,1\n", 1, "expected the header 'side_a,side_b,score_a', got 'a,b,1'"),
        ("side_a,side_b,result\na,b,1\n", 1, "expected the header"),
        ("side_a,side_b,score_a\n", 2, "no results after the header"),
        ("side_a,side_b,score_a\na,b,1\na,b\n", 3, "expected 3 columns"),
        ("side_a,side_b,score_a\na,b,1,extra\n", 2, "expected 3 columns"),
        ("side_a,side_b,score_a\na,b,1\n\na,b,2\n", 4, "score_a must be 1, 0.5 or 0, got '2'"),
        ("side_a,side_b,score_a\na,b,win\n", 2, "score_a must be 1, 0.5 or 0"),
        ("side_a,side_b,score_a\n,b,1\n", 2, "side_a is empty"),
        ("side_a,side_b,score_a\na++c,b+d,1\n", 2, "empty name"),
        ("side_a,side_b,score_a\na,b,1\na,a,1\n", 3, "on both sides"),
        ("side_a,side_b,score_a\na+c,b,1\n", 2, "different sizes"),
    ],
)
def test_bad_csv_is_one_line_exit_2(tmp_path, text, line, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result = _invoke(str(path))
    assert result.exit_code == 2
    assert result.stdout == ""
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"error: {path}:{line}: ")
    assert fragment in err
    assert "Traceback" not in result.output


def test_parse_error_is_typed():
    with pytest.raises(ResultsCsvError) as info:
        parse_results_csv("side_a,side_b,score_a\na,b,3\n", "f.csv")
    assert (info.value.source, info.value.line) == ("f.csv", 2)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--anchor", "nobody"], "anchor 'nobody': no such bot"),
        (["--anchor", "alpha=high"], "--anchor: expected NAME or NAME=ELO"),
        (["--prior", "-3"], "--prior: expected a number of virtual draws >= 0"),
        (["--prior", "nan"], "--prior: expected a number of virtual draws >= 0"),
    ],
)
def test_bad_options_exit_2(good_csv, args, fragment):
    result = _invoke(str(good_csv), *args)
    assert result.exit_code == 2
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_and_binary_files_exit_2(tmp_path):
    missing = tmp_path / "nope.csv"
    result = _invoke(str(missing))
    assert result.exit_code == 2
    assert str(missing) in result.stderr and "cannot read" in result.stderr
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    result = _invoke(str(binary))
    assert result.exit_code == 2
    assert "not UTF-8" in result.stderr


def test_format_ratings_is_pure_text():
    table = fit_ratings(parse_results_csv(GOOD)[0])
    for fmt in TableFormat:
        out = format_ratings(table, fmt)
        assert "alpha" in out
