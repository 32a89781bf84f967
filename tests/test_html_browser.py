"""The replay and report pages in a real headless browser (Debian's chromium, driven by playwright),
with every network request refused: they must load without a console error and work offline.

Needs /usr/bin/chromium (``apt-get install -y chromium``); playwright's own browser downloads are
never used. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from replay_helpers import play
from typer.testing import CliRunner

from arena.cli import _register_all, app
from arena.render_html import render_replay_html
from arena.replay import replay
from arena.rules import Seating

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
_register_all()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: the HTML tests need Debian's chromium "
                    "(apt-get update && apt-get install -y chromium)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Offline:
    """A page that may load file: and data: URLs only; records errors and refused requests."""

    def __init__(self, browser) -> None:  # noqa: ANN001
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route("**/*", self._route)

    def _route(self, route) -> None:  # noqa: ANN001
        url = route.request.url
        if url.startswith(("file:", "data:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def close(self) -> None:
        self.context.close()


def _scores(page, sides: int) -> list[int]:  # noqa: ANN001
    return [int(page.inner_text(f'.side-score[data-side="{s}"]')) for s in range(sides)]


@pytest.mark.parametrize("shape,suits", [("1v1", "spanish"), ("6 in threes", "french")])
def test_replay_page_works_offline_and_ends_on_the_recorded_score(browser, tmp_path: Path, shape, suits):
    from replay_helpers import SEATINGS

    seating = SEATINGS[shape]
    record = play(seating, {"target": 11, "renuncio": True}, 41)
    rep = replay(record)
    path = tmp_path / "replay.html"
    path.write_text(render_replay_html(rep, suits=suits), encoding="utf-8")
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto(path.as_uri())
        page.wait_for_selector(".card")
        total = len(rep.frames)
        assert page.inner_text("#pos").startswith(f"frame 1/{total}")
        assert _scores(page, seating.sides) == [0] * seating.sides
        # Step forward with the button and the keyboard, back with the keyboard.
        page.click("#next")
        page.keyboard.press("ArrowRight")
        assert page.inner_text("#pos").startswith(f"frame 3/{total}")
        page.keyboard.press("ArrowLeft")
        assert page.get_attribute("body", "data-frame") == "1"
        # The slider jumps to the end of the first hand: its breakdown is shown.
        first_score = next(f for f in rep.frames if f.kind == "hand_score")
        page.fill("#slider", str(first_score.step))
        assert page.inner_text("#breakdown").startswith("Hand 1 score")
        assert _scores(page, seating.sides) == list(first_score.scores)
        page.screenshot(path=str(ARTIFACTS / f"replay-{shape.replace(' ', '-')}-hand1.png"), full_page=True)
        # Play runs on its own; pause stops it.
        page.select_option("#speed", "250")
        page.click("#play")
        # (Polled from here: the page's CSP forbids the eval that wait_for_function would use.)
        for _ in range(100):
            if int(page.get_attribute("body", "data-frame")) >= first_score.step + 2:
                break
            page.wait_for_timeout(50)
        assert int(page.get_attribute("body", "data-frame")) >= first_score.step + 2
        page.click("#play")
        paused = page.get_attribute("body", "data-frame")
        page.wait_for_timeout(600)
        assert page.get_attribute("body", "data-frame") == paused
        # The end shows the final score of the record.
        page.click("#last")
        assert page.inner_text("#pos").startswith(f"frame {total}/{total}")
        assert _scores(page, seating.sides) == list(record.result.scores)
        assert page.is_visible("#final")
        assert page.inner_text("#final").startswith("Final:")
        # One seat's view hides the other hands.
        page.fill("#slider", "0")
        page.select_option("#view", "0")
        assert page.locator(".seat[data-seat='1'] .card.back").count() == 3
        assert page.locator(".seat[data-seat='0'] .card:not(.back)").count() == 3
        page.select_option("#view", "all")
        page.click("#last")
        page.screenshot(path=str(ARTIFACTS / f"replay-{shape.replace(' ', '-')}-end.png"), full_page=True)
        assert tab.errors == []
        assert tab.blocked == []
    finally:
        tab.close()


def test_a_forfeit_page_ends_on_the_forfeit(browser, tmp_path: Path):
    record = play(Seating.pairs(4), {}, 9, failing_seat=3, fail_on=20)
    assert record.result.reason == "forfeit"
    path = tmp_path / "forfeit.html"
    path.write_text(render_replay_html(replay(record)), encoding="utf-8")
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        tab.page.keyboard.press("End")
        assert _scores(tab.page, 2) == list(record.result.scores)
        assert "by forfeit (seat 3 (bot3) crash" in tab.page.inner_text("#final")
        tab.page.screenshot(path=str(ARTIFACTS / "replay-forfeit-end.png"), full_page=True)
        assert tab.errors == [] and tab.blocked == []
    finally:
        tab.close()


def test_report_page_and_its_replays_work_offline(browser, tmp_path: Path):
    from replay_helpers import make_store

    results = make_store(tmp_path / "t", bots=("ana", "luis", "marta", "pablo"), matches=4)
    out = tmp_path / "site" / "report.html"
    run = CliRunner().invoke(app, ["report", results, "--html", str(out)])
    assert run.exit_code == 0, run.output
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto(out.as_uri())
        assert page.locator("svg.plot circle").count() >= 1
        assert page.locator("#matches tbody tr").count() == 24
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        # Follow the link of the last match: its replay ends on the stored score.
        last = page.locator("#matches tbody tr").last
        score = last.locator("td").nth(2).inner_text()
        last.locator("a").click()
        page.wait_for_selector(".card")
        assert page.url.startswith(out.parent.as_uri() + "/report_replays/")
        page.click("#last")
        assert "-".join(map(str, _scores(page, 2))) == score
        assert tab.errors == []
        assert tab.blocked == []
    finally:
        tab.close()


def test_the_offline_harness_catches_a_page_that_reaches_out(browser, tmp_path: Path):
    path = tmp_path / "leaky.html"
    path.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png"><script>nope()</script>')
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        tab.page.wait_for_timeout(200)
        assert tab.blocked == ["http://example.invalid/x.png"]
        assert any("nope" in e for e in tab.errors)
    finally:
        tab.close()


def test_pages_reference_nothing_outside_themselves(tmp_path: Path):
    rep = replay(play(Seating.alone(2), {"target": 5}, 3))
    page = render_replay_html(rep)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page
    assert "Content-Security-Policy" in page
    data = page.split('id="replay-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["result"]["scores"] == list(rep.result.scores)
