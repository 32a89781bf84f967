"""Results folders for the league tests (tests/league/, tests/render/): real tournament stores,
with seeded in-process bots standing in for the processes, and their meta written as ``arena
run`` records it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from arena.tournament.identity import BotIdentity
from arena.tournament.store import LAST_MATCH_KEY


def _set_meta(folder: Path, key: str, value: object) -> None:
    conn = sqlite3.connect(folder / "results.sqlite")
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, json.dumps(value)))
    conn.close()


def _drop_meta(folder: Path, key: str) -> None:
    conn = sqlite3.connect(folder / "results.sqlite")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
    conn.close()


def _identity(name: str, program: str = "v1", ready: str | None = None, commit: str | None = None) -> dict:
    # The hash of a program file stands for the program: another text, another version.
    sha = BotIdentity(name, "x", files=(("p", program),)).digest
    return BotIdentity(name, f"$PYTHON {name}.py", files=((f"{name}.py", sha),), commit=commit,
                       ready_name=ready if ready is not None else name).to_dict()


# The stand-ins' strengths: a bot named here plays the first legal move (weak), the others a
# seeded random one, each bot with its own seed (so a deal played from both seats is not a
# mirror image of itself).
FIRST_MOVERS = ("marta",)


def _fill(config) -> None:  # noqa: ANN001
    from arena.harness.local_bot import LocalBot
    from arena.match.referee import play_match
    from arena.tournament.runner import open_store
    from arena.tournament.schedule import build_schedule
    from arena.tournament.worker import row_from_record

    names = [bot.name for bot in config.bots]
    with open_store(config) as store:
        for spec in build_schedule(config):
            players = [LocalBot(n, seed=spec.seed * 7 + names.index(n), first=n in FIRST_MOVERS) for n in spec.seats]
            record = play_match(players, config.rules, config.seating, spec.seed)
            store.add(row_from_record(spec, record.to_dict(), 0.0), record.to_dict())


def _store(root: Path, name: str, *, bots=("ana", "luis", "marta"), seed: int = 5, matches: int = 4, extra: str = "",
           rules: dict | None = None, versions: dict[str, str] | None = None, date: str | None = None) -> Path:
    """A results folder ``root/name`` (a real schedule and store, in-process bots);
    ``versions``: bot -> program text (its identity); ``date``: when its last match was stored."""
    from arena.tournament.config import load_config

    work = root / f".work-{name}"
    work.mkdir(parents=True)
    lines = [f"name: {name}", f"seed: {seed}", f"output: {root / name}", f"matches_per_pairing: {matches}", extra]
    if rules:
        lines += ["rules:", *(f"  {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in rules.items())]
    lines += ["bots:", *(f'  - {{name: "{b}", cmd: "$PYTHON none.py"}}' for b in bots)]
    (work / "t.yaml").write_text("\n".join(lines) + "\n")
    _fill(load_config(work / "t.yaml", check_commands=False))  # in-process bots stand in for none.py
    shutil.rmtree(work)
    dest = root / name
    if versions is not None:
        _set_meta(dest, "identities", {bot: _identity(bot, program) for bot, program in versions.items()})
    if date is not None:
        _set_meta(dest, LAST_MATCH_KEY, date)
    return dest
