"""Set-up shared by the whole test session.

Some tests run bots that are built from source and ignored by git (``bots/c/firstmove.bin``).
They are built here, once per session and before any test, by the same build step a
tournament uses (the ``build:`` keys of tournaments/big.yaml), so that every test file
passes alone, in any subset and in any order, on a fresh clone.
"""

from pathlib import Path

import pytest

from arena.tournament.build import BuildReport, run_builds
from arena.tournament.config import load_config

ROOT = Path(__file__).resolve().parent.parent

# Bots of tournaments/big.yaml that tests run by path.
NEEDED = ("c-firstmove",)


@pytest.fixture(scope="session", autouse=True)
def built_bots(tmp_path_factory: pytest.TempPathFactory) -> BuildReport:
    # A build cache of the session's own, so that tests leave none in the tree; the
    # build itself takes a fraction of a second.
    folder = tmp_path_factory.mktemp("session-builds")
    config = load_config(ROOT / "tournaments" / "big.yaml")
    return run_builds(config, str(folder / "logs"), jobs=1, cache_dir=str(folder / "cache"), bots=NEEDED)
