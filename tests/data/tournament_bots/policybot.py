"""A deterministic protocol-1 bot for tournament tests: ``policybot.py POLICY``.

Deterministic per position (no state across matches), so a match's result depends only
on its seed and seating, whatever ran before on the same process.

Policies: first (first legal move), last (last legal move), greedy (take the most cards,
an escoba first), hash (a pseudo-random legal move chosen by a hash of the request).
Env: POLICYBOT_SLEEP_MS sleeps that long before each move (to make matches slower);
POLICYBOT_CRASH_AFTER exits after that many moves of a process (a failing bot).
"""

import hashlib
import json
import os
import sys
import time

POLICY = sys.argv[1] if len(sys.argv) > 1 else "first"
SLEEP = int(os.environ.get("POLICYBOT_SLEEP_MS", "0")) / 1000
CRASH_AFTER = int(os.environ.get("POLICYBOT_CRASH_AFTER", "0"))


def choose(msg):
    legal = msg["legal"]
    if POLICY == "last":
        return legal[-1]
    if POLICY == "greedy":
        table = len(msg["view"]["table"])

        def gain(move):
            taken = move.count("+")
            return (taken == table and taken > 0, taken)

        return max(legal, key=gain)
    if POLICY == "hash":
        digest = hashlib.sha256(json.dumps([msg["view"], legal], sort_keys=True).encode()).digest()
        return legal[int.from_bytes(digest[:4], "big") % len(legal)]
    return legal[0]


def main():
    moves = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind in ("hello", "new_match"):
            reply = {"type": "ready", "name": f"policybot-{POLICY}", "protocol": 1}
        elif kind == "request":
            moves += 1
            if CRASH_AFTER and moves > CRASH_AFTER:
                sys.stderr.write("policybot: crashing on purpose\n")
                sys.exit(3)
            if SLEEP:
                time.sleep(SLEEP)
            reply = {"type": "move", "id": msg["id"], "move": choose(msg)}
        elif kind == "goodbye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
