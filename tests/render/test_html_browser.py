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

from arena.cli import app
from arena.core.rules import Seating
from arena.match.replay import replay, verify_steps
from arena.render.html import render_replay_html as _render
from arena.tournament.store import ResultStore

pytestmark = pytest.mark.slow  # drives a browser

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


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


def render_replay_html(rep, title: str = "", suits: str = "spanish") -> str:  # noqa: ANN001
    """The page ``arena replay --html`` writes for a replayed match."""
    record, steps = verify_steps(rep.record)
    return _render(record, steps, title=title, suits=suits)


def _check_afterwards(page, rep) -> None:  # noqa: ANN001
    """The stock's order and the legal moves offered: shown in full, and in a seat's view only
    that seat's decisions, the stock face down (the page is at frame 0, in seat 0's view)."""
    after = rep.afterwards
    turn = next(f for f in rep.frames if f.turn is not None and f.turn != 0)
    page.select_option("#view", "all")
    page.fill("#slider", str(turn.step))
    stock = [str(c) for c in after.stock(turn)]
    assert page.eval_on_selector_all("#stock-list .card", "cs => cs.map(c => c.dataset.card)") == stock
    items = page.locator("#offered li").all_inner_texts()
    assert items == list(after.legal(turn))
    played = rep.record.moves[0 if turn.move_index is None else turn.move_index + 1].move
    assert page.inner_text("#offered li.played") == played
    page.select_option("#view", "0")
    assert page.locator("#offered li").count() == 0
    assert page.locator("#stock-list .card").count() == 0 and "face down" in page.inner_text("#stock-list")
    page.select_option("#view", str(turn.turn))
    assert page.locator("#offered li").all_inner_texts() == items


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
        _check_afterwards(page, rep)
        page.select_option("#view", "all")
        page.click("#last")
        page.screenshot(path=str(ARTIFACTS / f"replay-{shape.replace(' ', '-')}-end.png"), full_page=True)
        assert tab.errors == []
        assert tab.blocked == []
    finally:
        tab.close()


@pytest.mark.parametrize("shape", ["1v1", "4 in pairs", "6 in pairs", "6 in threes"])
def test_seats_go_around_the_table_and_partners_sit_opposite(browser, tmp_path: Path, shape: str):
    """Seat 0 at the bottom, the others in play order around the table (counterclockwise, so
    the next to play is on the right); a seat and the one half the table away face each
    other across its middle, as partners do at a real table."""
    from replay_helpers import SEATINGS

    seating = SEATINGS[shape]
    path = tmp_path / "replay.html"
    path.write_text(render_replay_html(replay(play(seating, seed=3))), encoding="utf-8")
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        tab.page.wait_for_selector(".seat")
        boxes = tab.page.evaluate("""Array.from(document.querySelectorAll('.seat')).map(e => {
            const r = e.getBoundingClientRect(); return [Number(e.dataset.seat), r.x + r.width / 2, r.y + r.height / 2]; })""")
        middle = tab.page.evaluate("""(() => { const r = document.querySelector('.center').getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; })()""")
    finally:
        tab.close()
    at = {seat: (x - middle[0], y - middle[1]) for seat, x, y in boxes}  # y grows downwards
    n = seating.players
    assert sorted(at) == list(range(n))
    assert at[0][1] > 0 and abs(at[0][0]) < 40  # seat 0 at the bottom, in the middle
    for seat in range(n // 2):
        (x, y), (ox, oy) = at[seat], at[seat + n // 2]
        assert abs(x + ox) < 60 and abs(y + oy) < 60, (seat, at)  # facing each other through the middle
    if n > 2:
        assert at[1][0] > 0  # the next to play sits on the right


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
        assert f"by forfeit in hand {record.result.hands} (seat 3 (bot3) crash" in tab.page.inner_text("#final")
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


def test_the_report_fits_1280_px_with_no_scrollbar(browser, tmp_path: Path):
    from replay_helpers import make_store

    results = make_store(tmp_path / "t", bots=("escoba-go-2.0", "expert-v2.1", "java-greedy", "c-firstmove"), matches=2)
    out = tmp_path / "report.html"
    assert CliRunner().invoke(app, ["report", results, "--html", str(out)]).exit_code == 0
    tab = Offline(browser)
    try:
        tab.page.goto(out.as_uri())
        page_width = tab.page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        overflowing = tab.page.evaluate("""Array.from(document.querySelectorAll('section'))
            .filter(s => s.scrollWidth > s.clientWidth).map(s => s.querySelector('h2').innerText)""")
        headers = tab.page.evaluate(
            "Array.from(document.querySelectorAll('table.data')[0].querySelectorAll('th')).map(t => t.innerText)")
    finally:
        tab.close()
    assert page_width[0] <= page_width[1] == 1280
    assert overflowing == []
    assert {"cpu/wall", "failures", "pts_against"} <= {h.replace("\n", "") for h in headers}  # every column is there


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


# --- whatever a bot sent ---------------------------------------------------------------------------

# Strings a bot (its name, its moves) or a hand-edited file can put in a page. Each one alone
# used to break a page: "<!--" made the embedded JSON invalid and blanked the replay.
HOSTILE_NAMES = (
    "<!--",
    "</script><script>document.body.dataset.owned='1'</script>",
    "\"q'uo`te\\back\\\\slash",
    "ctl\x01\x07\x1b[31m\x7fend",
    "line\u2028sep\u2029para",
    "]]>&amp;<b>bold</b>",
)
HOSTILE_MOVES = ("\u2028\x00\"'\\", "</script>", "<script>", "<!--")  # the last one forfeits


class HostileBot:
    """An in-process bot whose every answer is one of HOSTILE_MOVES (an illegal move each
    time): under the substitute policy the referee records each one, then the forfeit."""

    def __init__(self, name: str) -> None:
        from arena.harness.local_bot import LocalBot

        self._local = LocalBot(name)
        self.seat = None
        self.last_request_id = 0
        self._sent = 0

    def __getattr__(self, attr):  # noqa: ANN001, ANN204 - the rest of the Player protocol
        return getattr(self._local, attr)

    def decide(self, view, legal, move_ms, bank_ms, idle=None):  # noqa: ANN001, ANN201
        if idle is not None:
            idle()
        self.last_request_id += 1
        move = HOSTILE_MOVES[self._sent % len(HOSTILE_MOVES)]
        self._sent += 1
        return self.last_request_id, move, 0.0


def _hostile_record(names, seed: int = 4):
    """A 4-seat match in pairs between bots named ``names``; seat 1 answers with HOSTILE_MOVES."""
    from arena.core.rules import Rules
    from arena.harness.local_bot import LocalBot
    from arena.match.referee import FailurePolicy, play_match

    bots = [LocalBot(n, seed=seed + i) for i, n in enumerate(names)]
    bots[1] = HostileBot(names[1])
    record = play_match(bots, Rules(target=11), Seating.pairs(4), seed, FailurePolicy("substitute", 3))
    assert record.result.reason == "forfeit" and len(record.failures) == 4
    # The failures record the bot's text (control characters as repr escapes, the rest as sent).
    details = " ".join(f.detail for f in record.failures)
    assert all(move in details for move in HOSTILE_MOVES[1:]), details
    assert "<!--" in record.outcomes[1].detail  # the forfeit: shown in the page's result line
    return record


def _check_hostile_replay_page(page, tab, names, rep, forfeiter: str) -> None:  # noqa: ANN001
    """The page loaded, shows every name as text, and steps to the end."""
    page.wait_for_selector(".card")
    assert page.get_attribute("body", "data-owned") is None  # no injected script ran
    assert page.locator("script").count() == 3  # two JSON islands and the page's own script
    for seat, name in enumerate(names):
        assert page.locator(f".seat[data-seat='{seat}'] .who b").text_content() == name
    total = len(rep.frames)
    page.keyboard.press("End")
    assert page.inner_text("#pos").startswith(f"frame {total}/{total}")
    assert _scores(page, len(rep.record.result.scores)) == list(rep.record.result.scores)
    final = page.text_content("#final")
    assert final.startswith("Final: ") and "forfeit" in final and forfeiter in final
    assert tab.errors == [] and tab.blocked == []


def test_the_replay_page_survives_hostile_names_and_moves(browser, tmp_path: Path):
    names = HOSTILE_NAMES[:4]
    record = _hostile_record(names)
    rep = replay(record)
    title = "Escoba replay · " + HOSTILE_NAMES[1]
    path = tmp_path / "hostile.html"
    path.write_text(render_replay_html(rep, title=title, suits="french"), encoding="utf-8")
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto(path.as_uri())
        assert page.title() == title and page.text_content("#title") == title
        assert page.input_value("#suits") == "french"  # the option came through the config island
        # Every hostile answer is shown, as text, in the failures the final line lists.
        page.keyboard.press("End")
        _check_hostile_replay_page(page, tab, names, rep, names[1])
        page.screenshot(path=str(ARTIFACTS / "replay-hostile-end.png"), full_page=True)
    finally:
        tab.close()


def _rename(results: Path, mapping: dict[str, str]) -> None:
    """Rename bots inside a results store, in every JSON column and in the meta table, as a
    hand-edited (or forged) store could."""
    import sqlite3

    def walk(value):
        if isinstance(value, str):
            return mapping.get(value, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    def labels(text):
        return json.dumps([mapping.get(label, "+".join(mapping.get(p, p) for p in label.split("+")))
                           for label in json.loads(text)])

    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        for key, value in conn.execute("SELECT key, value FROM meta").fetchall():
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps(walk(json.loads(value))), key))
        for match_id, sides, seats, record in conn.execute("SELECT id, sides, seats, record FROM matches").fetchall():
            conn.execute("UPDATE matches SET sides = ?, seats = ?, record = ? WHERE id = ?",
                         (labels(sides), json.dumps(walk(json.loads(seats))), json.dumps(walk(json.loads(record))), match_id))
    conn.close()


def test_the_report_page_and_its_replays_survive_hostile_names_and_moves(browser, tmp_path: Path):
    from arena.harness.local_bot import LocalBot
    from arena.match.referee import FailurePolicy, play_match
    from arena.tournament.config import load_config
    from arena.tournament.runner import open_store
    from arena.tournament.schedule import build_schedule
    from arena.tournament.worker import row_from_record

    tame = ("ana", "luis", "marta", "pablo")
    folder = tmp_path / "t"
    folder.mkdir()
    bots = "\n".join(f'  - {{name: {b}, cmd: "$PYTHON none.py"}}' for b in tame)
    (folder / "t.yaml").write_text(f"name: hostile\nseed: 9\noutput: {folder / 'out'}\nplayers: 4\n"
                                   f"failures: {{policy: substitute, strikes: 3}}\nbots:\n{bots}\n")
    config = load_config(folder / "t.yaml", check_commands=False)
    with open_store(config) as store:
        for spec in build_schedule(config)[:4]:
            players = [HostileBot(n) if n == "luis" else LocalBot(n, seed=spec.seed + i) for i, n in enumerate(spec.seats)]
            record = play_match(players, config.rules, config.seating, spec.seed, FailurePolicy("substitute", 3))
            store.add(row_from_record(spec, record.to_dict(), 0.0), record.to_dict())
    hostile = dict(zip(tame, (HOSTILE_NAMES[0], HOSTILE_NAMES[1], HOSTILE_NAMES[4], HOSTILE_NAMES[5]), strict=True))
    results = Path(config.output)
    _rename(results, hostile)
    out = tmp_path / "site" / "report.html"
    run = CliRunner().invoke(app, ["report", str(results), "--html", str(out)])
    assert run.exit_code == 0, run.output
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto(out.as_uri())
        assert page.get_attribute("body", "data-owned") is None
        assert page.locator("#matches tbody tr").count() == 4
        standings = page.locator("table.data").first.text_content()
        plot = page.locator("svg.plot").text_content()
        for name in hostile.values():
            assert name in standings and name in plot
        page.screenshot(path=str(ARTIFACTS / "report-hostile.png"), full_page=True)
        page.locator("#matches tbody tr").first.locator("a").click()
        page.wait_for_selector(".card")
        with ResultStore.open_existing(str(results)) as store:
            first = store.results()[0]
            rep = replay(store.record(first.id))
        _check_hostile_replay_page(page, tab, list(rep.record.seats), rep, hostile["luis"])
        assert set(rep.record.seats) == set(hostile.values())  # four players alone: every bot in every match
    finally:
        tab.close()


def test_an_escoba_is_announced_once(browser, tmp_path: Path):
    rep = replay(play(Seating.alone(2), {"target": 21}, 41))
    escoba = next(f for f in rep.frames if f.escoba)
    path = tmp_path / "escoba.html"
    path.write_text(render_replay_html(rep), encoding="utf-8")
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        tab.page.fill("#slider", str(escoba.step))
        caption = tab.page.text_content("#caption")
        assert caption.count("ESCOBA") == 1, caption
        assert tab.errors == []
    finally:
        tab.close()


@pytest.mark.parametrize("version", [1, 3, None])
def test_a_page_whose_data_is_of_another_version_is_refused_as_documented(browser, tmp_path: Path, version):
    # docs/REPLAY.md, "The replay page's data": on a version it was not written for, the page
    # draws nothing, says which version it found and which it reads, and marks the body.
    from arena.render.html import REPLAY_SCHEMA_VERSION

    page_text = render_replay_html(replay(play(Seating.alone(2), {"target": 11}, 41)))
    stamp = f'"schema_version":{REPLAY_SCHEMA_VERSION},'
    assert page_text.count(stamp) == 1
    path = tmp_path / "other.html"
    path.write_text(page_text.replace(stamp, "" if version is None else f'"schema_version":{version},'), encoding="utf-8")
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        assert tab.page.get_attribute("body", "data-refused") == "schema_version"
        assert tab.page.inner_text("#title") == "This replay cannot be shown"
        found = "no version" if version is None else f"version {version}"
        assert tab.page.inner_text("#subtitle") == (f"Its data has {found}; this page reads version "
                                                    f"{REPLAY_SCHEMA_VERSION} (docs/REPLAY.md).")
        assert tab.page.locator(".card:not(.back)").count() == 0  # no card drawn from the data
        assert not tab.page.is_visible("#slider") and not tab.page.is_visible("#stock-card")
        assert tab.errors == [] and tab.blocked == []
    finally:
        tab.close()
    # The page as written is not refused.
    path.write_text(page_text, encoding="utf-8")
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        tab.page.wait_for_selector(".card")
        assert tab.page.get_attribute("body", "data-refused") is None
        assert tab.errors == []
    finally:
        tab.close()


# --- the page draws what the terminal replay draws ----------------------------------------------

FRAME_KEYS = ("kind", "move_index", "move", "seat", "hand", "round", "dealer", "turn", "stock", "escobas", "scores")


def _python_frames(rep) -> list[dict]:  # noqa: ANN001
    from arena.render.text import PLAIN, describe

    def piles(f):  # noqa: ANN001, ANN202
        return [{"cards": len(p), "oros": sum(c.oro for c in p), "sevens": sum(c.seven for c in p),
                 "velo": any(c.is_velo for c in p)} for p in f.piles]

    return [{**{k: (list(getattr(f, k)) if isinstance(getattr(f, k), tuple) else getattr(f, k)) for k in FRAME_KEYS},
             "hands": [[str(c) for c in h] for h in f.hands], "table": [str(c) for c in f.table], "piles": piles(f),
             "escoba": f.escoba, "breakdown": [dict(b) for b in f.breakdown] if f.breakdown is not None else None,
             "caption": describe(f, rep, PLAIN, escoba_word=False)} for f in rep.frames]


def _page_frames(page) -> list[dict]:  # noqa: ANN001
    return page.evaluate("""(keys) => window.escobaReplay.frames.map(f => {
        const out = {};
        for (const k of keys) out[k] = f[k];
        out.hands = f.hands; out.table = f.table; out.piles = f.piles; out.escoba = f.escoba; out.breakdown = f.breakdown;
        out.caption = f.caption.map(p => Array.isArray(p) ? p.join(" ") : p).join("");
        return out; })""", list(FRAME_KEYS))


def _cases():
    from replay_helpers import SEATINGS

    trick = "\ue000 0 \ue000{seat}\u27e67o\u27e7"  # looks like card markup and like a caption's field
    yield "renuncio", play(SEATINGS["1v1"], {"target": 11, "renuncio": True}, 41), None
    yield "en_mano", play(SEATINGS["4 in pairs"], {"target": 15, "escoba_en_mano": True}, 3), None
    yield "initial_table", play(SEATINGS["6 in threes"], {"target": 11, "initial_table": "subset15"}, 5), None
    yield "forfeit", play(Seating.pairs(4), {}, 9, failing_seat=3, fail_on=20), None
    yield "3 alone", play(SEATINGS["3 alone"], {"target": 11}, 7), trick


def test_the_page_folds_the_events_into_the_frames_the_terminal_replay_shows(browser, tmp_path: Path):
    """Frame by frame, the page's table, piles, scores and captions are the Python replay's."""
    tab = Offline(browser)
    try:
        for name, record, trick in _cases():
            if trick is not None:
                data = record.to_dict()
                data["seats"][0] = trick
                for outcome in data["outcomes"]:
                    if outcome["seat"] == 0:
                        outcome["bot"] = trick
                rep = replay(data)
            else:
                rep = replay(record)
            path = tmp_path / f"{name}.html"
            path.write_text(render_replay_html(rep), encoding="utf-8")
            tab.page.goto(path.as_uri())
            tab.page.wait_for_selector(".card")
            assert _page_frames(tab.page) == _python_frames(rep), name
            if trick is not None:
                tab.page.fill("#slider", str(next(f.step for f in rep.frames if f.kind == "play" and f.seat == 0)))
                assert trick in tab.page.text_content("#caption")
        assert tab.errors == [] and tab.blocked == []
    finally:
        tab.close()


def test_a_moved_report_works_from_file_and_a_refused_record_has_no_replay(browser, tmp_path: Path):
    import shutil
    import sqlite3

    from replay_helpers import make_store

    results = Path(make_store(tmp_path / "t", bots=("ana", "luis", "marta"), matches=2))
    conn = sqlite3.connect(results / "results.sqlite")
    with conn:
        match_id, text = conn.execute("SELECT id, record FROM matches ORDER BY id LIMIT 1").fetchone()
        record = json.loads(text)
        record["moves"][1]["move"], record["moves"][2]["move"] = record["moves"][2]["move"], record["moves"][1]["move"]
        conn.execute("UPDATE matches SET record = ? WHERE id = ?", (json.dumps(record), match_id))
    conn.close()
    out = tmp_path / "site" / "report.html"
    run = CliRunner().invoke(app, ["report", str(results), "--html", str(out)])
    assert run.exit_code == 1 and f"refused {match_id}" in run.output
    moved = tmp_path / "elsewhere"
    shutil.copytree(out.parent, moved)
    shutil.rmtree(out.parent)
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto((moved / "report.html").as_uri())
        rows = page.locator("#matches tbody tr")
        assert rows.count() == 6
        refused = rows.first
        assert refused.locator("a").count() == 0
        assert refused.locator("td.refused").inner_text().startswith("refused: record does not replay: move 2")
        score = rows.last.locator("td").nth(2).inner_text()
        rows.last.locator("a").click()
        page.wait_for_selector(".card")
        assert page.url.startswith((moved / "report_replays" / "replay.html").as_uri() + "#")
        page.click("#last")
        assert "-".join(map(str, _scores(page, 2))) == score
        # Another match's address in the same page; then one with no data file, and a name that is no file's.
        for bad, mark in (("nosuch", "No replay nosuch"), ("..%2Fx", "No replay named")):
            page.goto("about:blank")
            page.goto((moved / "report_replays" / "replay.html").as_uri() + "#" + bad)
            assert page.get_attribute("body", "data-refused") == "no_data"
            assert page.inner_text("#title") == mark
        assert not (moved / "report_replays" / "data" / (match_id + ".js")).exists()
        assert tab.blocked == []
        assert all("nosuch.js" in e or "ERR_FILE_NOT_FOUND" in e for e in tab.errors), tab.errors
    finally:
        tab.close()


def test_the_analysed_moves_are_marked_beside_their_captions(browser, tmp_path: Path):
    # arena analyze --html: the page's replay-analysis island (docs/ANALYSIS.md), drawn per move.
    from arena.analysis import analyse, tasks

    rep = replay(play(Seating.alone(2), {"target": 3}, 41))
    moves = [analyse(t, 8) for t in tasks("m", rep.record)[:12]]
    worst = max(moves, key=lambda m: m.loss)
    assert worst.mark is not None  # a random bot's dozen moves hold a marked one
    record, steps = verify_steps(rep.record)
    path = tmp_path / "analysed.html"
    path.write_text(_render(record, steps, analysis=[m.to_dict() for m in moves]), encoding="utf-8")
    frame = next(f for f in rep.frames if f.move_index == worst.index and f.move is not None)
    tab = Offline(browser)
    try:
        tab.page.goto(path.as_uri())
        tab.page.fill("#slider", str(frame.step))
        note = tab.page.locator("#caption .analysis")
        assert note.count() == 1
        assert note.get_attribute("class") == f"analysis {worst.mark.value}"
        assert note.inner_text() == f"{worst.mark.value} · loss {worst.loss:.2f} · best {worst.best}"
        # A frame that is no analysed move carries no mark.
        tab.page.fill("#slider", "0")
        assert tab.page.locator("#caption .analysis").count() == 0
        assert tab.errors == [] and tab.blocked == []
    finally:
        tab.close()


def test_the_page_shows_a_moves_notes_and_its_stderr_as_text(browser, tmp_path: Path):
    import dataclasses

    from arena.core.rules import Rules
    from arena.harness.local_bot import LocalBot
    from arena.match.record import StderrLine
    from arena.match.referee import play_match

    class Noting(LocalBot):
        def decide(self, view, legal, move_ms, bank_ms, idle=None):  # noqa: ANN001, ANN201
            result = super().decide(view, legal, move_ms, bank_ms, idle)
            self.last_info = {"eval": 0.5, "note": "<b>bold</b>\u202e"}
            return result

    played = play_match([Noting("noting", first=True), LocalBot("plain", seed=1)], Rules(target=1),
                        Seating.alone(2), seed=5)
    first_move = played.moves[0].t_ms
    hostile = "<img src=x onerror=alert(1)>\x1b[2J"
    record = dataclasses.replace(played, stderr=(StderrLine(0, first_move / 2, hostile),), stderr_dropped=(0, 0))
    path = tmp_path / "notes.html"
    path.write_text(render_replay_html(replay(record)), encoding="utf-8")
    tab = Offline(browser)
    page = tab.page
    try:
        page.goto(path.as_uri())
        assert page.text_content("#notes") == ""
        page.keyboard.press("ArrowRight")  # the first move
        assert page.text_content("#notes") == 'info: {"eval":0.5,"note":"<b>bold</b>\\u202e"}'
        assert page.is_visible("#logs-panel")
        assert "<img src=x onerror=alert(1)>\\x1b[2J" in page.text_content("#logs")
        assert page.query_selector("#logs img") is None and page.query_selector("#notes b") is None
        page.keyboard.press("ArrowRight")  # the second move: plain's, no notes and no lines
        assert page.text_content("#notes") == "" and page.text_content("#logs") == ""
        assert not tab.errors and not tab.blocked
    finally:
        tab.close()
