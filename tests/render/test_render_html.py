"""The HTML renderer without a browser: its assets are package files, options travel as JSON,
and any string survives the JSON island (tests/render/test_html_browser.py loads the pages)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from replay_helpers import play

from arena.core.rules import Seating
from arena.match.replay import replay, verify_steps
from arena.render.html import REPLAY_SCHEMA_VERSION, asset, json_island
from arena.render.html import render_replay_html as _render
from arena.render.html import replay_data as _data
from arena.render.suits import SuitStyle
from arena.render.text import CAPTIONS, escoba_text


def render_replay_html(rep, title: str = "", suits: str = "spanish") -> str:  # noqa: ANN001
    record, steps = verify_steps(rep.record)
    return _render(record, steps, title=title, suits=suits)


def replay_data(rep):  # noqa: ANN001, ANN201
    record, steps = verify_steps(rep.record)
    return _data(record, steps)

NASTY = [
    "<!--",
    "</script>",
    "<script>alert(1)</script>",
    "]]>",
    "&amp; &lt;",
    "\"'`\\",
    "\x00\x01\x1b[31m\x7f",
    "\u2028\u2029",
    "\ud800 lone surrogate",
    "\ue000\u27e6 7o \u27e7\ue001",
]


@pytest.mark.parametrize("text", NASTY)
def test_any_string_survives_the_json_island(text: str):
    island = json_island({"name": text, "list": [text, 1, None]})
    assert island.isascii()
    for bad in ("<", ">", "&"):
        assert bad not in island
    assert json.loads(island) == {"name": text, "list": [text, 1, None]}


def test_the_page_is_built_from_package_files_and_options_are_data():
    rep = replay(play(Seating.alone(2), {"target": 5}, 3))
    spanish = render_replay_html(rep)
    french = render_replay_html(rep, suits="french")
    for name in ("replay.js", "replay.css", "page.css", "suits.svg", "replay.html"):
        body = asset(name)
        assert len(body) > 100 and body in spanish and body in french  # the same file, not edited
    assert '<script type="application/json" id="replay-config">{"suits":"french"}</script>' in french
    assert '<script type="application/json" id="replay-config">{"suits":"spanish"}</script>' in spanish


def test_a_lone_surrogate_in_a_name_still_makes_a_page():
    record = play(Seating.alone(2), {"target": 5}, 3)
    data = record.to_dict()
    data["seats"] = ["bad\ud800name", data["seats"][1]]
    for outcome in data["outcomes"]:
        if outcome["seat"] == 0:
            outcome["bot"] = "bad\ud800name"
    page = render_replay_html(replay(data), title="title \udfff")
    page.encode("utf-8")  # a page that cannot be written would fail here


def test_the_captions_are_data_and_leave_the_escoba_to_the_badge():
    # The page fills these templates (tests/render/test_html_browser.py checks it says what the
    # terminal says, frame by frame, and keeps names that look like markup as text).
    rep = replay(play(Seating.alone(2), {"target": 21}, 41))
    data = replay_data(rep)
    assert data["captions"]["texts"] == dict(CAPTIONS)
    assert not any("ESCOBA" in text for text in CAPTIONS.values())
    assert data["captions"]["escobas"][0] == escoba_text(1)


# --- the replay page's data: versioned, and documented key by key ---------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "REPLAY.md"


def _documented_keys() -> dict[str, set[str]]:
    """docs/REPLAY.md's section "The replay page's data": subsection title -> the keys of its table."""
    section = DOCS.read_text(encoding="utf-8").split("## The replay page's data\n", 1)[1].split("\n## ", 1)[0]
    tables: dict[str, set[str]] = {}
    for part in section.split("\n### ")[1:]:
        title = part.split("\n", 1)[0]
        tables[title] = set(re.findall(r"^\| `([a-z_0-9]+)` \|", part, flags=re.M))
    return tables


def test_the_page_data_carries_its_version_and_every_key_is_documented():
    rep = replay(play(Seating.pairs(4), {"target": 11, "sevens": "primera"}, 3))
    data = replay_data(rep)
    assert data["schema_version"] == REPLAY_SCHEMA_VERSION == 2
    page = render_replay_html(rep)
    island = page.split('<script type="application/json" id="replay-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(island)["schema_version"] == REPLAY_SCHEMA_VERSION
    docs = _documented_keys()
    assert set(data) == docs["Top level"]
    assert set(data["captions"]) == docs["The captions"]
    assert all(len(step) == 4 for step in data["steps"]) and len(data["steps"]) == data["moves"] + 1
    assert {key for c in data["categories"] for key in c} == docs["A category"]
    assert {key for s in data["suits"]["styles"] for key in s} == docs["The suits"]
    assert "is version **2**" in DOCS.read_text(encoding="utf-8")  # the documented version is the written one


def test_the_page_data_brings_the_labels_the_script_writes():
    rep = replay(play(Seating.alone(2), {"target": 11, "all_sevens_bonus": True}, 31))
    data = replay_data(rep)
    categories = {c["key"]: c for c in data["categories"]}
    assert categories["cards"] == {"key": "cards", "label": "Most cards", "count": "n_cards"}
    assert categories["all_sevens"]["label"] == "All four sevens" and categories["velo"]["count"] is None
    styles = {s["key"]: s for s in data["suits"]["styles"]}
    assert set(styles) == {style.value for style in SuitStyle}
    assert styles["french"]["ranks"] == {"1": "A", "10": "J", "11": "Q", "12": "K"} and not styles["french"]["figures"]
    assert styles["spanish"]["ranks"] == {} and data["suits"]["figures"]["11"] == "caballo"
    assert data["captions"]["escobas"] == [escoba_text(n) for n in range(1, len(data["captions"]["escobas"]) + 1)]
    # Nothing the page writes is spelled out again in its script: the tables above are its only source.
    script = asset("replay.js")
    assert data["total_labels"] == {"hand": "Hand total", "match": "Match score"}
    for label in ("Most cards", "Hand total", "Match score", "caballo", "ESCOBA", "Spanish suits", '"A"'):
        assert label not in script and label not in asset("replay.html"), label


@pytest.mark.parametrize("players,model", [(2, "Bradley-Terry"), (3, "Plackett-Luce")])
def test_the_report_names_the_rating_model_and_what_a_crosstable_cell_is(tmp_path: Path, players: int, model: str):
    from replay_helpers import make_store

    from arena.render.report import TournamentReport

    results = make_store(tmp_path / "t", bots=("ana", "luis", "marta"), extra=f"players: {players}\n",
                         matches=players)
    page = TournamentReport(results, replays_dir="r").page()
    assert 'href="r/replay.html#' in page
    assert f"{model} fit on the Elo scale" in page
    other = {"Bradley-Terry", "Plackett-Luce"} - {model}
    assert not any(f"{name} fit" in page for name in other)
    if players > 2:
        assert "A cell counts each match once for every two sides in it" in page
    else:
        assert "A cell is the row&#x27;s score against the column" in page


def test_the_report_written_by_worker_processes_is_the_one_written_in_process(tmp_path: Path, monkeypatch):
    from replay_helpers import make_store

    import arena.cli.replay as cli_replay

    results = Path(make_store(tmp_path / "t", bots=("ana", "luis", "marta"), matches=2))
    alone = cli_replay.write_report(results, tmp_path / "a" / "report.html", say=lambda line: None)
    monkeypatch.setattr(cli_replay, "REPORT_POOL_FROM", 1)
    pooled = cli_replay.write_report(results, tmp_path / "b" / "report.html", say=lambda line: None)
    assert alone.refusals == pooled.refusals == () and alone.pages == pooled.pages == 6
    files = sorted(p.name for p in (tmp_path / "a" / "report_replays" / "data").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b" / "report_replays" / "data").iterdir())
    for name in files:
        assert (tmp_path / "a" / "report_replays" / "data" / name).read_text() == \
            (tmp_path / "b" / "report_replays" / "data" / name).read_text()


def test_a_damaged_store_is_one_error_even_with_the_workers_started_first(tmp_path: Path, monkeypatch, capfd):
    """The report's workers start before the store is checked: on a damaged store each worker
    answers instead of dying (its pool would start another, and another), and the command's
    own check is the one error."""
    import sqlite3

    from replay_helpers import make_store

    import arena.cli.replay as cli_replay
    from arena.tournament.store import StoreDamagedError

    results = Path(make_store(tmp_path / "t", bots=("ana", "luis"), matches=2))
    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        conn.execute("UPDATE matches SET scores = 'not json' WHERE idx = 0")
    conn.close()
    monkeypatch.setattr(cli_replay, "REPORT_POOL_FROM", 1)
    with pytest.raises(StoreDamagedError, match="scores"):
        cli_replay.write_report(results, tmp_path / "a" / "report.html", say=lambda line: None)
    assert "Traceback" not in capfd.readouterr().err


def test_a_worker_that_cannot_open_the_store_answers_each_match_with_why(tmp_path: Path):
    from arena.render import report

    report.init_worker(str(tmp_path / "nowhere"))
    page, why, digest = report.worker_check("m1")
    assert page is None and digest is None
    assert why is not None and why.startswith("the report's worker cannot read the store: ") and "nowhere" in why


def test_the_standings_a_run_hands_over_make_the_page_a_fit_of_its_own_makes(tmp_path: Path):
    from replay_helpers import make_store

    import arena.cli.replay as cli_replay
    from arena.tournament.standings import standings_from_store
    from arena.tournament.store import ResultStore

    results = Path(make_store(tmp_path / "t", bots=("ana", "luis", "marta"), matches=2))
    with ResultStore.open_existing(str(results)) as store:
        standings = standings_from_store(store)
    given = cli_replay.write_report(results, tmp_path / "a" / "report.html", say=lambda line: None, standings=standings)
    fitted = cli_replay.write_report(results, tmp_path / "b" / "report.html", say=lambda line: None)
    assert given.refusals == fitted.refusals == ()
    page = (tmp_path / "a" / "report.html").read_text()
    assert "ana" in page and page == (tmp_path / "b" / "report.html").read_text()
