"""Results files for the rating fit: streaming CSV, JSON lines, and `arena rate` on both."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.rating.inputs import ResultsFileError, iter_results_csv, iter_results_jsonl, parse_results_csv, read_results
from arena.rating.table import MatchResult, PairResult, ResultInputError, fit_ratings

runner = CliRunner()

JSONL = """{"sides": [["a"], ["b"], ["c"]], "scores": [21, 15, 9]}
{"sides": [["b"], ["c"], ["a"]], "scores": [21, 15, 15]}

{"sides": ["c", "a", "b"], "places": [1, 2, 3], "id": "m3"}
{"sides": [["a"], ["c"]], "scores": [3, 21]}
"""


def test_jsonl_lines_become_match_results():
    got = list(iter_results_jsonl(JSONL.splitlines(keepends=True), "m.jsonl"))
    assert got == [
        MatchResult((("a",), ("b",), ("c",)), (1, 2, 3)),
        MatchResult((("b",), ("c",), ("a",)), (1, 2, 2)),
        MatchResult((("c",), ("a",), ("b",)), (1, 2, 3)),
        MatchResult((("a",), ("c",)), (2, 1)),
    ]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", 'expected a JSON object with "sides"'),
        ('{"sides": [["a"]], "scores": [1]}', '"sides" must be a list of at least two sides'),
        ('{"sides": [["a"], []], "scores": [1, 2]}', "side 2 must be a non-empty list of bot names"),
        ('{"sides": [["a"], [3]], "scores": [1, 2]}', "side 2 must be a non-empty list of bot names"),
        ('{"sides": [["a"], ["b"]]}', 'exactly one of "scores"'),
        ('{"sides": [["a"], ["b"]], "scores": [1], "places": [1, 2]}', 'exactly one of "scores"'),
        ('{"sides": [["a"], ["b"]], "scores": [1]}', '"scores" must be a list of 2 numbers'),
        ('{"sides": [["a"], ["b"]], "scores": [1, "x"]}', '"scores" must hold numbers'),
        ('{"sides": [["a"], ["b"]], "scores": [1, true]}', '"scores" must hold numbers'),
        ('{"sides": [["a"], ["b"]], "places": [1, 1.5]}', '"places" must be whole numbers'),
        # Past any machine integer: an internal error (exit 4) before it was checked.
        ('{"sides": [["a"], ["b"]], "places": [1, 9223372036854775808]}', 'to 2 (the number of sides)'),
        ('{"sides": [["a"], ["b"], ["a"]], "scores": [1, 2, 3]}', "bot 'a' is on two sides"),
        ('{"sides": [["a", "d"], ["b"]], "scores": [1, 2]}', "different sizes"),
        ('{"sides": [["a", "a"], ["b", "c"]], "scores": [1, 2]}', "same bot twice"),
        ('{"sides": [[" "], ["b"]], "scores": [1, 2]}', "empty or non-text bot name"),
    ],
)
def test_bad_jsonl_lines_name_their_line(line, fragment):
    text = '{"sides": [["x"], ["y"]], "scores": [2, 1]}\n\n' + line + "\n"
    with pytest.raises(ResultsFileError) as info:
        list(iter_results_jsonl(text.splitlines(keepends=True), "m.jsonl"))
    assert info.value.line == 3
    assert str(info.value).startswith("m.jsonl:3: ") and fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_empty_jsonl_is_an_error():
    with pytest.raises(ResultsFileError, match="no results; expected one JSON object per line"):
        list(iter_results_jsonl(["\n", "  \n"], "e.jsonl"))


def test_csv_streams_and_names_the_bad_line_after_good_ones(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("side_a,side_b,score_a\n" + "a,b,1\n" * 1000 + "a,b,2\n" + "a,b,1\n" * 10)
    stream = read_results(path)
    first = [next(stream) for _ in range(1000)]  # results arrive before the bad line is read
    assert first[0] == PairResult(("a",), ("b",), 1.0)
    with pytest.raises(ResultsFileError) as info:
        next(stream)
    assert (info.value.line, info.value.message) == (1002, "score_a must be 1, 0.5 or 0, got '2'")


def test_csv_fast_and_general_rows_agree():
    text = "side_a,side_b,score_a\na,b,1\n a , b ,0.5\na+c,b+d,0\n\nb,a, 1\n"
    results, lines = parse_results_csv(text)
    assert results == (
        PairResult(("a",), ("b",), 1.0),
        PairResult(("a",), ("b",), 0.5),
        PairResult(("a", "c"), ("b", "d"), 0.0),
        PairResult(("b",), ("a",), 1.0),
    )
    assert lines == (2, 3, 4, 6)
    assert list(iter_results_csv(text.splitlines(keepends=True))) == list(results)
    with pytest.raises(ResultsFileError, match="on both sides"):
        list(iter_results_csv(["side_a,side_b,score_a\n", "a, a,1\n"]))


def test_read_results_file_problems(tmp_path):
    with pytest.raises(ResultsFileError, match="cannot read"):
        list(read_results(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"sides": ["a", "b"], "scores": [1, 0]}\n\xff\xfe\n')
    with pytest.raises(ResultsFileError) as info:
        list(read_results(bad))
    assert info.value.line == 2 and "not UTF-8" in info.value.message
    csv_path = tmp_path / "bad.csv"
    csv_path.write_bytes(b"side_a,side_b,score_a\na,b,1\n\xff\n")
    with pytest.raises(ResultsFileError) as info:
        list(read_results(csv_path))
    assert info.value.line == 3 and "not UTF-8" in info.value.message


def test_rate_reads_jsonl_and_shows_places(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(JSONL)
    result = runner.invoke(app, ["rate", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    table = fit_ratings(read_results(path), prior=None)
    assert rows["a"]["elo"] == pytest.approx(table["a"].elo, abs=0.01)
    assert rows["a"]["matches"] == 4  # matches played, not one per opponent
    assert (rows["a"]["wins"], rows["a"]["losses"]) == (0, 1)  # the one two-sided match
    assert rows["a"]["places"] == [1, 2, 0]  # tied for 2nd in the second match
    assert "model: Plackett-Luce" in result.stderr
    plain = runner.invoke(app, ["rate", str(path)])
    assert plain.exit_code == 0
    assert "w-d-l, places 1st-2nd-3rd" in plain.stdout and "0-0-1, places 1-2-0" in plain.stdout


def test_rate_jsonl_error_is_one_line_exit_2(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(JSONL + '{"sides": [["a"], ["b"]], "scores": [1, 2, 3]}\n')
    result = runner.invoke(app, ["rate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f'error: {path}:6: "scores" must be a list of 2 numbers, one per side'


@pytest.mark.parametrize("places", [[1, 1.5], [0, 1], [1, 3]])
def test_a_file_and_the_fit_refuse_the_same_places_for_the_same_reason(places):
    # One rule of what finishing places are: the JSON reader says it as the fit does, under
    # the file's key name.
    sides = [["a"], ["b"]]
    with pytest.raises(ResultsFileError) as from_file:
        list(iter_results_jsonl([json.dumps({"sides": sides, "places": places})], "m.jsonl"))
    with pytest.raises(ResultInputError) as from_fit:
        fit_ratings([MatchResult((("a",), ("b",)), tuple(places))])
    assert from_file.value.message.startswith('"places" must be whole numbers')
    assert from_file.value.message.removeprefix('"places" ') == from_fit.value.reason.removeprefix("places ")
