"""The league page of ``arena report`` in a real headless browser (Debian's chromium through
playwright, every network request refused), as tests/render/test_html_browser.py does for the
tournament pages. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from league_helpers import _store
from test_html_browser import ARTIFACTS, HOSTILE_NAMES, Offline, _rename, browser  # noqa: F401  (browser: a fixture)
from typer.testing import CliRunner

from arena.cli import app

pytestmark = pytest.mark.slow  # drives a browser

runner = CliRunner()


def _league(root: Path) -> Path:
    league = root / "league"
    _store(league, "spring", seed=5, date="2026-03-01T10:00:00+00:00", versions={"ana": "a1", "luis": "l1", "marta": "m1"})
    _store(league, "summer", bots=("ana", "luis", "pablo"), seed=9, date="2026-06-01T10:00:00+00:00",
           versions={"ana": "a2", "luis": "l1", "pablo": "p1"})
    _store(league, "autumn", bots=("ana", "marta", "pablo"), seed=11, date="2026-09-01T10:00:00+00:00",
           versions={"ana": "a2", "marta": "m1", "pablo": "p1"})
    return league


def test_the_league_page_shows_the_list_the_tournaments_and_the_ratings_over_time(browser, tmp_path: Path):  # noqa: F811
    league = _league(tmp_path)
    assert runner.invoke(app, ["report", str(league / "spring")]).exit_code == 0  # a report page to link to
    out = tmp_path / "site" / "league.html"
    out.parent.mkdir()
    run = runner.invoke(app, ["report", str(league), "--html", str(out)])
    assert run.exit_code == 0, run.output
    history = json.loads(runner.invoke(app, ["rate", str(league), "--history", "--format", "json"]).stdout)
    final = history[-1]["ratings"]
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto(out.as_uri())
        assert page.title() == "league: rating list"
        # The rating list: one row per entry, in the fit's order; two versions of ana.
        rows = page.locator("section.pool table.data").first.locator("tbody tr")
        assert rows.count() == len(final) == 5
        assert [rows.nth(i).locator("td").nth(1).text_content() for i in range(5)] == [r["name"] for r in final]
        assert sum(r["name"].startswith("ana@") for r in final) == 2
        # The plot over time: a line per entry, a point (and interval) at each step it was rated in.
        plot = page.locator("svg.history")
        assert plot.count() == 1
        series = plot.locator("g.series")
        assert series.count() == 5
        for k, r in enumerate(final):
            rated_steps = sum(any(x["name"] == r["name"] for x in step["ratings"]) for step in history)
            assert series.nth(k).locator("circle").count() == rated_steps
            assert series.nth(k).locator("line.ci").count() == rated_steps
            assert r["name"] in series.nth(k).locator("circle").last.text_content()
        assert plot.locator("text.step").all_text_contents() == ["1 · spring", "2 · summer", "3 · autumn"]
        assert page.locator("svg.plot circle").count() == 5  # the final ratings with their intervals
        page.screenshot(path=str(ARTIFACTS / "league.png"), full_page=True)
        # Untick an entry in the legend: its line goes; tick it: it is back. Hover: it stands out.
        first = series.nth(0)
        box = page.locator(".legend input[type=checkbox]").nth(0)
        box.uncheck()
        assert not first.is_visible()
        box.check()
        assert first.is_visible()
        page.locator(".legend label.entry").nth(1).hover()
        assert "focus" in plot.get_attribute("class") and "hl" in series.nth(1).get_attribute("class")
        # The tournaments, in date order; the one with a report page links to it.
        tournaments = page.locator("table.tournaments tbody tr")
        assert tournaments.count() == 3
        assert [tournaments.nth(i).locator("td").nth(2).text_content() for i in range(3)] == [
            str(league / name) for name in ("spring", "summer", "autumn")]
        tournaments.nth(0).locator("a").click()
        page.wait_for_selector("svg.plot")
        assert page.url == (league / "spring" / "report.html").as_uri()
        assert tab.errors == [] and tab.blocked == []
    finally:
        tab.close()


def test_the_league_page_survives_hostile_names(browser, tmp_path: Path):  # noqa: F811
    league = tmp_path / "league"
    hostile = dict(zip(("ana", "luis", "marta"), (HOSTILE_NAMES[0], HOSTILE_NAMES[1], HOSTILE_NAMES[5]), strict=True))
    for name, seed in (("t1", 5), ("t2", 6)):
        _rename(_store(league, name, seed=seed), hostile)
    run = runner.invoke(app, ["report", str(league)])
    assert run.exit_code == 0, run.output
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto((league / "league.html").as_uri())
        assert page.get_attribute("body", "data-owned") is None  # no injected script ran
        assert page.locator("script").count() == 1  # the page's own
        names = page.locator("section.pool table.data").first.locator("tbody tr td:nth-child(2)").all_text_contents()
        assert sorted(names) == sorted(hostile.values())
        legend = page.locator(".legend label.entry").all_text_contents()
        assert sorted(legend) == sorted(hostile.values())
        assert page.locator("svg.history g.series").count() == 3
        page.locator(".legend input[type=checkbox]").nth(2).uncheck()
        assert not page.locator("svg.history g.series").nth(2).is_visible()
        assert tab.errors == [] and tab.blocked == []
    finally:
        tab.close()
