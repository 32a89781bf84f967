"""kill -9 at random moments, then resume: nothing lost, nothing twice, same results.

    .venv/bin/python benchmarks/killresume.py [--trials 20] [--kills 3] [--seed 1] [--format swiss]

A reference run plays the tournament without interruption. Each trial then plays it from
scratch in a fresh folder, killing the arena with SIGKILL at random moments (up to
--kills times, each at a uniform time within a normal run's duration) and running the
same command again until it finishes. Every trial has at least one kill. The trial passes when every scheduled match is in
the store exactly once, the results equal the reference run's match for match, and no
process the arena started is left. Prints one line per trial, then the trial count and
the outcome. The bots are deterministic (bots/greedy_bot.py and the test policy bots).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.tournament.config import load_config  # noqa: E402
from arena.tournament.schedule import build_schedule  # noqa: E402
from arena.tournament.store import ResultStore  # noqa: E402

POLICY_BOTS = ROOT / "tests" / "data" / "tournament_bots"


# The formats whose next pairings depend on the results so far: a resume must choose exactly
# what the uninterrupted run chose. Six bots, so that swiss has more than one way to pair.
FORMATS = {
    "round_robin": "matches_per_pairing: 4\n",
    "swiss": "format: swiss\nrounds: 3\nmatches_per_pairing: 2\n",
    "ladder": "format: ladder\nmax_matches: 24\nwindow: 4\nmatches_per_pairing: 2\n",
    "knockout": "format: knockout\nmatches_per_pairing: 2\n",
}


def write_tournament(folder: Path, fmt: str = "round_robin") -> Path:
    more = "" if fmt == "round_robin" else f"""\
  - {{name: grab2, cmd: "$PYTHON policybot.py greedy", cwd: "{POLICY_BOTS}"}}
  - {{name: first2, cmd: "$PYTHON policybot.py first", cwd: "{POLICY_BOTS}"}}
"""
    text = f"""\
name: killresume
seed: 77
{FORMATS[fmt]}concurrency: 2
bots:
  - {{name: greedy, cmd: "$PYTHON bots/greedy_bot.py", cwd: "{ROOT}"}}
  - {{name: first, cmd: "$PYTHON policybot.py first", cwd: "{POLICY_BOTS}"}}
  - {{name: hash, cmd: "$PYTHON policybot.py hash", cwd: "{POLICY_BOTS}"}}
  - {{name: grab, cmd: "$PYTHON policybot.py greedy", cwd: "{POLICY_BOTS}"}}
{more}"""
    path = folder / "killresume.yaml"
    path.write_text(text)
    return path


def command(path: Path, output: Path) -> list[str]:
    return [sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress", "--output", str(output)]


def outcomes(folder: Path) -> list[tuple]:
    with ResultStore.open_existing(str(folder)) as store:
        return [row.outcome() for row in store.results()]


def counts(folder: Path) -> tuple[int, int]:
    conn = sqlite3.connect(folder / "results.sqlite")
    try:
        return conn.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM matches").fetchone()
    finally:
        conn.close()


def leftovers(tag: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if tag.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--kills", type=int, default=3, help="kills per trial (at most)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--format", choices=sorted(FORMATS), default="round_robin",
                        help="the tournament's format (default round_robin); swiss, ladder and knockout choose "
                        "their pairings from the results so far, so a resume must choose as the reference did")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="arena-killresume-"))
    try:
        path = write_tournament(work, args.format)
        config = load_config(path)
        # A fixed schedule is known in advance; an adaptive one is what the reference chose.
        schedule_ids = sorted(spec.id for spec in build_schedule(config)) if args.format == "round_robin" else None
        start = time.monotonic()
        ref = subprocess.run(command(path, work / "reference"), cwd=ROOT, capture_output=True, text=True)
        duration = time.monotonic() - start
        if ref.returncode != 0:
            print(f"reference run failed:\n{ref.stderr}", file=sys.stderr)
            return 1
        expected = outcomes(work / "reference")
        if schedule_ids is None:
            schedule_ids = sorted(o[0] for o in expected)
        print(f"reference: {len(expected)} matches in {duration:.1f} s")
        passed = 0
        trial = 0
        redone = 0
        while trial < args.trials:
            output = work / f"trial{trial + 1}-{redone}"
            tag = uuid.uuid4().hex
            env = dict(os.environ, ARENA_KILLRESUME_TAG=tag)
            kills, runs = 0, 0
            wanted = rng.randint(1, args.kills)
            while True:
                runs += 1
                proc = subprocess.Popen(command(path, output), cwd=ROOT, env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if kills < wanted:
                    try:
                        proc.wait(timeout=rng.uniform(0.0, 0.9 * duration))
                    except subprocess.TimeoutExpired:
                        proc.send_signal(signal.SIGKILL)
                        kills += 1
                proc.wait()
                if proc.returncode == 0 or runs > wanted + 3:
                    break
            if kills == 0:
                # The run beat the chosen moment: not a trial of anything; draw again.
                redone += 1
                shutil.rmtree(output, ignore_errors=True)
                continue
            trial += 1
            problems = []
            if proc.returncode != 0:
                problems.append(f"the last run exited {proc.returncode}")
            total, distinct = counts(output)
            got = outcomes(output)
            if total != distinct:
                problems.append(f"{total - distinct} matches stored twice")
            if sorted(o[0] for o in got) != schedule_ids:
                problems.append(f"{len(got)} of {len(schedule_ids)} scheduled matches stored")
            if got != expected:
                differing = sum(1 for a, b in zip(got, expected, strict=False) if a != b)
                problems.append(f"{differing} matches differ from the uninterrupted run")
            deadline = time.monotonic() + 5
            while leftovers(tag) and time.monotonic() < deadline:
                time.sleep(0.1)
            alive = leftovers(tag)
            if alive:
                problems.append(f"{len(alive)} processes left running: {alive}")
                for pid in alive:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)
            passed += not problems
            print(f"trial {trial:2d}: {kills} kill(s), {runs} run(s), {len(got)} matches: {verdict}", flush=True)
        print(f"trials: {args.trials}, passed: {passed}, failed: {args.trials - passed}")
        print("outcome: " + ("PASS" if passed == args.trials else "FAIL"))
        return 0 if passed == args.trials else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
