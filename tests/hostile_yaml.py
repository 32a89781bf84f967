"""Hostile tournament files too big to keep in the repository, made on demand.

Each is (name, content, a part of the one-line error it must get). Used by
tests/tournament/test_hostile_files.py and by benchmarks/hostile_files.py, which times them.
"""

from __future__ import annotations

MB = 1_000_000
HEAD = "name: t\nseed: 1\n"
# Commands that exist on any machine running the arena, so that nothing else is wrong.
TWO_BOTS = "bots:\n  - {name: a, cmd: $PYTHON -V}\n  - {name: b, cmd: $PYTHON -V}\n"


def _fill(prefix: str, unit: str, suffix: str = "", size: int = MB - 1) -> str:
    """``prefix`` + as many ``unit`` as fit + ``suffix``, the whole just under ``size`` bytes."""
    room = size - len(prefix.encode()) - len(suffix.encode())
    return prefix + unit * (room // len(unit.encode())) + suffix


def _bots(n: int) -> str:
    return "bots:\n" + "".join(f"  - {{name: b{i}, cmd: $PYTHON -V}}\n" for i in range(n))


def generated() -> list[tuple[str, bytes, str]]:
    out: list[tuple[str, str | bytes, str]] = [
        ("long_line_name", _fill("name: ", "a", "\nseed: 1\n" + TWO_BOTS), "characters; at most"),
        ("long_line_flow_list", _fill(HEAD + "bots: [", "x,", "x]\n"), "more than 50,000 values"),
        ("long_line_flow_mapping", _fill(HEAD + "rules: {", "k: 1, ", "k: 1}\n" + TWO_BOTS), "more than 50,000 values"),
        ("long_line_nesting", _fill(HEAD + "rules: ", "[", "\n"), "nested more than 32 levels deep"),
        ("long_line_nesting_mappings", _fill(HEAD + "rules: ", "{a: ", "\n"), "nested more than 32 levels deep"),
        ("long_key", _fill("? ", "k", "\n: 1\n" + HEAD + TWO_BOTS), "characters; at most"),
        ("long_block_text", _fill(HEAD + "output: |\n", "  " + "o" * 77 + "\n", TWO_BOTS), "characters; at most"),
        ("long_comment", _fill(HEAD + "#", "c", "\n" + "seed: x\n" + TWO_BOTS), "key 'seed': given twice"),
        ("long_command", HEAD + "bots:\n  - {name: a, cmd: $PYTHON -V}\n  - {name: b, cmd: 'no-such-" + "p" * 9000 + "'}\n",
         "key 'bots[1].cmd'"),
        ("long_bad_name", HEAD.replace("name: t", "name: " + "a b " * 2250) + TWO_BOTS, "key 'name': expected 1-64"),
        ("long_unknown_key", HEAD + "? " + "k" * 9000 + "\n: 1\n" + TWO_BOTS, "unknown key"),
        ("seed_binary_digits", "name: t\nseed: 0b" + "1" * 9000 + "\n" + TWO_BOTS, "key 'seed': expected an integer"),
        ("seed_sexagesimal", "name: t\nseed: 1" + ":59" * 3000 + "\n" + TWO_BOTS, "key 'seed': expected an integer"),
        ("players_sexagesimal", HEAD + "players: 1" + ":59" * 3000 + "\n" + TWO_BOTS, "key 'players': expected"),
        ("many_bots", HEAD + _bots(1001), "at most 1,000 bots"),
        ("many_bots_1mb", _fill(HEAD + "bots:\n", "  - {name: bot, cmd: x}\n"), "more than 50,000 values"),
        ("many_anchors", HEAD + "bots: [" + "".join(f"&a{i} x, *a{i}, " for i in range(40_000)) + "x]\n",
         "more than 50,000 values"),
        ("many_documents", _fill(HEAD + TWO_BOTS, "---\n"), "a second YAML document"),
        ("many_keys", _fill(HEAD, "k: 1\n"), "more than 50,000 values"),
        ("many_distinct_keys", HEAD + "rules:\n" + "".join(f"  k{i}: 1\n" for i in range(40_000)) + TWO_BOTS,
         "more than 50,000 values"),
        ("too_big", "#" * MB + "\n" + HEAD + TWO_BOTS, "larger than 1,000,000 bytes"),
        ("zero_bytes", b"\0" * (MB - 1), "invalid YAML"),
        ("random_bytes", bytes((i * 7919 + 13) % 256 for i in range(MB - 1)), "not UTF-8 text"),
        ("utf16", (HEAD + TWO_BOTS).encode("utf-16"), "not UTF-8 text"),
    ]
    return [(name, text if isinstance(text, bytes) else text.encode(), expect) for name, text, expect in out]
