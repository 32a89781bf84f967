"""Rule options (RULES.md) and table shapes, built from plain dicts as a YAML file gives them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from arena.errors import OptionError, SeatingError

INITIAL_TABLE_CHOICES = ("sum15", "sum15_or_30", "subset15", "none")
SEVENS_CHOICES = ("most", "most_tiebreak", "primera")


class LastRoundEscoba(Enum):
    """Option last_round_escoba (RULES.md rule 5): which captures of the hand's last round (the
    round dealt when the stock runs out) may score an escoba. The value is the option's text form
    in a rules dict (JSON true, false or "last_card")."""

    YES = True  # every one
    NO = False  # none (seed 003)
    LAST_CARD = "last_card"  # all but those made with their player's final card of the hand

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"  # code that pastes back, as in a Rules repr

    @classmethod
    def parse(cls, value: Any) -> LastRoundEscoba:
        """The option from its text form; only a bool or the text itself (the number 1 is not true)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, bool):
            return cls.YES if value else cls.NO
        if value == cls.LAST_CARD.value:
            return cls.LAST_CARD
        raise OptionError("last_round_escoba", f"expected {_ESCOBA_WORDS}, got {value!r}")


_ESCOBA_WORDS = "true, false or last_card"

# Old option names, each read as the option that replaced it, with its value (RULES.md).
OLD_NAMES: dict[str, str] = {"last_play_escoba": "last_round_escoba"}


@dataclass(frozen=True)
class Rules:
    """Every option of RULES.md, with its default. Recorded in full in every game log."""

    initial_table: str = "sum15"
    forced_capture: bool = False
    single_capture_priority: bool = False
    renuncio: bool = False
    last_round_escoba: LastRoundEscoba = LastRoundEscoba.YES
    escoba_en_mano: bool = False
    sevens: str = "most"
    all_sevens_bonus: bool = False
    target: int = 21
    max_hands: int = 100

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f.name, getattr(self, f.name))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Rules:
        """Rules as a tournament file, a command line or a bot gives them: the options' text
        forms, an old name read as its new one with the same value."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise OptionError("rules", "expected a mapping of option names to values")
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            name = OLD_NAMES.get(key, key)
            if name not in known:
                raise OptionError(str(key), f"unknown rule option (allowed: {', '.join(sorted(known))})")
            if name in values:
                old = next(o for o, n in OLD_NAMES.items() if n == name)
                raise OptionError("rules", f"{old} is the old name of {name}: give only {name}")
            try:
                values[name] = LastRoundEscoba.parse(value) if name == "last_round_escoba" else value
            except OptionError as exc:
                raise OptionError(str(key), exc.expected) from None
        return cls(**values)

    @classmethod
    def from_record(cls, data: Mapping[str, Any] | None) -> Rules:
        """The rules a stored record (or a stored tournament) was refereed by. Unlike a file's
        ``last_play_escoba``, a record's is not read as ``last_round_escoba`` of the same
        value: it withheld the escoba only from the hand's very last card, which never clears
        the table (the 40 cards add up to 220, every capture removes a multiple of 15), so
        records of either value were refereed as ``last_round_escoba: true`` referees them.
        The rules of a record read before are the same value again (``_FROM_RECORD``)."""
        key: tuple[tuple[str, type, Any], ...] | None = None
        if type(data) is dict:
            key = tuple([(k, type(v), v) for k, v in data.items()])
            try:
                known = _FROM_RECORD.get(key)
            except TypeError:  # a value that is not hashable: refused below
                key = None
            else:
                if known is not None:
                    return known
        rules = cls._from_record(data)
        if key is not None:
            if len(_FROM_RECORD) >= _FROM_RECORD_MOST:
                _FROM_RECORD.clear()
            _FROM_RECORD[key] = rules
        return rules

    @classmethod
    def _from_record(cls, data: Mapping[str, Any] | None) -> Rules:
        if isinstance(data, Mapping) and "last_play_escoba" in data:
            value = data["last_play_escoba"]
            if not isinstance(value, bool) or "last_round_escoba" in data:
                raise OptionError("last_play_escoba", f"expected true or false alone in a record, got {value!r}")
            data = {**{k: v for k, v in data.items() if k != "last_play_escoba"}, "last_round_escoba": True}
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Every option by its text form, as records, the store and the bots' hello carry it."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["last_round_escoba"] = self.last_round_escoba.value
        return out


# The rules of the records read so far, by their options and each value's type (True and 1 are
# equal keys, not equal options): a report or a verification reads the same few sets of rules
# in every one of thousands of records (three times a record), and a ``Rules`` is an immutable
# value. Bounded: records are untrusted, and their rules need not repeat.
_FROM_RECORD: dict[tuple[tuple[str, type, Any], ...], Rules] = {}
_FROM_RECORD_MOST = 256


@dataclass(frozen=True)
class _Flag:
    words = "true or false"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)


@dataclass(frozen=True)
class _Choice:
    choices: tuple[str, ...]

    @property
    def words(self) -> str:
        return "one of " + ", ".join(self.choices)

    def accepts(self, value: Any) -> bool:
        return value in self.choices


@dataclass(frozen=True)
class _Member:
    kind: type[Enum]
    words: str

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.kind)


@dataclass(frozen=True)
class _Range:
    low: int
    high: int

    @property
    def words(self) -> str:
        return f"an integer from {self.low} to {self.high}"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high


# What each option allows: ``_check`` asks it, and its words are the "expected ..." of the error.
_ALLOWED: dict[str, _Flag | _Choice | _Member | _Range] = {
    "initial_table": _Choice(INITIAL_TABLE_CHOICES),
    "forced_capture": _Flag(),
    "single_capture_priority": _Flag(),
    "renuncio": _Flag(),
    "last_round_escoba": _Member(LastRoundEscoba, _ESCOBA_WORDS),
    "escoba_en_mano": _Flag(),
    "sevens": _Choice(SEVENS_CHOICES),
    "all_sevens_bonus": _Flag(),
    "target": _Range(1, 1000),
    "max_hands": _Range(1, 10000),
}

# name -> its allowed values in words (what the YAML reader's messages quote); an old name too,
# with the words of the option it is read as.
RULE_OPTIONS: dict[str, str] = {name: allowed.words for name, allowed in _ALLOWED.items()}
RULE_OPTIONS.update({old: RULE_OPTIONS[new] for old, new in OLD_NAMES.items()})


def _check(name: str, value: Any) -> None:
    allowed = _ALLOWED[name]
    if not allowed.accepts(value):
        raise OptionError(name, f"expected {allowed.words}, got {value!r}")


@dataclass(frozen=True)
class Seating:
    """Who sits where and who plays with whom. Seats are numbered in play order.

    A side is a team (or a lone player); captures, escobas and points are per side.
    """

    players: int
    teams: tuple[tuple[int, ...], ...]
    # Derived in __post_init__, kept for the rules core's hot paths.
    _side_of: tuple[int, ...] = field(init=False, repr=False, compare=False)
    deal_order: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    _next_seat: tuple[int, ...] = field(init=False, repr=False, compare=False)  # per seat, the next in play order

    def __post_init__(self) -> None:
        n = self.players
        if n not in (2, 3, 4, 6):
            why = " (36 cards do not split into rounds of 15)" if n == 5 else ""
            raise SeatingError(f"{n} players is not playable{why}: use 2, 3 or 4 alone, or 4 or 6 in pairs")
        seats = sorted(s for team in self.teams for s in team)
        if seats != list(range(n)):
            raise SeatingError(f"teams {self.teams!r} must place every seat 0..{n - 1} exactly once")
        if n == 6 and len(self.teams) == 6:
            raise SeatingError("6 players must play as 3 teams of 2 or 2 teams of 3")
        sizes = {len(t) for t in self.teams}
        if len(sizes) != 1:
            raise SeatingError(f"teams {self.teams!r} must all have the same size")
        for team in self.teams:
            for s in team:
                if len(team) > 1 and ((s + 1) % n) in team:
                    raise SeatingError(f"partners may not sit next to each other: teams {self.teams!r}")
        object.__setattr__(self, "_side_of", tuple(self._compute_side_of()))
        # deal_order[dealer]: the seats from the one after the dealer, in play order.
        object.__setattr__(self, "deal_order", tuple(
            tuple((dealer + 1 + i) % n for i in range(n)) for dealer in range(n)))
        object.__setattr__(self, "_next_seat", tuple(order[0] for order in self.deal_order))

    def _compute_side_of(self) -> list[int]:
        side_of = [0] * self.players
        for side, team in enumerate(self.teams):
            for s in team:
                side_of[s] = side
        return side_of

    @classmethod
    def alone(cls, players: int) -> Seating:
        if players == 6:
            raise SeatingError("6 players must play in teams (3 teams of 2 or 2 teams of 3)")
        return cls(players, tuple((s,) for s in range(players)))

    @classmethod
    def pairs(cls, players: int = 4, team_size: int = 2) -> Seating:
        if players == 4 and team_size == 2:
            return cls(4, ((0, 2), (1, 3)))
        if players == 6 and team_size == 2:
            return cls(6, ((0, 3), (1, 4), (2, 5)))
        if players == 6 and team_size == 3:
            return cls(6, ((0, 2, 4), (1, 3, 5)))
        raise SeatingError(
            f"no team layout for {players} players in teams of {team_size}: "
            "use 4 players in teams of 2, or 6 in teams of 2 or 3"
        )

    @property
    def sides(self) -> int:
        return len(self.teams)

    @property
    def is_teams(self) -> bool:
        return len(self.teams[0]) > 1

    def side_of(self, seat: int) -> int:
        return self._side_of[seat]

    def seats_of(self, side: int) -> tuple[int, ...]:
        return self.teams[side]

    @property
    def rounds_per_hand(self) -> int:
        return 36 // (3 * self.players)

    def to_dict(self) -> dict[str, Any]:
        return {"players": self.players, "teams": [list(t) for t in self.teams]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Seating:
        try:
            players = int(data["players"])
            teams = data.get("teams")
        except (KeyError, TypeError, ValueError):
            raise SeatingError("seating: expected {'players': N, 'teams': [[seats], ...]}") from None
        key = (players, None if teams is None else tuple(tuple(int(s) for s in t) for t in teams))
        known = _SEATINGS.get(key)
        if known is not None:
            return known
        seating = cls.alone(players) if key[1] is None else cls(players, key[1])
        if len(_SEATINGS) >= _SEATINGS_MOST:
            _SEATINGS.clear()
        _SEATINGS[key] = seating
        return seating


# The seatings read so far (``Seating.from_dict``), by players and teams: a report reads the
# same one four times in each of thousands of records, and a ``Seating`` is an immutable value
# whose every check and derived table would be made again. Bounded: records are untrusted.
_SEATINGS: dict[tuple[int, tuple[tuple[int, ...], ...] | None], Seating] = {}
_SEATINGS_MOST = 64
