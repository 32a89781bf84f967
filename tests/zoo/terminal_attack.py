"""A bot that attacks the terminal the arena prints on: ``terminal_attack.py MODE [N]``.

Every text it controls holds terminal controls (``EVIL`` below: ESC sequences that clear the
screen and retitle the window, BEL, CR, backspace, DEL, the C1 control CSI, a bidi override):
its ready name, what it writes to stderr, and the reply that fails at its N-th request
(default 1):

  crash      writes EVIL lines to stderr, then exits with code 3
  garbage    answers with a line that is not JSON and holds EVIL
  illegal    answers with a move whose text holds EVIL
  ready      only its ready name and stderr are hostile: it plays the first legal move
"""

import json
import sys

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1
EVIL = "ev\x1b[2J\x1b]0;owned\x07il\r\x08\x7f\x9b31m\x85\u202egnp.exe"


def send(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    sys.stderr.write(f"starting {EVIL}\n")
    sys.stderr.flush()
    requests = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind in ("hello", "new_match"):
            send({"type": "ready", "name": f"attack {EVIL}", "protocol": 1})
            continue
        if kind == "goodbye":
            return
        if kind != "request":
            continue
        requests += 1
        move = msg["legal"][0]
        if requests == N and MODE == "crash":
            sys.stderr.write(f"dying {EVIL}\n{EVIL}\n")
            sys.stderr.flush()
            sys.exit(3)
        if requests == N and MODE == "garbage":
            sys.stdout.write(f"no {EVIL}\n")
            sys.stdout.flush()
            continue
        if requests == N and MODE == "illegal":
            move = f"7o+{EVIL}"
        send({"type": "move", "id": msg["id"], "move": move})


if __name__ == "__main__":
    main()
