"""The shape of the package: modules import only downward, and the rules core stays pure.

Read from the source (``ast``), so the check sees every import, including those inside
functions, and costs no import of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

ARENA = Path(__file__).resolve().parent.parent / "arena"

# The pure rules core: no I/O, no clock, no global random (README, "The rules core").
CORE = {"arena", "arena.errors", "arena.cards", "arena.rules", "arena.seeding", "arena.moves", "arena.events",
        "arena.scoring", "arena.view", "arena.hand", "arena.game"}
# What the core may use of the standard library: data structures and arithmetic, nothing that
# reaches a file, a process, the clock or a random source.
PURE_STDLIB = {"__future__", "bisect", "collections", "dataclasses", "enum", "hashlib", "itertools", "operator",
               "struct", "typing"}
# Imports deferred into a function on purpose, each of which points back up a layer.
DEFERRED_UPWARD = {
    # fit_ratings loads the numerical fit (numpy, scipy) only when a fit runs: every command
    # imports arena.ratings, and most never fit.
    ("arena.ratings", "arena.ratings_fit"),
    # A run with an sprt section hands its schedule to SprtRun, which plans with runner's RunPlan.
    ("arena.tournament.runner", "arena.tournament.sprt_run"),
}


def _name(path: Path) -> str:
    parts = path.relative_to(ARENA.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in ARENA.rglob("*.py")}


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


def test_the_rules_core_is_pure():
    for name in sorted(CORE):
        for target, _ in _imports(name):
            if target.startswith("arena"):
                assert target in CORE, f"{name} imports {target}, outside the rules core"
            else:
                assert target.split(".")[0] in PURE_STDLIB, f"{name} imports {target}: the rules core does no I/O"


def test_the_checks_see_what_they_must():
    # Guards for the guards: the parser finds deferred imports and core modules' imports.
    assert ("arena.tournament.sprt_run", False) in _imports("arena.tournament.runner")
    assert ("arena.hand", True) in _imports("arena.game")
    assert {"arena.hand", "arena.view", "arena.game", "arena.cards"} <= set(MODULES)
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
