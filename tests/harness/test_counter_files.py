"""The arena's kept-open reads of a bot's cgroup counters (``cgroups.CounterFiles``)."""

from __future__ import annotations

import os

import pytest

from arena.harness.cgroups import CounterFiles, cpu_seconds


def _files(tmp_path, stat: str, usage: str, peak: str) -> dict:
    paths = {name: tmp_path / name for name in ("cpuacct.stat", "cpuacct.usage", "peak")}
    for path, text in zip(paths.values(), (stat, usage, peak), strict=True):
        path.write_text(text)
    return {"cpu_version": 1, "cpu": [str(paths["cpuacct.stat"]), str(paths["cpuacct.usage"])],
            "peak": str(paths["peak"])}


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_each_read_is_afresh_from_the_start_of_the_kept_files(tmp_path):
    counters = _files(tmp_path, "user 30\nsystem 10\n", "400000000\n", "1048576\n")
    files = CounterFiles(counters)
    assert files.read() == (*cpu_seconds(1, ["user 30\nsystem 10\n", "400000000\n"]), 1048576)
    assert files.read() == files.read()  # a second read starts from the start again
    (tmp_path / "cpuacct.usage").write_text("800000000\n")  # the counters move on: read them anew
    (tmp_path / "peak").write_text("2097152\n")
    user, system, peak = files.read()
    assert user + system == pytest.approx(0.8) and peak == 2097152
    files.close()


def test_closed_or_unreadable_counters_read_as_none_and_close_their_descriptors(tmp_path):
    before = _open_fds()
    files = CounterFiles(_files(tmp_path, "user 1\nsystem 1\n", "20000000\n", "4096\n"))
    assert _open_fds() == before + 3
    files.close()
    files.close()  # idempotent
    assert _open_fds() == before
    assert files.cpu() is None and files.read() is None and not files.reset_peak()
    # A missing file (its group already removed): nothing kept open, nothing read.
    counters = _files(tmp_path, "user 1\nsystem 1\n", "20000000\n", "4096\n")
    counters["peak"] = str(tmp_path / "gone")
    files = CounterFiles(counters)
    assert _open_fds() == before and files.read() is None
    # Text that is not a counter is no reading either.
    assert CounterFiles(_files(tmp_path, "user 1\nsystem 1\n", "20000000\n", "lots\n")).read() is None
    assert CounterFiles({"cpu": "not a list"}).read() is None


def test_counter_files_dropped_without_close_give_their_descriptors_back(tmp_path):
    before = _open_fds()
    counters = _files(tmp_path, "user 1\nsystem 1\n", "20000000\n", "4096\n")
    for _ in range(20):
        CounterFiles(counters).read()
    assert _open_fds() == before
