"""A tournament's report page: standings, ratings, crosstable and every match, each with a
replay page, every record verified through the rules core first.

``arena report`` and the end of ``arena run`` both make it here; they write what this
returns with their own file writer (this module writes nothing). The replay pages come one
at a time, so a long tournament's pages are never all in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from arena.match.record import RecordError
from arena.render.suits import SuitStyle


def check_record(record: Any, row: Any = None, config: Any = None, spec: Any = None) -> tuple[Any, str | None]:
    """Replay one record (a JSON dict); (the Replay or None, why it was refused or None).
    A record from a results store must also agree with its ``row`` (every column of it), with
    the schedule's match of its id (``spec``), and with the tournament's rules, table and
    failure policy (``config``)."""
    from arena.match.replay import replay
    from arena.tournament.audit import game_differences, record_differences, schedule_differences

    try:
        rep = replay(record)
    except RecordError as exc:
        return None, str(exc)
    if row is not None:
        diff = record_differences(row, rep.record)
        if diff:
            return None, "the store's summary row does not match its record: " + "; ".join(diff)
        diff = schedule_differences(row, spec) if spec is not None else []
        if diff:
            return None, "the store's row is not the schedule's match of its id: " + "; ".join(diff)
        diff = game_differences(rep.record, config) if config is not None else []
        if diff:
            return None, "; ".join(diff)
    return rep, None


def replay_file_name(match_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", match_id) + ".html"


class TournamentReport:
    """The report of the results folder ``results``: walk ``replay_pages()`` (writing each
    page into the folder named ``replays_dir``, beside the report page), then ``page()``.

    ``refusals`` lists the records that did not verify (they get no replay page)."""

    def __init__(self, results: str | Path, *, replays_dir: str, suits: SuitStyle | str = SuitStyle.SPANISH) -> None:
        self.suits = SuitStyle.parse(suits)
        self.results = Path(results)
        self.replays_dir = replays_dir
        self.refusals: list[str] = []
        self.matches: list[dict[str, Any]] = []
        self._walked = False

    def replay_pages(self) -> Iterator[tuple[str, str]]:
        """(file name, HTML page) for every match whose record verifies, in schedule order."""
        from arena.render.html import render_replay_html
        from arena.tournament.audit import store_schedule
        from arena.tournament.store import ResultStore, StoreError

        self.refusals.clear()
        self.matches.clear()
        with ResultStore.open_existing(str(self.results)) as store:
            meta = store.meta()
            self._name = str((meta.get("config") or {}).get("name") or self.results.name)
            config, schedule = store_schedule(store)
            by_id = {spec.id: spec for spec in schedule}
            for row in store.results():
                why: str | None
                spec = by_id.get(row.id)
                if spec is None:  # not the tournament's: refused unread, however well it replays
                    rep, why = None, "not in the tournament's schedule, yet stored as one of its matches"
                else:
                    try:
                        record = store.record(row.id)
                    except (StoreError, ValueError) as exc:
                        rep, why = None, f"unreadable record: {exc}"
                    else:
                        rep, why = check_record(record, row, config, spec)
                href = None
                if rep is not None:
                    file = replay_file_name(row.id)
                    yield file, render_replay_html(rep, title=f"{self._name} · match {row.id}", suits=self.suits)
                    href = f"{self.replays_dir}/{file}"
                else:
                    self.refusals.append(f"refused {row.id}: {why}")
                self.matches.append(_match_entry(row, href, why))
        self._walked = True

    def page(self, *, prior: float | None = None) -> str:
        """The report page (walks ``replay_pages()`` first if that was not done). ``prior``:
        the rating prior, as ``standings_from_store`` takes it."""
        from arena.rating.table import Model
        from arena.render.html import render_report_html
        from arena.render.standings import crosstable_note, crosstable_rows, standings_headers, standings_rows
        from arena.tournament.standings import standings_from_store
        from arena.tournament.store import ResultStore

        if not self._walked:
            for _ in self.replay_pages():
                pass
        with ResultStore.open_existing(str(self.results)) as store:
            config: Mapping[str, Any] = store.meta().get("config") or {}
            standings = standings_from_store(store, prior=prior)
            sprt = sprt_section(store)
        notes = [*standings.notes, *(f"{s.name}: {s.note}" for s in standings.bots if s.note)]
        ratings = [(s.name, s.elo, s.ci95, s.status) for s in standings.bots]
        cross_headers, cross_rows = crosstable_rows(standings)
        summary = (
            f"{len(self.matches)} matches · seed {config.get('seed', '?')} · {config.get('format', '')} · "
            f"{config.get('players', '?')} players"
            + (" in teams" if config.get("mode") == "pairs" else "")
            + " · every match re-played through the rules core"
        )
        return render_report_html(
            f"{self._name}: tournament report",
            summary,
            standings_headers(standings),
            standings_rows(standings),
            cross_headers,
            cross_rows,
            ratings,
            self.matches,
            notes,
            sprt,
            model="Plackett-Luce" if standings.model is Model.PLACKETT_LUCE else "Bradley-Terry",
            crosstable_note=crosstable_note(standings),
        )


def sprt_section(store: Any) -> dict[str, Any] | None:
    """A sequential test's part of the report (None for any other tournament): its numbers and
    decision recomputed from the store, the LLR after each pair, and the commit of each side
    built from a revision."""
    from arena.render.sprt_text import decision_text, outcome_lines
    from arena.tournament.sprt_run import is_sprt_store, replay_store

    if not is_sprt_store(store):
        return None
    outcome = replay_store(store)
    summary = outcome.summary
    decision = decision_text(summary)
    headline = (f"{outcome.candidate} against {outcome.baseline}: "
                + ("no decision yet" if decision == "continue" else decision))
    value = summary.decision.value
    label = {"H0": "H0 accepted", "H1": "H1 accepted", "max_pairs": "max_pairs reached"}.get(value, "")
    notes = [f"A = {outcome.candidate} (the candidate), B = {outcome.baseline} (the baseline); every number is A's. "
             "Each pair is one deal played from both seats; pairs are added in deal order, the first decision is "
             "final, and the pairs being played when it came are finished and counted (docs/SPRT.md)."]
    return {"decision": headline, "lines": outcome_lines(outcome, store.identities()), "trace": list(outcome.trace),
            "lower": summary.lower, "upper": summary.upper, "decided_at": summary.decided_at, "label": label,
            "notes": notes}


def _match_entry(row: Any, href: str | None, why: str | None) -> dict[str, Any]:
    return {
        "id": row.id,
        "sides": list(row.sides),
        "winner": row.winner,
        "score": "-".join(map(str, row.scores)),
        "reason": row.reason.value,
        "hands": row.hands,
        "failures": ", ".join(f"seat {s} {reason.value}" for s, reason in row.failures),
        "href": href,
        "refused": why,
    }


__all__ = ["TournamentReport", "check_record", "replay_file_name", "sprt_section"]
