"""A bot that remembers every deal it is dealt, to know the hidden cards of its twin.

In a duplicate event the same deal comes back with the seats swapped: a process that met it
before knows every card its opponent holds. This bot keeps, in its memory, the tables of the
first two hands of every match it plays (the deal follows from the seed alone, so two
matches with the same two tables are the same deal) and notes ``twin`` in ``TWIN_OUT`` when a
deal comes back to it; ``dealt N`` counts the deals it met. It plays its first legal move.
"""

import json
import os
import sys


def main():
    out = os.environ.get("TWIN_OUT")
    seen = set()
    tables = []
    dealt = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind in ("hello", "new_match"):
            tables = []
            print(json.dumps({"type": "ready", "name": "twin", "protocol": 1}), flush=True)
        elif kind == "event" and msg["event"].get("type") == "deal" and msg["event"].get("round") == 0:
            tables.append(tuple(sorted(msg["event"]["table"])))
            if len(tables) == 2:
                dealt += 1
                key = tuple(tables)
                note = "twin" if key in seen else f"dealt {dealt}"
                seen.add(key)
                if out:
                    with open(out, "a") as f:
                        f.write(note + "\n")
        elif kind == "request":
            print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
        elif kind == "goodbye":
            return


if __name__ == "__main__":
    main()
