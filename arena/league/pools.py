"""A league: the results of many tournaments and results files, rated as one joint fit.

``arena rate`` and the league page of ``arena report`` take any mix of results folders, folders
of results folders and results files (CSV, JSON lines); this module turns them into *pools*
of comparable results, names the bots across tournaments, fits each pool jointly with
``arena.rating.table.fit_ratings`` and replays the fit after each tournament for the history. It
reads the stores and files it is given and prints nothing (docs/RATINGS.md, *Leagues*).

**Entries.** An entry is one program: one identity key (``arena.tournament.identity``: what
runs, never the command's spelling), wherever it played, under whatever name: a tournament
folder, a version that joined it later (``mybot~2``, versions.py), an SPRT folder. So a version
compared only through an SPRT is rated against the field through its opponent. It is shown as
its name when the name has one version here, else as its label (``mybot@2.0`` from its ready
name, else ``mybot@`` and the short key); two programs with one label get their keys' short
form too. Results without identities (stores from an earlier arena, results files) are matched
by name: a label joins its version, a name its only version, and a name of several versions
is ``name@unknown``. ``by_name`` merges every version of a name, and a note says so.

**Pools.** Results are pooled only within one kind of game (``GameKind``): the number of
players, alone or in teams (and whether a team is copies of one bot), and every rule option
but the match length (``target``, ``max_hands``). A results file records no rules: its
matches are sorted by their shape (sides per match, bots per side) and join the one kind of
results folder of that shape, or, when there is none or more than one, a pool of their own.
``mix`` puts everything in one pool.

**Each match once.** A match is named wherever it goes by the id of the results folder that
stored it and its match id there (``results_id`` and ``id``: store.py, export.py), so a folder
given with its export, a copy of it or the same file twice counts each of its matches once:
from a results folder where one holds it (its bots' identities, rules and date), else from the
first input given; a note says how many were dropped from where. A line without that identity
that still gives its match's id and seed (``MatchPlace``: an export of an earlier arena) is
the match of a results folder given with that id, seed, sides and result, counted from there.
Other results without identity (a hand-written file, a folder of an earlier arena) are counted
as they are (nothing tells them from another game between the same bots), and with other
inputs beside them a note says so, naming the results folders whose matches they may repeat.

**Dates.** A tournament's date is when its last match was stored (the store's meta
``last_match_at``); a store written before that was recorded, and a results file, are dated
by their file's modification time, and the tournament list says so.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from arena.core.rules import Rules, Seating
from arena.errors import ArenaError
from arena.rating.inputs import MatchKey, MatchLedger, MatchPlace, duplicates_note, few, read_keyed_results
from arena.rating.table import (
    DEFAULT_PRIOR,
    AnchorError,
    BotRating,
    MatchResult,
    PairResult,
    RatingTable,
    fit_ratings,
)
from arena.tournament.identity import BotIdentity, bot_name, label_bot, ready_version
from arena.tournament.schedule import TeamMode
from arena.tournament.store import STORE_FILE, ResultStore
from arena.tournament.versions import Versions

LENGTH_OPTIONS = ("target", "max_hands")
"""Rule options that only set how long a match is: results that differ in them are pooled."""

UNKNOWN_VERSION = "unknown"

Result = PairResult | MatchResult


class LeagueError(ArenaError):
    """The inputs cannot make a league: not results, an empty set, an ambiguous name."""


# --------------------------------------------------------------------------- kinds of game


@dataclass(frozen=True)
class GameKind:
    """What makes results comparable. ``players`` is None for results files, which record
    only the shape of their matches (``sides`` per match, ``side_size`` bots per side)."""

    players: int | None
    sides: int
    side_size: int
    copies: bool = False  # teams of copies of one bot: a side is rated as that one bot
    rules: tuple[tuple[str, Any], ...] = ()  # the options that change the game (not its length)

    @property
    def shape(self) -> tuple[int, int]:
        return self.sides, self.side_size

    @classmethod
    def of_game(cls, seating: Seating, team_mode: TeamMode, rules: Rules) -> GameKind:
        copies = seating.is_teams and team_mode is TeamMode.CLONES
        options = tuple(sorted((k, v) for k, v in rules.to_dict().items() if k not in LENGTH_OPTIONS))
        return cls(seating.players, seating.sides, 1 if copies else seating.players // seating.sides, copies, options)

    @classmethod
    def of_result(cls, result: Result) -> GameKind:
        if isinstance(result, PairResult):
            return cls(None, 2, len(result.side_a))
        return cls(None, len(result.sides), len(result.sides[0]))

    def describe(self) -> str:
        """``2 players alone, standard rules``; ``results files: 3 sides of 1 bot (no rules recorded)``."""
        if self.players is None:
            bots = "1 bot" if self.side_size == 1 else f"{self.side_size} bots"
            return f"results files: {self.sides} sides of {bots} (no rules recorded)"
        if self.players == self.sides:
            table = f"{self.players} players alone"
        else:
            size = self.players // self.sides
            table = f"{self.players} players as {self.sides} teams of {size}" + (" copies of one bot" if self.copies else "")
        defaults = Rules().to_dict()
        changed = [f"{k} {_option_text(v)}" for k, v in self.rules if defaults.get(k) != v]
        return f"{table}, " + (f"rules: {', '.join(changed)}" if changed else "standard rules")


def _option_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Tournament:
    """One input's results of one kind of game: a results folder, or the matches of one
    shape in a results file. ``index`` is the input's position (ties of date keep it)."""

    label: str  # the path, as given (or as found in a folder of results folders)
    path: Path
    index: int
    kind: GameKind
    name: str  # the tournament's name in its file, or the results file's name
    date: datetime
    dated_by_file: bool  # no recorded date: the file's modification time
    matches: int
    bots: tuple[str, ...]  # the names its results use
    identities: Mapping[str, BotIdentity] | None = field(default=None, compare=False)  # None: not recorded
    seating: Seating | None = None  # a results folder's table shape
    format: str = ""  # a results folder's format (round_robin, gauntlet, ...)
    target: int | None = None  # a results folder's match length
    results_id: str | None = None  # a results folder's (store.py); None: not recorded
    # Its matches that another input holds too, counted from there (_CountedOnce): a results
    # folder's by match id, a file's by line.
    dropped_ids: frozenset[str] = frozenset()
    dropped_lines: frozenset[int] = frozenset()

    @property
    def is_store(self) -> bool:
        return self.seating is not None

    @property
    def short(self) -> str:
        """The folder's or file's own name: what the history's columns and plot show."""
        return self.path.name or self.label

    def results(self) -> Iterator[Result]:
        """The tournament's matches as the fit takes them, under the names of its results
        (``arena table``'s fit for a results folder; the file's lines of this shape)."""
        if self.seating is not None:
            yield from _store_results(self.path, self.seating, self.dropped_ids)
            return
        dropped = self.dropped_lines
        for line, _key, result, _place in read_keyed_results(self.path):
            if line not in dropped and GameKind.of_result(result).shape == self.kind.shape:
                yield result


def _store_results(folder: Path, seating: Seating, dropped: frozenset[str] = frozenset()) -> Iterator[Result]:
    from arena.tournament.audit import scheduled_rows
    from arena.tournament.standings import match_result

    with ResultStore.open_existing(str(folder)) as store:
        for row in scheduled_rows(store):
            if row.id not in dropped:
                yield match_result(row, seating)


def _file_time(*paths: Path) -> datetime:
    times = [p.stat().st_mtime for p in paths if p.exists()]
    return datetime.fromtimestamp(max(times) if times else 0.0, tz=UTC)


def _read_store(folder: Path, label: str, index: int) -> Tournament:
    from arena.tournament.audit import keyed_identities, store_config

    with ResultStore.open_existing(str(folder)) as store:
        config = store_config(store)
        date = store.last_match_at()
        identities = keyed_identities(store, config)
        matches = store.count()
        versions = Versions(store.generations())
        results_id = store.results_id
    store_file = folder / STORE_FILE
    return Tournament(
        label=label,
        path=folder,
        index=index,
        kind=GameKind.of_game(config.seating, config.team_mode, config.rules),
        name=config.name,
        date=date if date is not None else _file_time(store_file, store_file.with_name(STORE_FILE + "-wal")),
        dated_by_file=date is None,
        matches=matches,
        bots=versions.all_entrants(bot.name for bot in config.bots),
        identities=identities,
        seating=config.seating,
        format=config.format,
        target=config.rules.target,
        results_id=results_id,
    )


def _read_file(path: Path, label: str, index: int, once: _CountedOnce) -> list[Tournament]:
    """The file's matches by shape, each counted once (``once``): the whole file is read and
    checked here, line by line."""
    counts: dict[tuple[int, int], int] = defaultdict(int)
    names: dict[tuple[int, int], dict[str, None]] = defaultdict(dict)
    dropped: set[int] = set()
    unkeyed_names: dict[tuple[int, int], set[str]] = defaultdict(set)
    placed: dict[int, int] = defaultdict(int)  # results folder -> the lines found to be its matches by place
    read = unkeyed = 0
    for line, key, result, place in read_keyed_results(path):
        read += 1
        kind = GameKind.of_result(result)
        if key is None:
            holder = once.placed(place, result) if place is not None and once.several else None
            if holder is not None:
                placed[holder] += 1
                dropped.add(line)
                continue
            unkeyed += 1
            unkeyed_names[kind.shape].update(name for side in _sides(result) for name in side)
        elif once.claim(key, index):
            dropped.add(line)
            continue
        counts[kind.shape] += 1
        for side in _sides(result):
            for name in side:
                names[kind.shape][name] = None
    once.said(label, index, len(dropped) - sum(placed.values()), read)
    if placed:
        once.said_placed(label, placed, read)
    if unkeyed and once.several:
        once.unkeyed(label, unkeyed, read, unkeyed_names)
    date = _file_time(path)
    return [
        Tournament(label, path, index, GameKind(None, *shape), path.name, date, True, counts[shape], tuple(names[shape]),
                   dropped_lines=frozenset(dropped))
        for shape in counts
    ]


class _CountedOnce:
    """Each identified match counted from one input (``MatchLedger``): results folders first,
    in the order given, then files. A folder's match ids are entered only when another input
    names its ``results_id`` (a copy of it, an export of it), so that a league of distinct
    folders holds no set of every match id."""

    def __init__(self, several: bool) -> None:
        self.several = several  # more than one input: a match may be met twice
        self.notes: list[str] = []
        self._ledger = MatchLedger()
        self._labels: dict[int, str] = {}
        self._unentered: dict[str, Tournament] = {}  # results id -> the folder holding it, its ids not entered
        self._holders: dict[int, set[int]] = defaultdict(set)  # input -> the inputs its dropped matches came from
        self._folders: dict[int, Tournament] = {}  # input -> the results folder it is
        # (match id, seed) -> the folders holding such a match, with its outcome as exported; read
        # when a line without identity first asks (placed).
        self._places: dict[MatchPlace, list[tuple[int, Outcome]]] | None = None

    def folders(self, stores: Iterable[Tournament]) -> Iterator[Tournament]:
        """The results folders, each without the matches an earlier folder holds (a copy)."""
        for t in stores:
            self._labels[t.index] = t.label
            self._folders[t.index] = t
            if t.results_id is None:
                if self.several:
                    self.notes.append(f"{t.label}: no results_id recorded (an earlier arena; a run of it records "
                                      "one): its matches are counted, even where a copy of it is given too (an export "
                                      "of it is told by each match's id and seed)")
                yield t
                continue
            if t.results_id not in self._unentered and not self._ledger.holds(t.results_id):
                self._unentered[t.results_id] = t
                yield t
                continue
            seats = self._seats(t)
            dropped = frozenset(match_id for match_id, played in seats.items()
                                if self.claim((t.results_id, match_id), t.index, (t, played)))
            self.said(t.label, t.index, len(dropped), len(seats))
            if len(dropped) < len(seats):
                yield replace(t, matches=t.matches - len(dropped), dropped_ids=dropped)

    def claim(self, key: MatchKey, index: int, played: tuple[Tournament, tuple[str, ...]] | None = None) -> bool:
        """Whether the match is held by an input counted before (then ``index`` drops it).
        ``played``: the results folder that holds it and the entrants of its seats: a copy of a
        folder that went on apart holds the same ids for matches another program played."""
        first = self._unentered.pop(key[0], None)
        if first is not None:
            for match_id in self._ids(first):
                self._ledger.claim((key[0], match_id), first.index)
        holder = self._ledger.claim(key, index)
        if holder is None:
            return False
        if played is not None and holder in self._folders and not _same_programs(self._folders[holder], *played):
            return False
        self._holders[index].add(holder)
        return True

    def said(self, label: str, index: int, dropped: int, total: int) -> None:
        """The note on an input's dropped matches, if any (``label`` names it from now on)."""
        self._labels[index] = label
        if dropped:
            where = [self._labels[h] if h != index else "its earlier lines" for h in sorted(self._holders[index])]
            self.notes.append(duplicates_note(label, dropped, total, where))

    def placed(self, place: MatchPlace, result: Result) -> int | None:
        """The results folder that holds the match a line without identity gives the
        ``MatchPlace`` of, with the same sides and result (an export of an earlier arena, or
        one whose ``results_id`` was dropped: the match is counted from the folder), or None.
        The folders' matches are read once, the first time a line asks."""
        if self._places is None:
            self._places = defaultdict(list)
            for t in self._folders.values():
                for at, outcome in _exported_places(t):
                    self._places[at].append((t.index, outcome))
        outcome = _outcome(result)
        return next((holder for holder, theirs in self._places.get(place, ()) if theirs == outcome), None)

    def said_placed(self, label: str, placed: Mapping[int, int], read: int) -> None:
        """The note on a file's lines counted from the results folders they are matches of."""
        dropped = sum(placed.values())
        some = (("its one match carries" if read == 1 else f"its {read} matches carry") if dropped == read
                else f"{dropped} of its {read} matches {'carries' if dropped == 1 else 'carry'}")
        shown = few([self._labels.get(holder, str(holder)) for holder in sorted(placed)])
        self.notes.append(f"{label}: {some} no results_id, but each is the match of {shown} with its id, seed, sides "
                          f"and result: counted once, from there{'; left out' if dropped == read else ''}")

    def unkeyed(self, label: str, unkeyed: int, read: int, names: Mapping[tuple[int, int], set[str]]) -> None:
        """The note on a file's matches without identity: counted, as nothing tells them
        from another input's; it names the results folders given whose matches they may repeat
        (of their shape, between bots of theirs: the file may be an export of one, its
        identity columns dropped), and the way out."""
        some = (f"its {read} matches carry" if unkeyed == read
                else f"{unkeyed} of its {read} matches {'carries' if unkeyed == 1 else 'carry'}")
        what = f"{label}: {some} no identity (results_id and id, as arena export writes them)"
        like = [t.label for t in self._folders.values() if any(
            shape == t.kind.shape and {label_bot(name) for name in these} <= {bot_name(b) for b in t.bots}
            for shape, these in names.items())]
        if not like:
            self.notes.append(f"{what}: each is counted, even where another input holds it too")
            return
        shown = few(like)
        self.notes.append(f"{what}, and {shown} {'holds' if len(like) == 1 else 'hold'} matches of the same bots: "
                          f"if {label} is an export of {'it' if len(like) == 1 else 'one of them'}, they are counted "
                          "twice here; give one of the two, or an export that keeps those columns")

    @staticmethod
    def _ids(t: Tournament) -> list[str]:
        with ResultStore.open_existing(str(t.path)) as store:
            return sorted(store.completed_ids())

    @staticmethod
    def _seats(t: Tournament) -> dict[str, tuple[str, ...]]:
        with ResultStore.open_existing(str(t.path)) as store:
            return dict(sorted((match_id, seats) for _, match_id, _, seats in store.stored_keys()))


Outcome = tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]
"""A match's sides (each its distinct bots) and their places, however a file gives it."""


def _outcome(result: Result) -> Outcome:
    if isinstance(result, PairResult):
        places = (1, 1) if result.score_a == 0.5 else (1, 2) if result.score_a == 1 else (2, 1)
        return (tuple(result.side_a), tuple(result.side_b)), places
    return tuple(tuple(side) for side in result.sides), tuple(result.places)


def _exported_places(t: Tournament) -> Iterator[tuple[MatchPlace, Outcome]]:
    """Each match of a results folder as its export writes it (arena.tournament.export): its
    id and seed, its sides by label and their places."""
    from arena.tournament.export import Results
    from arena.tournament.standings import match_places, side_members

    with ResultStore.open_existing(str(t.path)) as store:
        results = Results.of(store)
    for row in results.rows:
        sides = tuple(side_members(row, results.seating))
        yield (row.id, str(row.seed)), (sides, match_places(row, results.seating))


def _same_programs(holder: Tournament, t: Tournament, seats: Sequence[str]) -> bool:
    """Whether each entrant of ``seats`` ran the same program in both folders, as far as both
    recorded it."""
    for entrant in seats:
        one = (holder.identities or {}).get(entrant)
        other = (t.identities or {}).get(entrant)
        if one is not None and other is not None and one.key != other.key:
            return False
    return True


def _sides(result: Result) -> tuple[tuple[str, ...], ...]:
    if isinstance(result, PairResult):
        return (tuple(result.side_a), tuple(result.side_b))
    return tuple(tuple(side) for side in result.sides)


def find_inputs(paths: Sequence[str | Path]) -> list[tuple[str, Path, bool]]:
    """Each input as (label, path, is a results folder): a results folder, every results
    folder directly inside a folder of them (in name order), or a results file. The same
    folder or file given twice counts once."""
    out: list[tuple[str, Path, bool]] = []
    seen: set[Path] = set()

    def add(label: str, path: Path, store: bool) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append((label, path, store))

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            if (path / STORE_FILE).is_file():
                add(str(path), path, True)
                continue
            found = sorted(p for p in path.iterdir() if p.is_dir() and (p / STORE_FILE).is_file())
            if not found:
                raise LeagueError(f"{path}: not a results folder (no {STORE_FILE}), nor a folder of results folders")
            for sub in found:
                add(str(sub), sub, True)
        elif path.is_file():
            add(str(path), path, False)
        else:
            raise LeagueError(f"{path}: no such results folder or file")
    return out


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Entry:
    """One line of the rating list: one program (one identity key, wherever it played and
    under whatever name or command). ``name`` is the bot's name; ``version`` its version
    (None: the name's only version, or versions pooled by name); ``identity`` the recorded
    identity (None: not recorded)."""

    label: str
    name: str
    version: str | None = None
    identity: BotIdentity | None = None

    @property
    def key(self) -> str | None:
        return self.identity.key if self.identity is not None else None


def assign_entries(
    tournaments: Sequence[Tournament], *, by_name: bool = False
) -> tuple[dict[tuple[int, str], Entry], list[str]]:
    """Each (tournament index, name in its results) -> its entry, and notes on how versions were
    told apart. ``tournaments`` in date order (an entry's name is the first it played under).

    The same identity key is one entry wherever it played; without a recorded identity a name
    joins its bot's only version (or a label it names), else it is ``name@unknown``."""
    notes: list[str] = []
    if by_name:
        # Each program as its entry first (an SPRT's "bot_v1" is the version of mybot it runs),
        # then every version of a name as one: the name its label gives.
        exact, _ = assign_entries(tournaments)
        merged: dict[str, set[str]] = defaultdict(set)
        pooled: dict[tuple[int, str], Entry] = {}
        for place, entry in exact.items():
            name = label_bot(entry.label)
            merged[name].add(entry.label)
            pooled[place] = Entry(name, name)
        several = [f"{name} ({len(labels)})" for name, labels in merged.items() if len(labels) > 1]
        notes.append("--by-name: every version of a name is one entry" + (
            f" (merged: {', '.join(several)} versions)" if several else " (no name here has more than one version)"))
        return pooled, notes
    first: dict[str, BotIdentity] = {}  # key -> the identity as first seen (its ready name once known)
    for t in tournaments:
        for name in t.bots:
            identity = (t.identities or {}).get(name)
            if identity is None:
                continue
            seen = first.setdefault(identity.key, identity)
            if seen.ready_name is None and identity.ready_name is not None:
                first[identity.key] = replace(seen, ready_name=identity.ready_name)
    keys_of: dict[str, list[str]] = defaultdict(list)  # bot name -> its keys, in date order
    for key, identity in first.items():
        keys_of[bot_name(identity.name)].append(key)
    by_key: dict[str, Entry] = {}
    for bot, keys in keys_of.items():
        for key in keys:
            identity = first[key]
            given = ready_version(identity.ready_name) is not None
            version = identity.version if given or len(keys) > 1 else None
            by_key[key] = Entry(identity.label if version is not None else bot, bot, version, identity)
    # Two programs under one label (one bot's version given twice): told apart by their keys.
    counts = Counter(entry.label for entry in by_key.values())
    for key, entry in by_key.items():
        if counts[entry.label] > 1:
            by_key[key] = replace(entry, label=f"{entry.label}({key[:7]})", version=f"{entry.version or ''}({key[:7]})")
    by_label = {entry.label: entry for entry in by_key.values()}
    unknown: dict[str, list[str]] = defaultdict(list)
    out: dict[tuple[int, str], Entry] = {}
    for t in tournaments:
        for name in t.bots:
            identity = (t.identities or {}).get(name)
            if identity is not None:
                out[t.index, name] = by_key[identity.key]
            elif name in by_label:
                out[t.index, name] = by_label[name]
            elif len(keys_of.get(name, ())) == 1:
                out[t.index, name] = by_key[keys_of[name][0]]
            elif name in keys_of:
                out[t.index, name] = Entry(f"{name}@{UNKNOWN_VERSION}", name, UNKNOWN_VERSION)
                unknown[name].append(t.label)
            else:
                out[t.index, name] = Entry(name, name)
    for name, where in unknown.items():
        shown = ", ".join(where[:3]) + (", ..." if len(where) > 3 else "")
        notes.append(f"{name}: {shown} did not record which version played; rated as {name}@{UNKNOWN_VERSION}")
    for bot, keys in keys_of.items():
        if len(keys) > 1:
            notes.append(f"{bot}: {len(keys)} versions ({', '.join(by_key[k].label for k in keys)}); --by-name merges them")
    # Two entries under one label would be one bot to the fit: refused, never merged.
    taken: dict[str, Entry] = {}
    for entry in out.values():
        other = taken.setdefault(entry.label, entry)
        if other != entry:
            what = f"bots {other.name!r} and {entry.name!r}" if other.name != entry.name else f"two versions of {entry.name!r}"
            raise LeagueError(f"{what} would both be listed as {entry.label!r}; rename one")
    return out, notes


# --------------------------------------------------------------------------- pools


@dataclass(frozen=True)
class Pool:
    """Results rated together: tournaments of one kind of game (several with ``mix``), in
    date order."""

    number: int
    kinds: tuple[GameKind, ...]
    tournaments: tuple[Tournament, ...]
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        """The kind of game, and the match lengths (targets) found."""
        text = "; ".join(k.describe() for k in self.kinds)
        targets = sorted({t.target for t in self.tournaments if t.target is not None})
        if targets:
            text += f"; target{'s' if len(targets) > 1 else ''} {', '.join(map(str, targets))}"
        return text

    @property
    def matches(self) -> int:
        return sum(t.matches for t in self.tournaments)


@dataclass(frozen=True)
class League:
    pools: tuple[Pool, ...]
    entries: Mapping[tuple[int, str], Entry]
    notes: tuple[str, ...] = ()
    by_name: bool = False  # versions merged: a match between two of them is one entry against itself

    def names(self, tournament: Tournament) -> Callable[[str], str]:
        """The entry label of each name in one tournament's results."""
        entries = self.entries

        def label(name: str) -> str:
            entry = entries.get((tournament.index, name))
            return entry.label if entry is not None else name

        return label

    def results(self, tournament: Tournament) -> Iterator[Result]:
        """A tournament's matches under the entries' labels."""
        return (_renamed(r, self.names(tournament)) for r in tournament.results())

    @cached_property
    def _by_label(self) -> dict[str, Entry]:
        return {entry.label: entry for entry in self.entries.values()}

    def entry(self, label: str) -> Entry | None:
        return self._by_label.get(label)

    def resolve(self, name: str) -> str:
        """The entry a user means by ``name`` (an entry's label, or a bot name with one
        entry); raises ``AnchorError`` naming the versions when it is ambiguous."""
        if name in self._by_label:
            return name
        versions = sorted({e.label for e in self.entries.values() if e.name == name})
        if len(versions) == 1:
            return versions[0]
        if versions:
            raise AnchorError(name, f"it has {len(versions)} versions here; name one: {', '.join(versions)}")
        raise AnchorError(name, "no such bot in the results")


def _renamed(result: Result, label: Callable[[str], str]) -> Result:
    if isinstance(result, PairResult):
        return PairResult(tuple(map(label, result.side_a)), tuple(map(label, result.side_b)), result.score_a)
    return MatchResult(tuple(tuple(map(label, side)) for side in result.sides), result.places)


def open_league(paths: Sequence[str | Path], *, by_name: bool = False, mix: bool = False) -> League:
    """Read the inputs' descriptions (and check every results file), tell the bots' versions
    apart and sort the tournaments into pools. Raises ``LeagueError`` (and the stores' and
    files' own errors) on input that cannot be rated; nothing is fitted yet."""
    if not paths:
        raise LeagueError("no results given; expected results folders, folders of them, or results files")
    stores: list[Tournament] = []
    notes: list[str] = []
    found = find_inputs(paths)
    for index, (label, path, is_store) in enumerate(found):
        if is_store:
            tournament = _read_store(path, label, index)
            if tournament.matches == 0:
                notes.append(f"{label} holds no matches yet: left out")
                continue
            stores.append(tournament)
            if tournament.identities is None:
                notes.append(f"{label}: the bots' identities were not recorded (an earlier arena): its bots are matched by name")
    # Folders before files: a match a folder holds is counted from there, whichever was given first.
    once = _CountedOnce(len(found) > 1)
    tournaments = list(once.folders(stores))
    for index, (label, path, is_store) in enumerate(found):
        if not is_store:
            tournaments.extend(_read_file(path, label, index, once))
    notes += once.notes
    if not tournaments:
        raise LeagueError(f"no matches in {', '.join(map(str, paths))}: nothing to rate")
    tournaments.sort(key=lambda t: (t.date, t.index))
    entries, entry_notes = assign_entries(tournaments, by_name=by_name)
    pools = _pools(tournaments, mix)
    return League(pools, entries, (*notes, *entry_notes), by_name)


def _pools(tournaments: Sequence[Tournament], mix: bool) -> tuple[Pool, ...]:
    if mix:
        kinds = tuple(dict.fromkeys(t.kind for t in tournaments))
        mixed = (f"--mix: results of {len(kinds)} kinds of game pooled in one fit",) if len(kinds) > 1 else ()
        return (Pool(1, kinds, tuple(tournaments), mixed),)
    by_kind: dict[GameKind, list[Tournament]] = defaultdict(list)
    for t in tournaments:
        if t.kind.players is not None:
            by_kind[t.kind].append(t)
    joined: dict[GameKind, list[str]] = defaultdict(list)
    for t in tournaments:
        if t.kind.players is not None:
            continue
        same_shape = [kind for kind in by_kind if kind.players is not None and kind.shape == t.kind.shape]
        if len(same_shape) == 1:
            by_kind[same_shape[0]].append(t)
            joined[same_shape[0]].append(t.label)
        else:
            by_kind[t.kind].append(t)
    ordered = sorted(by_kind.items(), key=lambda item: min(t.index for t in item[1]))
    pools = []
    for number, (kind, members) in enumerate(ordered, start=1):
        notes: tuple[str, ...] = ()
        if joined.get(kind):
            files = ", ".join(dict.fromkeys(joined[kind]))
            notes = (f"{files}: no rules recorded; pooled with the results folders of the same shape ({kind.describe()})",)
        members.sort(key=lambda t: (t.date, t.index))
        pools.append(Pool(number, (kind,), tuple(members), notes))
    return tuple(pools)


# --------------------------------------------------------------------------- ratings


@dataclass(frozen=True)
class LeagueRow:
    """A rating list row: the fit's, with where and when the entry played."""

    rating: BotRating
    entry: Entry
    tournaments: int
    last_played: datetime | None


@dataclass(frozen=True)
class PoolRatings:
    pool: Pool
    table: RatingTable
    rows: tuple[LeagueRow, ...]
    notes: tuple[str, ...]
    anchor: str | None = None  # the anchor's label, when it is in this pool


@dataclass(frozen=True)
class Anchor:
    """``--anchor NAME=ELO`` as given: the name is resolved against the league."""

    name: str
    elo: float = 0.0


def rate_pool(
    league: League,
    pool: Pool,
    *,
    prior: float | None = DEFAULT_PRIOR,
    anchor: Anchor | None = None,
    upto: int | None = None,
    results: Callable[[Tournament], Iterable[Result]] | None = None,
) -> PoolRatings:
    """One joint fit of the pool's results (of its first ``upto`` tournaments, for the
    history). An anchor that did not play in them leaves the ratings centred on its Elo.
    ``results`` gives a tournament's results under the entries' labels (default:
    ``league.results``, which reads them afresh)."""
    tournaments = pool.tournaments[: upto if upto is not None else len(pool.tournaments)]
    read = results if results is not None else league.results
    seen: dict[str, set[int]] = defaultdict(set)
    # Matches of an entry against itself: versions merged by --by-name, or one program entered
    # under two names (a self-play check). They say nothing of its strength; the fit refuses them.
    itself: Counter[str] = Counter()

    def tracked() -> Iterator[Result]:
        for position, t in enumerate(tournaments):
            for result in read(t):
                sides = _sides(result)
                names = [name for side in sides for name in side]
                if len(set(names)) < len(names):
                    itself[next(name for name in names if names.count(name) > 1)] += 1
                    continue
                for side in sides:
                    for name in side:
                        seen[name].add(position)
                yield result

    label = league.resolve(anchor.name) if anchor is not None else None
    played = {league.names(t)(name) for t in tournaments for name in t.bots}
    notes: list[str] = list(pool.notes)
    anchor_elo = anchor.elo if anchor is not None else 0.0
    if label is not None and label not in played:
        notes.append(f"anchor {label} did not play here: ratings centred on {anchor_elo:g}")
        label = None
    table = fit_ratings(tracked(), anchor=label, anchor_elo=anchor_elo, prior=prior)
    if itself and league.by_name:
        total = sum(itself.values())
        notes.append(f"--by-name: {total} match{'es' if total != 1 else ''} between versions of one name "
                     "(an entry against itself) left out")
    elif itself:
        notes.extend(f"{count} match{'es' if count != 1 else ''} of {name} against itself (one program entered "
                     "under two names) left out" for name, count in sorted(itself.items()))
    if anchor is not None and label is None:
        table = _shifted(table, anchor_elo)
    rows = []
    for rating in table.ratings:
        where = seen.get(rating.name, set())
        entry = league.entry(rating.name) or Entry(rating.name, rating.name)
        last = max((tournaments[p].date for p in where), default=None)
        rows.append(LeagueRow(rating, entry, len(where), last))
    return PoolRatings(pool, table, tuple(rows), (*notes, *table.notes), label)


def _shifted(table: RatingTable, offset: float) -> RatingTable:
    """The table with every rating moved by ``offset`` (an anchor value without its bot)."""
    if offset == 0.0:
        return table
    ratings = tuple(replace(r, elo=None if r.elo is None else r.elo + offset) for r in table.ratings)
    return replace(table, ratings=ratings, anchor_elo=offset)


def rate_league(league: League, *, prior: float | None = DEFAULT_PRIOR, anchor: Anchor | None = None) -> tuple[PoolRatings, ...]:
    """Every pool's rating list. An anchor must name an entry of some pool; the pools it did
    not play in are centred on its value."""
    if anchor is not None:
        league.resolve(anchor.name)
    return tuple(rate_pool(league, pool, prior=prior, anchor=anchor) for pool in league.pools)


# --------------------------------------------------------------------------- history


@dataclass(frozen=True)
class Step:
    """The ratings after one more tournament: the joint fit of every result up to it."""

    number: int
    tournament: Tournament
    ratings: PoolRatings


@dataclass(frozen=True)
class PoolHistory:
    pool: Pool
    steps: tuple[Step, ...]

    def series(self, label: str) -> list[tuple[int, float | None, float | None]]:
        """(step number, elo, ci95) of one entry at each step where it was rated."""
        out = []
        for step in self.steps:
            for row in step.ratings.rows:
                if row.rating.name == label:
                    out.append((step.number, row.rating.elo, row.rating.ci95))
        return out


def pool_history(
    league: League, pool: Pool, *, prior: float | None = DEFAULT_PRIOR, anchor: Anchor | None = None
) -> PoolHistory:
    """The ratings after each of the pool's tournaments, in date order: fit k uses the
    results of the first k tournaments, so the last step is the pool's rating list."""
    kept: dict[tuple[int, GameKind], list[Result]] = {}

    def results(tournament: Tournament) -> list[Result]:
        # Read once, refitted at every later step.
        key = (tournament.index, tournament.kind)
        if key not in kept:
            kept[key] = list(league.results(tournament))
        return kept[key]

    steps = tuple(
        Step(k, t, rate_pool(league, pool, prior=prior, anchor=anchor, upto=k, results=results))
        for k, t in enumerate(pool.tournaments, start=1)
    )
    return PoolHistory(pool, steps)


def league_history(
    league: League, *, prior: float | None = DEFAULT_PRIOR, anchor: Anchor | None = None
) -> tuple[PoolHistory, ...]:
    if anchor is not None:
        league.resolve(anchor.name)
    return tuple(pool_history(league, pool, prior=prior, anchor=anchor) for pool in league.pools)


# --------------------------------------------------------------------------- small helpers


__all__ = [
    "Anchor",
    "Entry",
    "GameKind",
    "League",
    "LeagueError",
    "LeagueRow",
    "Pool",
    "PoolHistory",
    "PoolRatings",
    "Step",
    "Tournament",
    "assign_entries",
    "find_inputs",
    "league_history",
    "open_league",
    "pool_history",
    "rate_league",
    "rate_pool",
]
