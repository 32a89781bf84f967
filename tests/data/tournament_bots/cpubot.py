"""``policybot.py POLICY`` that first writes the CPUs it may run on to stderr ("cpus: 0,1"): for
the tests of where a tournament's bots run (tests/tournament/test_runner.py)."""

import os
import sys

sys.stderr.write(f"cpus: {','.join(map(str, sorted(os.sched_getaffinity(0))))}\n")
sys.stderr.flush()

import policybot  # noqa: E402 - beside this file; it reads its policy from the command line

policybot.main()
