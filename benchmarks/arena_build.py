"""Which arena a benchmark measures: where the imported package is, and which of its modules
run compiled. ``pip install .`` compiles the referee's hot path and the rules core's hand
(setup.py); an editable install or a bare checkout runs every module as Python."""

from __future__ import annotations

import importlib.machinery
from pathlib import Path


def arena_build() -> str:
    """The imported arena's folder, and its compiled modules or ``pure Python``."""
    import arena

    folder = Path(arena.__file__).parent
    compiled = sorted({path.name.split(".")[0] for suffix in importlib.machinery.EXTENSION_SUFFIXES
                       for path in folder.rglob(f"*{suffix}")})
    return f"{folder} ({'compiled: ' + ', '.join(compiled) if compiled else 'pure Python'})"
