"""The HTML renderer without a browser: its assets are package files, options travel as JSON,
and any string survives the JSON island (tests/render/test_html_browser.py loads the pages)."""

from __future__ import annotations

import json

import pytest
from replay_helpers import play

from arena.core.rules import Seating
from arena.match.replay import replay
from arena.render.html import _caption, asset, json_island, render_replay_html

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


def test_a_caption_keeps_names_that_look_like_card_markup_as_text():
    record = play(Seating.alone(2), {"target": 5}, 3)
    data = record.to_dict()
    trick = "\ue000 0 \ue000\u27e67o\u27e7"
    data["seats"] = [trick, data["seats"][1]]
    for outcome in data["outcomes"]:
        if outcome["seat"] == 0:
            outcome["bot"] = trick
    rep = replay(data)
    frame = next(f for f in rep.frames if f.kind == "play" and f.seat == 0)
    parts = _caption(frame, rep)
    texts = "".join(p for p in parts if isinstance(p, str))
    assert trick in texts
    assert [p for p in parts if isinstance(p, list)] == [[str(frame.events[0].card)], *(
        [[str(c) for c in frame.events[0].take]] if frame.events[0].take else [])]


def test_the_caption_of_an_escoba_does_not_say_it_twice():
    rep = replay(play(Seating.alone(2), {"target": 21}, 41))
    frame = next(f for f in rep.frames if f.escoba)
    assert "ESCOBA" not in "".join(p for p in _caption(frame, rep) if isinstance(p, str))
