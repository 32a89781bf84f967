"""``mixbot.py P``: policybot's greedy with probability P, else its hashed random move (a field
of known order of strength: benchmarks/formats.py). Its own file, so that policybot.py, whose
hash golden stores record, stays as it is."""

import hashlib
import json
import sys

import policybot

_policy_choose = policybot.choose
P = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5


def choose(msg):
    digest = hashlib.sha256(json.dumps([msg["view"], msg["legal"]], sort_keys=True).encode()).digest()
    draw = int.from_bytes(digest[:4], "big")
    policybot.POLICY = "greedy" if (draw >> 16) / 65536 < P else "hash"
    try:
        return _policy_choose(msg)
    finally:
        policybot.POLICY = f"mix{P}"  # its ready name, the same in every match


policybot.choose = choose
policybot.POLICY = f"mix{P}"

if __name__ == "__main__":
    policybot.main()
