#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run them. CI (.ci/run) calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
# --no-compile: the bytecode of the few modules the tests import is written as they import
# them, not that of every installed package up front (about 9 s of the install).
.venv/bin/python -m pip install -q --no-compile -e '.[test,cluster]'
# The HTML replay is tested in Debian's chromium (no browser download: none is allowed here).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "chromium is missing: sudo apt-get install chromium" >&2
    fi
fi
# Python keeps the compiled bytecode of the arena's modules (in __pycache__, ignored by git), and
# pytest its rewritten test modules: where the environment says not to, every arena and bot process
# the tests start compiles the arena again, and every test process rewrites every test file.
unset PYTHONDONTWRITEBYTECODE
# Two test processes, one a core: the suite keeps both cores busy (1.77 of 2 on average, measured),
# so three took as long (317 s against 326 s, benchmarks/RESULTS.md). Pass -n 0 (or any pytest
# option) to change it.
exec .venv/bin/python -m pytest -n 2 "$@"
