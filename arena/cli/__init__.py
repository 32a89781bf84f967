"""The command line (typer): the only layer that prints and chooses exit codes.

``arena.cli.app`` holds the application; ``python -m arena.cli`` runs it.

``arena play`` and ``arena run`` start their bots' launcher (a Python of its own) first, before
the command line's own imports, so that the two starts overlap (``containment.prestart``);
``arena run`` and ``arena sprt`` start the server their worker processes are forked from
(``arena.tournament.forkserver``) as early, for the same reason.
"""

import os
import signal
import sys

from arena.cli.starting import interrupted_while_starting

_script = sys.modules.get("__main__")
if _script is not None and getattr(_script, "__spec__", None) is None \
        and os.path.basename(getattr(_script, "__file__", None) or "") == "arena":
    for _sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(_sig) in (signal.default_int_handler, signal.SIG_DFL):  # not one ignored (nohup)
            signal.signal(_sig, interrupted_while_starting)
    # The ``arena`` script is ``python -m arena.cli`` under another name. Said so, a worker process
    # does not run the script again to rebuild a main module it never uses (``multiprocess``
    # re-runs a main module known only by its path, but not a package's ``__main__``): a
    # worker starts without the command line's imports, and without starting a launcher and a
    # fork server of its own below.
    from importlib.machinery import ModuleSpec

    _script.__spec__ = ModuleSpec("arena.cli.__main__", None)

# Never in a worker process that rebuilds its main module (a script run by path that imports
# this): there the parent's launcher and fork server are the ones in use.
_mp = sys.modules.get("multiprocess")
_worker = _mp is not None and (getattr(_mp.current_process(), "_inheriting", False) or _mp.parent_process() is not None)

if sys.argv[1:2] in (["play"], ["run"]) and "--help" not in sys.argv and not _worker:
    from arena.harness.containment import prestart

    prestart()
if sys.argv[1:2] in (["run"], ["sprt"]) and not {"--help", "--dry-run"} & set(sys.argv) and not _worker:
    from arena.tournament.forkserver import prestart as prestart_workers

    prestart_workers()

from arena.cli.app import app, main  # noqa: E402

__all__ = ["app", "main"]
