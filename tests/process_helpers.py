"""How tests start the arena as a command: with the signal dispositions a terminal gives it."""

from __future__ import annotations

import signal


def as_from_a_terminal() -> None:
    """``preexec_fn`` for an arena the test will stop: SIGINT and SIGHUP at their defaults.

    A shell starts background jobs with SIGINT ignored, and ``nohup`` ignores SIGHUP; both are
    inherited, and an arena started so rightly keeps ignoring them. A test suite run in the
    background (a CI runner, ``./.ci/run &``) must still see its Ctrl-C reach the arena."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def as_under_nohup() -> None:
    """``preexec_fn``: SIGHUP ignored, as ``nohup`` starts a command."""
    as_from_a_terminal()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
