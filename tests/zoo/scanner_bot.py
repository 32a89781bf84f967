"""A bot that reads stdin the way Go's ``bufio.Scanner`` does by default, and is correct in every
other respect: it plays the first legal move.

The scanner holds at most 64 KB (``bufio.MaxScanTokenSize``, newline included); a longer line
makes ``Scan()`` return false, and the usual ``for scanner.Scan() { ... }`` loop then ends and
the program returns, without a word: this is what a Go bot does at its first long request
(docs/PROTOCOL.md: requests over 100 KB happen). ``scanner_bot.py MAX`` sets another buffer size.
"""

import json
import os
import sys

MAX = int(sys.argv[1]) if len(sys.argv) > 1 else 64 * 1024


def lines():
    """Each line of stdin without its newline, as ``Scanner.Scan`` gives them, until a line does
    not fit in ``MAX`` bytes (or the input ends)."""
    buf = b""
    while True:
        cut = buf.find(b"\n")
        if cut >= 0:
            yield buf[:cut]
            buf = buf[cut + 1:]
            continue
        if len(buf) >= MAX:
            return  # bufio.ErrTooLong: Scan() is false from here on
        chunk = os.read(0, MAX - len(buf))
        if not chunk:
            return
        buf += chunk


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in lines():
    if not line.strip():
        continue
    msg = json.loads(line)
    kind = msg.get("type")
    if kind in ("hello", "new_match"):
        send({"type": "ready", "name": "scanner", "protocol": 1})
    elif kind == "request":
        send({"type": "move", "id": msg["id"], "move": msg["legal"][0]})
    elif kind == "goodbye":
        break
