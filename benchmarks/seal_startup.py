"""What sealing costs a bot process at its start: the time from asking the launcher for a bot to
its ``ready``, sealed (bubblewrap, arena/harness/seal.py) and unsealed, interleaved.

    .venv/bin/python benchmarks/seal_startup.py [--starts 200]

The bot is the compiled C bot (bots/c/greedy.c, built here with cc), the fastest to start, so
that the figure is the arena's and the sandbox's, not an interpreter's. Each round starts one
process with each launcher (sealed, unsealed) in turn, says hello, waits for ``ready`` and
closes it; the last line gives the median and quartiles of both, in ms, and their difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.harness.botproc import BotProcess, BotSpec, Limits  # noqa: E402
from arena.harness.containment import LauncherClient  # noqa: E402
from arena.harness.protocol import match_start  # noqa: E402


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0], statistics.median(values), q[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=200, help="processes started with each launcher")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="seal-startup-"))
    program = folder / "greedy.bin"
    subprocess.run(["cc", "-O2", "-o", str(program), str(ROOT / "bots" / "c" / "greedy.c")], check=True)
    limits = Limits(startup_ms=10_000, move_ms=1000)
    spec = BotSpec(name="greedy", cmd=(str(program),), limits=limits)
    hello = match_start(first=True, match=0, seat=0, side=0, players=2, teams=((0,), (1,)), rules={"target": 21},
                        time=limits.time, max_line_bytes=limits.max_line_bytes)
    launchers = {"sealed": LauncherClient(sealed=True), "unsealed": LauncherClient(sealed=False)}
    if not launchers["sealed"].sealed:
        print(f"this machine cannot seal: {launchers['sealed'].unsealed_why}")
        return 1
    times: dict[str, list[float]] = {name: [] for name in launchers}
    print(f"{args.starts} starts each, interleaved; load average {os.getloadavg()[0]:.2f}")
    for _ in range(args.starts):
        for name, launcher in launchers.items():
            start = time.perf_counter()
            bot = BotProcess(spec, launcher=launcher)
            bot.begin_match(hello)
            times[name].append((time.perf_counter() - start) * 1000)
            bot.close()
    for launcher in launchers.values():
        launcher.close()
    parts = []
    for name, values in times.items():
        q1, med, q3 = _quartiles(values)
        parts.append(f"{name} {med:.1f} ms [{q1:.1f}, {q3:.1f}]")
    extra = statistics.median(times["sealed"]) - statistics.median(times["unsealed"])
    print(f"start to ready, median [quartiles]: {'; '.join(parts)}; sealing adds {extra:.1f} ms per bot process; "
          f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
