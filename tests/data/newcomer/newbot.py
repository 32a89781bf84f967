"""A newcomer's bot, written from docs/PROTOCOL.md, with the mistakes newcomers make.

``newbot.py MODE``:
- ``debug``: prints ``DEBUG got hello`` on stdout before its ready (debug text where the
  arena reads protocol lines);
- ``sleepy``: takes NEWBOT_SLEEP_MS (default 2000) ms to start, past a short ``startup_ms``;
- ``named``: plays the first legal move and gives, in each ready, the name written in the
  file NEWBOT_NAME_FILE (read again at every match): a test changes it to make "another
  program" answer;
- ``shifty``: plays the first legal move and gives another name in each ready (from its seed);
- anything else: plays the first legal move, named ``newbot``.
"""

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"


def name(hello: dict) -> str:
    if MODE == "named":
        with open(os.environ["NEWBOT_NAME_FILE"]) as fh:
            return fh.read().strip()
    if MODE == "shifty":  # another name at every match, from the seed the hello gives it
        return f"shifty {hello.get('seed', 0) % 1000}"
    return "newbot"


def main() -> None:
    if MODE == "sleepy":
        time.sleep(int(os.environ.get("NEWBOT_SLEEP_MS", "2000")) / 1000)
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind in ("hello", "new_match"):
            if MODE == "debug":
                print("DEBUG got hello", flush=True)
            reply = {"type": "ready", "name": name(msg), "protocol": 1}
        elif kind == "request":
            reply = {"type": "move", "id": msg["id"], "move": msg["legal"][0]}
        elif kind == "goodbye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
