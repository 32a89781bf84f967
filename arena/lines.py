"""Reading files line by line with a cap on each line: the one reader of the arena's line files.

A results file, a records file or an export may come from anyone, and one line of it may be
hundreds of MB (or endless: /dev/zero). Read whole, such a line takes many times its size in
memory before anything can refuse it, and an error quoting it is as long. ``capped_lines``
reads at most ``limit + 1`` bytes of a line (``readline(limit + 1)``): a longer line is refused
at that point, with its number, its length so far and a few dozen characters of its start, and
is never held whole. The caps of each kind of file are listed in docs/TOURNAMENTS.md ("Size
caps").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from arena.errors import InputError

QUOTED_CHARS = 40  # what an error quotes of a line: enough to recognise it


class LineTooLongError(InputError):
    """A line longer than its cap; ``line`` is 1-based."""

    def __init__(self, source: str, line: int, limit: int, start: bytes) -> None:
        shown = quote(start.decode("utf-8", "replace"))
        super().__init__(f"{source}:{line}: a line longer than {limit:,} bytes, the cap of this file's lines "
                         f"(it starts {shown})")
        self.source = source
        self.line = line
        self.limit = limit


def quote(text: str, limit: int = QUOTED_CHARS) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _lines(handle: BinaryIO, limit: int, source: str) -> Iterator[tuple[int, bytes | LineTooLongError]]:
    number = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) <= limit or (len(raw) == limit + 1 and raw.endswith(b"\n")):
            yield number, raw
            continue
        yield number, LineTooLongError(source, number, limit, raw[: QUOTED_CHARS * 4])
        del raw
        # Read on: the rest of the line is passed over a piece at a time, never held.
        while (piece := handle.readline(1 << 16)) and not piece.endswith(b"\n"):
            pass


def capped_lines(handle: BinaryIO, limit: int, source: str) -> Iterator[bytes]:
    """The lines of ``handle`` (with their newline), each at most ``limit`` bytes long, the
    newline not counted; a longer one raises ``LineTooLongError`` having read ``limit + 1`` of
    its bytes."""
    for _, raw in _lines(handle, limit, source):
        if isinstance(raw, LineTooLongError):
            raise raw
        yield raw


def capped_lines_numbered(handle: BinaryIO, limit: int, source: str) -> Iterator[tuple[int, bytes | LineTooLongError]]:
    """(line number, line) for each line of ``handle``, as ``capped_lines`` reads them; a line
    over the cap is a ``LineTooLongError`` in its place, and the lines after it are read on (for
    a reader that reports every bad line, as ``arena verify`` does)."""
    return _lines(handle, limit, source)


__all__ = ["QUOTED_CHARS", "LineTooLongError", "capped_lines", "capped_lines_numbered", "quote"]
