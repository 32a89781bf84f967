"""The ``build:``, ``inputs:`` and ``source:`` keys of a bot in a tournament file.

Parsed here, into plain values the tournament config carries; what they do is in build.py
(running builds, the build cache) and sources.py (checking out revisions). This module
imports nothing from config.py, which calls it: it reads YAML nodes through the small
reader interface config.py's walker provides.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from yaml.nodes import Node, ScalarNode

from arena.tournament.filepatterns import glob_files
from arena.tournament.folder_names import STORE_FILE
from arena.tournament.sources import SourceSpec

SOURCE_KEYS = ("repo", "rev")


@dataclass(frozen=True)
class BuildSpec:
    """A bot's build: a command run in the bot's cwd before the tournament (as written:
    ``$PYTHON`` unexpanded), and the files whose content decides whether it must run again
    (globs relative to the cwd; empty: the files the command names)."""

    cmd: str | tuple[str, ...]
    inputs: tuple[str, ...] = ()


def match_inputs(patterns: tuple[str, ...], cwd: str, written: Sequence[str] = ()) -> tuple[set[str], list[str]]:
    """The files ``inputs:`` patterns match (globs relative to ``cwd``, ``**`` for any depth),
    as normalized paths relative to ``cwd``; and the patterns that matched nothing. Files that
    change with every run are never a bot's: a results folder's (a tournament file beside the
    bot writes its results there), and those below the folders of ``written`` (absolute: the
    bot's ``writable`` folders, where it keeps what it learns)."""
    found: set[str] = set()
    unmatched: list[str] = []
    stores: dict[str, bool] = {}
    for pattern in patterns:
        matches = [os.path.normpath(os.path.relpath(path, cwd)) for path in glob_files(pattern, cwd)]
        matches = [path for path in matches
                   if not _in_results_folder(path, cwd, stores) and not _below_any(os.path.join(cwd, path), written)]
        if not matches:
            unmatched.append(pattern)
        found.update(matches)
    return found, unmatched


def _below_any(path: str, folders: Sequence[str]) -> bool:
    path = os.path.normpath(path)
    return any(os.path.commonpath((path, folder)) == folder for folder in folders)


def _in_results_folder(path: str, cwd: str, stores: dict[str, bool]) -> bool:
    """Whether a folder of ``path`` (relative to ``cwd``) holds a results store; ``stores``
    remembers the folders looked at."""
    folder = os.path.dirname(path)
    while folder and folder not in (os.curdir, os.pardir) and not folder.endswith(os.sep + os.pardir):
        if folder not in stores:
            stores[folder] = os.path.isfile(os.path.join(cwd, folder, STORE_FILE))
        if stores[folder]:
            return True
        folder = os.path.dirname(folder)
    return False


def unmatched_text(pattern: str, cwd: str) -> str:
    """What is wrong with an ``inputs:`` pattern that matches no file (``match_inputs``)."""
    return f"the pattern {pattern!r} matches no file in {cwd}"


def command_text(cmd: str | tuple[str, ...]) -> str:
    """A command as one line: as written, or its arguments quoted as a shell would need."""
    return cmd if isinstance(cmd, str) else shlex.join(cmd)


def bot_keys_dict(build: BuildSpec | None, source: SourceSpec | None, inputs: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keys as a bot's dict (the tournament's description) has them: only those given,
    so a bot without them describes (and fingerprints) exactly as before they existed.
    ``inputs``: an unbuilt bot's (a built bot's are its build's)."""
    out: dict[str, Any] = {}
    if build is not None:
        out["build"] = build.cmd if isinstance(build.cmd, str) else list(build.cmd)
        if build.inputs:
            out["inputs"] = list(build.inputs)
    elif inputs:
        out["inputs"] = list(inputs)
    if source is not None:
        out["source"] = source.to_dict()
    return out


class NodeReader(Protocol):
    """What config.py's YAML walker offers: typed reads that raise its ConfigError."""

    def error(self, node: Node | None, key: str | None, message: str) -> Exception: ...

    def string(self, node: Node, key: str, allowed: str = ...) -> str: ...

    def sequence(self, node: Node, key: str, what: str) -> list[Node]: ...

    def mapping(self, node: Node, key: str | None, allowed: tuple[str, ...] | None) -> dict[str, tuple[Node, Node]]: ...


def parse_build_keys(
    doc: NodeReader,
    fields: dict[str, tuple[Node, Node]],
    key: str,
    base_dir: str,
    build_cmd: str | tuple[str, ...] | None,
) -> tuple[BuildSpec | None, SourceSpec | None, tuple[str, ...]]:
    """The bot's build, source and inputs, from its ``fields`` (key -> (key node, value
    node)). ``build_cmd`` is its ``build:`` already read as a command (config.py reads
    commands). The inputs are the files the bot is made of besides those its command names
    (globs): a built bot's are its build's (they decide when it runs again) and come back
    empty here; any bot's are part of its identity, so that a change of a module a script
    imports is a new version of the bot."""
    inputs: tuple[str, ...] = ()
    if "inputs" in fields:
        _key_node, node = fields["inputs"]
        what = "file patterns (globs relative to the bot's cwd, e.g. src/**/*.c)"
        items = doc.sequence(node, f"{key}.inputs", what)
        if not items:
            raise doc.error(node, f"{key}.inputs", f"expected a non-empty list of {what}")
        inputs = tuple(doc.string(item, f"{key}.inputs[{j}]", "a file pattern (a glob relative to the bot's cwd)")
                       for j, item in enumerate(items))
    build = BuildSpec(build_cmd, inputs) if build_cmd is not None else None
    if build is not None:
        inputs = ()  # the build's: one place for them
    if "source" not in fields:
        return build, None, inputs

    node = fields["source"][1]
    entries = doc.mapping(node, f"{key}.source", SOURCE_KEYS)
    for required in SOURCE_KEYS:
        if required not in entries:
            raise doc.error(node, f"{key}.source.{required}", "missing (required)")
    repo_node = entries["repo"][1]
    repo = doc.string(repo_node, f"{key}.source.repo", "a folder path (a git repository, relative to the tournament file)")
    resolved = os.path.normpath(os.path.join(base_dir, os.path.expanduser(repo)))
    if not os.path.isdir(resolved):
        raise doc.error(repo_node, f"{key}.source.repo", f"expected a folder holding a git repository, but {resolved} is not one")
    rev_node = entries["rev"][1]
    # Read as written: a commit id such as 1234567 or 2e10 is text, not a number.
    if not isinstance(rev_node, ScalarNode) or not rev_node.value.strip():
        raise doc.error(rev_node, f"{key}.source.rev", "expected a revision: a branch, tag or commit id")
    if "cwd" in fields:
        cwd_node = fields["cwd"][1]
        cwd = cwd_node.value if isinstance(cwd_node, ScalarNode) else ""
        inside = os.path.normpath(cwd)
        if os.path.isabs(os.path.expanduser(cwd)) or inside == ".." or inside.startswith(".." + os.sep):
            raise doc.error(cwd_node, f"{key}.cwd",
                            f"with source, expected a folder inside the repository, relative to {repo}, got {cwd!r}")
    return build, SourceSpec(repo=repo, rev=rev_node.value.strip(), base_dir=base_dir), inputs
