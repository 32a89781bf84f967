"""The build's one step beyond pyproject.toml: the hot paths compiled with mypyc.

``arena.match.referee`` and ``arena.harness.protocol`` hold the work the arena does for every decision (the
events, the view, the request line, the reply's check); ``arena.core.hand`` is the rules core every
simulation runs (legal moves, applying them, the deal and the score), the expert's playouts
and the referee's moves alike. mypyc compiles their typed source, the same source mypy checks,
to C extension modules: every check stays; the arena's own cost per decision drops by about a
fifth, and the rules core plays about 1.25 times as many hands as its Python source
(benchmarks/RESULTS.md). ``arena.search``'s playout, evaluation, inference and dealing are the
expert's and the analyst's inner loop: compiled, a playout takes 0.5-0.7 of its CPU time as
Python, the same playouts. ``arena.match.replay`` is the one verifier's walk, which ``arena
report`` and ``arena verify`` run over every record: compiled, the walk takes about 0.8 of its
time as Python. (``arena.core.game`` would take it to 0.55, but its ``MatchState`` could then no
longer be copied or unpickled without its constructor's arguments; ``arena.core.events`` cannot
be compiled: its events subclass named tuples.) (``arena.search.determinized`` stays Python: it subclasses the
core's ``SeatView`` dataclass, which mypyc cannot; it only drives the loop.) Nothing else is
compiled, and the source stays the reference: an install without the extensions runs the
same code, slower.

mypyc writes one C file per module (``multi_file``), all linked into the one shared library, and
the build compiles them side by side, a gcc per core: on 2 cores the C takes about 0.55 of the
time one file of all of it took (15 s against 27 s at ``-O3``), with the same code and the same
speed at run time (benchmarks/RESULTS.md, "Start-up").

So the compilation is optional:
- ``ESCOBA_ARENA_COMPILE=off`` in the environment of ``pip install`` turns it off;
- an editable install (``pip install -e``) is never compiled, because a module compiled next
  to its source would be imported instead of the source and go stale at the first edit;
- where it fails (no C compiler, say), the install goes on with the pure-Python modules and
  says why in pip's log (``pip install -v``).

``ESCOBA_ARENA_OPT_LEVEL`` (0-3, default 3) is the C compiler's optimization level (mypyc's
``opt_level``, gcc's ``-O``): the same C from mypyc, the same semantics, only compiled faster and
run slower at 0 (where mypyc also turns the C asserts of its runtime on). What users install and
what benchmarks/ measures is the default, 3; the test of the build (tests/test_compiled.py) uses
0, which takes gcc about half the time.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

COMPILED = ["arena/match/referee.py", "arena/match/replay.py", "arena/harness/protocol.py",
            "arena/core/hand.py", "arena/search/playout.py", "arena/search/evaluation.py",
            "arena/search/inference.py", "arena/search/dealing.py", "arena/search/infoset.py"]
GROUP = "escoba_arena"  # the name of the shared library mypyc adds next to the package


# The setup.py commands of setuptools' build backend that make no extension: an editable install
# (``editable_wheel``), and the metadata pip asks for before any build (``egg_info``,
# ``dist_info``), where mypyc's type check and C generation, about 13 s, were thrown away.
_NOTHING_TO_COMPILE = frozenset(("editable_wheel", "egg_info", "dist_info"))


def _wanted() -> bool:
    if os.environ.get("ESCOBA_ARENA_COMPILE", "").lower() in ("off", "0", "no", "false"):
        return False
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)  # the backend runs one
    return command not in _NOTHING_TO_COMPILE


class OptionalBuildExt(build_ext):
    """All the extensions or none: a partial build would leave a module that cannot import the
    shared library it needs, where the pure-Python module works. The C files of one extension
    are compiled side by side, one per core (distutils compiles them one after the other)."""

    def build_extensions(self) -> None:
        compiler = self.compiler
        jobs = _cores()
        # Only where the compiler runs distutils' own loop (a Unix compiler): one that replaces
        # ``compile`` whole (MSVC's) keeps it.
        mro = type(compiler).__mro__
        owner = next((c for c in mro if "compile" in vars(c)), None)
        standard = owner is not None and "_setup_compile" in vars(owner)
        if jobs > 1 and standard and hasattr(compiler, "_get_cc_args") and hasattr(compiler, "_compile"):
            compiler.compile = _side_by_side(compiler, jobs)
        super().build_extensions()

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the source
            for ext in self.extensions:
                built = Path(self.get_ext_fullpath(ext.name))
                if built.exists():
                    built.unlink()
            shutil.rmtree(Path(self.build_temp), ignore_errors=True)
            self.extensions = []
            print(f"escoba-arena: not compiled ({exc.__class__.__name__}: {exc}); "
                  "installing the pure-Python modules", file=sys.stderr)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _side_by_side(compiler, jobs: int):  # noqa: ANN001, ANN202 - distutils' CCompiler and its compile
    """``compiler.compile`` with its objects made by ``jobs`` threads, each running one gcc: the
    same steps as distutils' own loop (its ``_setup_compile``, ``_get_cc_args``, ``_compile``), the
    largest file first. mypyc writes a C file per module (``multi_file``), so the work divides."""
    from concurrent.futures import ThreadPoolExecutor

    def compile(sources, output_dir=None, macros=None, include_dirs=None, debug=False,  # noqa: A001, ANN001, ANN202
                extra_preargs=None, extra_postargs=None, depends=None):
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj: str) -> None:
            src, ext = build[obj]
            compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        with ThreadPoolExecutor(min(jobs, len(build) or 1)) as pool:
            list(pool.map(one, sorted(build, key=lambda obj: -os.path.getsize(build[obj][0]))))
        return objects

    return compile


def _opt_level() -> str:
    level = os.environ.get("ESCOBA_ARENA_OPT_LEVEL", "").strip() or "3"
    if level not in ("0", "1", "2", "3"):
        raise SystemExit(f"escoba-arena: ESCOBA_ARENA_OPT_LEVEL must be 0, 1, 2 or 3, not {level!r}")
    return level


def _no_c_compiler() -> str | None:
    """Why the C compiler the build would use cannot compile C, or None if it can. Asked
    before mypyc runs: its type check and code generation take about 20 s, wasted where the C
    cannot be compiled."""
    import shlex
    import subprocess
    import sysconfig
    import tempfile

    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text("int probe(void) { return 0; }\n")
        try:
            done = subprocess.run([*shlex.split(cc), "-c", str(source), "-o", str(Path(tmp) / "probe.o")],
                                  capture_output=True, timeout=120)
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            return f"{cc!r}: {exc}"
    return None if done.returncode == 0 else f"{cc!r} cannot compile C (exit code {done.returncode})"


def _extensions() -> list:
    if not _wanted():
        return []
    level = _opt_level()  # a wrong value stops the build: it is not a reason to install as Python
    why = _no_c_compiler()
    if why is not None:
        print(f"escoba-arena: not compiled (no C compiler: {why}); installing the pure-Python modules", file=sys.stderr)
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build without its build requirements (--no-build-isolation)
        print("escoba-arena: mypyc is missing; installing the pure-Python modules", file=sys.stderr)
        return []
    try:
        return mypycify(COMPILED, group_name=GROUP, opt_level=level, multi_file=True)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - mypyc exits on what it cannot compile
        print(f"escoba-arena: not compiled (mypyc: {exc!r}); installing the pure-Python modules", file=sys.stderr)
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
