"""A protocol-1 bot that keeps notes: its first legal move, with ``info`` saying how many moves
it had, and a line on stderr for each request (tests/harness/test_match_stderr.py)."""

import json
import sys


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind in ("hello", "new_match"):
            reply = {"type": "ready", "name": "notesbot", "protocol": 1}
        elif kind == "request":
            sys.stderr.write(f"notesbot: request {msg['id']} of {len(msg['legal'])} moves\n")
            sys.stderr.flush()
            reply = {"type": "move", "id": msg["id"], "move": msg["legal"][0], "info": {"legal": len(msg["legal"])}}
        elif kind == "goodbye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
