"""The league page of ``arena report`` given several results folders (or a folder of them):
what ``arena rate --history`` computes, as one self-contained HTML page.

Reads the results through ``arena.league.pools``; returns the page (the CLI writes it).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.league.pools import Anchor, League, PoolHistory, league_history, open_league
from arena.rating.table import DEFAULT_PRIOR
from arena.render.league_page import PoolView, Series, render_league_html
from arena.render.standings import date_text, rating_rows
from arena.render.text import counted

REPORT_PAGE = "report.html"


def league_page(
    inputs: Sequence[str | Path],
    out: Path,
    *,
    prior: float | None = DEFAULT_PRIOR,
    anchor: Anchor | None = None,
    by_name: bool = False,
    mix: bool = False,
    title: str = "League",
) -> str:
    """The page for the league of ``inputs``, to be written at ``out`` (links to each
    tournament's report page, when it has one, are relative to it)."""
    league = open_league(inputs, by_name=by_name, mix=mix)
    histories = league_history(league, prior=prior, anchor=anchor)
    views = [_pool_view(league, h, out, len(histories)) for h in histories]
    tournaments = len({t.label for p in league.pools for t in p.tournaments})
    matches = sum(p.matches for p in league.pools)
    kinds = f"{len(league.pools)} kinds of game, each rated on its own" if len(league.pools) > 1 else league.pools[0].describe()
    summary = f"{counted(tournaments, 'tournament')} · {matches} matches · {kinds}"
    return render_league_html(f"{title}: rating list", summary, views, league.notes)


def _pool_view(league: League, history: PoolHistory, out: Path, pools: int) -> PoolView:
    final = history.steps[-1].ratings
    rows = final.rows
    extra: list[tuple[str, Sequence[object]]] = [
        ("tournaments", [r.tournaments for r in rows]),
        ("last played", [date_text(r.last_played) for r in rows]),
    ]
    headers, _align, cells = rating_rows([r.rating for r in rows], several_groups=len(final.table.groups) > 1, extra=extra)
    series = []
    for row in rows:
        points = tuple(
            (step, elo, ci)
            for step, elo, ci in history.series(row.rating.name)
            if elo is not None and math.isfinite(elo)
        )
        series.append(Series(row.rating.name, points))
    pool = history.pool
    heading = pool.describe() if pools == 1 else f"Pool {pool.number}: {pool.describe()}"
    return PoolView(
        heading=heading,
        rating_headers=headers,
        rating_rows=[[str(c) for c in row] for row in cells],
        ratings=[(r.rating.name, r.rating.elo, r.rating.ci95, r.rating.status.value) for r in rows],
        steps=[(s.number, s.tournament.short, date_text(s.tournament.date)) for s in history.steps],
        series=series,
        tournaments=[_tournament_row(league, history, k, out) for k in range(len(history.steps))],
        notes=final.notes,
    )


def _tournament_row(league: League, history: PoolHistory, k: int, out: Path) -> dict[str, Any]:
    t = history.steps[k].tournament
    href = None
    page = t.path / REPORT_PAGE
    if t.is_store and page.is_file():
        href = Path(os.path.relpath(page.resolve(), out.resolve().parent)).as_posix()
    names = list(dict.fromkeys(league.names(t)(name) for name in t.bots))
    return {
        "number": k + 1,
        "date": date_text(t.date, time=True) + (" (file time)" if t.dated_by_file else ""),
        "label": t.label,
        "href": href,
        "format": t.format or ("results file" if not t.is_store else ""),
        "matches": t.matches,
        "bots": ", ".join(names),
    }


__all__ = ["REPORT_PAGE", "league_page"]
