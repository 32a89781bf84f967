"""A bot for the clock tests: ``clockbot.py MODE MS [THREADS]``; plays the first legal move.

Modes:
  cpu      spends MS ms of its own CPU time (``time.process_time``) on every move
  sleep    sleeps MS ms before every answer (it spends no CPU)
  threads  spins THREADS threads for MS ms of wall time on every move; they hash, which runs
           outside the GIL, so that each can take a CPU of its own
"""

import hashlib
import json
import sys
import threading
import time

MODE = sys.argv[1]
MS = int(sys.argv[2])
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 1
_BLOCK = b"x" * (1 << 16)


def spend_cpu(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def hash_until(end: float) -> None:
    digest = hashlib.sha256()
    while time.monotonic() < end:
        digest.update(_BLOCK)


def spin_threads(n: int, seconds: float) -> None:
    end = time.monotonic() + seconds
    workers = [threading.Thread(target=hash_until, args=(end,)) for _ in range(n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind in ("hello", "new_match"):
            reply = {"type": "ready", "name": f"clock-{MODE}"}
        elif kind == "request":
            if MODE == "cpu":
                spend_cpu(MS / 1000)
            elif MODE == "sleep":
                time.sleep(MS / 1000)
            elif MODE == "threads":
                spin_threads(THREADS, MS / 1000)
            reply = {"type": "move", "id": msg["id"], "move": msg["legal"][0]}
        elif kind == "goodbye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
