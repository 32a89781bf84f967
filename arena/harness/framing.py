"""A bot's stdout as lines: read non-blocking under a deadline, each line capped.

The bot is untrusted, so the framing is where its output is bounded: a line at most ``limit``
bytes long (a 100 MB line is refused after the first chunk past the cap, never held in
memory), and every wait ends at its deadline whatever the bot sends: an unfinished line that
keeps coming in small pieces does not push it back. ``BotProcess`` (``arena.harness.botproc``)
owns one reader per process it starts; the process, its exit and its other pipes stay its own.
"""

from __future__ import annotations

import os
import select
import time
from collections import deque
from collections.abc import Callable

from arena.harness.protocol import BotFailure, Termination

READ_CHUNK = 1 << 16
_monotonic = time.monotonic


class LineReader:
    """The lines of one pipe (``fd``, non-blocking), at most ``limit`` bytes each.

    ``lines`` holds the whole lines read and not yet taken, ``buf`` the start of the next; a
    caller that reads the pipe itself (``BotProcess.decide``'s one read per decision) hands
    what it read to ``take``. ``gone(when)`` is the owner's failure for an output that ended
    (or could not be read), raised as it is. ``refused`` says why no more lines will come from
    this reader once it has refused one (``"oversized line"``), else None."""

    __slots__ = ("fd", "limit", "lines", "buf", "poll", "refused", "_gone")

    def __init__(self, fd: int, limit: int, gone: Callable[[str], BotFailure]) -> None:
        self.fd = fd
        self.limit = limit
        self.lines: deque[bytes] = deque()
        self.buf = bytearray()
        self.poll = select.poll()
        self.poll.register(fd, select.POLLIN)
        self.refused: str | None = None
        self._gone = gone

    def line(self, deadline: float) -> bytes:
        """The next line (without its newline), by ``deadline``."""
        lines = self.lines
        poll = self.poll
        while not lines:
            # Wait, then read: a read that finds the pipe empty costs more (an exception) than
            # the wait, and a reply is seldom there the moment its request is written. Whatever
            # is there is taken, even past the deadline (poll(0) then only looks).
            remaining = deadline - _monotonic()
            if not poll.poll(remaining * 1000.0 + 0.5 if remaining > 0 else 0):
                if remaining <= 0:
                    raise BotFailure(Termination.TIMEOUT, "no reply before the deadline")
                continue
            self.take(self.chunk(), deadline)
        return lines.popleft()

    def chunk(self) -> bytes:
        """What the pipe holds, once poll said there is something (b"" for nothing yet)."""
        try:
            chunk = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:  # woken for nothing
            return b""
        except OSError as exc:
            raise self._gone(f"(read error {exc.errno})") from None
        if not chunk:
            raise self._gone("")
        return chunk

    def take(self, chunk: bytes, deadline: float) -> None:
        """Split what was read into whole lines (``lines``) and the start of the next (``buf``),
        refusing a line over the limit as soon as it is, and an unfinished line past the
        deadline (one that keeps coming in small pieces never waits on poll)."""
        buf = self.buf
        lines = self.lines
        limit = self.limit
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if buf:
                buf += chunk[start:end]
                line = bytes(buf)
                buf.clear()
            else:
                line = chunk[start:end]
            if len(line) > limit:
                self._oversized(len(line))
            lines.append(line)
            start = end + 1
        if start < len(chunk):
            buf += chunk[start:]
            if len(buf) > limit:
                self._oversized(len(buf), partial=True)
        if not lines and _monotonic() > deadline:
            detail = f" ({len(buf)} bytes, no newline)" if buf else ""
            raise BotFailure(Termination.TIMEOUT, f"no reply before the deadline{detail}")

    def _oversized(self, size: int, partial: bool = False) -> None:
        self.buf = bytearray()
        self.lines.clear()
        self.refused = "oversized line"
        more = "+ (unfinished)" if partial else ""
        raise BotFailure(Termination.OVERSIZED_LINE, f"line of {size}{more} bytes, the limit is {self.limit}")

    def close(self) -> None:
        """Close the pipe; the lines already read stay readable."""
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1
