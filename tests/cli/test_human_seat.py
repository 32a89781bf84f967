"""``arena play human``: a person's seat. In-process through the referee with scripted lines (what
is shown, bad input answered, the record verified), and once through a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from zoo.helpers import firstmove_bin

from arena.cli.human import HumanSeat, choose
from arena.core.rules import Rules, Seating
from arena.harness.botproc import Limits
from arena.harness.local_bot import LocalBot
from arena.match.referee import play_match
from arena.match.replay import replay, verify


class Script:
    """A person who types these lines, then the first legal move's number forever."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    def read(self, timeout: float | None) -> str | None:
        return self.lines.pop(0) if self.lines else "1"


def _seat(seating: Seating, lines: list[str], said: list[str]) -> HumanSeat:
    names = [f"bot{s}" for s in range(seating.players)]
    return HumanSeat(seating, names, Limits(move_ms=0), clock=False, lines=Script(lines), say=said.append)


def test_a_line_names_a_move_by_number_or_by_text_in_any_order():
    legal = ["1e", "3c+6c+6b", "5e+12b", "5e"]
    assert choose("2", legal) == ("3c+6c+6b", "")
    assert choose(" 3c+6b+6c ", legal) == ("3c+6c+6b", "")
    assert choose("5E", legal) == ("5e", "")
    for line, why in [("", "type a move"), ("0", "no move 0"), ("9", "1 to 4"), ("hello", "not a move"),
                      ("7o", "not one of the legal moves"), ("\x1b[2J", "not a move")]:
        chosen, said = choose(line, legal)
        assert chosen is None and why in said


@pytest.mark.parametrize("seating,seat", [(Seating.alone(2), 0), (Seating.alone(3), 2), (Seating.pairs(4), 1)])
def test_a_person_plays_a_whole_match_that_verifies(seating, seat):
    said: list[str] = []
    human = _seat(seating, ["what", "99", "7o+7o", ""], said)
    bots = [LocalBot(f"bot{s}", seed=s) for s in range(seating.players)]
    bots[seat] = human
    record = play_match(bots, Rules.from_dict({"target": 3}), seating, 12)
    assert verify(record.to_dict()) == record.result
    assert record.seats[seat] == "human" and record.limits[seat]["move_ms"] == 0
    text = "\n".join(said)
    assert "not a move" in text and "no move 99" in text and "type a move" in text
    # At every decision: the hand, the table, the score, the piles, the moves numbered.
    turns = [i for i, line in enumerate(said) if line.startswith("== your turn")]
    assert len(turns) == sum(1 for m in record.moves if m.seat == seat)
    rep = replay(record)
    decisions = [f for f in rep.frames if f.turn == seat]
    for at, frame in zip(turns, decisions, strict=True):
        block = said[at:at + 6]
        assert f"your hand: {' '.join(map(str, frame.hands[seat]))}" in block[4]
        assert f"table:     {' '.join(map(str, frame.table)) or '(empty)'}" in block[3]
        piles = re.findall(r"\(pile (\d+)", block[1])
        assert list(map(int, piles)) == [len(p) for p in frame.piles]
        offered = rep.afterwards.legal(frame)
        assert block[5] == "  moves: " + "  ".join(f"{n}) {m}" for n, m in enumerate(offered, 1))


def test_arena_play_refuses_what_a_person_cannot_use():
    from typer.testing import CliRunner

    from arena.cli import app

    bot = str(firstmove_bin())
    for args, said in [(["--seat", "2"], "seats 0 to 1"), (["--json"], "leave out --json"),
                       (["--pairs"], "--pairs needs 4 or 6 players")]:
        result = CliRunner().invoke(app, ["play", "human", bot, *args])
        assert result.exit_code == 2 and said in result.output, result.output
    result = CliRunner().invoke(app, ["play", bot, bot, "--seat", "1"])
    assert result.exit_code == 2 and "only with a person playing" in result.output


# --- through a real terminal ----------------------------------------------------------------------


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty on its stdin,
    so that Ctrl-C typed there is SIGINT to it, as in a real terminal. SIGINT as a shell leaves it:
    an ignored SIGINT is inherited through exec, and a test process that ran an earlier test
    (one ignoring it, as a worker does) would hand the arena a Ctrl-C it can never see."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """``arena`` run with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, COLUMNS="160", LINES="50", TERM="xterm", NO_COLOR="1")
        self.proc = subprocess.Popen([sys.executable, "-c", "from arena.cli import main; main()", *args],
                                     stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     close_fds=True, preexec_fn=_own_terminal)
        os.close(slave)
        self.out = ""
        self.pos = 0  # where the next read_until looks from

    def read_until(self, *markers: str, wait: float = 30.0) -> str:
        """What the program wrote from the last marker found to the next of ``markers``."""
        deadline = time.monotonic() + wait
        while True:
            found = [(i, m) for m in markers if (i := self.out.find(m, self.pos)) >= 0]
            if found:
                i, m = min(found)
                seen, self.pos = self.out[self.pos:i + len(m)], i + len(m)
                return seen
            ready, _, _ = select.select([self.master], [], [], 0.1)
            chunk = b""
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the program ended and closed the terminal
                    pass
            if (ready and not chunk) or time.monotonic() > deadline:
                raise AssertionError(f"none of {markers} in:\n{self.out[-3000:]}")
            self.out += chunk.decode("utf-8", "replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self, wait: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout=wait)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def _descendants(pid: int) -> set[int]:
    """Every process under ``pid``: the launcher the arena started, and the bots under it."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, grew = {pid}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in found} - found
        grew = bool(more)
        found |= more
    return found - {pid}


@pytest.mark.slow
def test_a_person_plays_a_whole_match_in_a_terminal(tmp_path: Path):
    record = tmp_path / "game.json"
    term = Terminal(["play", "human", str(firstmove_bin()), "--target", "2", "--seed", "4",
                     "--record", str(record)], tmp_path)
    try:
        screen = term.read_until("your move")
        assert "your hand:" in screen and "table:" in screen and "score: you 0 (pile 0)" in screen
        term.type("nonsense\r")
        assert "not a move" in term.read_until("your move")
        term.type("42\r")
        assert "no move 42" in term.read_until("your move")
        moves = 0
        while "result:" not in screen:  # by text once, then by number
            legal = re.findall(r"\d+\) (\S+)", screen.split("moves:")[-1])
            term.type(f"{legal[-1]}\r" if moves == 0 else "1\r")
            moves += 1
            screen = term.read_until("your move", "result:")
        code = term.close()
    except BaseException:
        term.close(wait=0.1)
        raise
    assert code == 0, term.out[-2000:]
    assert moves > 0
    from typer.testing import CliRunner

    from arena.cli import app

    checked = CliRunner().invoke(app, ["verify", str(record)])
    assert checked.exit_code == 0 and "its one record replays to its recorded result" in checked.stdout


@pytest.mark.slow
def test_ctrl_c_at_the_prompt_ends_cleanly_with_the_bots(tmp_path: Path):
    term = Terminal(["play", "human", str(firstmove_bin()), str(firstmove_bin())], tmp_path)
    try:
        term.read_until("your move")
        bots = _descendants(term.proc.pid)
        assert len(bots) >= 2  # the two bots, and what starts them
        term.type("\x03")  # the terminal turns it into SIGINT for the foreground group
        term.read_until("interrupted")
        code = term.close()
    except BaseException:
        term.close(wait=0.1)
        raise
    assert code == 128 + signal.SIGINT, term.out[-2000:]
    assert "Traceback" not in term.out
    assert not any(Path(f"/proc/{pid}").exists() for pid in bots)


def test_what_a_bot_named_shows_the_person_is_escaped(capsys):
    seating = Seating.alone(2)
    human = HumanSeat(seating, ["human", "evil\x1b[2J\u202e"], Limits(move_ms=0), clock=False, lines=Script([]))
    bots = [human, LocalBot("evil\x1b[2J\u202e", seed=1)]
    play_match(bots, Rules.from_dict({"target": 1}), seating, 3)
    out = capsys.readouterr().out
    assert "your hand:" in out and "\x1b" not in out and "\u202e" not in out and "evil\\x1b[2J\\u202e" in out


class Silent:
    """A person who never answers: each read waits out its timeout."""

    def read(self, timeout: float | None) -> str | None:
        assert timeout is not None, "no clock was asked for: the person would wait forever"
        return None


def test_with_move_ms_a_person_who_does_not_answer_times_out_like_a_bot():
    seating = Seating.alone(2)
    human = HumanSeat(seating, ["human", "bot1"], Limits(move_ms=50, grace_ms=0), clock=True, lines=Silent(),
                      say=lambda _: None)
    record = play_match([human, LocalBot("bot1", seed=1)], Rules.from_dict({"target": 1}), seating, 5)
    assert [(f.seat, f.termination.value) for f in record.failures] == [(0, "timeout")]
    assert verify(record.to_dict()) == record.result and record.result.reason.value == "forfeit"
