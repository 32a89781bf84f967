"""Write the golden files that pin the deal generator, the referee and the results store.

Run this only when a change is *meant* to alter recorded games (and then bump the record or
store schema version and say why in the commit): every later version of the arena must
replay these files unchanged, so regenerating them hides exactly the regressions they catch.

    .venv/bin/python tests/golden/make_golden.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

from golden_cases import RECORD_CASES, play_case, rng_samples  # noqa: E402


def main() -> None:
    (HERE / "rng.json").write_text(json.dumps(rng_samples(), indent=1) + "\n")
    records = HERE / "records"
    shutil.rmtree(records, ignore_errors=True)
    records.mkdir()
    for case in RECORD_CASES:
        record = play_case(case)
        (records / f"{case.name}.json").write_text(json.dumps(record.to_dict(), indent=1) + "\n")
    store = HERE / "store"
    shutil.rmtree(store, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(HERE / "tournament.yaml"), "--output", str(store),
         "--concurrency", "2", "--no-progress"],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )
    # Keep only the store itself: tables, logs and the lock are derived or per machine.
    for item in store.iterdir():
        if item.name != "results.sqlite":
            shutil.rmtree(item) if item.is_dir() else item.unlink()
    # The standings the store gives today: a later version must give the same from it.
    table = subprocess.run([sys.executable, "-m", "arena.cli", "table", str(store), "--format", "json"],
                           check=True, cwd=ROOT, capture_output=True, text=True).stdout
    standings = {row["name"]: [row["matches"], row["wins"], row["draws"], row["losses"], row["points_for"],
                               row["points_against"]] for row in json.loads(table)}
    (HERE / "store-standings.json").write_text(json.dumps(standings, indent=1) + "\n")
    for item in store.iterdir():
        if item.name != "results.sqlite":
            item.unlink()
    print(f"wrote {len(RECORD_CASES)} records, rng.json and store/ in {os.path.relpath(HERE)}")


if __name__ == "__main__":
    main()
