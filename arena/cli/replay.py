"""``arena replay``, ``arena verify`` and ``arena report``: watch, check and publish logged games.

Every record is re-played through the rules core before it is shown; one that does not replay
to what it says is refused with the first move that does not match.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

import arena.cli.console as console
from arena.cli.edge import Interrupted
from arena.cli.options import ByNameOption, MixOption, PriorOption, check_prior
from arena.errors import ArenaError, ExitCode, InputError
from arena.match.record import RecordError
from arena.printable import printable
from arena.render.suits import SuitStyle
from arena.safe_files import make_folder, write_text

if TYPE_CHECKING:
    from arena.cli.workers import Workers
    from arena.tournament.config import TournamentConfig
    from arena.tournament.schedule import MatchSpec
    from arena.tournament.standings import Standings
    from arena.tournament.store import MatchRow, ResultStore

_STORE_FILE = "results.sqlite"
_KEYS_HELP = "keys: -> n space next | <- p back | up/down hand | g/G start/end | a auto | q quit"


# --- finding records --------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One record to check or show: where it came from, and its JSON (or why it could not be read).

    From a results store, also what the record must agree with: the store's row for it
    (``summary``), the tournament the store describes (``config``) and the schedule's match of
    that id (``spec``; None for a row whose id the schedule does not have)."""

    label: str
    record: Any
    summary: MatchRow | None = None
    error: str | None = None
    config: TournamentConfig | None = None
    spec: MatchSpec | None = None
    missing: bool = False  # a match of the schedule that the store does not hold



def _read_json(path: Path) -> Any:
    from arena.tournament.export import MAX_RECORD_BYTES

    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_RECORD_BYTES:
        raise InputError(f"{path}: not a game record: larger than {MAX_RECORD_BYTES // (1024 * 1024)} MB")
    try:
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not a JSON game record ({exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a JSON game record (not UTF-8 text)") from None
    except RecursionError:
        raise InputError(f"{path}: not a game record: its JSON is nested too deep") from None


def _is_store(folder: Path) -> bool:
    return (folder / _STORE_FILE).is_file()


def shown_labels(path: Path) -> dict[str, str]:
    """How the bots of the results folder ``path`` are shown where one changed: each version by
    its label (``mybot~2`` -> ``mybot@2.0``, as ``arena table`` shows it); empty for any other
    source, whose names are shown as recorded."""
    if not (path.is_dir() and _is_store(path)):
        return {}
    from arena.tournament.standings import store_labels

    with _open_store(path) as store:
        return store_labels(store)


def load_game(game: Path, game_id: str | None) -> tuple[Any, str]:
    """The record JSON named by the user: a file, or a results folder and a match id."""
    from arena.tournament.export import find_record, is_record_lines

    if game.is_dir():
        if game_id is None:
            raise InputError(f"{game} is a folder: give the id of a match in it too (arena replay {game} ID)"
                            + _some_ids(game))
        if _is_store(game):
            from arena.tournament.store import ResultStore, StoreError

            try:
                with ResultStore.open_existing(str(game)) as store:
                    return store.record(game_id), f"{game} match {game_id}"
            except StoreError as exc:
                raise InputError(str(exc) + _some_ids(game)) from None
        for candidate in (game / game_id, game / f"{game_id}.json"):
            if candidate.is_file():
                return _read_json(candidate), str(candidate)
        raise InputError(f"{game}: no record {game_id!r} (looked for {game_id}.json)")
    if not game.exists():
        raise InputError(f"{game}: no such file or folder")
    if is_record_lines(game):  # records one per line (arena export --records jsonl)
        return find_record(game, game_id)
    if game_id is not None:
        raise InputError(f"{game} is a file: a match id is only needed with a results folder")
    return _read_json(game), str(game)


def _some_ids(folder: Path) -> str:
    ids: list[str] = []
    try:
        if _is_store(folder):
            from arena.tournament.store import ResultStore

            with ResultStore.open_existing(str(folder)) as store:
                ids = [row.id for row in store.results()]
        else:
            ids = sorted(p.stem for p in folder.glob("*.json"))
    except (ArenaError, OSError):
        return ""
    if not ids:
        return " (it holds no matches)"
    shown = ", ".join(ids[:6]) + (", ..." if len(ids) > 6 else "")
    return f" (its {len(ids)} match ids: {shown})"


def iter_sources(path: Path, *, missing: bool = False) -> Iterator[Source]:
    """Every record under ``path``: a tournament's results folder, a folder of record JSON
    files, or one record file. With ``missing``, a results folder also gives a Source (with
    its error) for each match of its schedule that it does not hold."""
    from arena.tournament.export import is_record_lines, iter_record_lines

    if path.is_dir() and _is_store(path):
        yield from _store_sources(path, missing)
        return
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError(f"{path}: neither a results folder ({_STORE_FILE}) nor a folder of record .json files")
        for file in files:
            try:
                yield Source(file.stem, _read_json(file))
            except InputError as exc:
                yield Source(file.stem, None, None, str(exc))
        return
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    if is_record_lines(path):  # records one per line (arena export --records jsonl)
        yield from (Source(line.id, line.record, None, line.error) for line in iter_record_lines(path))
        return
    yield Source(path.name, _read_json(path))


def _store_sources(path: Path, missing: bool) -> Iterator[Source]:
    from arena.render.report import not_scheduled
    from arena.tournament.audit import store_schedule
    from arena.tournament.store import StoreError

    with _open_store(path) as store:
        config, schedule = store_schedule(store)
        by_id = {spec.id: spec for spec in schedule}
        rows = store.results()
        for row in rows:
            spec = by_id.get(row.id)
            if spec is None:
                # Not the tournament's: refused unread, however well its record replays.
                yield Source(row.id, None, row, not_scheduled(len(schedule)), config, None)
                continue
            try:
                record = store.record(row.id)
            except (StoreError, ValueError) as exc:
                yield Source(row.id, None, row, f"unreadable record: {exc}", config, spec)
                continue
            yield Source(row.id, record, row, None, config, spec)
        if missing:
            yield from _missing_sources((row.id for row in rows), schedule, config)


def _open_store(path: Path) -> ResultStore:
    """The store of the results folder ``path``, read only; one that cannot be opened is the
    command's input error."""
    from arena.tournament.store import ResultStore, StoreError

    try:
        return ResultStore.open_existing(str(path))
    except StoreError as exc:
        raise InputError(str(exc)) from None


def _missing_sources(ids: Iterable[str], schedule: Iterable[MatchSpec], config: TournamentConfig) -> Iterator[Source]:
    """A Source for each match of the schedule that the store does not hold (its ``ids``)."""
    stored = set(ids)
    for spec in schedule:
        if spec.id not in stored:
            yield Source(spec.id, None, None, "in the schedule, not in the store (deleted, or not played yet: "
                         "arena run resumes)", config, spec, missing=True)


def check_source(source: Source) -> tuple[Any, str | None]:
    """Verify one source; (its verified ``GameRecord`` or None, why it was refused or None); see
    ``arena.render.report.check_record`` for what a record from a results store must agree with."""
    from arena.render.report import check_record

    if source.error is not None:
        return None, source.error
    return check_record(source.record, source.summary, source.config, source.spec)


# --- arena replay ------------------------------------------------------------------------------


def _text_style(suits: SuitStyle, ascii_only: bool, tty: bool) -> Any:
    from arena.render.text import TextStyle

    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    unicode = not ascii_only and encoding in ("utf8", "utf8sig")
    color = tty and not ascii_only and "NO_COLOR" not in os.environ
    return TextStyle(suits=suits, color=color, unicode=unicode)


def replay_cmd(
    game: Annotated[Path, typer.Argument(help="A game record JSON file, or a tournament results folder (then give GAME_ID).")],
    game_id: Annotated[str | None, typer.Argument(help="The match id, when GAME is a results folder.")] = None,
    auto_delay: Annotated[str | None, typer.Argument(hidden=True, help="The delay after --auto.")] = None,
    seat: Annotated[int | None, typer.Option("--seat", help="Show only this seat's hand (the others face down).")] = None,
    auto: Annotated[
        bool, typer.Option("--auto", help="Step forward on its own (keys still work): --auto [SECONDS], default 1 s a step.")
    ] = False,
    delay: Annotated[
        float | None, typer.Option("--delay", min=0.0, help="Seconds per step with --auto (the same as --auto SECONDS).")
    ] = None,
    suits: Annotated[
        SuitStyle, typer.Option("--suits", help="Card faces: spanish (7o, 12c) or french (7♦, K♥; display only).")
    ] = SuitStyle.SPANISH,
    ascii_only: Annotated[bool, typer.Option("--ascii", help="Plain ASCII: no colours, no suit symbols.")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML replay page to this file instead.")
    ] = None,
    stderr: Annotated[
        bool, typer.Option("--stderr", help="Print what each seat's bot wrote on stderr during the match, seat by seat.")
    ] = False,
) -> None:
    """Replay a logged match, verified through the rules core: step with the arrow keys, or watch
    it run with --auto. When the output is not a terminal, print the whole match as plain text."""
    from arena.cli.options import check_output
    from arena.match.replay import replay
    from arena.tournament.export import is_record_lines

    if not game.exists():
        raise InputError(f"{game}: no such file or folder")
    if html is not None:
        check_output(html, "--html")
    # ``--auto 0.5``: typer options cannot take an optional value, so the number arrives as the
    # positional after GAME (or after GAME GAME_ID for a results folder).
    if game.is_dir() or is_record_lines(game):
        given = auto_delay
    else:
        given, game_id = (game_id, auto_delay) if auto_delay is None else (auto_delay, game_id)
    if given is not None:
        number = _seconds(given)
        if not auto or number is None:
            raise InputError(f"unexpected argument {given!r}" + (" (a delay goes after --auto)" if number is not None else ""))
        if delay is not None and delay != number:
            raise InputError("give the delay once: --auto SECONDS or --delay SECONDS")
        delay = number
    delay = 1.0 if delay is None else delay
    data, label = load_game(game, game_id)
    try:
        rep = replay(data)
    except RecordError as exc:
        raise RecordError(f"{label}: {exc}") from None
    labels = shown_labels(game)
    if labels:
        # Checked as recorded, shown as people read the bots: a version by its label (mybot@2.0).
        from dataclasses import replace

        from arena.tournament.standings import relabelled

        rep = replace(rep, record=relabelled(rep.record, labels))
    if seat is not None and not 0 <= seat < rep.seating.players:
        raise InputError(f"--seat {seat}: this match has seats 0 to {rep.seating.players - 1}")
    if stderr:
        from arena.render.text import stderr_text

        console.echo(stderr_text(rep.record, game_id if game_id is not None else str(game)), nl=False)
        return
    if html is not None:
        write_replay_page(html, rep.record, f"Escoba replay · {label}", suits)
        console.echo(f"wrote {html} ({len(rep.frames)} frames, {rep.moves} moves; verified)")
        return
    tty_out = sys.stdout.isatty()
    if not tty_out:
        from arena.render.text import render_transcript

        console.echo(render_transcript(rep, _text_style(suits, ascii_only, False), seat), nl=False)
        return
    style = _text_style(suits, ascii_only, True)
    if sys.stdin.isatty():
        _interactive(rep, style, seat, auto, delay)
    elif auto:
        _run_unattended(rep, style, seat, delay)
    else:
        from arena.render.text import render_transcript

        console.styled(render_transcript(rep, style, seat))


def write_replay_page(path: Path, record: Any, title: str, suits: SuitStyle = SuitStyle.SPANISH,
                      analysis: list[dict[str, Any]] | None = None) -> None:
    """The replay page of a verified record, with what no seat saw during play (with
    ``analysis``, its analysed moves marked)."""
    from arena.match.replay import verify_afterwards
    from arena.render.html import render_replay_html

    _, steps, seen, events = verify_afterwards(record)
    _write_text(path, render_replay_html(record, steps, title=title, suits=suits, seen=seen, analysis=analysis,
                                         events=events))


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None


def _write_text(path: Path, text: str, *, folder_may_be_link: bool = True) -> None:
    # A new file renamed into place: a link planted under the name is replaced, never followed.
    write_text(path, text, folder_may_be_link=folder_may_be_link)


_CLEAR = "\x1b[H\x1b[2J"


def _run_unattended(rep: Any, style: Any, seat: int | None, delay: float) -> None:
    from arena.render.text import render_screen

    for i in range(len(rep.frames)):
        console.styled(_CLEAR + render_screen(rep, i, style, seat) + "\n")
        console.flush()
        if i + 1 < len(rep.frames):
            time.sleep(delay)


def _interactive(rep: Any, style: Any, seat: int | None, auto: bool, delay: float) -> None:
    import termios
    import tty

    from arena.render.text import render_screen

    frames = rep.frames
    last = len(frames) - 1
    hand_starts = [i for i, f in enumerate(frames) if i == 0 or f.hand != frames[i - 1].hand]
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    pos = 0
    playing = auto
    console.styled("\x1b[?1049h\x1b[?25l")  # the alternate screen, cursor hidden
    try:
        tty.setcbreak(fd)
        while True:
            mode = "  [auto: a to stop]" if playing else ""
            console.styled(_CLEAR + render_screen(rep, pos, style, seat, help_line=_KEYS_HELP + mode) + "\n")
            console.flush()
            key = _read_key(fd, delay if playing else None)
            if key is None:
                if pos < last:
                    pos += 1
                else:
                    playing = False
                continue
            if key in ("q", "Q", "esc"):
                break
            if key in ("right", "n", " ", "l", "enter"):
                pos = min(last, pos + 1)
            elif key in ("left", "p", "h", "backspace"):
                pos = max(0, pos - 1)
            elif key in ("down", "N", "pgdn"):
                pos = next((s for s in hand_starts if s > pos), last)
            elif key in ("up", "P", "pgup"):
                pos = max((s for s in hand_starts if s < pos), default=0)
            elif key in ("g", "home"):
                pos = 0
            elif key in ("G", "end"):
                pos = last
            elif key == "a":
                playing = not playing
                if playing and pos >= last:
                    pos = 0
    except Interrupted:
        raise  # SIGTERM or SIGHUP: stop (the terminal is restored below), not a quit key
    except KeyboardInterrupt:
        pass  # Ctrl-C quits like q
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        console.styled("\x1b[?25h\x1b[?1049l")
        console.flush()
    # Leave the final position on the ordinary screen, so what was watched stays visible.
    console.styled(render_screen(rep, pos, style, seat) + "\n")
    console.flush()


_SEQUENCES = {
    "[A": "up",
    "[B": "down",
    "[C": "right",
    "[D": "left",
    "[H": "home",
    "[F": "end",
    "OA": "up",
    "OB": "down",
    "OC": "right",
    "OD": "left",
    "OH": "home",
    "OF": "end",
    "[1~": "home",
    "[4~": "end",
    "[5~": "pgup",
    "[6~": "pgdn",
}


def _read_key(fd: int, timeout: float | None) -> str | None:
    """One key press from a terminal in cbreak mode; None when ``timeout`` passes first."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return None
    ch = os.read(fd, 1)
    if ch == b"\x1b":
        seq = b""
        while len(seq) < 4:
            more, _, _ = select.select([fd], [], [], 0.03)
            if not more:
                break
            seq += os.read(fd, 1)
            if seq[-1:].isalpha() or seq[-1:] == b"~":
                break
        return _SEQUENCES.get(seq.decode("ascii", "replace"), "esc" if not seq else "unknown")
    if ch in (b"\r", b"\n"):
        return "enter"
    if ch in (b"\x7f", b"\x08"):
        return "backspace"
    if ch == b"\x04" or not ch:  # Ctrl-D or end of input
        return "q"
    return ch.decode("utf-8", "replace")


# --- arena verify ------------------------------------------------------------------------------


def verify_cmd(
    results: Annotated[
        Path, typer.Argument(help="A tournament results folder, a folder of record .json files, or one record file.")
    ],
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print a line for every record, not only the refused ones.")
    ] = False,
) -> None:
    """Re-play every game record through the rules core and check it ends as recorded. For a
    results folder, also check every column of every row against its record and the schedule,
    and that the store holds exactly the schedule's matches. Exit code 1 if anything is refused."""
    checked = refused = absent = 0
    for label, ok, why, missing in _verified(results):
        if missing:
            absent += 1
            console.echo(printable(f"missing {label}: {why}"))
            continue
        checked += 1
        if why is not None:
            refused += 1
            console.echo(printable(f"refused {label}: {why}"))
        elif verbose:
            console.echo(printable(f"ok {label}: {ok}"))
    if refused or absent:
        gone = f"; {absent} scheduled match{'es' if absent != 1 else ''} missing" if absent else ""
        console.echo(printable(f"{results}: {refused} of {checked} records refused{gone}"), err=True)
        raise typer.Exit(ExitCode.CHECK_FAILED)
    said = "its one record replays to its recorded result" if checked == 1 else \
        f"all {checked} records replay to their recorded results"
    console.echo(printable(f"{results}: {said}"))


def _verified(results: Path) -> Iterator[tuple[str, str | None, str | None, bool]]:
    """(label, the verified match's line or None, why it was refused or None, missing?) of
    every record under ``results``, in order; a large results folder's records are checked by
    worker processes, as the report's are."""
    if results.is_dir() and _is_store(results):
        from arena.tournament.audit import store_schedule

        with _open_store(results) as store:
            stored = store.count()
        with _checking_pool(results, stored, pages=False) as pool:
            if pool is not None:
                with _open_store(results) as store:  # while the workers start
                    config, schedule = store_schedule(store)
                    ids = [row.id for row in store.results()]
                for match_id, (ok, why, _) in zip(ids, pool.check(ids), strict=True):
                    yield match_id, ok, why, False
                for source in _missing_sources(ids, schedule, config):
                    yield source.label, None, source.error, True
                return
    from arena.render.report import verified_line

    for source in iter_sources(results, missing=True):
        if source.missing:
            yield source.label, None, source.error, True
            continue
        rec, why = check_source(source)
        yield source.label, None if rec is None else verified_line(rec), why, False


# --- arena report ------------------------------------------------------------------------------


def report_cmd(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="A tournament's results folder (results/<name>); several, or a folder of them, make a league page.",
            metavar="RESULTS...",
        ),
    ],
    html: Annotated[Path | None, typer.Option("--html", help="The report page to write (default: RESULTS/report.html).")] = None,
    suits: Annotated[
        SuitStyle, typer.Option("--suits", help="Card faces in the replay pages: spanish or french.")
    ] = SuitStyle.SPANISH,
    prior: PriorOption = None,
    by_name: ByNameOption = False,
    mix: MixOption = False,
) -> None:
    """Write a tournament report page (standings, crosstable, ratings plot) with a verified replay
    page for every match beside it, in OUT_replays/. Exit code 1 if any record is refused.
    Several results folders (or a folder of them) get a league page instead: the rating list,
    the tournaments and the ratings over time (default: FOLDER/league.html)."""
    if html is not None:
        from arena.cli.options import check_output

        check_output(html, "--html")
    if is_league(inputs):
        from arena.cli.rate import write_league_report

        write_league_report(inputs, html, prior=prior, by_name=by_name, mix=mix)
        return
    results = inputs[0]
    prior = check_prior(prior)
    if not results.is_dir() or not _is_store(results):
        raise InputError(f"{results}: not a tournament results folder (no {_STORE_FILE}; run a tournament first)")
    written = write_report(results, html, suits=suits, prior=prior, say=console.err)
    for line in written.refusals:
        console.err(line)
    console.echo(f"wrote {written.page} and {written.pages} replay pages in {written.replays}")
    if written.refusals:
        console.err(f"{results}: {len(written.refusals)} of {written.matches} records refused")
        raise typer.Exit(ExitCode.CHECK_FAILED)


def is_league(inputs: Sequence[Path]) -> bool:
    """Whether ``arena report`` was given a league: several inputs, or a folder that is not
    itself a results folder (a folder of them)."""
    return len(inputs) > 1 or (len(inputs) == 1 and inputs[0].is_dir() and not _is_store(inputs[0]))


@dataclass(frozen=True)
class WrittenReport:
    page: Path
    replays: Path
    pages: int  # matches with a replay (written now, or kept from the last report)
    matches: int
    refusals: tuple[str, ...]
    kept: int = 0  # replays left as the last report to the same place wrote them


# Without a terminal, how often the report's progress is said while it writes.
REPORT_PROGRESS_EVERY_S = 10.0


def write_report(results: Path, html: Path | None = None, *, suits: SuitStyle = SuitStyle.SPANISH,
                 prior: float | None = None, say: Callable[[str], None],
                 skip_hint: str = "", standings: Standings | None = None) -> WrittenReport:
    """The report page of the results folder ``results`` (default: RESULTS/report.html) and a
    verified replay per match beside it (one replay page, and a data file per match); the one
    writer of ``arena report`` and the end of ``arena run``. Long work says what it does: a line
    first (with ``skip_hint``, how to go without it), then a bar on a terminal or a line every
    few seconds."""
    from arena.render.report import DATA_DIR, VIEWER, RatedPage, TournamentReport, rated_page
    from arena.tournament.store import ResultStore

    if html is None:
        make_folder(results)  # the default page goes in the results folder: not through a link to it
    out = html if html is not None else results / "report.html"
    replays_dir = out.parent / f"{out.stem}_replays"
    make_folder(replays_dir)  # a link planted as the replays folder is refused
    data_dir = replays_dir / DATA_DIR
    make_folder(data_dir)
    with ResultStore.open_existing(str(results)) as store:
        stored = store.count()
    # The workers start first: they open the store and fit the standings while this process
    # checks the store and plans the pages.
    with _checking_pool(results, stored) as pool:
        # The standings are fitted by a worker too, beside the records rather than after them.
        rated: Callable[[], RatedPage] | None
        if standings is not None:  # the caller's, of the store as it is (the end of arena run)
            rated = partial(rated_page, str(results), prior, standings=standings)
        elif pool is not None:
            rated = pool.call(partial(rated_page, checked_elsewhere=True), str(results), prior)
        else:
            rated = None
        from arena.tournament.audit import scheduled_rows  # once the workers have started

        with ResultStore.open_existing(str(results)) as store:
            # A damaged store is its one error line, before any word of progress.
            scheduled_rows(store)
        from arena.render.text import counted

        index = _DataIndex(data_dir, replays_dir / _DataIndex.INDEX)
        report = TournamentReport(results, replays_dir=replays_dir.name, suits=suits,
                                  reuse=index.reusable if index.has_entries else None)
        total = report.todo()
        kept = f" ({index.kept} unchanged)" if index.kept else ""
        say(f"report: writing {counted(total, 'replay page')}{kept} and {out.name}{skip_hint}...")
        with _page_progress(total, say) as advance:
            for file, script in report.replay_files(pool.check if pool is not None else None):
                _write_text(data_dir / file, script, folder_may_be_link=False)
                index.made(file, script)
                advance()
        if rated is not None:
            report.rated(rated(), prior=prior)
    index.write(report.keys)
    _write_text(replays_dir / VIEWER, report.viewer(), folder_may_be_link=False)
    _write_text(out, report.page(prior=prior))
    matches = len(report.matches)
    return WrittenReport(out, replays_dir, matches - len(report.refusals), matches, tuple(report.refusals), report.kept)


class _DataIndex:
    """The index of a report's data files (``INDEX``, beside the replay page): each file's key
    (what it was made from: the match's record and row, the tournament, the arena's own code;
    ``arena.render.report.made_from``) and a digest of the file as written. A file whose key and
    content are those the index says is left as it is by the next report to the same place:
    after every run, only the new matches' replays are made."""

    INDEX = ".data-index.json"
    _MOST_BYTES = 64 << 20  # a data file larger than this is made again rather than read

    def __init__(self, folder: Path, path: Path) -> None:
        self._folder = folder
        self._path = path
        self._old: dict[str, tuple[str, str]] = {}
        self._new: dict[str, str] = {}  # file -> digest of what this report wrote
        self.kept = 0
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > self._MOST_BYTES:
                return  # a link or a giant planted in its place: not read, every file is made again
            data = json.loads(path.read_text(encoding="utf-8"))
            files = data.get("files") if isinstance(data, dict) else None
            if isinstance(files, dict):
                self._old = {name: (entry[0], entry[1]) for name, entry in files.items()
                             if isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, str) for x in entry)}
        except (OSError, ValueError):
            pass  # no index (a first report), or a damaged one: every file is made again

    @property
    def has_entries(self) -> bool:
        """Whether an earlier report left data files to keep (else none is looked for)."""
        return bool(self._old)

    def reusable(self, file: str, key: str) -> bool:
        entry = self._old.get(file)
        if entry is None or entry[0] != key:
            return False
        path = self._folder / file
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > self._MOST_BYTES:
                return False
            same = _digest(path.read_bytes()) == entry[1]
        except OSError:
            return False
        self.kept += same
        return same

    def made(self, file: str, script: str) -> None:
        self._new[file] = _digest(script.encode("utf-8"))

    def write(self, keys: dict[str, str]) -> None:
        files = {}
        for file, key in keys.items():
            digest = self._new.get(file) or self._old.get(file, ("", ""))[1]
            if digest:
                files[file] = [key, digest]
        _write_text(self._path, json.dumps({"files": files}, separators=(",", ":")),
                    folder_may_be_link=False)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


REPORT_BATCH = 8  # matches given to a worker at a time
# Below this many matches the report checks its records in this process: starting workers
# would cost more than it saves.
REPORT_POOL_FROM = 64


T = TypeVar("T")


@dataclass(frozen=True)
class _Checking:
    """The report's (or verify's) worker processes: ``check`` maps match ids to the store
    checker's answers, in order (a ``Mapper``); ``call`` runs a function in one of them and
    gives the function that waits for its value."""

    workers: Workers

    def check(self, ids: Iterable[str]) -> Iterable[Any]:
        from arena.render.report import worker_check

        return self.workers.imap(worker_check, ids, chunksize=REPORT_BATCH)

    def call(self, function: Callable[..., T], *args: Any) -> Callable[[], T]:
        return self.workers.call(function, *args)


@contextmanager
def _checking_pool(results: Path, total: int, *, pages: bool = True) -> Iterator[_Checking | None]:
    """How the report (or, without ``pages``, verify) checks its ``total`` records: worker
    processes, one per core (at most 4), that each open the store and check their share of the
    matches, answering in order; or None (in this process) for a short tournament or a single
    core."""
    workers = min(len(os.sched_getaffinity(0)), 4)
    if total < REPORT_POOL_FROM or workers < 2:
        yield None
        return
    from arena.cli.workers import worker_pool
    from arena.render.report import init_worker

    # Nothing is open yet, and a worker only reads its own connection to the store.
    with worker_pool(workers, "checking the records", init_worker, (str(results), pages)) as pool:
        yield _Checking(pool)


@contextmanager
def _page_progress(total: int, say: Callable[[str], None]) -> Iterator[Callable[[], None]]:
    with progress("report", total, say, "replay pages") as advance:
        yield lambda: advance(1)


@contextmanager
def progress(label: str, total: int, say: Callable[[str], None], what: str) -> Iterator[Callable[[int], None]]:
    """A transient bar on a terminal (stderr); elsewhere a line every REPORT_PROGRESS_EVERY_S
    (``label: done/total what``). The context gives the function that counts ``n`` more done."""
    done = 0
    if total and console.stderr_is_terminal():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("eta"),
                      TimeRemainingColumn(), console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=total)
            yield lambda n: bar.advance(task, n)
        return
    last = time.monotonic()

    def advance(n: int) -> None:
        nonlocal done, last
        done += n
        if time.monotonic() - last >= REPORT_PROGRESS_EVERY_S and done < total:
            last = time.monotonic()
            say(f"{label}: {done}/{total} {what}")

    yield advance


__all__ = ["WrittenReport", "replay_cmd", "verify_cmd", "report_cmd", "write_report", "load_game",
           "iter_sources", "check_source", "progress", "write_replay_page",
           "Source"]
