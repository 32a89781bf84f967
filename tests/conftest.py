"""Set-up shared by the whole test session.

Some tests run bots that are built from source and ignored by git (``bots/c/firstmove.bin``).
They are built here, once per session and before any test, by the same build step a
tournament uses (the ``build:`` keys of tournaments/big.yaml), so that every test file
passes alone, in any subset and in any order, on a fresh clone.
"""

import importlib.util
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arena.tournament.build import BuildReport, run_builds
from arena.tournament.config import load_config

ROOT = Path(__file__).resolve().parent.parent

# Bots of tournaments/big.yaml that tests run by path.
NEEDED = ("c-firstmove",)

# The longest tests (``pytest --durations=30``, 2026-12-02), longest first, that use no fixture
# wider than a test (of a parametrized test, each case). Under pytest-xdist (-n) a long test that
# starts last holds one worker for its whole length while the others are idle: these start first,
# each on its own, and the other tests follow a module at a time, the largest modules first (as
# pytest-xdist's --dist loadfile), so that a module's shared fixtures are made once, on one
# worker, and the last to start are small.
LONG_FIRST = (
    "tests/test_compiled.py::test_pip_install_compiles_the_hot_path_and_the_hardest_tests_pass_on_it",
    "tests/sprt/test_sprt_run.py::test_kill_9_and_ctrl_c_resume_to_the_same_decision_as_an_uninterrupted_run",
    "tests/test_compiled.py::test_without_a_c_compiler_the_install_goes_on_as_python",
    "tests/test_static.py::test_mypy_finds_no_error_in_the_package",
    "tests/cli/test_demo.py::test_the_demo_ranks_expert_above_greedy_above_random_with_finite_ratings",
    "tests/cli/test_run_cli.py::test_a_changed_python_bot_joins_its_tournament_as_a_new_version_on_the_same_deals",
    "tests/sprt/test_sprt.py::test_decision_is_the_first_crossing_of_the_prefix_llrs",
    "tests/cli/test_bundled_tournaments.py::test_every_bundled_tournament_and_bot_runs_short_with_no_failure",
    "tests/bots/test_playouts.py::test_random_hands_keep_every_invariant",
    "tests/sprt/test_sprt_run.py::test_the_command_with_two_bot_commands_plays_until_it_decides_then_resumes_to_the_same",
    "tests/cli/test_run_cli.py::test_the_example_tournaments_run_from_a_fresh_clone_with_the_readme_commands",
    "tests/tournament/test_runner.py::test_ctrl_c_stops_cleanly_and_prints_the_resume_command",
    "tests/harness/test_scratch.py::test_what_a_killed_worker_and_a_killed_arena_leave_is_gone_after_the_next_start",
)


def _long(nodeid: str) -> bool:
    return nodeid.split("[")[0] in LONG_FIRST


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # After pytest-randomly's shuffle (it reorders before any other plugin); a stable sort, so
    # that the order is the same on every worker, as pytest-xdist requires.
    rank = {nodeid: i for i, nodeid in enumerate(LONG_FIRST)}
    size = Counter(item.nodeid.split("::")[0] for item in items if not _long(item.nodeid))
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(item.nodeid.split("::")[0], i)

    def key(item: pytest.Item) -> tuple[int, int, int]:
        module = item.nodeid.split("::")[0]
        if _long(item.nodeid):
            return 0, rank[item.nodeid.split("[")[0]], 0
        return 1, -size[module], first[module]

    items.sort(key=key)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n`` with the default ``--dist load``: the order above, a module's tests together
    and each long test on its own, handed out as the workers free up."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LongFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if _long(nodeid) else nodeid.split("::")[0]

    config.option.loadscopereorder = False  # keep the collection's order
    return LongFirst(config, log)


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
