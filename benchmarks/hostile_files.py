"""The cost of loading hostile tournament files: time and peak memory per file.

Acceptance (issue 10): every file under 1 MB is refused (or accepted) in under a second and
under 100 MB, always with a ConfigError, never another exception. Each file is loaded the
way ``arena validate`` loads it (``load_config``, then ``build_schedule`` if it loads), in
its own fresh interpreter, so the peak resident size (``VmHWM``) is that file's alone;
it includes the interpreter and the arena's imports, measured alone as "baseline".

The files: every file of tests/data/bad_tournaments/, the big ones tests/hostile_yaml.py
makes (1 MB of one line, of nesting, of aliases, ...), a folder and /dev/zero passed as
the file, and the example tournaments (which must load).

    .venv/bin/python benchmarks/hostile_files.py [--timeout S] [--memory-limit-mb M] [--only NAME] [--pure-python]

A child that runs past ``--timeout`` is killed; ``--memory-limit-mb`` caps each child's
address space so that a file that explodes cannot take the machine with it. Prints one
line per file, then, last, the worst time and the worst peak.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hostile_yaml import generated  # noqa: E402

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import yaml
from arena.tournament import yamldoc
from arena.tournament.config import ConfigError, load_config
from arena.tournament.schedule import build_schedule
path = sys.argv[1]
if sys.argv[2] == "pure":
    yamldoc._LOADER = yaml.SafeLoader
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
start, start_cpu = time.perf_counter(), cpu()
outcome, message = "ok", ""
if path != "--baseline":
    try:
        build_schedule(load_config(path))
    except ConfigError as exc:
        outcome, message = "ConfigError", str(exc)
    except BaseException as exc:
        outcome, message = type(exc).__name__, str(exc)[:300]
print(json.dumps({{
    "outcome": outcome,
    "seconds": time.perf_counter() - start,
    "cpu_seconds": cpu() - start_cpu,
    # VmHWM, not ru_maxrss: ru_maxrss keeps the high-water mark of the process that spawned this one.
    "peak_mb": int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]) / 1024,
    "message_chars": len(message),
    "message_lines": len(message.splitlines()),
    "message": message[:120],
}}))
"""


def measure(path: str, timeout: float, memory_mb: int, parser: str) -> dict[str, object]:
    def limit() -> None:
        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD.format(root=str(ROOT)), path, parser],
            capture_output=True, text=True, timeout=timeout, preexec_fn=limit,
        )
    except subprocess.TimeoutExpired:
        return {"outcome": f"killed after {timeout:.0f} s", "seconds": time.perf_counter() - start,
                "cpu_seconds": float("nan"), "peak_mb": float("nan"),
                "message_chars": 0, "message_lines": 0, "message": ""}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"outcome": f"exit {done.returncode}: {tail[:80]}", "seconds": time.perf_counter() - start,
                "cpu_seconds": float("nan"), "peak_mb": float("nan"), "message_chars": 0, "message_lines": 0, "message": ""}
    result: dict[str, object] = json.loads(lines[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--memory-limit-mb", type=int, default=4096)
    parser.add_argument("--only", help="measure only the files whose name contains this")
    parser.add_argument("--pure-python", action="store_true", help="parse with PyYAML's pure-Python parser, not libyaml")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        files: list[tuple[str, str]] = []
        for name, content, _ in generated():
            path = Path(tmp) / f"{name}.yaml"
            path.write_bytes(content)
            files.append((f"generated/{name} ({len(content):,} B)", str(path)))
        folder = Path(tmp) / "a_folder.yaml"
        folder.mkdir()
        files.append(("a folder", str(folder)))
        files.append(("/dev/zero", "/dev/zero"))
        for path in sorted((ROOT / "tests" / "data" / "bad_tournaments").glob("*.yaml")):
            files.append((f"bad/{path.name} ({path.stat().st_size:,} B)", str(path)))
        for path in sorted((ROOT / "tournaments").glob("*.yaml")):
            files.append((f"example/{path.name}", str(path)))
        if args.only:
            files = [f for f in files if args.only in f[0]]

        which = "pure" if args.pure_python else "default"
        print(f"load average at start: {Path('/proc/loadavg').read_text().strip()}; parser: {which}")
        base = measure("--baseline", args.timeout, args.memory_limit_mb, which)
        print(f"baseline (interpreter and imports): {base['peak_mb']:.0f} MB")
        worst_time: tuple[float, str] = (0.0, "")
        worst_cpu: tuple[float, str] = (0.0, "")
        worst_peak: tuple[float, str] = (0.0, "")
        others = 0
        for label, path in files:
            r = measure(path, args.timeout, args.memory_limit_mb, which)
            seconds, cpu, peak = (float(r[k]) for k in ("seconds", "cpu_seconds", "peak_mb"))  # type: ignore[arg-type]  # numbers in an object-valued dict
            outcome = str(r["outcome"])
            if outcome != ("ok" if label.startswith("example/") else "ConfigError"):
                others += 1
            if seconds > worst_time[0]:
                worst_time = (seconds, label)
            if cpu == cpu and cpu > worst_cpu[0]:
                worst_cpu = (cpu, label)
            if peak == peak and peak > worst_peak[0]:
                worst_peak = (peak, label)
            shape = f"{r['message_chars']} chars, {r['message_lines']} line(s)" if outcome == "ConfigError" else ""
            print(f"{label:56} {outcome:20} {seconds:7.2f} s {cpu:5.2f} cpu {peak:6.1f} MB  {shape}  {str(r['message'])[:60]!r}")
        print(f"load average at end: {Path('/proc/loadavg').read_text().strip()}")
        print(
            f"hostile files: {len(files)} files, unexpected outcomes {others}, "
            f"worst time {worst_time[0]:.2f} s ({worst_time[1]}), worst CPU time {worst_cpu[0]:.2f} s ({worst_cpu[1]}), "
            f"worst peak {worst_peak[0]:.0f} MB ({worst_peak[1]}), "
            f"baseline {base['peak_mb']:.0f} MB"
        )


if __name__ == "__main__":
    main()
