"""The league page: the rating list of every pool, its tournaments, and its ratings over time.

Pure: plain values in, one self-contained HTML string out (the page's frame, CSS policy and
helpers are ``arena.render.html``'s; its own CSS and script are ``arena/render/web/league.css`` and
``league.js``). The plot of ratings over time is inline SVG drawn here; the script only
shows, hides and highlights its lines, so the page reads the same without it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arena.render.html import _e, _nice_step, _page, _table, asset, ratings_plot_svg

PALETTE = (
    "#1d4ed8", "#d97706", "#059669", "#c0392b", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f", "#92400e", "#475569",
)


@dataclass(frozen=True)
class Series:
    """One entry over time: (step number, elo, ci95) at each step where it was rated."""

    label: str
    points: tuple[tuple[int, float, float | None], ...]


@dataclass(frozen=True)
class PoolView:
    """What the page shows of one pool, as text and numbers."""

    heading: str
    rating_headers: Sequence[str]
    rating_rows: Sequence[Sequence[str]]
    ratings: Sequence[tuple[str, float | None, float | None, str]]  # for the final plot: name, elo, ci95, status
    steps: Sequence[tuple[int, str, str]]  # number, tournament's short name, date
    series: Sequence[Series]
    tournaments: Sequence[Mapping[str, object]]  # number, date, label, href (or None), matches, bots, format
    notes: Sequence[str] = field(default_factory=tuple)


def history_plot_svg(steps: Sequence[tuple[int, str, str]], series: Sequence[Series], width: int = 760) -> str:
    """Each entry's rating after each tournament, as a line with its 95% interval at every
    point (a whisker, set a little apart from the other entries' at the same step)."""
    left, right, top, bottom = 64, 24, 34, 58
    height = 380
    values = [(e - (c or 0.0), e + (c or 0.0)) for s in series for _, e, c in s.points if math.isfinite(e)]
    lo = min((v[0] for v in values), default=-100.0)
    hi = max((v[1] for v in values), default=100.0)
    if hi - lo < 50:
        mid = (hi + lo) / 2
        lo, hi = mid - 25, mid + 25
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    n = max(len(steps), 1)
    span_x = width - left - right
    slot = span_x / n

    def x(step: int) -> float:
        return left + slot * (step - 0.5)

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * (height - top - bottom)

    parts = [
        f'<svg class="history" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="ratings after each tournament, with 95% intervals">',
        f'<text x="{left}" y="16">Elo after each tournament (the joint fit of every result so far), with 95% intervals</text>',
    ]
    step = _nice_step((hi - lo) / 8)
    tick = math.ceil(lo / step) * step
    while tick <= hi:
        ty = y(tick)
        parts.append(f'<line x1="{left}" y1="{ty:.1f}" x2="{width - right}" y2="{ty:.1f}" stroke="#e3e7ec"/>')
        parts.append(f'<text x="{left - 8}" y="{ty + 4:.1f}" text-anchor="end">{tick:+.0f}</text>')
        tick += step
    axis = height - bottom
    for number, name, date in steps:
        tx = x(number)
        parts.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{axis}" stroke="#f0f2f5"/>')
        parts.append(f'<text class="step" x="{tx:.1f}" y="{axis + 16}" text-anchor="middle">{number} · {_e(_short(name))}</text>')
        parts.append(f'<text class="date" x="{tx:.1f}" y="{axis + 32}" text-anchor="middle">{_e(date)}</text>')
    dodge = min(7.0, slot * 0.6 / max(len(series), 1))
    for k, s in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        offset = (k - (len(series) - 1) / 2) * dodge
        finite = [(st, e, c) for st, e, c in s.points if math.isfinite(e)]
        parts.append(f'<g class="series" data-series="{k}" stroke="{colour}" fill="{colour}">')
        if len(finite) > 1:
            path = " ".join(f"{x(st) + offset:.1f},{y(e):.1f}" for st, e, _ in finite)
            parts.append(f'<polyline points="{path}" fill="none" stroke-width="2"/>')
        for st, e, c in finite:
            px = x(st) + offset
            if c:
                parts.append(f'<line class="ci" x1="{px:.1f}" y1="{y(e - c):.1f}" x2="{px:.1f}" y2="{y(e + c):.1f}" '
                             'stroke-width="1.5" opacity="0.45"/>')
            label = f"{s.label} after {st}: {e:+.0f}" + (f" ± {c:.0f}" if c else "")
            parts.append(f'<circle cx="{px:.1f}" cy="{y(e):.1f}" r="4"><title>{_e(label)}</title></circle>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _short(name: str, limit: int = 18) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _legend(series: Sequence[Series]) -> str:
    items = []
    for k, s in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        items.append(
            f'<label class="entry" data-series="{k}"><input type="checkbox" checked data-series="{k}">'
            f'<span class="swatch" style="background:{colour}"></span>{_e(s.label)}</label>'
        )
    return f'<div class="legend">{"".join(items)}</div>'


def _tournaments(rows: Sequence[Mapping[str, object]]) -> str:
    out = ['<table class="data tournaments"><thead><tr><th>#</th><th class="l">date</th><th class="l">tournament</th>'
           '<th class="l">format</th><th>matches</th><th class="l">bots</th></tr></thead><tbody>']
    for row in rows:
        href = row.get("href")
        name = _e(row["label"])
        link = f'<a href="{_e(href)}">{name}</a>' if href else name
        out.append(
            f'<tr><td>{_e(row["number"])}</td><td class="l">{_e(row["date"])}</td><td class="l">{link}</td>'
            f'<td class="l">{_e(row.get("format") or "-")}</td><td>{_e(row["matches"])}</td>'
            f'<td class="l wrap">{_e(row["bots"])}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def render_league_html(title: str, summary: str, pools: Sequence[PoolView], notes: Sequence[str] = ()) -> str:
    """The league page: per pool its rating list, the plot of its final ratings, its ratings
    after each tournament, and its tournaments (linked to their report pages when known)."""
    parts = [f"<header><h1>{_e(title)}</h1><div class=\"sub\">{_e(summary)}</div></header><main>"]
    for number, pool in enumerate(pools, start=1):
        parts.append(f'<section class="pool" id="pool-{number}"><h2>{_e(pool.heading)}</h2>')
        parts.append('<h3>Rating list</h3>')
        width = len(pool.rating_headers)
        parts.append(_table(pool.rating_headers, pool.rating_rows, left=(1, width - 1)))
        for note in pool.notes:
            parts.append(f'<div class="note">Note: {_e(note)}</div>')
        parts.append('<h3>Ratings</h3>')
        parts.append(ratings_plot_svg(pool.ratings))
        parts.append('<h3>Ratings over time</h3>')
        parts.append(f'<div class="over-time">{history_plot_svg(pool.steps, pool.series)}{_legend(pool.series)}</div>')
        parts.append('<div class="note">Each point is the joint fit of every result up to that tournament; '
                     "the bar is its 95% interval. Untick a bot to hide it.</div>")
        parts.append('<h3>Tournaments</h3>')
        parts.append(_tournaments(pool.tournaments))
        parts.append("</section>")
    if notes:
        parts.append('<section><h2>Notes</h2>')
        parts += [f'<div class="note">{_e(note)}</div>' for note in notes]
        parts.append("</section>")
    parts.append("</main>")
    return _page(title, asset("report.css") + asset("league.css"), "".join(parts), asset("league.js"))


__all__ = ["PALETTE", "PoolView", "Series", "history_plot_svg", "render_league_html"]
