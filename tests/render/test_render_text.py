"""Text rendering: card faces, plain output off a terminal, and the interactive player in a real pty."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from replay_helpers import play

from arena.core.cards import Card
from arena.core.rules import Seating
from arena.match.replay import replay
from arena.render.text import TextStyle, card_label, draw_back, draw_card, render_screen, render_transcript

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def rep():
    return replay(play(Seating.alone(2), {"target": 11}, 31))


def test_card_faces_in_every_style():
    seven, king = Card.parse("7o"), Card.parse("12c")
    assert draw_card(seven) == "[ 7o]" and draw_card(king) == "[12c]"
    assert card_label(king, TextStyle("french", unicode=True)) == "K♥"
    assert card_label(Card.parse("1e"), TextStyle("french", unicode=True)) == "A♠"
    assert card_label(Card.parse("10b"), TextStyle("french")) == "Jc"  # ASCII fallback
    assert card_label(Card.parse("11o"), TextStyle("french")) == "Qd"
    assert draw_card(king, TextStyle("french")) == "[Kh]"
    coloured = draw_card(seven, TextStyle(color=True))
    assert coloured.startswith("[\x1b[") and ANSI.sub("", coloured) == "[ 7o]"
    assert draw_back() == "[###]" and draw_back(TextStyle("french", unicode=True)) == "[░░]"
    with pytest.raises(ValueError):
        TextStyle("tarot")


def test_plain_transcript_is_ascii_with_no_escape_codes(rep):
    for suits in ("spanish", "french"):
        text = render_transcript(rep, TextStyle(suits))
        assert "\x1b" not in text
        assert text.isascii()
    text = render_transcript(rep)
    result = rep.result
    others = [score for side, score in enumerate(result.scores) if side != result.winner]
    # The winner's score first.
    assert f"Result: {rep.side_names()[result.winner]} wins {'-'.join(map(str, [result.scores[result.winner], *others]))}" in text
    assert text.count("scored:") == result.hands
    # Every move is listed, numbered.
    assert len(re.findall(r"^\s+\d+\. ", text, re.M)) == rep.moves


def test_screen_hides_other_hands_for_a_seat_view(rep):
    frame = next(i for i, f in enumerate(rep.frames) if f.kind == "play")
    hands = rep.frames[frame].hands
    full = render_screen(rep, frame)
    seen = render_screen(rep, frame, seat=0)
    for card in hands[1]:
        assert draw_card(card) in full and draw_card(card) not in seen.split("table")[0]
    assert draw_back() in seen
    score = next(i for i, f in enumerate(rep.frames) if f.kind == "hand_score")
    screen = render_screen(rep, score)
    assert "hand total" in screen and "match score" in screen and "siete de oros" in screen


def test_the_replay_shows_the_stock_and_the_moves_offered_except_in_a_seat_view(rep):
    after = rep.afterwards
    text = render_transcript(rep)
    first = rep.frames[0]
    assert f"stock          {' '.join(draw_card(c) for c in after.stock(first))}" in text
    # Every decision's legal moves, the one played in brackets.
    offered = re.findall(r"^\s+offered (\d+): (.*)$", text, re.M)
    assert len(offered) == rep.moves
    assert all(f"[{1 + after.offered[i].index(m.move)} {m.move}]" in offered[i][1] for i, m in enumerate(rep.record.moves))
    seen = render_transcript(rep, seat=1)
    assert "stock  " not in seen
    assert len(re.findall(r"^\s+offered ", seen, re.M)) == sum(1 for m in rep.record.moves if m.seat == 1)
    turn = next(i for i, f in enumerate(rep.frames) if f.turn == 0)
    frame = rep.frames[turn]
    screen = render_screen(rep, turn)
    assert "to play" in screen and after.legal(frame)[-1] in screen and "stock" in screen
    assert "to play" in render_screen(rep, turn, seat=0) and "to play" not in render_screen(rep, turn, seat=1)
    assert "   stock " in screen and "   stock " not in render_screen(rep, turn, seat=0)


def _run_in_pty(args: list[str], keys: list[tuple[str, bytes]], wait: float = 20.0) -> tuple[int, str]:
    """Run ``arena`` with a pseudo-terminal as stdin and stdout; type each key once the output
    so far shows its marker text."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="120", LINES="50", TERM="xterm")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-c", "from arena.cli import main; main()", *args],
                            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + wait
    pending = list(keys)
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            elif pending and pending[0][0].encode() in out:
                os.write(master, pending.pop(0)[1])
                out += b"\n<<sent>>\n"
            if proc.poll() is not None and not ready:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    return proc.returncode, out.decode("utf-8", "replace")


@pytest.mark.slow
def test_interactive_player_steps_with_keys_in_a_terminal(tmp_path: Path, rep):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(rep.record.to_dict()))
    last = len(rep.frames)
    keys = [("frame 1/", b"n"), ("frame 2/", b"n"), ("frame 3/", b"\x1b[C"), ("frame 4/", b"\x1b[D"),
            ("<<sent>>", b"G"), (f"frame {last}/{last}", b"q")]
    code, out = _run_in_pty(["replay", str(path)], keys)
    assert code == 0, out
    assert "\x1b[?1049h" in out  # drew on the alternate screen, in colour
    assert ANSI.search(out) and "frame 1/" in out
    assert out.index("frame 4/") < out.rindex("frame 3/")  # stepped back
    assert f"frame {last}/{last}" in out
    plain = ANSI.sub("", out.split("\x1b[?1049l")[-1])  # what stays on the screen after q
    assert "Match over" in plain


@pytest.mark.slow
def test_auto_runs_on_its_own(tmp_path: Path, rep):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(rep.record.to_dict()))
    last = len(rep.frames)
    code, out = _run_in_pty(["replay", str(path), "--auto", "0", "--ascii"],
                            [(f"frame {last}/{last}", b"q")], wait=30)
    assert code == 0, out
    assert "[auto: a to stop]" in out
    assert "\x1b[1;3" not in out  # --ascii: no coloured cards


def test_a_draw_and_a_forfeit_read_well():
    draw = replay(play(Seating.alone(3), {"target": 1000, "max_hands": 1}, 2))
    assert draw.result.winner is None
    assert "Result: draw " in render_transcript(draw) and "after 1 hand (max_hands)" in render_transcript(draw)
    forfeit = replay(play(Seating.alone(2), {}, 3, failing_seat=1, fail_on=2))
    text = render_transcript(forfeit)
    assert "Match over: bot0 wins" in text and "by forfeit in hand 1 (seat 1 (bot1) crash: exited with code 3)" in text


def test_a_forfeit_before_any_move_says_so():
    forfeit = replay(play(Seating.alone(2), {}, 3, failing_seat=0, fail_on=1))
    assert not forfeit.record.moves
    assert "Result: bot1 wins 0-0 by forfeit before any move (seat 0 (bot0) crash" in render_transcript(forfeit)


def test_a_team_takes_the_plural_verb():
    for seed in range(1, 6):
        rep = replay(play(Seating.pairs(4), {"target": 11}, seed))
        winner = rep.result.winner
        if winner is None:
            continue
        team = rep.side_names()[winner]
        assert " & " in team
        assert f"Result: {team} win {'-'.join(map(str, rep.result.scores))}" in render_transcript(rep)
        assert f"{team} wins" not in render_transcript(rep)
        break
    else:
        pytest.fail("no pairs match had a winner")


def test_piles_count_oros_and_sevens_in_words():
    from arena.render.text import _pile_summary

    cards = [Card.parse(c) for c in ("7o", "7c", "1o", "12b")]
    assert _pile_summary(cards, 2) == "4 cards, 2 oros, 2 sevens (with the velo), 2 escobas"
    assert _pile_summary(cards[:1], 1) == "1 card, 1 oro, 1 seven (the velo), 1 escoba"
    assert _pile_summary(cards[1:2], 0) == "1 card, 0 oros, 1 seven"
    assert _pile_summary([], 0) == "0 cards, 0 oros, 0 sevens"
    shown = replay(play(Seating.alone(2), {"target": 11}, 31))
    piles = "\n".join(line for i in range(len(shown.frames)) for line in render_screen(shown, i).splitlines()
                      if "pile of" in line)
    assert re.search(r"pile of bot\d: \d+ cards?, \d+ oros?, \d+ sevens?", piles)
    assert "(with the velo)" in piles or "(the velo)" in piles
    assert " velo" not in piles.replace("(with the velo)", "").replace("(the velo)", "")
    assert not re.search(r"\b1 oros\b|\b1 sevens\b", piles)
