"""The ``build:`` step: parsing, running, failing, the build cache, and the example
tournaments built from the files git tracks alone (what a fresh clone has)."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from zoo.helpers import pids_in

from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess, missing_program
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import Termination
from arena.match.referee import play_match
from arena.tournament.build import BuildError, default_cache_dir, plan_builds, run_builds
from arena.tournament.config import ConfigError, load_config
from arena.tournament.worker import bot_spec

pytestmark = pytest.mark.slow  # compiles bots and makes git repositories

ROOT = Path(__file__).resolve().parents[2]
FIRSTMOVE_C = ROOT / "bots" / "c" / "firstmove.c"
OTHER = "  - {name: other, cmd: python3 other.py}\n"


def tournament(tmp_path: Path, bots: str) -> Path:
    """A tournament file in tmp_path: the given bot entries plus a plain Python bot."""
    (tmp_path / "other.py").write_text("")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\nbots:\n{bots}{OTHER}")
    return path


def c_bot(tmp_path: Path, extra: str = "") -> Path:
    """A C bot in tmp_path/bot, built by cc, with the build cache in tmp_path/cache."""
    (tmp_path / "bot").mkdir()
    shutil.copy(FIRSTMOVE_C, tmp_path / "bot" / "bot.c")
    return tournament(tmp_path, f"  - {{name: c, cmd: ./bot.bin, cwd: bot, build: cc -O2 -o bot.bin bot.c{extra}}}\n")


def build(path: Path, tmp_path: Path, **kwargs):
    config = load_config(path)
    return run_builds(config, str(tmp_path / "logs"), 2, cache_dir=str(tmp_path / "cache"), **kwargs)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return state[state.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


# --- parsing -----------------------------------------------------------------------


def test_a_built_bot_whose_program_is_not_built_yet_is_valid(tmp_path):
    config = load_config(c_bot(tmp_path))
    bot = config.bot("c")
    assert bot.build is not None and bot.build.cmd == "cc -O2 -o bot.bin bot.c" and bot.build.inputs == ()
    assert bot.to_dict()["build"] == "cc -O2 -o bot.bin bot.c"
    # A bot without the new keys describes (and fingerprints) exactly as before.
    assert set(config.bot("other").to_dict()) == {"name", "cmd", "cwd", "env", "startup_ms", "move_ms", "bank_ms"}


@pytest.mark.parametrize("entry, key, why", [
    ("{name: c, cmd: ./c, build: 42}", "bots[0].build", "expected a command line"),
    ("{name: c, cmd: ./c, build: []}", "bots[0].build", "expected a command line"),
    ("{name: c, cmd: python3 other.py, inputs: [lib/*.py]}", "bots[0].inputs", "the pattern 'lib/*.py' matches no file in"),
    ("{name: c, cmd: python3 other.py, inputs: []}", "bots[0].inputs", "non-empty list"),
    ("{name: c, cmd: ./c, build: make, inputs: a.c}", "bots[0].inputs", "expected a list of file patterns"),
    ("{name: c, cmd: ./c, build: make, inputs: []}", "bots[0].inputs", "non-empty list"),
    ("{name: c, cmd: ./c, source: {repo: .}}", "bots[0].source.rev", "missing (required)"),
    ("{name: c, cmd: ./c, source: {repo: ., rev: main, branch: x}}", "bots[0].source.branch", "unknown key"),
    ("{name: c, cmd: ./c, source: {repo: nowhere, rev: main}}", "bots[0].source.repo", "expected a folder holding a git"),
    ("{name: c, cmd: ./c, source: {repo: ., rev: ''}}", "bots[0].source.rev", "expected a revision"),
    ("{name: c, cmd: ./c, cwd: .., source: {repo: ., rev: main}}", "bots[0].cwd", "inside the repository"),
    ("{name: c, cmd: ./c, source: [., main]}", "bots[0].source", "expected a mapping of repo, rev"),
])
def test_the_keys_shape_is_checked_naming_the_key(tmp_path, entry, key, why):
    path = tournament(tmp_path, f"  - {entry}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == key and why in caught.value.message, str(caught.value)
    assert caught.value.line == 4


# --- running -----------------------------------------------------------------------


def test_a_failing_build_stops_with_one_line_naming_the_bot_the_code_and_the_log(tmp_path):
    path = tournament(tmp_path, "  - {name: broken, cmd: ./b.bin, build: 'echo compiling...; echo oops >&2; exit 3'}\n")
    with pytest.raises(BuildError) as caught:
        build(path, tmp_path)
    error = caught.value
    log = tmp_path / "logs" / "broken.build.log"
    assert str(error) == f"bot 'broken': build failed with exit code 3; log {log}"
    assert error.bot == "broken" and error.code == 3 and error.log == str(log)
    assert "compiling..." in log.read_text() and "oops" in log.read_text()


def test_a_build_that_leaves_no_program_is_refused(tmp_path):
    path = tournament(tmp_path, "  - {name: lazy, cmd: ./lazy.bin, build: 'true'}\n")
    with pytest.raises(BuildError, match=r"bot 'lazy': the build succeeded but the bot cannot start: .*lazy.bin"):
        build(path, tmp_path)


def test_a_build_that_cannot_start_names_the_program(tmp_path):
    path = tournament(tmp_path, "  - {name: b, cmd: ./b.bin, build: no-such-compiler -o b.bin b.c}\n")
    with pytest.raises(BuildError, match=r"bot 'b': cannot start the build .*no-such-compiler"):
        build(path, tmp_path)


def test_a_build_over_its_time_is_killed_with_its_children(tmp_path):
    # The pid with its PID namespace: a sealed build's pids are its namespace's (zoo.helpers.pids_in).
    path = tournament(tmp_path, "  - {name: slow, cmd: ./s.bin, build: 'sleep 300 & echo $! $(readlink /proc/self/ns/pid)"
                                " > child.pid; wait'}\n")
    with pytest.raises(BuildError, match=r"bot 'slow': build did not finish within 3 s and was killed; log "):
        build(path, tmp_path, timeout_s=3)
    [child] = pids_in(tmp_path / "child.pid")
    deadline = time.monotonic() + 10
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child)


def test_a_build_runs_then_is_cached_and_not_repeated(tmp_path):
    path = c_bot(tmp_path)
    config = load_config(path)
    [planned] = plan_builds(config, cache_dir=str(tmp_path / "cache"))
    assert planned.bots == ("c",) and planned.will_run and "no earlier build" in planned.reason

    first = build(path, tmp_path)
    [done] = first.builds
    assert done.built and done.bots == ("c",)
    binary = tmp_path / "bot" / "bot.bin"
    assert missing_program("./bot.bin", str(tmp_path / "bot"), {}) is None
    stamp = binary.stat().st_mtime_ns

    [planned] = plan_builds(config, cache_dir=str(tmp_path / "cache"))
    assert not planned.will_run and planned.describe().startswith("c: cached: cc -O2 -o bot.bin bot.c (inputs unchanged")
    [again] = build(path, tmp_path).builds
    assert not again.built
    assert binary.stat().st_mtime_ns == stamp  # not rebuilt
    log = Path(again.log).read_text()
    assert log.startswith("# build of c not run: inputs unchanged") and "exit code 0" in log  # the last build's output


def test_a_changed_input_is_rebuilt(tmp_path):
    path = c_bot(tmp_path)
    build(path, tmp_path)
    source = tmp_path / "bot" / "bot.c"
    source.write_text(source.read_text().replace('firstmove.c\\"', 'firstmove v2\\"'))
    [done] = build(path, tmp_path).builds
    assert done.built and done.reason == "inputs changed: bot.c"
    assert b"firstmove v2" in (tmp_path / "bot" / "bot.bin").read_bytes()


def test_declared_inputs_decide_and_other_files_do_not(tmp_path):
    path = c_bot(tmp_path, ", inputs: ['*.c', 'include/**/*.h']")
    (tmp_path / "bot" / "include" / "deep").mkdir(parents=True)
    header = tmp_path / "bot" / "include" / "deep" / "x.h"
    header.write_text("/* 1 */\n")
    assert build(path, tmp_path).builds[0].built
    (tmp_path / "bot" / "notes.txt").write_text("not an input")
    assert not build(path, tmp_path).builds[0].built
    header.write_text("/* 2 */\n")
    [done] = build(path, tmp_path).builds
    assert done.built and done.reason == "inputs changed: include/deep/x.h"


def test_an_inputs_pattern_that_matches_nothing_is_an_error(tmp_path):
    path = c_bot(tmp_path, ", inputs: [src/*.rs]")
    with pytest.raises(BuildError, match=r"bot 'c': key 'inputs': the pattern 'src/\*.rs' matches no file in "):
        build(path, tmp_path)


def test_a_deleted_or_replaced_output_is_rebuilt(tmp_path):
    path = c_bot(tmp_path)
    build(path, tmp_path)
    binary = tmp_path / "bot" / "bot.bin"
    binary.unlink()
    [done] = build(path, tmp_path).builds
    assert done.built and done.reason == "output bot.bin is missing"
    assert binary.is_file()
    binary.write_bytes(b"#!/bin/sh\nexit 1\n")
    [done] = build(path, tmp_path).builds
    assert done.built and done.reason == "output bot.bin changed since the last build"


def test_a_build_without_known_inputs_runs_every_time(tmp_path):
    (tmp_path / "make.sh").write_text("printf '#!/bin/sh\\nexec cat\\n' > m.bin && chmod +x m.bin\n")
    path = tournament(tmp_path, "  - {name: m, cmd: ./m.bin, build: sh make.sh}\n")
    assert build(path, tmp_path).builds[0].built
    # make.sh is named, so it is the input: unchanged, the build is cached.
    assert not build(path, tmp_path).builds[0].built
    path.write_text(path.read_text().replace("build: sh make.sh", "build: sh -c \"$(cat make.sh)\""))
    for _ in range(2):
        [done] = build(path, tmp_path).builds
        assert done.built and "inputs are not known" in done.reason


def test_bots_with_the_same_build_share_one_and_distinct_builds_each_run(tmp_path):
    (tmp_path / "bot").mkdir()
    shutil.copy(FIRSTMOVE_C, tmp_path / "bot" / "bot.c")
    shutil.copy(FIRSTMOVE_C, tmp_path / "bot" / "two.c")
    path = tournament(tmp_path, (
        "  - {name: a, cmd: ./bot.bin, cwd: bot, build: cc -O2 -o bot.bin bot.c}\n"
        "  - {name: a-fast, cmd: ./bot.bin --fast, cwd: bot, build: cc -O2 -o bot.bin bot.c}\n"
        "  - {name: two, cmd: ./two.bin, cwd: bot, build: cc -O2 -o two.bin two.c}\n"
    ))
    report = build(path, tmp_path)
    assert [(b.bots, b.built) for b in report.builds] == [(("a", "a-fast"), True), (("two",), True)]
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["a.build.log", "two.build.log"]


def test_the_build_gets_the_bots_environment_and_python(tmp_path):
    script = "import os, sys; open('env.txt', 'w').write(os.environ['LEVEL'] + ' ' + sys.executable)"
    (tmp_path / "b.py").write_text(script)
    path = tournament(tmp_path, "  - {name: b, cmd: python3 b.py, env: {LEVEL: 7}, build: $PYTHON b.py}\n")
    build(path, tmp_path, python=sys.executable)
    assert (tmp_path / "env.txt").read_text() == f"7 {sys.executable}"


def test_the_default_cache_is_beside_the_tournament_file(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_CACHE_DIR", raising=False)
    config = load_config(c_bot(tmp_path))
    assert default_cache_dir(config) == str(tmp_path / ".arena-cache")
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert default_cache_dir(config) == str(tmp_path / "elsewhere")


# --- the example tournaments on a fresh clone -----------------------------------------


def tracked_copy(dest: Path) -> Path:
    """The repository's tracked files (a fresh clone's), without built or ignored files."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "bots", "tournaments"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest


def test_every_example_tournament_builds_and_its_bots_play_from_a_fresh_clone(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_CACHE_DIR", raising=False)
    clone = tracked_copy(tmp_path / "clone")
    assert not list(clone.glob("bots/**/*.bin")) and not list(clone.glob("bots/**/*.jar"))
    played: set[str] = set()
    files = sorted((clone / "tournaments").glob("*.yaml"))
    assert [f.name for f in files] == sorted(p.name for p in (ROOT / "tournaments").glob("*.yaml"))
    for path in files:
        config = load_config(path, cwd=str(tmp_path))
        report = run_builds(config, str(tmp_path / "logs" / config.name), 2)
        assert default_cache_dir(config) == str(clone / "tournaments" / ".arena-cache")
        for bot in report.config.bots:
            spec = bot_spec(bot, sys.executable)
            assert missing_program(spec.cmd, str(spec.cwd), dict(spec.env)) is None, (path.name, bot.name)
            if bot.to_dict()["cmd"] in played:
                continue
            played.add(bot.to_dict()["cmd"])
            # One short match against an in-process random bot (the expert's search is the
            # cost here: one process of it, not two): it starts, answers and finishes cleanly.
            proc = BotProcess(bot_spec(bot, sys.executable))
            try:
                record = play_match([proc, LocalBot("local", seed=1)], Rules(target=3), Seating.alone(2), seed=5)
            finally:
                proc.close()
            assert [o.termination for o in record.outcomes] == [Termination.OK] * 2, (bot.name, record.failures)
    assert {"./bots/c/firstmove.bin", "java -jar bots/java/escoba.jar"} <= played


def test_a_cwd_under_the_home_folder_is_where_the_build_and_the_bot_run(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "mybot").mkdir(parents=True)
    shutil.copy(FIRSTMOVE_C, tmp_path / "home" / "mybot" / "bot.c")
    path = tournament(tmp_path, "  - {name: c, cmd: ./bot.bin, cwd: ~/mybot, build: cc -O2 -o bot.bin bot.c}\n")
    report = build(path, tmp_path)
    assert report.builds[0].reason == "no earlier build is recorded"
    assert report.config.bot("c").resolved_cwd == str(tmp_path / "home" / "mybot")
    assert (tmp_path / "home" / "mybot" / "bot.bin").is_file()


def test_a_build_is_sealed_like_a_bot(tmp_path):
    """A stranger's build: it may write its own folder, and reach nothing else (the tournament's
    secrets, the network, the user's home, the rest of the disk)."""
    from arena.tournament.build import _sealing

    if _sealing() is None:
        pytest.skip("this machine cannot seal (arena.harness.seal)")
    home_secret = Path.home() / f".escoba-build-secret-{os.getpid()}"
    home_secret.write_text("a token")
    # A folder it sees (the arena's own package, which a build may read) but must not change.
    outside = Path(__file__).resolve().parents[2] / "arena" / f".escoba-build-outside-{os.getpid()}"
    import socket

    listener = socket.create_server(("127.0.0.1", 0))  # the machine's loopback: not the build's own
    script = ("import os, socket\n"
              "out = []\n"
              f"for path in ({str(home_secret)!r}, 't.yaml', 'results/t'):\n"
              "    try:\n"
              "        out.append(f'{path}: ' + ('listed' if os.path.isdir(path) and os.listdir(path) else"
              " repr(open(path).read()) if os.path.isfile(path) else 'absent'))\n"
              "    except OSError as exc:\n"
              "        out.append(f'{path}: {exc.strerror}')\n"
              "try:\n"
              f"    socket.create_connection(('127.0.0.1', {listener.getsockname()[1]}), timeout=1)\n"
              "    out.append('network: reached')\n"
              "except OSError as exc:\n"
              "    out.append(f'network: {exc.strerror}')\n"
              "try:\n"
              f"    open({str(outside)!r}, 'w').write('x')\n"
              "except OSError as exc:\n"
              "    out.append(f'outside: {exc.strerror}')\n"
              "open('report.txt', 'w').write(chr(10).join(out))\n"
              "open('s.bin', 'w').write('#!/bin/sh\\n'); os.chmod('s.bin', 0o755)\n")
    (tmp_path / "probe.py").write_text(script)
    (tmp_path / "results" / "t").mkdir(parents=True)
    (tmp_path / "results" / "t" / "results.sqlite").write_text("the deals")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\noutput: {tmp_path / 'results' / 't'}\nbots:\n"
                    "  - {name: probe, cmd: ./s.bin, build: '$PYTHON probe.py'}\n" + OTHER)
    (tmp_path / "other.py").write_text("")
    try:
        build(path, tmp_path)
    finally:
        home_secret.unlink()
        listener.close()
    report = (tmp_path / "report.txt").read_text()
    assert "a token" not in report and "listed" not in report and "seed" not in report, report
    assert "network: reached" not in report and "network: " in report, report
    written = outside.exists()
    outside.unlink(missing_ok=True)
    assert not written and "outside: " in report, report
