"""Tournament files: YAML in, a frozen, fully validated ``TournamentConfig`` out.

The file is read within bounds as a tree of nodes that keep their lines
(``arena.tournament.yamldoc``), so that every error names the file, the line, the key and
what is allowed; here that tree becomes the tournament.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from arena.core.rules import RULE_OPTIONS, Rules, Seating
from arena.errors import InputError, OptionError, SeatingError
from arena.harness.botproc import BotSpecError, expand_python, missing_program, split_command
from arena.harness.protocol import Clock
from arena.harness.resources import ResourceLimits
from arena.match.record import DEFAULT_STRIKES, FailurePolicy, Policy
from arena.tournament.buildspec import BuildSpec, bot_keys_dict, match_inputs, parse_build_keys, unmatched_text
from arena.tournament.grants import Protected, leads_up, protected_paths, writable_folders, writable_refusal, written_folders
from arena.tournament.schedule import MAX_MATCHES, SPRT_MAX_PAIRS, Format, Mode, TeamMode, count_matches
from arena.tournament.sources import SourceSpec
from arena.tournament.yamldoc import (
    FLOAT,
    INT,
    MAX_FILE_BYTES,
    MAX_NUMBER_CHARS,
    NULL,
    STR,
    ConfigError,
    Doc,
    compose,
    describe,
    read_text,
    some,
)

if TYPE_CHECKING:
    # Imported when a file has format: sprt (parse_config): the statistics load numpy.
    from arena.sprt import SprtParams

PLAYERS_SINGLE = (2, 3, 4)
PLAYERS_PAIRS = (4, 6)


# No '+': it joins team members in side labels ("a+b") and in results CSVs.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_NAME_ALLOWED = "1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"

TOP_KEYS = (
    "name",
    "seed",
    "rules",
    "mode",
    "players",
    "team_size",
    "teams",
    "bots",
    "format",
    "challenger",
    "challengers",
    "rounds",
    "max_matches",
    "target_ci",
    "window",
    "seeding",
    "matches_per_pairing",
    "duplicate",
    "failures",
    "concurrency",
    "pin_workers",
    "output",
    "cluster",
    "limits",
    "clock",
    "sprt",
)
BOT_KEYS = ("name", "cmd", "cwd", "env", "pass_env", "startup_ms", "move_ms", "bank_ms", "clock", "limits", "build", "inputs",
            "source")
TEAM_KEYS = ("name", "members")
FAILURE_KEYS = ("policy", "strikes", "max_failed_matches")

MAX_MS = 3_600_000
MAX_BOTS = 1_000  # bots in one file (docs/TOURNAMENTS.md, "Limits")

@dataclass(frozen=True)
class BotConfig:
    name: str
    cmd: str | tuple[str, ...]  # as written, with $PYTHON unexpanded (what the fingerprint sees)
    cwd: str  # as written (relative to the tournament file's folder)
    env: tuple[tuple[str, str], ...] = ()
    # Time limits in milliseconds (docs/PROTOCOL.md); None: the harness's default.
    startup_ms: int | None = None
    move_ms: int | None = None
    bank_ms: int | None = None
    # What move_ms and bank_ms measure (its own ``clock:``, else the file's); None: the
    # machine's default (``arena.harness.containment.default_clock``).
    clock: Clock | None = None
    base_dir: str = "."  # absolute folder of the tournament file; a checkout's, once a source bot is checked out
    build: BuildSpec | None = None  # build.py runs it
    source: SourceSpec | None = None  # sources.py checks it out; cwd is then relative to the repository
    # Resource limits the file sets for this bot (the top-level ``limits:``, then its own);
    # the others keep their defaults (arena.harness.resources.ResourceLimits).
    limits: tuple[tuple[str, Any], ...] = ()
    # Variables of the arena's environment it is given besides those every bot gets
    # (arena.harness.botproc.bot_environment).
    pass_env: tuple[str, ...] = ()
    # An unbuilt bot's ``inputs:``: the files it is made of besides those its command names
    # (globs relative to its cwd), part of its identity (a built bot's are its build's).
    inputs: tuple[str, ...] = ()

    @property
    def resolved_cwd(self) -> str:
        return os.path.normpath(os.path.join(self.base_dir, os.path.expanduser(self.cwd)))

    def resolved_cmd(self, python: str) -> str | tuple[str, ...]:
        return expand_python(self.cmd, python)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cmd": self.cmd if isinstance(self.cmd, str) else list(self.cmd),
            "cwd": self.cwd,
            "env": dict(self.env),
            "startup_ms": self.startup_ms,
            "move_ms": self.move_ms,
            "bank_ms": self.bank_ms,
            # Only when set, as limits: files without it keep their fingerprint.
            **({"clock": self.clock.value} if self.clock is not None else {}),
            **bot_keys_dict(self.build, self.source, self.inputs),
            # Only when set: files without limits keep the fingerprint they had before the key.
            **({"limits": dict(self.limits)} if self.limits else {}),
            **({"pass_env": list(self.pass_env)} if self.pass_env else {}),
        }


@dataclass(frozen=True)
class TeamConfig:
    name: str
    members: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "members": list(self.members)}


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    seed: int
    rules: Rules
    mode: Mode
    players: int
    team_size: int  # 1 in single mode
    team_mode: TeamMode  # CLONES (unused) in single mode
    teams: tuple[TeamConfig, ...]  # fixed teams only
    bots: tuple[BotConfig, ...]
    format: Format
    challengers: tuple[str, ...]  # gauntlet only: the sides that meet the field (and never each other)
    matches_per_pairing: int
    duplicate: bool
    failures: FailurePolicy  # arena.match.record's, as the referee applies it
    concurrency: int
    output: str  # absolute
    source: str = field(default="", compare=False)  # the file it came from
    cluster: str | None = None  # a Dask scheduler address (docs/CLUSTER.md); never changes the games
    # Local workers held to shares of the cores of their own, their bots with them
    # (arena.tournament.executors.core_shares). Never changes the games: not in game_dict.
    pin_workers: bool = True
    # failures.max_failed_matches: more matches with a bot failure than this and ``arena run``
    # exits 1 (as with --strict, which is 0). Never changes the games: not in game_dict.
    max_failed_matches: int | None = None
    # format sprt only: the sequential test's parameters (docs/SPRT.md); the first side is the candidate.
    sprt: SprtParams | None = None
    # The adaptive formats' settings (adaptive.py, docs/TOURNAMENTS.md "Swiss, ladder, knockout"):
    # swiss: its rounds; ladder: when it stops and how many pairings it chooses ahead of the
    # results; knockout: the seeding order (entrant labels, best first).
    rounds: int | None = None
    max_matches: int | None = None
    target_ci: float | None = None
    window: int | None = None
    seeding: tuple[str, ...] = ()
    # knockout seeded by ratings: the results folder whose table gave ``seeding`` (adaptive.
    # seeded_by_ratings). Not in game_dict: the order it gave is, and that is what resume compares.
    seeding_from: str | None = None

    @property
    def secrets(self) -> tuple[str, ...]:
        """What no bot of the tournament may read (arena.harness.sandbox): its results
        folder (records of deals a bot meets again in a duplicate game), its file and the git
        folder of the repository holding the file (the seed, from which every deal follows)."""
        return _secrets(self.output, self.source)

    @property
    def seating(self) -> Seating:
        if self.mode is Mode.SINGLE:
            return Seating.alone(self.players)
        return Seating.pairs(players=self.players, team_size=self.team_size)

    @property
    def sides(self) -> int:
        return self.players // self.team_size

    def bot(self, name: str) -> BotConfig:
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(name)

    def game_dict(self) -> dict[str, Any]:
        """Everything that changes which games are played or how: what resume compares."""
        return {
            "name": self.name,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "mode": self.mode.value,
            "players": self.players,
            "team_size": self.team_size,
            "teams": self.team_mode.value if self.team_mode is not TeamMode.FIXED else [t.to_dict() for t in self.teams],
            "bots": [b.to_dict() for b in self.bots],
            "format": self.format.value,
            # One challenger keeps the key it always had, so those files keep their fingerprint.
            "challenger": self.challengers[0] if len(self.challengers) == 1 else None,
            **({"challengers": list(self.challengers)} if len(self.challengers) > 1 else {}),
            "matches_per_pairing": self.matches_per_pairing,
            "duplicate": self.duplicate,
            "failures": self.failures.to_dict(),
            # Only for a sequential test, so every other file keeps its fingerprint.
            **({"sprt": self.sprt.to_dict()} if self.sprt is not None else {}),
            **self.adaptive_dict(),
        }

    def adaptive_dict(self) -> dict[str, Any]:
        """The adaptive formats' settings that are set (none for the other formats)."""
        values = {"rounds": self.rounds, "max_matches": self.max_matches, "target_ci": self.target_ci,
                  "window": self.window, "seeding": list(self.seeding) or None}
        return {key: value for key, value in values.items() if value is not None}

    def to_dict(self) -> dict[str, Any]:
        return {**self.game_dict(), "concurrency": self.concurrency, "output": self.output}

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.game_dict())


def _secrets(output: str, source: str) -> tuple[str, ...]:
    paths = [output]
    if source:
        source = os.path.abspath(source)
        paths.append(source)
        paths.extend(_git_folders(os.path.dirname(source)))
    return tuple(paths)


def fingerprint_of(game_dict: Mapping[str, Any]) -> str:
    canonical = json.dumps(game_dict, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def stored_game_dict(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored tournament's game dict in this arena's form: its rules as a record's are read
    (``Rules.from_record``), so that a folder begun before an option was renamed resumes when the
    file asks for the same games."""
    out = dict(stored)
    rules = stored.get("rules")
    if isinstance(rules, Mapping):
        try:
            out["rules"] = Rules.from_record(rules).to_dict()
        except (OptionError, ValueError, TypeError):
            pass  # not rules this arena reads: the fingerprints differ, and the refusal says where
    return out


def diff_game_dicts(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The keys whose values differ, dotted, for a resume refusal that says what changed."""
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}.{key}" if prefix else str(key)
        a, b = old.get(key), new.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out.extend(diff_game_dicts(a, b, path))
        elif a != b:
            out.append(path)
    return out


def pair_limit_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[int | None, int | None] | None:
    """A sequential test's ``sprt.max_pairs`` in two of its game dicts (None: no limit), when
    they differ; else None (the same limit, not a sequential test, or a stored value this arena
    did not write)."""
    before_test, after_test = old.get("sprt"), new.get("sprt")
    if not isinstance(before_test, Mapping) or not isinstance(after_test, Mapping):
        return None
    before, after = before_test.get("max_pairs"), after_test.get("max_pairs")
    for limit in (before, after):
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            return None
    return None if before == after else (before, after)


def is_raised(change: tuple[int | None, int | None]) -> bool:
    """Whether a pair limit change (``pair_limit_change``) lets the test play more pairs."""
    before, after = change
    return (after if after is not None else SPRT_MAX_PAIRS) > (before if before is not None else SPRT_MAX_PAIRS)


def with_pair_limit(game: Mapping[str, Any], limit: int | None) -> dict[str, Any]:
    """A sequential test's game dict with another ``sprt.max_pairs``."""
    return {**game, "sprt": {**game["sprt"], "max_pairs": limit}}


SPELLING_KEYS = ("cmd", "cwd", "inputs")
"""A bot's keys that say where its program is and which files make it, not what it is: the
identity check tells (identity.py); a bot given ``inputs:`` for the first time is a new version,
since nothing says what its files were when it played."""


def respelled_bots(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The bots whose command is spelled anew (``SPELLING_KEYS``) when that is all two game
    dicts differ in, else None: the same schedule of the same entries, whose programs a resume
    compares by identity (``./mybot``, ``/home/me/mybot`` and ``mybot`` with a ``cwd`` are one)."""
    def plain(game: Mapping[str, Any]) -> dict[str, Any]:
        bots = game.get("bots")
        if not isinstance(bots, list):
            return dict(game)
        return {**game, "bots": [{k: v for k, v in b.items() if k not in SPELLING_KEYS} if isinstance(b, Mapping)
                                 else b for b in bots]}

    if plain(old) != plain(new):
        return None
    return tuple(str(b.get("name")) for a, b in zip(old.get("bots") or [], new.get("bots") or [], strict=True)
                 if isinstance(a, Mapping) and isinstance(b, Mapping) and a != b)


# --- loading ------------------------------------------------------------------------


def load_config(path: str | os.PathLike[str], *, cpu_count: int | None = None, cwd: str | None = None,
                check_commands: bool = True, output: str | None = None) -> TournamentConfig:
    """Read and validate a tournament file. Raises ConfigError.

    ``cwd`` is the folder a relative ``output`` is resolved against (default: the
    process's working directory); bots' ``cwd`` are resolved against the file's folder.
    ``output``, given, replaces the file's (``arena run --output``).
    """
    file = str(path)
    text = read_text(file)
    base_dir = os.path.dirname(os.path.abspath(file))
    return parse_config(text, file=file, base_dir=base_dir, cpu_count=cpu_count, cwd=cwd,
                        check_commands=check_commands, output=output)


def parse_config(
    text: str,
    *,
    file: str = "<string>",
    base_dir: str = ".",
    cpu_count: int | None = None,
    cwd: str | None = None,
    check_commands: bool = False,
    output: str | None = None,
) -> TournamentConfig:
    """Validate a tournament document. ``check_commands``: also refuse a bot whose program
    is not found on this machine (``load_config`` does; skipped when the file names a
    cluster, whose workers run the bots)."""
    doc = Doc(file)
    if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise ConfigError(file, None, None, f"larger than {MAX_FILE_BYTES:,} bytes, the limit of a tournament file")
    root = compose(doc, text)
    if root is None:
        raise ConfigError(file, 1, None, f"the file is empty; expected a mapping with keys {', '.join(TOP_KEYS)}")
    top = doc.mapping(root, None, TOP_KEYS)

    def required(key: str) -> Node:
        if key not in top:
            raise doc.error(root, key, "missing (required)")
        return top[key][1]

    name = doc.string(required("name"), "name", _NAME_ALLOWED)
    if not _NAME_RE.match(name):
        raise doc.error(top["name"][1], "name", f"expected {_NAME_ALLOWED}, got {describe(top['name'][1])}")
    seed = doc.integer(required("seed"), "seed", 0, 2**63 - 1)

    rules = _parse_rules(doc, top.get("rules"))

    mode = doc.member(top["mode"][1], "mode", Mode) if "mode" in top else Mode.SINGLE
    players, team_size = _parse_table(doc, top, mode)

    # Each limits key -> the key and nodes of the writable list it has (a bot's own, or the
    # top-level one it inherits), to refuse a folder once the results folder is known.
    writable_nodes: dict[str, tuple[str, list[Node]]] = {}
    top_limits = _parse_limits(doc, top["limits"][1], "limits", writable_nodes) if "limits" in top else {}
    bots_node = required("bots")
    if isinstance(bots_node, SequenceNode) and len(bots_node.value) > MAX_BOTS:
        raise doc.error(bots_node, "bots", f"at most {MAX_BOTS:,} bots, got {len(bots_node.value):,}")
    top_clock = doc.member(top["clock"][1], "clock", Clock) if "clock" in top else None
    bots = _parse_bots(doc, bots_node, base_dir, top_limits, writable_nodes, top_clock)
    bot_names = [b.name for b in bots]

    team_mode, teams = _parse_teams(doc, top, mode, bot_names, team_size)
    sides = players // team_size
    entrants = [t.name for t in teams] if team_mode is TeamMode.FIXED else bot_names
    needed = _bots_needed(mode, team_mode, players, sides)
    format_node = top["format"][1] if "format" in top else None
    if isinstance(format_node, ScalarNode) and format_node.value == Format.SPRT.value:
        # Said before the count of bots: more bots would not make this table fit the test.
        if sides != 2:
            raise doc.error(format_node, "format",
                            f"sprt tests one side against another: it needs exactly 2 sides, this table has {sides}")
        if team_mode is TeamMode.ROTATING:
            raise doc.error(top["teams"][1], "teams",
                            "format sprt needs two sides of fixed members: teams: clones, or two fixed teams")
    if len(entrants) < needed:
        what = "teams" if team_mode is TeamMode.FIXED else "bots"
        node = top["teams"][1] if team_mode is TeamMode.FIXED else top["bots"][1]
        key = "teams" if team_mode is TeamMode.FIXED else "bots"
        raise doc.error(node, key, f"at least {needed} {what} are needed for this table, got {len(entrants)}")

    fmt = doc.member(top["format"][1], "format", Format) if "format" in top else Format.ROUND_ROBIN
    challengers = _parse_challengers(doc, top, fmt, entrants, sides)
    if fmt.adaptive and team_mode is TeamMode.ROTATING:
        raise doc.error(top["teams"][1], "teams", f"format {fmt} pairs sides of fixed members: teams: clones, or fixed teams")
    adaptive = _parse_adaptive(doc, top, fmt, sides, entrants, base_dir)

    duplicate = doc.boolean(top["duplicate"][1], "duplicate") if "duplicate" in top else True
    sprt = None
    if fmt is Format.SPRT:
        sprt = _parse_sprt(doc, top, team_mode, entrants, duplicate)
        mpp = sides
    elif "sprt" in top:
        raise doc.error(top["sprt"][0], "sprt", f"only allowed with format: sprt (format is {fmt})")
    elif "matches_per_pairing" in top:
        node = top["matches_per_pairing"][1]
        if duplicate:
            allowed = (f"a multiple of {sides} from {sides} to 100000 (duplicate deals play each deal once per seat "
                       f"rotation; {sides} sides)")
            mpp = doc.integer(node, "matches_per_pairing", sides, 100000, allowed=allowed)
            if mpp % sides:
                raise doc.error(node, "matches_per_pairing", f"expected {allowed}, got {mpp}")
        else:
            mpp = doc.integer(node, "matches_per_pairing", 1, 100000)
    else:
        mpp = sides if duplicate else 1

    failures = _parse_failures(doc, top.get("failures"))
    max_failed = _parse_max_failed(doc, top.get("failures"))
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    concurrency = doc.integer(top["concurrency"][1], "concurrency", 1, 1024) if "concurrency" in top else cores
    pin_workers = doc.boolean(top["pin_workers"][1], "pin_workers") if "pin_workers" in top else True
    output_given = output is not None
    if output is None:
        output_raw = (doc.string(top["output"][1], "output", "a folder path") if "output" in top
                      else os.path.join("results", name))
        output = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(output_raw)))
    else:
        output = os.path.abspath(output)
    if os.path.lexists(output) and not os.path.isdir(output):
        what = "expected a folder path (the results folder), but it is a file"
        if not output_given and "output" in top:
            raise doc.error(top["output"][1], "output", f"{what}: {output}")
        raise InputError(f"--output: {what}: {output}")
    _refuse_writable(doc, bots, writable_nodes, protected_paths(output, _secrets(output, file if file != "<string>" else "")))
    cluster = (
        doc.string(top["cluster"][1], "cluster", "a Dask scheduler address, e.g. tcp://HOST:8786") if "cluster" in top else None
    )
    # Counted, not built: a file can ask for billions of matches in a few lines. (A sequential
    # test's schedule is within the limit by construction: at most SPRT_MAX_PAIRS pairs.)
    matches = 0 if sprt is not None or fmt.adaptive else count_matches(
        mode=mode, team_mode=team_mode, format=fmt, players=players, team_size=team_size, bots=len(bots),
        teams=len(teams), challengers=len(challengers), matches_per_pairing=mpp, duplicate=duplicate,
    )
    if matches > MAX_MATCHES:
        where = "matches_per_pairing" if "matches_per_pairing" in top else "bots"
        raise doc.error(
            top[where][1], where,
            f"the schedule would have {matches:,} matches; at most {MAX_MATCHES:,} "
            "(fewer bots, fewer matches per pairing, or several tournaments)",
        )
    # Checked last, so that a mistake in the file itself is reported first. On a cluster the
    # bots run on the workers, which may hold programs this machine lacks.
    if check_commands and cluster is None:
        for cmd_node, key, cmd, bot_cwd, env in doc.cmd_nodes:
            missing = missing_program(expand_python(cmd, sys.executable), bot_cwd, env)
            if missing:
                raise doc.error(cmd_node, key, missing)

    config = TournamentConfig(
        name=name,
        seed=seed,
        rules=rules,
        mode=mode,
        players=players,
        team_size=team_size,
        team_mode=team_mode,
        teams=teams,
        bots=bots,
        format=fmt,
        challengers=challengers,
        matches_per_pairing=mpp,
        duplicate=duplicate,
        failures=failures,
        concurrency=concurrency,
        output=output,
        source=file,
        cluster=cluster,
        pin_workers=pin_workers,
        max_failed_matches=max_failed,
        sprt=sprt,
        **adaptive,
    )
    if config.seeding_from is None:
        return config
    from arena.tournament.adaptive import seeded_by_ratings

    return seeded_by_ratings(config, lambda message: doc.error(top["seeding"][1], "seeding", message))


def _parse_challengers(doc: Doc, top: dict[str, tuple[Node, Node]], fmt: Format, entrants: list[str],
                       sides: int) -> tuple[str, ...]:
    """A gauntlet's ``challenger`` (one) or ``challengers`` (a list): the entrants that meet the
    rest of the field, never each other."""
    given = [key for key in ("challenger", "challengers") if key in top]
    if fmt is not Format.GAUNTLET:
        if given:
            raise doc.error(top[given[0]][0], given[0], f"only allowed with format: gauntlet (format is {fmt})")
        return ()
    if not given:
        raise doc.error(top["format"][1], "challenger",
                        "missing (required with format: gauntlet); expected one of " + some(entrants))
    if len(given) == 2:
        raise doc.error(top["challengers"][0], "challengers", "give challenger or challengers, not both")
    if given[0] == "challenger":
        return (doc.choice(top["challenger"][1], "challenger", tuple(entrants)),)
    node = top["challengers"][1]
    items = doc.sequence(node, "challengers", "a list of bot names (team names with fixed teams)")
    out: list[str] = []
    for i, item in enumerate(items):
        name = doc.choice(item, f"challengers[{i}]", tuple(entrants))
        if name in out:
            raise doc.error(item, f"challengers[{i}]", f"{name!r} is listed twice")
        out.append(name)
    if not out or len(entrants) - len(out) < sides - 1:
        raise doc.error(node, "challengers", f"expected at least one challenger and {sides - 1} of the field to meet, "
                                             f"got {len(out)} challengers of {len(entrants)}")
    return tuple(out)


MAX_ROUNDS = 1000
MAX_WINDOW = 1024
DEFAULT_WINDOW = 16
_ADAPTIVE_KEYS = {"rounds": Format.SWISS, "max_matches": Format.LADDER, "target_ci": Format.LADDER,
                  "window": Format.LADDER, "seeding": Format.KNOCKOUT}


def _parse_adaptive(doc: Doc, top: dict[str, tuple[Node, Node]], fmt: Format, sides: int,
                    entrants: list[str], base_dir: str) -> dict[str, Any]:
    """The settings of format swiss (``rounds``), ladder (``max_matches``, ``target_ci``,
    ``window``) and knockout (``seeding``: a list, or a results folder to seed by its
    ratings), each refused with another format."""
    for key, owner in _ADAPTIVE_KEYS.items():
        if key in top and fmt is not owner:
            raise doc.error(top[key][0], key, f"only allowed with format: {owner} (format is {fmt})")
    out: dict[str, Any] = {}
    if fmt is Format.SWISS:
        if "rounds" not in top:
            raise doc.error(top["format"][1], "rounds", f"missing (required with format: swiss); expected 1 to {MAX_ROUNDS}")
        out["rounds"] = doc.integer(top["rounds"][1], "rounds", 1, MAX_ROUNDS)
    elif fmt is Format.LADDER:
        if "max_matches" not in top and "target_ci" not in top:
            raise doc.error(top["format"][1], "max_matches",
                            "missing: format ladder needs max_matches, target_ci or both (when to stop)")
        if "max_matches" in top:
            out["max_matches"] = doc.integer(top["max_matches"][1], "max_matches", 1, MAX_MATCHES)
        if "target_ci" in top:
            node = top["target_ci"][1]
            value = doc.value(node, "target_ci") if isinstance(node, ScalarNode) and node.tag in (INT, FLOAT) else None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 1000:
                raise doc.error(node, "target_ci", f"expected a number of Elo from 1 to 1000 (the 95% interval's "
                                                   f"half-width every bot must reach), got {describe(node)}")
            out["target_ci"] = float(value)
        out["window"] = (doc.integer(top["window"][1], "window", 0, MAX_WINDOW) if "window" in top
                         else DEFAULT_WINDOW)
    elif fmt is Format.KNOCKOUT:
        if sides != 2:
            raise doc.error(top["format"][1], "format", f"knockout plays one side against another: it needs 2 sides, "
                                                        f"this table has {sides}")
        out["seeding"] = tuple(entrants)
        if "seeding" in top and isinstance(top["seeding"][1], ScalarNode):
            folder = doc.string(top["seeding"][1], "seeding", "a results folder (seeds by its ratings) or the "
                                "entrants in seeding order, best first")
            out["seeding_from"] = os.path.normpath(os.path.join(base_dir, os.path.expanduser(folder)))
        elif "seeding" in top:
            node = top["seeding"][1]
            items = doc.sequence(node, "seeding", "the entrants in seeding order, best first")
            order = [doc.choice(item, f"seeding[{i}]", tuple(entrants)) for i, item in enumerate(items)]
            if sorted(order) != sorted(entrants):
                raise doc.error(node, "seeding", f"expected every entrant once ({some(entrants)}), got {len(order)} "
                                                 f"names")
            out["seeding"] = tuple(order)
    return out


def _parse_sprt(doc: Doc, top: dict[str, tuple[Node, Node]], team_mode: TeamMode, entrants: list[str],
                duplicate: bool) -> SprtParams:
    """``format: sprt``: its ``sprt:`` mapping, and two sides (two sides of fixed members are
    checked before) that play every deal from both seats."""
    from arena.sprt import MAPPING_KEYS, SprtParamError, SprtParams

    format_node = top["format"][1]
    if len(entrants) != 2:
        what = "teams" if team_mode is TeamMode.FIXED else "bots"
        raise doc.error(top[what][1], what, f"format sprt tests exactly 2 {what} (the candidate first, then the "
                                            f"baseline), got {len(entrants)}")
    if not duplicate:
        raise doc.error(top["duplicate"][1], "duplicate",
                        "format sprt plays every deal from both seats (a pair); duplicate: false is not allowed")
    if "matches_per_pairing" in top:
        raise doc.error(top["matches_per_pairing"][0], "matches_per_pairing",
                        "not used with format: sprt: the test plays pairs until it stops (sprt.max_pairs caps them)")
    if "sprt" not in top:
        raise doc.error(format_node, "sprt",
                        "missing (required with format: sprt): a mapping with elo0 and elo1 (docs/SPRT.md)")
    node = top["sprt"][1]
    fields = doc.mapping(node, "sprt", MAPPING_KEYS)
    data: dict[str, Any] = {}
    for name, (_, value_node) in fields.items():
        if not isinstance(value_node, ScalarNode):
            raise doc.error(value_node, f"sprt.{name}", f"expected a number or a word, got {describe(value_node)}")
        data[name] = doc.value(value_node, f"sprt.{name}")
    try:
        params = SprtParams.from_mapping(data)
    except SprtParamError as exc:
        where = fields.get(exc.parameter)
        reason = "missing (required)" if where is None and exc.reason == "required" else exc.reason
        raise doc.error(where[1] if where else node, f"sprt.{exc.parameter}", reason) from None
    if params.max_pairs is not None and params.max_pairs > SPRT_MAX_PAIRS:
        raise doc.error(fields["max_pairs"][1], "sprt.max_pairs",
                        f"at most {SPRT_MAX_PAIRS:,} pairs (the size limit of a results folder), got {params.max_pairs:,}")
    return params


def _bots_needed(mode: Mode, team_mode: TeamMode, players: int, sides: int) -> int:
    if mode is Mode.PAIRS and team_mode is TeamMode.ROTATING:
        return players  # every seat a different bot
    return sides


def _parse_rules(doc: Doc, item: tuple[Node, Node] | None) -> Rules:
    if item is None:
        return Rules()
    node = item[1]
    if isinstance(node, ScalarNode) and node.tag == NULL:
        return Rules()
    if not isinstance(node, MappingNode):
        raise doc.error(node, "rules", f"expected a mapping of rule options, got {describe(node)}")
    nodes = doc.mapping(node, "rules", None)
    data: dict[str, Any] = {}
    for name, (_, value_node) in nodes.items():
        if name not in RULE_OPTIONS:
            data[name] = None  # Rules.from_dict refuses the key before it looks at any value
        elif not isinstance(value_node, ScalarNode):
            # Every option is one scalar: a list or mapping is refused unread.
            raise doc.error(value_node, f"rules.{name}", f"expected {RULE_OPTIONS[name]}, got {describe(value_node)}")
        else:
            data[name] = doc.value(value_node, f"rules.{name}")
    try:
        return Rules.from_dict(data)
    except OptionError as exc:
        if exc.key not in nodes:
            raise doc.error(node, "rules", exc.expected) from None
        key_node, value_node = nodes[exc.key]
        if exc.key in RULE_OPTIONS:
            # A bad value is the value's fault, shown as an excerpt (the rules core quotes it whole).
            raise doc.error(
                value_node, f"rules.{exc.key}", f"expected {RULE_OPTIONS[exc.key]}, got {describe(value_node)}"
            ) from None
        raise doc.error(key_node, f"rules.{exc.key}", exc.expected) from None
    except (TypeError, ValueError) as exc:
        raise doc.error(node, "rules", str(exc)) from None


def _parse_table(doc: Doc, top: dict[str, tuple[Node, Node]], mode: Mode) -> tuple[int, int]:
    if mode is Mode.SINGLE:
        if "team_size" in top:
            raise doc.error(top["team_size"][0], "team_size", "only allowed with mode: pairs")
        if "teams" in top:
            raise doc.error(top["teams"][0], "teams", "only allowed with mode: pairs")
        if "players" not in top:
            return 2, 1
        node = top["players"][1]
        short_int = isinstance(node, ScalarNode) and node.tag == INT and len(node.value) <= MAX_NUMBER_CHARS
        if short_int and doc.value(node, "players") == 5:
            raise doc.error(
                node, "players", "5 players cannot play (36 cards do not split into rounds of 15); expected 2, 3 or 4"
            )
        players = doc.integer(node, "players", 2, 4, allowed="2, 3 or 4 (players alone; use mode: pairs for teams)")
        return players, 1
    players = 4
    if "players" in top:
        node = top["players"][1]
        players = doc.integer(node, "players", 4, 6, allowed="4 or 6 (with mode: pairs)")
        if players not in PLAYERS_PAIRS:
            raise doc.error(node, "players", f"expected 4 or 6 (with mode: pairs), got {players}")
    team_size = 2
    if "team_size" in top:
        node = top["team_size"][1]
        allowed = "2 or 3 (with 6 players)" if players == 6 else "2 (with 4 players)"
        team_size = doc.integer(node, "team_size", 2, 3 if players == 6 else 2, allowed=allowed)
    try:
        Seating.pairs(players=players, team_size=team_size)
    except SeatingError as exc:
        raise doc.error(top.get("players", top.get("team_size", (None, None)))[1], "players", str(exc)) from None
    return players, team_size


def _parse_bots(doc: Doc, node: Node, base_dir: str, top_limits: dict[str, Any],
                writable_nodes: dict[str, tuple[str, list[Node]]], top_clock: Clock | None) -> tuple[BotConfig, ...]:
    items = doc.sequence(node, "bots", "bots (each a mapping with name and cmd)")
    if not items:
        raise doc.error(node, "bots", "expected a non-empty list of bots")
    bots: list[BotConfig] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        key = f"bots[{i}]"
        fields = doc.mapping(item, key, BOT_KEYS)
        for req in ("name", "cmd"):
            if req not in fields:
                raise doc.error(item, f"{key}.{req}", "missing (required)")
        name_node = fields["name"][1]
        name = doc.string(name_node, f"{key}.name", _NAME_ALLOWED)
        if not _NAME_RE.match(name):
            raise doc.error(name_node, f"{key}.name", f"expected {_NAME_ALLOWED}, got {describe(name_node)}")
        if name in seen:
            raise doc.error(
                name_node, f"{key}.name", f"duplicate bot name {name!r} (already bots[{seen[name]}]); names must be unique"
            )
        seen[name] = i
        cmd = _parse_cmd(doc, fields["cmd"][1], f"{key}.cmd")
        cwd = (
            doc.string(fields["cwd"][1], f"{key}.cwd", "a folder path (relative to the tournament file)")
            if "cwd" in fields
            else "."
        )
        build_cmd = _parse_cmd(doc, fields["build"][1], f"{key}.build") if "build" in fields else None
        build, source, inputs = parse_build_keys(doc, fields, key, base_dir, build_cmd)
        resolved = os.path.normpath(os.path.join(base_dir, os.path.expanduser(cwd)))
        # A source bot's cwd is in a checkout not made yet; a built bot's program may not be
        # built yet: sources.py and build.py check them once they are there.
        if source is None and not os.path.isdir(resolved):
            raise doc.error(
                fields["cwd"][1] if "cwd" in fields else item,
                f"{key}.cwd",
                f"expected an existing folder, but {resolved} is not one",
            )
        env = _parse_env(doc, fields["env"][1], f"{key}.env") if "env" in fields else ()
        pass_env = _parse_pass_env(doc, fields["pass_env"][1], f"{key}.pass_env") if "pass_env" in fields else ()
        if build is None and source is None:
            doc.cmd_nodes.append((fields["cmd"][1], f"{key}.cmd", cmd, resolved, dict(env)))
        limits: dict[str, int | None] = {}
        for limit, low in (("startup_ms", 1), ("move_ms", 1), ("bank_ms", 0)):
            limits[limit] = (
                doc.integer(
                    fields[limit][1],
                    f"{key}.{limit}",
                    low,
                    MAX_MS,
                    allowed=f"a whole number of milliseconds from {low} to {MAX_MS}",
                )
                if limit in fields
                else None
            )
        own = _parse_limits(doc, fields["limits"][1], f"{key}.limits", writable_nodes) if "limits" in fields else {}
        if "writable" in top_limits and "writable" not in own:
            writable_nodes[f"{key}.limits"] = writable_nodes["limits"]
        resources = tuple(sorted({**top_limits, **own}.items()))
        clock = doc.member(fields["clock"][1], f"{key}.clock", Clock) if "clock" in fields else top_clock
        bots.append(
            BotConfig(name, cmd, cwd, env, clock=clock, base_dir=base_dir, build=build, source=source, limits=resources,
                      pass_env=pass_env, inputs=inputs, **limits)
        )
        if inputs and source is None:
            # A built bot's are checked when it builds (build.py); a source bot's in its checkout.
            _, unmatched = match_inputs(inputs, resolved, written_folders(bots[-1]))
            if unmatched:
                raise doc.error(fields["inputs"][1], f"{key}.inputs", unmatched_text(unmatched[0], resolved))
    return tuple(bots)


def _parse_limits(doc: Doc, node: Node, key: str, writable_nodes: dict[str, tuple[str, list[Node]]]) -> dict[str, Any]:
    """A ``limits:`` mapping (docs/TOURNAMENTS.md): the resource limits it sets. The nodes
    of its ``writable`` go into ``writable_nodes[key]``."""
    out: dict[str, Any] = {}
    for name, (_, value_node) in doc.mapping(node, key, ResourceLimits.keys()).items():
        path = f"{key}.{name}"
        value: Any
        if name == "writable":
            items = doc.sequence(value_node, path, "folder paths")
            value = tuple(doc.string(item, f"{path}[{i}]", "a folder path") for i, item in enumerate(items))
            writable_nodes[key] = (key, items)
        else:
            value = doc.value(value_node, path) if isinstance(value_node, ScalarNode) else None
        if not ResourceLimits.valid(name, value):
            raise doc.error(value_node, path, f"expected {ResourceLimits.expected(name)}, got {describe(value_node, value)}")
        out[name] = value
    return out


def _refuse_writable(doc: Doc, bots: tuple[BotConfig, ...], writable_nodes: dict[str, tuple[str, list[Node]]],
                     protected: tuple[Protected, ...]) -> None:
    """Refuse a ``writable`` folder no bot may have (arena.tournament.grants)."""
    for i, bot in enumerate(bots):
        key = f"bots[{i}].limits"
        for j, (path, folder) in enumerate(writable_folders(bot)):
            owner, nodes = writable_nodes[key]
            node, where = nodes[j], f"{owner}.writable[{j}]"
            if folder is None:
                if leads_up(os.path.join(bot.cwd, path)):
                    raise doc.error(node, where, f"expected a folder inside the repository (bot {bot.name!r} runs from "
                                                 f"a checkout of it), but {path} leads out of it")
                continue
            why = writable_refusal(folder, protected)
            if why:
                raise doc.error(node, where, why + (f" (for bot {bot.name!r})" if owner == "limits" else ""))


def _parse_cmd(doc: Doc, node: Node, key: str) -> str | tuple[str, ...]:
    """A command string (run as the harness runs it: split, or through /bin/sh if it uses
    shell syntax) or an argv list; kept as written so the fingerprint is machine-independent."""
    allowed = "a command line (a string) or a non-empty list of strings"
    cmd: str | tuple[str, ...]
    if isinstance(node, ScalarNode):
        if node.tag != STR or not node.value.strip():
            raise doc.error(node, key, f"expected {allowed}, got {describe(node)}")
        cmd = node.value
    elif isinstance(node, SequenceNode) and node.value:
        parts = []
        for j, part in enumerate(node.value):
            # A number is an argument as written (--depth 3); never converted.
            if not isinstance(part, ScalarNode) or part.tag not in (STR, INT, FLOAT) or not part.value:
                raise doc.error(part, f"{key}[{j}]", f"expected a non-empty string, got {describe(part)}")
            parts.append(part.value)
        cmd = tuple(parts)
    else:
        raise doc.error(node, key, f"expected {allowed}, got {describe(node)}")
    try:
        split_command(expand_python(cmd, "python3"))
    except BotSpecError as exc:
        raise doc.error(node, key, str(exc)) from None
    return cmd


_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # an environment variable's name, in env: and pass_env:


def _parse_env(doc: Doc, node: Node, key: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(node, MappingNode):
        raise doc.error(node, key, f"expected a mapping of variable names to values, got {describe(node)}")
    out: list[tuple[str, str]] = []
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag != STR:
            raise doc.error(key_node, key, f"expected a variable name (letters, digits, '_'), got {describe(key_node)}")
        var = key_node.value
        path = f"{key}.{var}"
        if not _VAR_NAME.fullmatch(var):
            raise doc.error(key_node, path, "expected a variable name (letters, digits, '_')")
        if not isinstance(value_node, ScalarNode) or value_node.tag == NULL:
            raise doc.error(value_node, path, f"expected a text, number or boolean value, got {describe(value_node)}")
        out.append((var, value_node.value))
    return tuple(sorted(out))


def _parse_pass_env(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    allowed = "a list of variable names (letters, digits, '_') of the arena's environment"
    if not isinstance(node, SequenceNode):
        raise doc.error(node, key, f"expected {allowed}, got {describe(node)}")
    names: list[str] = []
    for i, item in enumerate(node.value):
        if not isinstance(item, ScalarNode) or item.tag != STR or not _VAR_NAME.fullmatch(item.value):
            raise doc.error(item, f"{key}[{i}]", f"expected a variable name (letters, digits, '_'), got {describe(item)}")
        names.append(item.value)
    return tuple(sorted(set(names)))


def _parse_teams(
    doc: Doc, top: dict[str, tuple[Node, Node]], mode: Mode, bot_names: list[str], team_size: int
) -> tuple[TeamMode, tuple[TeamConfig, ...]]:
    if mode is Mode.SINGLE or "teams" not in top:
        return TeamMode.CLONES, ()
    node = top["teams"][1]
    if isinstance(node, ScalarNode):
        if node.tag != STR or node.value not in ("clones", "rotating"):
            raise doc.error(
                node,
                "teams",
                f"expected clones, rotating, or a list of fixed teams (each with name and members), got {describe(node)}",
            )
        return TeamMode(node.value), ()
    items = doc.sequence(node, "teams", "fixed teams (each with name and members), or clones, or rotating")
    teams: list[TeamConfig] = []
    seen: set[str] = set()
    used: dict[str, str] = {}
    names = tuple(bot_names)
    for i, item in enumerate(items):
        key = f"teams[{i}]"
        fields = doc.mapping(item, key, TEAM_KEYS)
        for req in TEAM_KEYS:
            if req not in fields:
                raise doc.error(item, f"{key}.{req}", "missing (required)")
        name = doc.string(fields["name"][1], f"{key}.name", _NAME_ALLOWED)
        if not _NAME_RE.match(name):
            raise doc.error(fields["name"][1], f"{key}.name", f"expected {_NAME_ALLOWED}, got {describe(fields['name'][1])}")
        if name in seen:
            raise doc.error(fields["name"][1], f"{key}.name", f"duplicate team name {name!r}; names must be unique")
        seen.add(name)
        member_nodes = doc.sequence(fields["members"][1], f"{key}.members", f"{team_size} bot names")
        if len(member_nodes) != team_size:
            raise doc.error(
                fields["members"][1], f"{key}.members", f"expected {team_size} bot names (team_size), got {len(member_nodes)}"
            )
        members = tuple(doc.choice(m, f"{key}.members[{j}]", names) for j, m in enumerate(member_nodes))
        for j, member in enumerate(members):
            # A bot twice in one team, or in two teams that may meet, could not be rated.
            if member in members[:j]:
                raise doc.error(
                    member_nodes[j],
                    f"{key}.members[{j}]",
                    f"bot {member!r} is twice in this team; use teams: clones for teams of copies",
                )
            if member in used:
                raise doc.error(
                    member_nodes[j],
                    f"{key}.members[{j}]",
                    f"bot {member!r} is already in team {used[member]!r}; a bot may be in one fixed team only",
                )
            used[member] = name
        teams.append(TeamConfig(name, members))
    return TeamMode.FIXED, tuple(teams)


def _parse_max_failed(doc: Doc, item: tuple[Node, Node] | None) -> int | None:
    if item is None:
        return None
    fields = doc.mapping(item[1], "failures", FAILURE_KEYS)
    if "max_failed_matches" not in fields:
        return None
    return doc.integer(fields["max_failed_matches"][1], "failures.max_failed_matches", 0, None,
                       allowed="a whole number of matches >= 0 (0: any bot failure fails the run)")


def _parse_failures(doc: Doc, item: tuple[Node, Node] | None) -> FailurePolicy:
    if item is None:
        return FailurePolicy()
    node = item[1]
    fields = doc.mapping(node, "failures", FAILURE_KEYS)
    policy = doc.member(fields["policy"][1], "failures.policy", Policy) if "policy" in fields else Policy.LOSS
    if "strikes" in fields:
        if policy is not Policy.SUBSTITUTE:
            raise doc.error(fields["strikes"][0], "failures.strikes", "only allowed with policy: substitute")
        strikes = doc.integer(fields["strikes"][1], "failures.strikes", 1, 1000)
    else:
        strikes = DEFAULT_STRIKES
    return FailurePolicy(policy, strikes)


def _git_folders(folder: str) -> list[str]:
    """The git folder of the repository ``folder`` is in: ``.git``, or for a worktree its
    ``.git`` file and the folders that file leads to."""
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return [dot_git]
        if os.path.isfile(dot_git):
            found = [dot_git]
            try:
                with open(dot_git, encoding="utf-8") as f:
                    line = f.readline().strip()
            except (OSError, UnicodeDecodeError):
                return found
            if line.startswith("gitdir:"):
                private = os.path.join(folder, line[len("gitdir:"):].strip())
                found.append(private)
                try:
                    with open(os.path.join(private, "commondir"), encoding="utf-8") as f:
                        found.append(os.path.normpath(os.path.join(private, f.readline().strip())))
                except (OSError, UnicodeDecodeError):
                    pass
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return []
        folder = parent
