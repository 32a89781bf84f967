"""The shape of the package: packages by layer, each importing only those below it; within a
package, modules import each other without a cycle; and the rules core stays pure.

Read from the source (``ast``), so the check sees every import, including those inside
functions, and costs no import of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

ARENA = Path(__file__).resolve().parent.parent / "arena"

# The layers, bottom first (README, "Layout"). A module imports only from its own package and
# from those before it. The foundations (``arena`` itself, its errors, the escaping of shown
# text, the writes that never follow a link) sit below every layer; the bot authors' front doors
# (``arena.game``, ``arena.rules``, ``arena.seeding``) re-export the core and nothing imports them.
LAYERS = ("arena.core", "arena.search", "arena.harness", "arena.match", "arena.rating", "arena.sprt", "arena.tournament",
          "arena.league", "arena.analysis", "arena.render", "arena.cli")
FOUNDATIONS = {"arena", "arena.errors", "arena.lines", "arena.printable", "arena.safe_files"}
FRONT_DOORS = {"arena.game", "arena.rules", "arena.seeding"}
# The pure rules core: no I/O, no clock, no global random (README, "The rules core").
CORE_FOUNDATIONS = {"arena", "arena.errors"}
# What the core may use of the standard library: data structures and arithmetic, nothing that
# reaches a file, a process, the clock or a random source.
PURE_STDLIB = {"__future__", "bisect", "collections", "dataclasses", "enum", "hashlib", "itertools", "operator",
               "struct", "typing"}
# Imports deferred into a function on purpose, each of which points back up a layer.
DEFERRED_UPWARD = {
    # fit_ratings loads the numerical fit (numpy) only when a fit runs: every command
    # imports arena.rating.table, and most never fit.
    ("arena.rating.table", "arena.rating.fit"),
    # A run with an sprt section hands its schedule to SprtRun, which plans with runner's RunPlan.
    ("arena.tournament.runner", "arena.tournament.sprt_run"),
    # A knockout seeded by a results folder (seeding: FOLDER) reads that folder's ratings
    # while the file is parsed, so that a bad folder is the file's error (file, line, key).
    ("arena.tournament.config", "arena.tournament.adaptive"),
}


def _name(path: Path) -> str:
    parts = path.relative_to(ARENA.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in ARENA.rglob("*.py")}


def _package(name: str) -> str:
    """The layer a module belongs to: its first-level package, or ``arena`` for the top."""
    first = ".".join(name.split(".")[:2])
    return first if first in LAYERS else "arena"


def _level(name: str) -> int:
    return LAYERS.index(_package(name)) if _package(name) in LAYERS else -1


def _imports(name: str) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import of ``name``, outside ``if
    TYPE_CHECKING:`` blocks; ``from a import b`` counts as ``a`` and, when it is one, ``a.b``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, top) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                found.append((base, top))
                found.extend((f"{base}.{alias.name}", top) for alias in child.names if f"{base}.{alias.name}" in MODULES)
            else:
                visit(child, top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text()), True)
    return found


def _graph(level_only: bool) -> dict[str, set[str]]:
    return {name: {target for target, top in _imports(name) if target in MODULES and target != name
                   and (top or not level_only)} for name in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph``, or None."""
    state: dict[str, int] = {}  # 1: on the path being explored, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


def test_the_module_level_imports_form_layers():
    # No cycle: there is an order of the modules in which each imports only those before it.
    cycle = _cycle(_graph(level_only=True))
    assert cycle is None, "modules import each other: " + " -> ".join(cycle or ())


def test_the_only_imports_that_point_up_a_layer_are_the_known_deferred_ones():
    graph = _graph(level_only=True)
    deferred = {(name, target) for name in MODULES for target, top in _imports(name)
                if not top and target in MODULES and target != name}
    upward = set()
    for name, target in deferred:
        with_it = {k: set(v) for k, v in graph.items()}
        with_it[name].add(target)
        if _cycle(with_it):
            upward.add((name, target))
    assert upward == DEFERRED_UPWARD


def test_packages_import_only_the_layers_below_them():
    for name in sorted(MODULES):
        if name in FRONT_DOORS:
            continue
        for target, _ in _imports(name):
            if target not in MODULES:
                continue
            assert target not in FRONT_DOORS, f"{name} imports the front door {target}: import arena.core's module"
            assert _level(target) <= _level(name), f"{name} ({_package(name)}) imports {target}, a layer above it"


def test_the_top_of_the_package_holds_only_foundations_and_front_doors():
    top = {name for name in MODULES if _package(name) == "arena"}
    assert top == FOUNDATIONS | FRONT_DOORS
    assert len(top) <= 8
    assert set(LAYERS) <= set(MODULES)  # each layer is a package


def test_the_front_doors_only_re_export_the_core():
    for name in FRONT_DOORS:
        assert {t for t, _ in _imports(name) if t.startswith("arena")} <= {m for m in MODULES if m.startswith("arena.core")}


def test_the_rules_core_is_pure():
    core = {name for name in MODULES if _package(name) == "arena.core"}
    for name in sorted(core):
        for target, _ in _imports(name):
            if target.startswith("arena"):
                assert target in core | CORE_FOUNDATIONS, f"{name} imports {target}, outside the rules core"
            else:
                assert target.split(".")[0] in PURE_STDLIB, f"{name} imports {target}: the rules core does no I/O"


def test_the_checks_see_what_they_must():
    # Guards for the guards: the parser finds deferred imports and core modules' imports.
    assert ("arena.tournament.sprt_run", False) in _imports("arena.tournament.runner")
    assert ("arena.core.hand", True) in _imports("arena.core.game")
    assert {"arena.core.hand", "arena.core.view", "arena.core.game", "arena.core.cards"} <= set(MODULES)
    assert _package("arena.tournament.runner") == "arena.tournament" and _package("arena.errors") == "arena"
    assert _level("arena.cli.app") > _level("arena.render.text") > _level("arena.core.hand") > _level("arena.errors")
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
