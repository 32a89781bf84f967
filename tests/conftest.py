"""Set-up shared by the whole test session.

Some tests run bots that are built from source and ignored by git (``bots/c/firstmove.bin``).
They are built here, once per session and before any test, by the same build step a
tournament uses (the ``build:`` keys of tournaments/big.yaml), so that every test file
passes alone, in any subset and in any order, on a fresh clone.
"""

import importlib.util
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from arena.tournament.build import BuildReport, run_builds
from arena.tournament.config import load_config

ROOT = Path(__file__).resolve().parent.parent

# Bots of tournaments/big.yaml that tests run by path.
NEEDED = ("c-firstmove",)


@pytest.fixture(scope="session", autouse=True)
def built_bots(tmp_path_factory: pytest.TempPathFactory) -> BuildReport:
    # A build cache of the session's own, so that tests leave none in the tree; the
    # build itself takes a fraction of a second. Under pytest-xdist the workers share one
    # (their base folders' parent), whose lock keeps two of them from writing the same
    # program at once: one would find the other's half-written file.
    folder = tmp_path_factory.mktemp("session-builds")
    base = tmp_path_factory.getbasetemp()
    cache = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else folder) / "build-cache"
    config = load_config(ROOT / "tournaments" / "big.yaml")
    return run_builds(config, str(folder / "logs"), jobs=1, cache_dir=str(cache), bots=NEEDED)


@pytest.fixture(autouse=True)
def scripted_bots_played_through() -> Iterator[None]:
    """Every scripted bot (tests/zoo/fakebot.py) a test made has reached the end of its script
    by the end of the test (``zoo.helpers.assert_done``)."""
    from zoo import helpers

    helpers.SCRIPTS.clear()
    yield
    made = list(helpers.SCRIPTS)
    helpers.SCRIPTS.clear()
    try:
        for report, steps, checked in made:
            if checked:
                helpers.assert_done(report, steps)
    finally:
        for report, _, _ in made:
            shutil.rmtree(report.parent, ignore_errors=True)


@pytest.fixture
def benchmark_script(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """Load ``benchmarks/NAME.py`` as a module, with its folder on the path as when it runs as a
    script (the scripts share helpers there, such as ``arena_build``)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def unsealed(monkeypatch):
    """A launcher that does not seal its bots, as on a machine without user namespaces: for the
    tests of that containment (Landlock, the subreaper's orphans, a TMPDIR of its own). Sealed
    bots have tests/harness/test_sealed.py."""
    from arena.harness import containment, seal

    containment.shutdown()
    monkeypatch.setenv(seal.SEAL_ENV, "off")
    yield
    containment.shutdown()
