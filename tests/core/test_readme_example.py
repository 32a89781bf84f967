"""The README's simulation example runs as written (as python-chess runs its README's): the
python blocks of its section "The rules core, for simulation" are executed, and what they
print must be what the README's comment says they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## The rules core, for simulation"


def _section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head, found, rest = readme.partition(SECTION + "\n")
    assert found, f"the README has no section {SECTION!r}"
    return rest.split("\n## ", 1)[0]


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", _section(), flags=re.M | re.S)


def test_the_simulation_example_runs_and_prints_what_the_readme_says():
    blocks = _python_blocks()
    assert blocks, "the section holds no python example"
    code = "\n".join(blocks)
    # Bot authors import the front doors, never arena.core's modules.
    imported = set(re.findall(r"^(?:from|import) (arena[\w.]*)", code, flags=re.M))
    assert imported == {"arena.game", "arena.rules", "arena.seeding"}
    promised = re.search(r"^print\(best\)\s+# (\S+?):", code, flags=re.M)
    assert promised, "the example's print has no comment saying what it prints"
    namespace: dict[str, object] = {"__name__": "readme_example"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
    assert out.getvalue() == promised.group(1) + "\n"

    from arena.game import MatchState, Move
    from arena.rules import Rules, Seating

    fresh = MatchState(Rules(target=21), Seating.alone(2), seed=7)
    best = namespace["best"]
    assert isinstance(best, Move) and best in fresh.legal_moves()
    match = namespace["match"]
    assert isinstance(match, MatchState)
    fresh.apply(best)
    # The example's match made exactly that move, and nothing else.
    assert [e.to_dict() for e in match.events] == [e.to_dict() for e in fresh.events]


def test_the_names_the_section_mentions_exist():
    from arena.game import HandState, MatchState
    from arena.rules import Rules, Seating

    text = _section()
    for name in ("state.copy()", "HandState.position(", "match.events", "hand.breakdown", "Rules.from_dict(",
                 "Seating.alone(n)", "Seating.pairs(4)", "team_size=2|3"):
        assert name in text, name
    match = MatchState(Rules.from_dict({"target": 11}), Seating.pairs(6, team_size=3), 1)
    assert match.copy().events == match.events and match.hand.breakdown is None
    assert callable(HandState.position) and Seating.pairs(6, team_size=2).sides == 3
