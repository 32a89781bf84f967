"""``arena compare RESULTS... A B`` over a league: two versions found wherever they played, the
deals where they met, and the deals they played apart against the same opponents.

The stores are real tournament stores played by seeded in-process stand-ins (league_helpers);
each version's identity is written into their meta as ``arena run`` records it."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import league_helpers
import pytest
from league_helpers import _store
from typer.testing import CliRunner

from arena.cli import app
from arena.errors import ExitCode
from arena.league.compare import CompareError, compare
from arena.tournament.store import ResultStore

runner = CliRunner()
FIELD = {"luis": "l", "marta": "m"}


def _arena(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def league(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """v1 of ana in t1; v2 in t2, the same file and seed (so the same deals, seats and
    opponents), playing otherwise; both head to head in t3, named as arena sprt names them."""
    root = tmp_path / "league"
    _store(root, "t1", versions={"ana": "a1", **FIELD}, date="2026-01-01T00:00:00+00:00")
    monkeypatch.setattr(league_helpers, "FIRST_MOVERS", ("marta", "ana"))
    _store(root, "t2", versions={"ana": "a2", **FIELD}, date="2026-02-01T00:00:00+00:00")
    monkeypatch.setattr(league_helpers, "FIRST_MOVERS", ("bot",))
    _store(root, "t3", bots=("bot", "bot_v1"), versions={"bot": "a2", "bot_v1": "a1"},
           date="2026-03-01T00:00:00+00:00")
    return root


def _rows(folder: Path) -> list:
    with ResultStore.open_existing(str(folder)) as store:
        return list(store.iter_rows())


def _score(row, name: str) -> float:
    side = row.sides.index(name)
    return 0.5 if row.winner is None else float(row.winner == side)


def test_two_versions_are_found_across_the_league_with_where_they_met_and_where_they_differ(league: Path):
    result = compare([league], "bot_v1", "bot")  # the names the SPRT-style folder uses
    assert result.a.identity != result.b.identity and result.a.name == result.b.name == "ana"
    assert result.a.tournaments == (str(league / "t1"), str(league / "t3"))
    assert result.b.tournaments == (str(league / "t2"), str(league / "t3"))
    assert result.a.pool == result.b.pool == 1 and not result.notes
    # Head to head: t3's duplicate deals, and those one side won from both seats.
    by_deal: dict[int, list] = defaultdict(list)
    for row in _rows(league / "t3"):
        by_deal[row.deal].append(row)
    assert result.deals_met == len(by_deal) == 2
    swept = {deal: rows[0].sides[rows[0].winner] for deal, rows in by_deal.items()
             if len({r.sides[r.winner] if r.winner is not None else None for r in rows}) == 1
             and rows[0].winner is not None}
    label = {"bot_v1": result.a.label, "bot": result.b.label}
    assert {s.deal: s.winner for s in result.sweeps} == {deal: label[winner] for deal, winner in swept.items()}
    assert all(s.folder == str(league / "t3") and len(s.ids) == 2 for s in result.sweeps)
    # Apart: t1 and t2 hold one schedule, so a deal is a match id; ana's deals against each opponent.
    old = {row.id: row for row in _rows(league / "t1") if "ana" in row.seats}
    new = {row.id: row for row in _rows(league / "t2") if "ana" in row.seats}
    assert old.keys() == new.keys()
    deals: dict[tuple[str, int], list[str]] = defaultdict(list)
    for match_id, row in old.items():
        deals[next(s for s in row.seats if s != "ana"), row.deal].append(match_id)
    assert result.deals_shared == len(deals) == 4
    differ = {key for key, ids in deals.items()
              if sum(_score(old[i], "ana") for i in ids) != sum(_score(new[i], "ana") for i in ids)}
    assert differ, "the stand-ins of the two versions play differently"
    assert {(f.opponents, f.a[0].deal) for f in result.flips} == {((opponent,), deal) for opponent, deal in differ}
    for flip in result.flips:
        assert [m.id for m in flip.a] == [m.id for m in flip.b]  # the same matches, seat by seat
        assert {m.folder for m in flip.a} == {str(league / "t1")} and {m.folder for m in flip.b} == {str(league / "t2")}
        assert flip.a_points == sum(_score(old[m.id], "ana") for m in flip.a)
        assert flip.b_points == sum(_score(new[m.id], "ana") for m in flip.b)
    widths = [abs(f.a_points - f.b_points) for f in result.flips]
    assert widths == sorted(widths, reverse=True)


def test_compare_json_has_name_version_identity_and_a_replay_for_each_match(league: Path):
    assert _arena("report", league / "t3").exit_code == 0
    out = _arena("compare", league / "t1", league / "t2", league / "t3", "bot", "bot_v1", "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    for side in ("a", "b"):
        assert {"name", "version", "identity"} <= data[side].keys() and len(data[side]["identity"]) == 64
    assert data["a"]["name"] != data["b"]["name"] and data["a"]["bot"] == data["b"]["bot"] == "ana"
    t3 = str(league / "t3")
    for sweep in data["met"]["sweeps"]:
        for match in sweep["matches"]:
            assert match["replay"] == f"arena replay {t3} {match['id']}"
            # The report of t3 was written: each match links its replay page there.
            assert match["page"] == f"{t3}/report_replays/replay.html#{match['id']}"
            assert Path(match["page"].split("#")[0]).is_file()
    flips = data["apart"]["flips"]
    assert data["apart"]["deals"] == 4 and flips
    for flip in flips:
        for side in ("a", "b"):
            assert flip[side]["points"] == sum({"won": 1, "drew": 0.5, "lost": 0}[m["result"]]
                                               for m in flip[side]["matches"])
            assert all(m["page"] is None and m["replay"].startswith("arena replay ") for m in flip[side]["matches"])
    text = _arena("compare", league, "bot", "bot_v1")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].split()[:3] == ["bot", "version", "identity"]
    assert any(" met on 2 duplicate deals; " in line for line in lines)
    assert any(" played 4 deals against the same opponents from the same seats; the results differ on "
               f"{len(flips)} " in line for line in lines)


def test_an_ambiguous_or_unknown_bot_is_one_line_naming_the_choices(league: Path):
    with pytest.raises(CompareError, match="'ana' is 2 programs here; name one: "):
        compare([league], "ana", "luis")
    for args in (["ana", "luis"], ["nobody", "luis"], ["luis"], ["luis", "luis"]):
        result = _arena("compare", league, *args)
        assert result.exit_code == ExitCode.BAD_INPUT, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
