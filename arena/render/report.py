"""A tournament's report page: standings, ratings, crosstable and every match, each with a
replay, every record verified through the rules core first.

The replays are one page (``VIEWER``) and a small data file per match, which that page loads
by the name its address gives: the page's CSS, script and card pictures are written once, and
a match's data is its verified events, which the page draws (docs/REPLAY.md). ``arena report``
and the end of ``arena run`` both make it here; they write what this returns with their own
file writer (this module writes nothing). The data files come one at a time, so a long
tournament's replays are never all in memory.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from arena.match.record import RecordError
from arena.render.suits import SuitStyle


def check_record(record: Any, row: Any = None, config: Any = None, spec: Any = None) -> tuple[Any, str | None]:
    """Verify one record (a JSON dict); (the verified ``GameRecord`` or None, why it was
    refused or None). A record from a results store must also agree with its ``row`` (every
    column of it), with the schedule's match of its id (``spec``), and with the tournament's
    rules, table and failure policy (``config``). No frame is drawn: the walk alone checks the
    record, in under half the time of a replay's frames."""
    from arena.match.replay import coerce_record, verify

    try:
        rec = coerce_record(record)
        verify(rec)
    except RecordError as exc:
        return None, str(exc)
    why = store_differences(rec, row, config, spec)
    return (None, why) if why is not None else (rec, None)


def store_differences(record: Any, row: Any = None, config: Any = None, spec: Any = None) -> str | None:
    """Why a verified ``GameRecord`` from a results store is refused (``check_record``), or None."""
    from arena.tournament.audit import game_differences, record_differences, schedule_differences

    if row is None:
        return None
    diff = record_differences(row, record)
    if diff:
        return "the store's summary row does not match its record: " + "; ".join(diff)
    diff = schedule_differences(row, spec) if spec is not None else []
    if diff:
        return "the store's row is not the schedule's match of its id: " + "; ".join(diff)
    diff = game_differences(record, config) if config is not None else []
    if diff:
        return "; ".join(diff)
    return None


def replay_script(record: Any, row: Any, config: Any, spec: Any, title: str,
                  labels: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """(the replay's data file, or None; why the record was refused, or None) for a record
    (JSON) of a results store, with its row, the tournament's config and its schedule's match;
    the seats are shown by ``labels`` (``standings.store_labels``: a version's label)."""
    from arena.match.replay import verify_afterwards
    from arena.render.html import replay_data_script
    from arena.tournament.standings import relabelled

    try:
        rec, steps, seen, events = verify_afterwards(record)
    except RecordError as exc:
        return None, str(exc)
    why = store_differences(rec, row, config, spec)
    if why is not None:
        return None, why
    return replay_data_script(relabelled(rec, labels or {}), steps, title, seen, events), None


# A match id -> (its data file or None, why it was refused or None, the digest of its record as
# stored or None: what its data file was made from). A checker without pages answers a line on
# the verified match (``verified_line``) where a page's would be.
Answer = tuple[str | None, str | None, str | None]
Checker = Callable[[str], Answer]


def verified_line(record: Any) -> str:
    """What ``arena verify -v`` says of a verified ``GameRecord``: its moves and result."""
    result = record.result
    return f"{len(record.moves)} moves, {'-'.join(map(str, result.scores))} ({result.reason})"


@contextmanager
def store_checker(results: str | Path, *, pages: bool = True) -> Iterator[Checker]:
    """``replay_script`` by match id for the results folder ``results``, its store open (read
    only) while this lasts: what the report's workers each hold. Without ``pages``, only
    ``check_record`` (``arena verify``'s workers)."""
    from arena.tournament.audit import store_schedule
    from arena.tournament.standings import store_labels
    from arena.tournament.store import ResultStore, StoreError

    with ResultStore.open_existing(str(results)) as store:
        name = _tournament_name(store, results)
        labels = store_labels(store)
        config, schedule = store_schedule(store)
        by_id = {spec.id: spec for spec in schedule}
        rows = {row.id: row for row in store.results()}

        def check(match_id: str) -> Answer:
            row, spec = rows[match_id], by_id.get(match_id)
            if spec is None:  # not the tournament's: refused unread, however well it replays
                return None, not_scheduled(len(schedule)), None
            try:
                record, digest = store.record_and_digest(match_id)
            except (StoreError, ValueError) as exc:
                return None, f"unreadable record: {exc}", None
            if not pages:
                rec, why = check_record(record, row, config, spec)
                return (None if rec is None else verified_line(rec)), why, digest
            return (*replay_script(record, row, config, spec, f"{name} · match {match_id}", labels), digest)

        yield check


def not_scheduled(matches: int) -> str:
    """Why a stored match that is not one of the schedule's ``matches`` is refused unread."""
    return f"not in the tournament's schedule ({matches} matches), yet stored as one of its matches"


# A worker process's checker (``init_worker``): one store, opened once per process, and what
# keeps it open (dropped, the stack would close the store under the checker).
_worker: list[Checker] = []
_worker_stack: list[ExitStack] = []


def init_worker(results: str, pages: bool = True) -> None:
    """Start a report worker process: open the store of ``results`` for ``worker_check`` (with
    ``pages`` or not: ``store_checker``). A store it cannot open refuses each match it is asked
    for, with the reason: an exception here would end the worker, and its pool would start
    another, and another."""
    stack = ExitStack()  # left open for the process's life: the pool ends it
    try:
        _worker[:] = [stack.enter_context(store_checker(results, pages=pages))]
    except Exception as exc:  # noqa: BLE001 - whatever it is, it is each match's answer
        why = f"the report's worker cannot read the store: {exc}"
        _worker[:] = [lambda match_id: (None, why, None)]
    _worker_stack[:] = [stack]


def worker_check(match_id: str) -> Answer:
    """``store_checker``'s answer in a worker process started by ``init_worker``."""
    return _worker[0](match_id)


def _tournament_name(store: Any, results: str | Path) -> str:
    return str((store.meta().get("config") or {}).get("name") or Path(results).name)


def replay_file_name(match_id: str) -> str:
    """The name of a match's data file in the report's ``data/`` folder (``NAME.js``; the
    viewer's address names it as ``replay.html#NAME``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", match_id) + ".js"


VIEWER = "replay.html"  # the report's one replay page, in its replays folder
DATA_DIR = "data"  # the replays' data files, beside it


# How the report checks its records: match ids in, ``Checker`` answers out, in order.
Mapper = Callable[[Iterable[str]], Iterable[Answer]]
# Whether the data file of this name, made from what this key says (``made_from``), is in
# place and unchanged: then the report leaves it as it is.
Reuse = Callable[[str, str], bool]


@dataclass(frozen=True)
class _Plan:
    rows: Sequence[Any]  # the store's rows, in schedule order
    labels: Mapping[str, str]
    context: str  # ``_context_key``
    keys: Mapping[str, str]  # match id -> ``made_from`` key of its data file, where it was asked
    todo: frozenset[str]  # the match ids to check and make data for


def made_from(*parts: str) -> str:
    """A short digest of ``parts``: what a data file was made from."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def _match_key(context: str, digest: str, row: Any) -> str:
    """The key of a match's data file: its report's context, its record as stored, its row."""
    return made_from(context, digest, repr(row))


def _context_key(meta: Mapping[str, Any], labels: Mapping[str, str], name: str) -> str:
    """What every data file of a report depends on besides its match: the arena's own code
    (``build_fingerprint``), the format's version, the tournament's description (its schedule,
    rules and policy, which a record is checked against), the seats' labels and the title."""
    from arena.render.html import REPLAY_SCHEMA_VERSION

    return made_from(build_fingerprint(), str(REPLAY_SCHEMA_VERSION), json.dumps(meta, sort_keys=True, default=str),
                     json.dumps(dict(labels), sort_keys=True), name)


_CODE_SUFFIXES = (".py", ".so", ".pyd", ".js", ".css", ".html", ".svg")


@lru_cache(maxsize=1)
def build_fingerprint() -> str:
    """A digest of the arena's own files (its modules, compiled or not, and the page's
    assets), by name, size and time of change: an upgrade, a new install or an edit changes it,
    and with it every report's data files are made again."""
    import arena

    root = Path(arena.__file__).parent
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in root.rglob("*") if p.suffix in _CODE_SUFFIXES and "__pycache__" not in p.parts):
        try:
            info = path.stat()
            seen = f"{info.st_size} {info.st_mtime_ns}"
        except OSError:
            seen = "unreadable"
        digest.update(f"{path.relative_to(root)}\0{seen}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


# What the page shows of the store besides its matches: the standings, the tournament's
# description, a sequential test's part (or None).
RatedPage = tuple[Any, Mapping[str, Any], "dict[str, Any] | None"]


def rated_page(results: str | Path, prior: float | None, *, checked_elsewhere: bool = False,
               standings: Any = None) -> RatedPage:
    """The standings (``standings_from_store`` with ``prior``, or ``standings`` where the caller
    has them), description and sequential test part of the page of the results folder
    ``results``. ``checked_elsewhere``: the caller checks the store's rows against the schedule
    itself, and uses none of this if they fail (``arena report``, whose worker fits while the
    command checks)."""
    from arena.tournament.standings import standings_from_store
    from arena.tournament.store import ResultStore

    with ResultStore.open_existing(str(results)) as store:
        config: Mapping[str, Any] = store.meta().get("config") or {}
        if standings is None:
            standings = standings_from_store(store, prior=prior, checked_elsewhere=checked_elsewhere)
        return standings, config, sprt_section(store)


class TournamentReport:
    """The report of the results folder ``results``: walk ``replay_files()`` (writing each into
    the ``DATA_DIR`` folder of the folder named ``replays_dir``, beside the report page), write
    ``viewer()`` there as ``VIEWER``, then ``page()``. ``check``: how the records are checked
    and their data made (default: here, one after the other; ``arena.cli`` passes a pool of
    workers started with ``init_worker``, mapping ``worker_check``).

    ``refusals`` lists the records that did not verify (they get no replay)."""

    def __init__(self, results: str | Path, *, replays_dir: str, suits: SuitStyle | str = SuitStyle.SPANISH,
                 check: Mapper | None = None, reuse: Reuse | None = None) -> None:
        self.suits = SuitStyle.parse(suits)
        self.results = Path(results)
        self.replays_dir = replays_dir
        self.refusals: list[str] = []
        self.matches: list[dict[str, Any]] = []
        # Every verified match's data file and the key of what it was made from (``made_from``):
        # the index the caller keeps beside the files, so that the next report can reuse them.
        self.keys: dict[str, str] = {}
        self.kept = 0  # data files left as they were (``reuse``)
        self._check = check
        self._reuse = reuse
        self._plan: _Plan | None = None
        self._walked = False
        self._name = self.results.name
        self._standings: tuple[float | None, RatedPage] | None = None  # with the prior they were rated with

    def todo(self) -> int:
        """How many matches ``replay_files`` will check and make data for (the others' data
        files are in place already, by ``reuse``)."""
        return len(self._planned().todo)

    def _planned(self) -> _Plan:
        if self._plan is None:
            from arena.tournament.standings import store_labels
            from arena.tournament.store import ResultStore

            with ResultStore.open_existing(str(self.results)) as store:
                self._name = _tournament_name(store, self.results)
                rows = store.results()
                labels = store_labels(store)
                context = _context_key(store.meta(), labels, self._name)
                # The records' digests are read here only to find the data files to keep; the
                # matches checked bring their own (a first report reads each record once).
                digests = dict(store.record_digests()) if self._reuse is not None else {}
            keys = {row.id: _match_key(context, digests[row.id], row) for row in rows if row.id in digests}
            reuse = self._reuse
            todo = frozenset(row.id for row in rows
                             if reuse is None or row.id not in keys or not reuse(replay_file_name(row.id), keys[row.id]))
            self._plan = _Plan(rows, labels, context, keys, todo)
        return self._plan

    def viewer(self) -> str:
        """The one replay page every match's link opens (``VIEWER#NAME``)."""
        from arena.render.html import render_replay_viewer

        return render_replay_viewer(f"{self._name}: replay", suits=self.suits)

    def replay_files(self, check: Mapper | None = None) -> Iterator[tuple[str, str]]:
        """(file name, data file) for every match whose record verifies and whose data file is
        not in place already (``reuse``), in schedule order. ``check``: as the constructor's,
        for this walk."""
        self.refusals.clear()
        self.matches.clear()
        self.keys.clear()
        self.kept = 0
        plan = self._planned()
        with ExitStack() as stack:
            check = check or self._check
            if check is None:
                one = stack.enter_context(store_checker(self.results))
                check = partial(map, one)
            answers = iter(check(row.id for row in plan.rows if row.id in plan.todo))
            for row in plan.rows:
                file = replay_file_name(row.id)
                href: str | None = f"{self.replays_dir}/{VIEWER}#{file.removesuffix('.js')}"
                why = None
                if row.id not in plan.todo:
                    self.kept += 1
                    self.keys[file] = plan.keys[row.id]
                else:
                    script, why, digest = next(answers)
                    if script is not None:
                        yield file, script
                        if digest is not None:
                            self.keys[file] = _match_key(plan.context, digest, row)
                    else:
                        href = None
                        self.refusals.append(f"refused {row.id}: {why}")
                self.matches.append(_match_entry(row, href, why, plan.labels))
        self._walked = True

    def rated(self, rated: RatedPage, *, prior: float | None = None) -> None:
        """Take the page's standings as ``rated_page`` worked them out with ``prior`` (in a
        worker, while this process took the data files in); ``page`` with the same prior uses
        them."""
        self._standings = (prior, rated)

    def _rated(self, prior: float | None) -> RatedPage:
        if self._standings is None or self._standings[0] != prior:
            self._standings = (prior, rated_page(self.results, prior))
        return self._standings[1]

    def page(self, *, prior: float | None = None) -> str:
        """The report page (walks ``replay_files()`` first if that was not done; the standings
        are ``rated_page``'s with ``prior``, given to ``rated`` or worked out here)."""
        from arena.rating.table import Model
        from arena.render.html import render_report_html
        from arena.render.standings import crosstable_note, crosstable_rows, standings_headers, standings_rows

        if not self._walked:
            for _ in self.replay_files():
                pass
        standings, config, sprt = self._rated(prior)
        notes = [*standings.notes, *(f"{s.name}: {s.note}" for s in standings.bots if s.note)]
        ratings = [(s.name, s.elo, s.ci95, s.status) for s in standings.bots]
        cross_headers, cross_rows = crosstable_rows(standings)
        summary = (
            # Not the master seed: a report page is shared, and that seed gives every deal of
            # the tournament, those of a ladder or league still to be played included.
            f"{len(self.matches)} matches · {config.get('format', '')} · "
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
    from arena.tournament.audit import keyed_identities
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
    return {"decision": headline, "lines": outcome_lines(outcome, keyed_identities(store)), "trace": list(outcome.trace),
            "lower": summary.lower, "upper": summary.upper, "decided_at": summary.decided_at, "label": label,
            "notes": notes}


def _match_entry(row: Any, href: str | None, why: str | None, labels: Mapping[str, str]) -> dict[str, Any]:
    from arena.tournament.standings import shown_side

    return {
        "id": row.id,
        "sides": [shown_side(side, labels) for side in row.sides],
        "winner": row.winner,
        "score": "-".join(map(str, row.scores)),
        "reason": row.reason.value,
        "hands": row.hands,
        "failures": ", ".join(f"seat {s} {reason.value}" for s, reason in row.failures),
        "href": href,
        "refused": why,
    }


__all__ = ["DATA_DIR", "RatedPage", "Reuse", "TournamentReport", "VIEWER", "build_fingerprint", "check_record", "init_worker",
           "made_from", "not_scheduled", "rated_page", "replay_file_name", "replay_script", "sprt_section", "store_checker",
           "store_differences", "verified_line", "worker_check"]
