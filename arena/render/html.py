"""Self-contained HTML pages: a match replay, a tournament report, and the report's one
replay page with its matches' data files.

Pure: values in, one HTML string out. Every page carries its own CSS, JavaScript and SVG
(the suit pictures are inline symbols); a replay page also carries its verified match as
embedded JSON, or (the report's) loads it from a data file beside it. So a page opens from a
file with the network off: nothing is fetched from anywhere else, no font, script or image.

The CSS, JavaScript, SVG and the replay page's body are files of this package
(``arena/render/web/``). What the script needs (the replay's data, and options such as the suit
style) is passed as JSON "islands", ``<script type="application/json">`` elements the script
reads with ``JSON.parse``; see ``json_island`` for why any string survives that trip.
"""

from __future__ import annotations

import bisect
import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any

from arena.core.cards import DECK
from arena.core.rules import Rules, Seating
from arena.core.scoring import CATEGORIES
from arena.match.jsontext import ascii_dumps
from arena.match.record import GameRecord, untimed
from arena.match.replay import Afterwards, afterwards, side_names
from arena.printable import printable
from arena.render.suits import SuitStyle, page_suits
from arena.render.text import (
    CAPTIONS,
    CATEGORY_LABELS,
    COUNT_KEYS,
    TOTAL_LABELS,
    escoba_text,
    info_text,
    match_end_text,
    rules_text,
    seat_name,
)

# The version of the replay page's data (docs/REPLAY.md, "The replay page's data"): raised when
# a key changes meaning or goes, so that a reader written for another version refuses the data
# instead of drawing a wrong game.
REPLAY_SCHEMA_VERSION = 2


@cache
def asset(name: str) -> str:
    """A file of ``arena/render/web/`` (installed with the package), as text."""
    return (files("arena.render") / "web" / name).read_text(encoding="utf-8")


def json_island(data: Any) -> str:
    """``data`` as JSON text that is safe as the content of a ``<script type="application/json">``
    element, whatever strings it holds: ``<``, ``>`` and ``&`` are written as ``\\u003c``-style
    escapes, and every non-ASCII character (U+2028 and U+2029, and lone surrogates that a
    record's JSON may carry) as a ``\\uXXXX`` escape, so the page's bytes are plain ASCII. Inside
    a JSON string these escapes mean the same characters, and outside one they cannot occur, so
    the island stays the same JSON while no "</script>", "<!--" or "]]>" can end or bend the
    element it sits in."""
    return ascii_dumps(data, escaped="<>&")


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _e(text: object) -> str:
    """Text as HTML; a lone surrogate (which no file can be encoded with) becomes U+FFFD."""
    return html.escape(_SURROGATE_RE.sub("\ufffd", str(text)), quote=True)


# --- replay data ---------------------------------------------------------------------------------


def replay_data(record: GameRecord, steps: Sequence[tuple[int, int | None]], title: str = "",
                seen: Afterwards | None = None, events: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Everything the replay page shows, as plain JSON-able values: the data format of version
    ``REPLAY_SCHEMA_VERSION`` that docs/REPLAY.md documents key by key. ``record`` must be
    verified, and ``steps`` is how its events split into steps (both from
    ``arena.match.replay.verify_steps``): the page draws the table from these verified events.
    The labels and sentences it writes (score categories and totals, suit styles, figures, the
    escoba cry, the captions) come with it, from the tables that own them. ``seen``: the
    record's ``Afterwards`` when the caller has it (recomputed otherwise); ``events``: its events
    without their times, when the caller has them (``verify_afterwards``)."""
    rules = Rules.from_record(record.rules)
    seating = Seating.from_dict(record.seating)
    moves = record.moves
    plays: list[list[int | str | None]] = [[end, turn, None, None] for end, turn in steps[:1]]
    plays += [[end, turn, m.seat, m.move] for (end, turn), m in zip(steps[1:], moves, strict=True)]
    labels = _labels(rules)
    return {
        "schema_version": REPLAY_SCHEMA_VERSION,
        "title": title or f"Escoba replay · seed {record.seed}",
        "seed": record.seed,
        "players": seating.players,
        "seats": list(record.seats),
        "sides": list(side_names(record, seating)),
        "side_of": [seating.side_of(s) for s in range(seating.players)],
        "rules": labels.rules,
        "rules_text": labels.rules_text,
        "target": rules.target,
        "result": record.result.to_dict(),
        "result_text": match_end_text(record, seating),
        "moves": len(moves),
        "categories": labels.categories,
        "total_labels": labels.total_labels,
        "suits": labels.suits,
        "captions": {"texts": labels.captions, "seats": [seat_name(record, s) for s in range(seating.players)],
                     "sides": [printable(name) for name in side_names(record, seating)],
                     "escobas": labels.escobas},
        "card_order": _CARD_ORDER,
        # The record's events, times left out: verified equal to what the rules core made.
        "events": list(map(untimed, record.events)) if events is None else list(events),
        "steps": plays,
        "outcomes": [o.to_dict() for o in record.outcomes],
        # The bots' notes with their moves, as escaped lines: [move index, text] of each.
        "notes": [[i, info_text(m.info)] for i, m in enumerate(moves) if m.info is not None],
        "stderr": _stderr_by_move(record),
        **_afterwards_data(record, seen),
    }


@dataclass(frozen=True)
class _Labels:
    """What the replay data says the same way in every match played by one set of rules: made
    once per rules (``_labels``), not in each of a report's thousands of data files. Shared
    values: the data is written as JSON, never changed."""

    rules: dict[str, Any]
    rules_text: str
    categories: list[dict[str, Any]]
    total_labels: dict[str, str]
    suits: dict[str, Any]
    captions: dict[str, str]
    escobas: list[str]


@lru_cache(maxsize=16)
def _labels(rules: Rules) -> _Labels:
    return _Labels(
        rules=rules.to_dict(),
        rules_text=rules_text(rules),
        categories=[{"key": c, "label": _capitalized(CATEGORY_LABELS[c]), "count": COUNT_KEYS.get(c)}
                    for c in CATEGORIES if c != "all_sevens" or rules.all_sevens_bonus],
        total_labels={key: _capitalized(label) for key, label in TOTAL_LABELS.items()},
        suits=page_suits(),
        captions=dict(CAPTIONS),
        escobas=[escoba_text(n) for n in range(1, _MOST_ESCOBAS + 1)],
    )


def _afterwards_data(record: GameRecord, seen: Afterwards | None) -> dict[str, Any]:
    """What no seat saw during play, for the page: each hand's deck and each decision's legal moves."""
    if seen is None:
        seen = afterwards(record)
    return {"decks": [[c.text for c in deck] for deck in seen.decks], "offered": [list(m) for m in seen.offered]}


def _stderr_by_move(record: GameRecord) -> list[list[Any]]:
    """Each stderr line as ``[move, seat, t_ms, text]``: the first move made at or after the
    time it was read (null after the last move, or in a record without times), its text escaped."""
    if not record.stderr:
        return []
    times = [m.t_ms for m in record.moves]
    if any(t is None for t in times):
        return [[None, line.seat, line.t_ms, printable(line.text)] for line in record.stderr]
    ends = [float(t) for t in times if t is not None]
    out: list[list[Any]] = []
    for line in record.stderr:
        index = bisect.bisect_left(ends, line.t_ms)
        out.append([index if index < len(ends) else None, line.seat, line.t_ms, printable(line.text)])
    return out


# The most escobas one step can make (a play and its sweep of the table): the page's cries.
_MOST_ESCOBAS = 4
# Where each card goes among the table's cards: the rules core's own order (``Card.order``).
_CARD_ORDER = {str(c): c.order for c in DECK}


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- pages ---------------------------------------------------------------------------------------

# Nothing may be fetched from the network: the policy makes a mistake here fail loudly instead of
# leaking. The report's replay viewer (``scripts``) also loads its match's data file, beside it.
_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; script-src {scripts}'unsafe-inline'; img-src data:")


def _page(title: str, css: str, body: str, script: str = "", islands: Mapping[str, Any] | None = None,
          *, scripts: str = "") -> str:
    """A whole page; ``islands``: element id -> data, each written as a JSON island;
    ``scripts``: the script sources the page may load besides its own inline ones."""
    data_block = "".join(
        f'<script type="application/json" id="{_e(key)}">{json_island(value)}</script>\n'
        for key, value in (islands or {}).items()
    )
    js = f"<script>{script}</script>\n" if script else ""
    policy = _POLICY.format(scripts=scripts)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n"
        f"<title>{_e(title)}</title>\n<style>{asset('page.css')}{css}</style>\n</head>\n<body>\n"
        f"{asset('suits.svg')}{body}\n{data_block}{js}</body>\n</html>\n"
    )


def render_replay_html(record: GameRecord, steps: Sequence[tuple[int, int | None]], title: str = "",
                       suits: SuitStyle | str = SuitStyle.SPANISH, seen: Afterwards | None = None,
                       analysis: Sequence[Mapping[str, Any]] | None = None,
                       events: Sequence[Mapping[str, Any]] | None = None) -> str:
    """The replay page of one verified match (``record`` and ``steps`` as ``replay_data`` takes
    them), its data inside; ``suits``: the card faces it opens with. ``analysis``: the analysed
    moves (``arena analyze``'s ``MoveAnalysis.to_dict()``), marked beside their moves, in an
    island of their own (docs/ANALYSIS.md), so that the replay's data keeps its version."""
    style = SuitStyle.parse(suits)
    data = replay_data(record, steps, title, seen, events)
    islands: dict[str, Any] = {"replay-data": data, "replay-config": {"suits": style.value}}
    if analysis is not None:
        islands["replay-analysis"] = list(analysis)
    return _page(data["title"], asset("replay.css"), asset("replay.html"), asset("replay.js"), islands)


# The function a replay data file calls with its match (docs/REPLAY.md, "The report's files").
DATA_CALLBACK = "escobaReplayData"


def replay_data_script(record: GameRecord, steps: Sequence[tuple[int, int | None]], title: str = "",
                       seen: Afterwards | None = None, events: Sequence[Mapping[str, Any]] | None = None) -> str:
    """A replay's data as a script file for the report's viewer: ``escobaReplayData({...});``.
    A script, not a JSON file, since a page opened from file:// may load scripts beside it but
    not fetch files; the JSON is written as in an island, so no string can end the call."""
    return f"{DATA_CALLBACK}({json_island(replay_data(record, steps, title, seen, events))});\n"


def render_replay_viewer(title: str, suits: SuitStyle | str = SuitStyle.SPANISH) -> str:
    """The report's one replay page: it shows the match its address names after ``#`` (a data
    file's name, without ``.js``), loading ``data/NAME.js`` beside it."""
    style = SuitStyle.parse(suits)
    islands = {"replay-config": {"suits": style.value, "data": "data/"}}
    return _page(title, asset("replay.css"), asset("replay.html"), asset("replay.js"), islands, scripts="'self' ")


# --- the tournament report -------------------------------------------------------------------------

def ratings_plot_svg(entries: Sequence[tuple[str, float | None, float | None, str]], width: int = 720) -> str:
    """Elo with its 95% interval per bot as a dot-and-whisker plot (inline SVG).

    ``entries``: (name, elo, ci95, status) best first; a bot without a finite rating is listed
    with a word on why (its status) instead of a dot."""
    row_h, left, right, top = 26, 170, 90, 28
    height = top + row_h * max(1, len(entries)) + 34
    finite = [(e, c or 0.0) for _, e, c, _ in entries if e is not None and math.isfinite(e)]
    if finite:
        lo = min(e - c for e, c in finite)
        hi = max(e + c for e, c in finite)
    else:
        lo, hi = -100.0, 100.0
    if hi - lo < 50:
        mid = (hi + lo) / 2
        lo, hi = mid - 25, mid + 25
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    span = width - left - right

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * span

    parts = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="ratings with 95% intervals">']
    step = _nice_step((hi - lo) / 6)
    tick = math.ceil(lo / step) * step
    axis_y = height - 26
    while finite and tick <= hi:
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 10}" x2="{tx:.1f}" y2="{axis_y}" stroke="#e3e7ec"/>')
        parts.append(f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{tick:+.0f}</text>')
        tick += step
    if finite and lo < 0 < hi:
        parts.append(f'<line x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{axis_y}" '
                     'stroke="#9aa5b1" stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{left}" y="14">Elo (0 = field average), with 95% intervals</text>')
    for i, (name, elo, ci, note) in enumerate(entries):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{_e(name)}</text>')
        if elo is None or not math.isfinite(elo):
            label = _UNRATED.get(note, "no finite rating (see the notes)")
            parts.append(f'<text x="{left + 4}" y="{y + 4:.1f}" fill="#8a4b00">{_e(label)}</text>')
            continue
        if ci:
            parts.append(f'<line x1="{x(elo - ci):.1f}" y1="{y:.1f}" x2="{x(elo + ci):.1f}" y2="{y:.1f}" '
                         'stroke="#1d4ed8" stroke-width="3" stroke-linecap="round" opacity="0.55"/>')
            for end in (elo - ci, elo + ci):
                parts.append(f'<line x1="{x(end):.1f}" y1="{y - 6:.1f}" x2="{x(end):.1f}" y2="{y + 6:.1f}" '
                             'stroke="#1d4ed8" stroke-width="2"/>')
        label = f"{elo:+.0f}" + (f" ± {ci:.0f}" if ci else "")
        parts.append(f'<circle cx="{x(elo):.1f}" cy="{y:.1f}" r="6" fill="#1d4ed8"><title>{_e(name)}: {label}</title></circle>')
        parts.append(f'<text x="{x(elo + (ci or 0)) + 8:.1f}" y="{y + 4:.1f}" fill="#1d4ed8">{_e(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


# The LLR plot draws at most this many points: a long test's trace is thinned to each
# stretch's lowest and highest value, which keeps every excursion towards a bound visible.
LLR_PLOT_POINTS = 1200


def _thinned(trace: Sequence[float], most: int) -> list[tuple[int, float]]:
    """(pairs, LLR) points of ``trace`` (the LLR after pair 1, 2, ...), from (0, 0)."""
    points = [(0, 0.0)]
    n = len(trace)
    if n <= most:
        return points + [(i + 1, v) for i, v in enumerate(trace)]
    buckets = most // 2
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        chunk = range(lo, hi)
        low = min(chunk, key=lambda i: trace[i])
        high = max(chunk, key=lambda i: trace[i])
        for i in sorted({low, high}):
            points.append((i + 1, trace[i]))
    if points[-1][0] != n:
        points.append((n, trace[-1]))
    return points


def llr_plot_svg(trace: Sequence[float], lower: float, upper: float, decided_at: int | None, decision: str,
                 width: int = 720, height: int = 280) -> str:
    """The LLR against the number of pairs, with the two bounds and the pair the test decided
    at (inline SVG). ``decision``: the text shown at that pair (e.g. "H1 accepted")."""
    left, right, top, bottom = 56, 24, 30, 36
    n = max(len(trace), 1)
    finite = [v for v in trace if math.isfinite(v)]
    lo = min([lower, *finite]) if finite else lower
    hi = max([upper, *finite]) if finite else upper
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(pairs: float) -> float:
        return left + pairs / n * plot_w

    def y(value: float) -> float:
        return top + (hi - value) / (hi - lo) * plot_h

    parts = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="log-likelihood ratio against pairs">']
    parts.append(f'<text x="{left}" y="16">LLR after each pair, in deal order; the test stops at a bound</text>')
    axis_y = top + plot_h
    step = _nice_step(n / 6)
    tick = 0.0
    while tick <= n:
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{axis_y}" stroke="#e3e7ec"/>')
        parts.append(f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{tick:.0f}</text>')
        tick += step
    parts.append(f'<text x="{left + plot_w:.1f}" y="{axis_y + 30}" text-anchor="end">pairs</text>')
    vstep = _nice_step((hi - lo) / 5)
    value = math.ceil(lo / vstep) * vstep
    while value <= hi:
        parts.append(f'<text x="{left - 8}" y="{y(value) + 4:.1f}" text-anchor="end">{value:g}</text>')
        value += vstep
    parts.append(f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + plot_w}" y2="{y(0):.1f}" stroke="#9aa5b1"/>')
    for bound, name, colour in ((upper, "H1", "#15803d"), (lower, "H0", "#b91c1c")):
        parts.append(f'<line x1="{left}" y1="{y(bound):.1f}" x2="{left + plot_w}" y2="{y(bound):.1f}" '
                     f'stroke="{colour}" stroke-dasharray="6 4"/>')
        below = 14 if bound < 0 else -5  # each label on the side of its bound away from the trace's middle
        parts.append(f'<text x="{left + 6}" y="{y(bound) + below:.1f}" fill="{colour}">{name} bound {bound:.2f}</text>')
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in _thinned(trace, LLR_PLOT_POINTS) if math.isfinite(v))
    parts.append(f'<polyline points="{points}" fill="none" stroke="#1d4ed8" stroke-width="1.6"/>')
    if decided_at is not None and 0 < decided_at <= len(trace):
        dx, dy = x(decided_at), y(trace[decided_at - 1])
        parts.append(f'<line x1="{dx:.1f}" y1="{top}" x2="{dx:.1f}" y2="{axis_y}" stroke="#334" stroke-dasharray="2 3"/>')
        label = f"{decision} at pair {decided_at}"
        anchor = "end" if dx > left + plot_w * 0.6 else "start"
        shift = -6 if anchor == "end" else 6
        parts.append(f'<circle cx="{dx:.1f}" cy="{dy:.1f}" r="5" fill="#1d4ed8"><title>{_e(label)}</title></circle>')
        parts.append(f'<text x="{dx + shift:.1f}" y="{top + 12}" text-anchor="{anchor}">{_e(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


_UNRATED = {
    "unbounded_above": "rating unbounded above: won every game (see the notes)",
    "unbounded_below": "rating unbounded below: lost every game (see the notes)",
    "separated": "rating unbounded: results perfectly ordered (see the notes)",
}


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _header(text: str) -> str:
    # A long header (escobas/hand, opp_forfeits) may break after its / or _ when the page is
    # narrow, rather than widen its column of short numbers past the page.
    return re.sub(r"([/_])", r"\1<wbr>", _e(text))


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], left: Iterable[int] = (0,), cls: str = "data",
           raw: bool = False, wrap: Iterable[int] = ()) -> str:
    """An HTML table; cells are escaped unless ``raw`` (then they are trusted HTML fragments);
    the cells of the ``wrap`` columns may break into lines."""
    left = set(left)
    wrapped = set(wrap)

    def cls_of(i: int) -> str:
        return " ".join(name for name, on in (("l", i in left), ("w", i in wrapped)) if on)

    out = [f'<table class="{cls}"><thead><tr>']
    out += [f'<th class="{cls_of(i)}">{_header(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            out.append(f'<td class="{cls_of(i)}">{cell if raw else _e(cell)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def render_report_html(
    title: str,
    summary: str,
    standings_headers: Sequence[str],
    standings_rows: Sequence[Sequence[Any]],
    crosstable_headers: Sequence[str],
    crosstable_rows: Sequence[Sequence[str]],
    ratings: Sequence[tuple[str, float | None, float | None, str]],
    matches: Sequence[Mapping[str, Any]],
    notes: Sequence[str] = (),
    sprt: Mapping[str, Any] | None = None,
    model: str = "Bradley-Terry",
    crosstable_note: str = "a cell is the row's score against the column (a win 1, a draw 1/2), as points/games",
) -> str:
    """The tournament report: standings, crosstable, ratings plot, and every match with a link
    to its replay page. ``matches`` items: id, seats, sides, score, winner, reason, hands,
    failures, href (or None) and refused (the verification error, or None). ``model``: the
    rating model's name; ``crosstable_note``: what a cell is. ``sprt``: a
    sequential test's section, first: ``decision`` (a headline), ``lines`` (its numbers as
    text), ``trace``, ``lower``, ``upper``, ``decided_at`` and ``label`` (the decision
    at that pair) for the plot, and ``notes``."""
    parts = [f"<header><h1>{_e(title)}</h1><div class=\"sub\">{_e(summary)}</div></header><main>"]
    if sprt is not None:
        parts.append(f"<section id=\"sprt\"><h2>Sequential test (SPRT): {_e(sprt['decision'])}</h2>")
        parts.append(f'<pre class="sprt">{_e(chr(10).join(sprt["lines"]))}</pre>')
        parts.append(llr_plot_svg(sprt["trace"], sprt["lower"], sprt["upper"], sprt.get("decided_at"), sprt["label"]))
        for note in sprt.get("notes", ()):
            parts.append(f'<div class="note">{_e(note)}</div>')
        parts.append("</section>")
    parts.append("<section><h2>Standings</h2>")
    last = len(standings_headers) - 1  # the failures by reason: the one column of text
    parts.append(_table(standings_headers, [[str(c) for c in r] for r in standings_rows], left=(1, last), wrap=(last,)))
    for note in notes:
        parts.append(f'<div class="note">Note: {_e(note)}</div>')
    parts.append("</section>")
    parts.append("<section><h2>Ratings</h2>")
    parts.append(ratings_plot_svg(ratings))
    parts.append(f'<div class="note">{_e(model)} fit on the Elo scale over every match; the bar is the 95% interval.</div>')
    parts.append("</section>")
    parts.append("<section><h2>Crosstable</h2>")
    parts.append(_crosstable(crosstable_headers, crosstable_rows))
    parts.append(f'<div class="note">{_e(crosstable_note[:1].upper() + crosstable_note[1:])}.</div>')
    parts.append("</section>")
    parts.append(f"<section><h2>Matches ({len(matches)})</h2>")
    rows = []
    refused = 0
    for m in matches:
        if m.get("refused"):
            refused += 1
            link = f'<td class="refused" colspan="1">refused: {_e(m["refused"])}</td>'
        else:
            link = f'<td class="l"><a href="{_e(m["href"])}">replay</a></td>'
        winner = m.get("winner")
        sides = " vs ".join(_e(s) if i != winner else f"<b>{_e(s)}</b>" for i, s in enumerate(m["sides"]))
        rows.append(
            f'<tr><td class="l">{_e(m["id"])}</td><td class="l">{sides}</td>'
            f'<td>{_e(m["score"])}</td><td class="l">{_e(m["reason"])}</td><td>{_e(m["hands"])}</td>'
            f'<td class="l">{_e(m.get("failures") or "-")}</td>{link}</tr>'
        )
    parts.append('<table class="data" id="matches"><thead><tr><th class="l">match</th><th class="l">sides (winner in bold)</th>'
                 '<th>score</th><th class="l">ended by</th><th>hands</th><th class="l">bot failures</th>'
                 '<th class="l">replay</th></tr></thead><tbody>')
    parts.extend(rows)
    parts.append("</tbody></table>")
    if refused:
        parts.append(f'<div class="note" style="color:var(--accent)">{refused} record(s) did not replay to their '
                     "recorded result and have no replay.</div>")
    parts.append("</section></main>")
    return _page(title, asset("report.css"), "".join(parts))


def _crosstable(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ['<table class="data cross"><thead><tr>']
    out += [f'<th class="{"l" if i == 0 else ""}">{_e(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for r, row in enumerate(rows):
        out.append("<tr>")
        for i, cell in enumerate(row):
            cls = "l" if i == 0 else ""
            if i == r + 1:
                cls = "self"
            elif 0 < i < len(row) - 1 and "/" in cell:
                won, games = cell.split("/")
                try:
                    frac = float(won) / float(games)
                    cls = "good" if frac > 0.5 else "bad" if frac < 0.5 else ""
                except (ValueError, ZeroDivisionError):
                    pass
            out.append(f'<td class="{cls}">{_e(cell)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


__all__ = ["DATA_CALLBACK", "REPLAY_SCHEMA_VERSION", "llr_plot_svg", "replay_data", "replay_data_script", "render_replay_html",
           "render_replay_viewer", "render_report_html", "ratings_plot_svg"]
