"""The ``arena`` script's first moments: until the command line takes the stop signals over
(``arena.cli.edge``), a stop signal ends the script at once, in one line."""

from __future__ import annotations

import os
import signal


def interrupted_while_starting(signum: int, frame: object) -> None:
    # A Ctrl-C (or SIGTERM) before the command runs, during its imports: nothing is begun that
    # needs an end (a launcher and a fork server started early end with this process), and an
    # exception raised inside an import would print Python's traceback instead of one line.
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    os.write(2, f"interrupted ({name})\n".encode())
    os._exit(128 + signum)


def command_starts() -> None:
    """The command line takes over the stop signals (arena.cli.edge): what the ``arena``
    script set for its imports goes."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is interrupted_while_starting:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
