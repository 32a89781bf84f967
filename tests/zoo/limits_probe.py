"""A correct bot (it plays the first legal move) that reports what it runs under: its limits
(``RLIMIT_NOFILE``, ``RLIMIT_FSIZE``), the time limits of its hello, whether it has a PID
namespace of its own, and whether it may write beside its report and outside it. One JSON
line per process, appended to the file ``PROBE_OUT`` names."""

import json
import os
import resource
import sys

out = os.environ["PROBE_OUT"]


def writable(folder):
    try:
        with open(os.path.join(folder, f"probe-{os.getpid()}"), "w"):
            pass
        return True
    except OSError:
        return False


report = {
    "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
    "pid_ns": os.readlink("/proc/self/ns/pid"),
    "writes_beside_report": writable(os.path.dirname(out)),
    "writes_in_cwd": writable(os.getcwd()),
}
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind in ("hello", "new_match"):
        if kind == "hello":
            report["time"] = msg["time"]
            with open(out, "a") as f:
                f.write(json.dumps(report) + "\n")
        print(json.dumps({"type": "ready", "name": "probe"}), flush=True)
    elif kind == "request":
        print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
    elif kind == "goodbye":
        break
