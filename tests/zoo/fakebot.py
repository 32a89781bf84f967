"""A scripted fake bot for precise protocol tests: ``fakebot.py SCRIPT_JSON``.

The script is a JSON list of steps, then the bot plays well (first legal move) until
goodbye. A step waits for the next arena message of type ``on`` (others are skipped),
sleeps ``sleep_ms``, then writes each string of ``send`` as it is (no newline added, so a
test can split a line across writes), with ``{id}`` replaced by the message's id, ``{prev}``
by the previous request's id and ``{legal0}`` by its first legal move; ``pause_ms`` sleeps
between the writes. ``{"on": ..., "then": "hang"}`` stops answering for ever; ``"exit": N``
exits with code N. With ``ZOO_TRANSCRIPT`` set, every line received is appended there.

With ``ZOO_SCRIPT_LEFT`` set, the steps not yet reached are written there (a JSON list) at the
start and after each step is taken, before it is acted on, so that a test can check, even of a
bot that hangs or exits, that its script was played to the end (``helpers.assert_done``).
"""

import json
import os
import sys
import time

steps = json.loads(sys.argv[1])
transcript = os.environ.get("ZOO_TRANSCRIPT")
prev = None
left_file = os.environ.get("ZOO_SCRIPT_LEFT")


def report_left() -> None:
    if left_file:
        with open(left_file + ".tmp", "w") as f:
            json.dump(steps, f)
        os.replace(left_file + ".tmp", left_file)  # never read half-written


report_left()


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


for line in sys.stdin:
    if transcript:
        with open(transcript, "a") as f:
            f.write(line)
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "goodbye":
        break
    if steps and steps[0]["on"] == kind:
        step = steps.pop(0)
        report_left()
        time.sleep(step.get("sleep_ms", 0) / 1000)
        if step.get("then") == "hang":
            while True:
                time.sleep(1)
        if "exit" in step:
            sys.exit(step["exit"])
        for i, text in enumerate(step.get("send", [])):
            if i:
                time.sleep(step.get("pause_ms", 0) / 1000)
            legal0 = msg.get("legal", [""])[0]
            out(text.replace("{id}", str(msg.get("id"))).replace("{prev}", str(prev)).replace("{legal0}", legal0))
        if kind == "request":
            prev = msg["id"]
        continue
    if kind in ("hello", "new_match"):
        out('{"type":"ready","name":"fake","protocol":1}\n')
    elif kind == "request":
        out(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}) + "\n")
        prev = msg["id"]
