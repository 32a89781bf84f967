"""The build a user installs: ``pip install .`` compiles the referee's hot path and the rules
core's hand (setup.py).

The rest of the suite runs on the editable install, where every module is Python. Here the
package is built as ``pip install .`` builds it, and the tests that drive the compiled modules
hardest (golden records under every rule option, the rules core against brute force and its
shortcuts, positions, copies and pickles, the referee's failure handling, the protocol, the
hostile bots) run again on the compiled modules. Without a C compiler the same build must still
install, as Python.

The build here compiles the C at ``-O0`` (``ESCOBA_ARENA_OPT_LEVEL=0``, setup.py), where gcc
takes well under half its time at the default ``-O3`` (about 33 s for the whole wheel instead of
84 s, at load 3.5-5 on 2 cores), and the tests on it take as long. It still proves what this test
claims: mypyc generates the same C from the same source at every level (the level is only
gcc's ``-O``), with the same semantics, so the modules built, what they import, how they fail
and every result the tests check are the same; at ``-O0`` mypyc even turns on its runtime's C
asserts. Only the speed differs, and the ``-O3`` build is what users install and what
benchmarks/ measures.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The compiled modules, as setup.py names them (its one list).
COMPILED = tuple(path.removesuffix(".py") for path in ast.literal_eval(next(
    node.value for node in ast.parse((ROOT / "setup.py").read_text()).body
    if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["COMPILED"])))
COMPILED_MODULES = tuple(path.replace("/", ".") for path in COMPILED)
ON_THE_BUILD = [str(ROOT / "tests" / name) for name in (
    "match/test_golden.py", "match/test_referee.py", "match/test_replay.py", "harness/test_protocol.py", "harness/test_zoo.py",
    "harness/test_botproc.py", "core/test_worked_examples.py", "core/test_game_position.py", "core/test_core_shortcuts.py",
    "core/test_simulation_api.py", "core/test_readme_example.py", "bots/test_playouts.py",
    "core/test_rule_options_effects.py", "bots/test_move_values.py", "analysis/test_analyst_tasks.py",
    # The cpu clock's timeouts (ClockOut, a compiled class raised by the interpreted botproc).
    "harness/test_clocks.py::test_a_bot_at_400_ms_of_cpu_loses_on_time_and_the_failure_says_by_how_much",
    "harness/test_clocks.py::test_a_bot_that_sleeps_is_stopped_by_the_wall_backstop")]


def _no_isolation() -> list[str]:
    """``--no-build-isolation`` where this environment holds what pyproject.toml's [build-system]
    requires (the test extras install it): pip would otherwise install those same versions into
    a new environment for each build, about 20 s of CPU and a download of mypy each time.
    Elsewhere (another mypy or setuptools), the isolated build that ``pip install .`` makes."""
    try:
        import tomllib  # Python 3.11

        from packaging.requirements import Requirement
    except ImportError:
        return []
    for line in tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]:
        wanted = Requirement(line)
        try:
            if not wanted.specifier.contains(version(wanted.name), prereleases=True):
                return []
        except PackageNotFoundError:
            return []
    return ["--no-build-isolation"]


def _build_wheel(tmp: Path, env: dict[str, str] | None = None) -> tuple[Path, str]:
    """The wheel pip builds from a copy of the sources (pip builds in the source folder, and
    this checkout must never hold a compiled module: it would shadow its source), and pip's log."""
    src = tmp / "src"
    shutil.copytree(ROOT / "arena", src / "arena", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp / "wheel"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", *_no_isolation(), "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("escoba_arena-*.whl")
    return wheel, done.stdout + done.stderr


def test_no_class_of_an_interpreted_module_extends_a_compiled_one():
    # mypyc makes a compiled module's classes native: an interpreted subclass imports, and its
    # instances then fail the native class's own type checks, but only in the compiled build
    # (a cpu-clock timeout once crashed every installed arena this way).
    compiled = {}
    for path in COMPILED:
        for node in ast.parse((ROOT / f"{path}.py").read_text()).body:
            if isinstance(node, ast.ClassDef):
                compiled[node.name] = path
    found = []
    for source in sorted((ROOT / "arena").rglob("*.py")) + sorted((ROOT / "bots").rglob("*.py")):
        if source.relative_to(ROOT).with_suffix("").as_posix() in COMPILED:
            continue
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", None) for b in node.bases]
                found += [(str(source.relative_to(ROOT)), node.name, base) for base in bases if base in compiled]
    assert not found, found


def _extension(name: str) -> bool:
    return name.endswith(".so") or name.endswith(".pyd")


def test_the_checkout_holds_no_compiled_module_to_shadow_its_source():
    # A ``setup.py build_ext --inplace`` left here would be imported instead of the source,
    # and every later edit of that module would go unseen (by the tests too).
    modules = [importlib.import_module(name) for name in COMPILED_MODULES]
    assert not [p.name for p in (ROOT / "arena").iterdir() if _extension(p.name)]
    if Path(modules[0].__file__ or "").parent == ROOT / "arena":  # the editable install of the test command
        assert all((m.__file__ or "").endswith(".py") for m in modules)


@pytest.mark.slow
def test_pip_install_compiles_the_hot_path_and_the_hardest_tests_pass_on_it(tmp_path: Path):
    wheel, log = _build_wheel(tmp_path, {"ESCOBA_ARENA_OPT_LEVEL": "0"})
    assert " -O0 " in log  # mypyc's flag, after Python's own -O3: the one gcc applies
    # A C file per module (mypyc's multi_file), which the build compiles side by side.
    for module in COMPILED:
        assert f"__native_{module.replace('/', '___')}.c" in log, module
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        whl.extractall(tmp_path / "site")
    for module in COMPILED:
        assert any(n.startswith(module + ".") and _extension(n) for n in names), (module, names)
        assert module + ".py" in names  # the source ships too: it is the reference
    assert not any(_extension(n) for n in names if n.startswith("arena/") and not n.startswith(COMPILED))
    # Run outside the checkout (the current folder comes first on the path), and with the
    # compiled modules imported before any test, in every test process: a plugin module that
    # pytest imports (-p) before it reads any conftest imports them and checks they are the
    # build's, so the tests cannot fall back on this checkout's Python modules, whatever pytest
    # adds to the path later. Two test processes: the harness tests wait on bots and deadlines.
    site = str(tmp_path / "site")
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "compiled_first.py").write_text(
        "import importlib\n"
        f"for m in map(importlib.import_module, {COMPILED_MODULES!r}):\n"
        "    assert m.__file__.endswith('.so'), m.__file__\n"
        f"    assert m.__file__.startswith({site!r}), m.__file__\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "compiled_first", "-o", "addopts=", "-q", "-n", "2", "-p", "no:randomly",
         "-p", "no:cacheprovider", *ON_THE_BUILD],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([site, str(tmp_path / "plugin")])})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed.group(1)) >= 100 and " failed" not in done.stdout, done.stdout[-2000:]


@pytest.mark.slow
def test_without_a_c_compiler_the_install_goes_on_as_python(tmp_path: Path):
    wheel, log = _build_wheel(tmp_path, {"CC": "/bin/false"})
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    assert not any(_extension(n) for n in names), names
    for module in COMPILED:
        assert module + ".py" in names
    assert "escoba-arena: not compiled" in log and "installing the pure-Python modules" in log
