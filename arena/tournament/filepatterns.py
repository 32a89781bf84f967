"""File patterns (``inputs:``) matched in a folder a bot's author made.

As the standard ``glob.glob(..., recursive=True)`` matches them (``*``, ``?`` and ``[...]`` within
a name, names starting with a dot only when the pattern's do, ``**`` for any depth), but ``**``
enters each folder once: a folder that links back to itself (``ln -s . again``, ``ln -s .. up``)
made the standard glob walk every path the kernel resolves, 2**40 of them with two such links.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase

_MAGIC = re.compile(r"[*?[]")


def glob_files(pattern: str, cwd: str) -> list[str]:
    """The regular files ``pattern`` (relative to ``cwd``, or absolute) matches, as paths joined
    to ``cwd`` as the standard glob gives them, sorted."""
    full = os.path.join(cwd, pattern)
    base = os.sep if full.startswith(os.sep) else os.curdir
    parts = [part for part in full.split(os.sep) if part]
    found = {path for path in _match(base, parts) if os.path.isfile(path)}
    return sorted(found)


def _match(base: str, parts: list[str]) -> Iterator[str]:
    if not parts:
        yield base
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        for folder in _folders_below(base):
            yield from _match(folder, rest or ["*"])
    elif _MAGIC.search(head):
        for name in _names(base):
            if (not name.startswith(".") or head.startswith(".")) and fnmatchcase(name, head):
                path = os.path.join(base, name)
                if not rest or os.path.isdir(path):
                    yield from _match(path, rest)
    else:
        path = os.path.join(base, head)
        if os.path.isdir(path) if rest else os.path.lexists(path):
            yield from _match(path, rest)


def _folders_below(base: str) -> Iterator[str]:
    """``base`` and every folder below it whose name does not start with a dot, each real folder
    once (the first path to it, in sorted order), following links to folders."""
    seen: set[tuple[int, int]] = set()
    stack = [base]
    while stack:
        folder = stack.pop()
        try:
            info = os.stat(folder)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        yield folder
        subfolders = [os.path.join(folder, name) for name in _names(folder) if not name.startswith(".")]
        stack.extend(reversed([path for path in subfolders if os.path.isdir(path)]))


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []
