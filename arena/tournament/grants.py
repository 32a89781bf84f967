"""Grants: what a tournament file lets a bot do beyond its sandbox's defaults.

A stranger's tournament file is as untrusted as its bots, so what it grants is shown before
anything runs (``arena validate``, the header of ``arena run``), one line per bot:

- ``network``: the bot's ``network: true`` (its own or the top-level ``limits``);
- ``writes PATH (outside its folder)``: a ``writable`` folder that is not inside its ``cwd``;
- ``build: CMD``: its ``build:`` command, which runs before the tournament.

A ``writable`` folder that would open to a bot the whole system, the user's home, the
tournament's own files (results, the file, its git folder) or the arena and the Python
running it is refused when the file is read (config.py raises it with the file, line and
key). In a duplicate or team event, ``network`` also gets a warning line: twins of a deal
and clone partners could tell each other their cards, and nothing in the results shows it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import arena
from arena.harness.resources import ResourceLimits
from arena.harness.seal import within
from arena.printable import printable
from arena.tournament.buildspec import command_text

if TYPE_CHECKING:
    from arena.tournament.config import BotConfig, TournamentConfig

# Written by the system only: a bot granted any folder at or beneath one of these could
# change programs and settings every user runs.
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
                "/sys", "/usr")
# Shared by every program and user: the folder itself is refused (a bot could replace what
# others keep there), a folder made for the bot inside it is its own.
SHARED_FOLDERS = ("/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var", "/var/tmp")

NETWORK_WARNING = "network: true lets clone partners and twins talk: results of this file cannot be trusted"
EXPECTED = "a folder of the bot's own (inside its cwd, or one made for it such as ~/.cache/BOT)"


@dataclass(frozen=True)
class Protected:
    """A path no bot may be granted to write: neither a folder holding it nor, when
    ``within`` is true, a folder inside it."""

    path: str
    what: str
    within: bool = True


def protected_paths(output: str, secrets: Iterable[str]) -> tuple[Protected, ...]:
    """What ``writable`` may not reach: the user's home (a folder inside it is fine), the
    results folder, the tournament's other ``secrets`` (its file, its git folder), the
    arena's own code and the Python environment running it."""
    home = os.path.expanduser("~")
    found = [Protected(home, "your home folder", within=False), Protected(output, "the tournament's results folder")]
    found += [Protected(path, "the tournament file" if os.path.isfile(path) else "the tournament file's git folder")
              for path in secrets if path != output]
    found += [Protected(os.path.dirname(os.path.abspath(arena.__file__)), "the arena's own code"),
              Protected(sys.prefix, "the Python environment running the arena")]
    return tuple(found)


def writable_refusal(folder: str, protected: Sequence[Protected]) -> str | None:
    """Why no bot may be granted writing beneath ``folder`` (absolute), or None. Links are
    followed, as the kernel follows them when the sandbox opens the folder."""
    for path in dict.fromkeys((os.path.normpath(folder), os.path.realpath(folder))):
        if path == "/":
            return f"expected {EXPECTED}, but / is the whole system"
        for tree in SYSTEM_TREES:
            if within(path, tree) or within(path, os.path.realpath(tree)):
                return f"expected {EXPECTED}, but {path} is a system folder"
        for guarded in protected:
            for where in dict.fromkeys((os.path.normpath(guarded.path), os.path.realpath(guarded.path))):
                if where == path:
                    return f"expected {EXPECTED}, but {path} is {guarded.what}"
                if within(where, path):
                    return f"expected {EXPECTED}, but {path} holds {guarded.what} ({where})"
                if guarded.within and within(path, where):
                    return f"expected {EXPECTED}, but {path} is inside {guarded.what} ({where})"
        if path in SHARED_FOLDERS:
            return f"expected {EXPECTED}, but {path} is shared by every program (a folder made inside it is fine)"
    return None


def writable_folders(bot: BotConfig, paths: Sequence[str] | None = None) -> list[tuple[str, str | None]]:
    """Each ``writable`` path of the bot (``paths``, else its limits'), with the absolute
    folder the sandbox will open; None for a path relative to a bot from a revision, whose
    checkout is not made yet (it leads out of the checkout if ``leads_up`` from the repo's
    folder, out of the bot's if ``leads_up`` from its cwd)."""
    paths = list(paths if paths is not None else dict(bot.limits).get("writable", ()))
    if bot.source is not None and bot.source.commit is None:
        absolute = [p for p in paths if os.path.isabs(os.path.expanduser(p))]
        found = dict(zip(absolute, ResourceLimits(writable=tuple(absolute)).writable_folders("/"), strict=True))
        return [(p, found.get(p)) for p in paths]
    return list(zip(paths, ResourceLimits(writable=tuple(paths)).writable_folders(bot.resolved_cwd), strict=True))


def written_folders(bot: BotConfig) -> list[str]:
    """The bot's ``writable`` folders known now, absolute: what it writes as it plays, which
    changes with every run and so is never one of its inputs."""
    return [folder for _, folder in writable_folders(bot) if folder]


def leads_up(path: str) -> bool:
    """Whether a relative path leads out of the folder it is relative to."""
    path = os.path.normpath(path)
    return path == os.pardir or path.startswith(os.pardir + os.sep)


def bot_grants(bot: BotConfig) -> list[str]:
    """What the file grants this bot, as the run header lists it."""
    grants = ["network"] if dict(bot.limits).get("network") is True else []
    for path, folder in writable_folders(bot):
        if folder is None:
            if leads_up(path):
                grants.append(f"writes {printable(path)} of its checkout (outside its folder)")
        elif not within(os.path.realpath(folder), os.path.realpath(bot.resolved_cwd)):
            grants.append(f"writes {printable(folder)} (outside its folder)")
    if bot.build is not None:
        grants.append(f"build: {printable(command_text(bot.build.cmd))}")
    return grants


def grant_lines(config: TournamentConfig) -> list[str]:
    """The grants of every bot that has some (or ``grants: none``), then the warning for
    a network in a duplicate or team event."""
    lines = [f"grants: {bot.name}: {', '.join(grants)}" for bot in config.bots if (grants := bot_grants(bot))]
    networked = [bot.name for bot in config.bots if dict(bot.limits).get("network") is True]
    if networked and (config.duplicate or config.mode == "pairs"):
        lines.append(f"warning: {NETWORK_WARNING} ({', '.join(networked)})")
    return lines or ["grants: none"]
