"""Bots from a git revision (``source: {repo, rev}``): checked out into the cache without
touching the repository, built there, run from there, and told apart by their commit."""

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from zoo.helpers import hello

from arena.core.rules import Rules, Seating
from arena.harness.botproc import BotProcess
from arena.harness.protocol import Termination
from arena.match.referee import play_match
from arena.tournament.build import plan_builds, prepare_bots, run_builds
from arena.tournament.buildspec import BuildSpec
from arena.tournament.config import BotConfig, load_config
from arena.tournament.identity import identify_bot, identity_changes
from arena.tournament.sources import SourceError, SourceSpec, checkout
from arena.tournament.worker import bot_spec

ROOT = Path(__file__).resolve().parents[2]
FIRSTMOVE_C = ROOT / "bots" / "c" / "firstmove.c"


def git(repo: Path, *args: str) -> str:
    env_args = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", "-C", str(repo), *env_args, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small bot repository: the C bot in bot/ on main, a second version on branch dev
    (a new ready name), and the working tree left dirty with a third, uncommitted one."""
    repo = tmp_path / "mybot"
    (repo / "bot").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    source = repo / "bot" / "firstmove.c"
    shutil.copy(FIRSTMOVE_C, source)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first version")
    git(repo, "checkout", "-q", "-b", "dev")
    source.write_text(source.read_text().replace('firstmove.c\\"', 'firstmove v2\\"'))
    git(repo, "commit", "-q", "-am", "second version")
    git(repo, "checkout", "-q", "main")
    source.write_text("this is not C: work in progress\n")
    return repo


def tournament(tmp_path: Path, bots: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\nbots:\n{bots}")
    return path


TWO_REVISIONS = "".join(
    f"  - {{name: {name}, cmd: ./firstmove.bin, cwd: bot, build: cc -O2 -o firstmove.bin firstmove.c,"
    f" source: {{repo: mybot, rev: {rev}}}}}\n"
    for name, rev in (("old", "main"), ("new", "dev"))
)


def test_two_revisions_are_two_runnable_bots_with_two_identities(tmp_path, repo):
    before = (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), git(repo, "worktree", "list"))
    config = load_config(tournament(tmp_path, TWO_REVISIONS))
    report = run_builds(config, str(tmp_path / "logs"), 2, cache_dir=str(tmp_path / "cache"))

    main, dev = git(repo, "rev-parse", "main"), git(repo, "rev-parse", "dev")
    old, new = report.config.bot("old"), report.config.bot("new")
    assert (old.source.commit, new.source.commit) == (main, dev)
    assert [(b.bots, b.commit, b.built) for b in report.builds] == [(("old",), main, True), (("new",), dev, True)]
    assert old.resolved_cwd == str(tmp_path / "cache" / "checkouts" / main / "bot")
    assert new.resolved_cwd == str(tmp_path / "cache" / "checkouts" / dev / "bot")

    # The repository is untouched: same status, same HEAD, no worktree added, no binary.
    assert (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), git(repo, "worktree", "list")) == before
    assert not (repo / "bot" / "firstmove.bin").exists()

    ids = identify_bot(old), identify_bot(new)
    assert (ids[0].commit, ids[1].commit) == (main, dev)
    assert ids[0] != ids[1] and ids[0].label == f"old@{main[:7]}"
    reasons = identity_changes(*ids)
    assert reasons[0] == f"revision changed ({main[:12]} -> {dev[:12]})"
    assert any(r.startswith("program file ./firstmove.bin changed (sha256 ") for r in reasons), reasons

    # Both play, against each other, from their own checkouts.
    procs = [BotProcess(bot_spec(report.config.bot(name), sys.executable)) for name in ("old", "new")]
    try:
        record = play_match(procs, Rules(target=5), Seating.alone(2), seed=3)
    finally:
        for proc in procs:
            proc.close()
    assert record.seats == ("old", "new")
    assert [o.termination for o in record.outcomes] == [Termination.OK] * 2, record.failures


def test_the_ready_name_fills_the_identity_and_its_label(tmp_path, repo):
    config = load_config(tournament(tmp_path, TWO_REVISIONS))
    report = run_builds(config, str(tmp_path / "logs"), 2, cache_dir=str(tmp_path / "cache"))
    ids = []
    for name in ("old", "new"):
        with BotProcess(bot_spec(report.config.bot(name), sys.executable)) as proc:
            ready = proc.begin_match(hello())
        ids.append(identify_bot(report.config.bot(name)).with_ready_name(ready.name))
    assert [i.ready_name for i in ids] == ["firstmove.c", "firstmove v2"]
    assert ids[1].label == "new@v2" and ids[1].version == "v2"
    assert identity_changes(*ids)[-1] == "ready name changed ('firstmove.c' -> 'firstmove v2')"


def test_a_second_run_reuses_the_checkouts_and_the_builds(tmp_path, repo):
    config = load_config(tournament(tmp_path, TWO_REVISIONS))
    cache = str(tmp_path / "cache")
    run_builds(config, str(tmp_path / "logs"), 2, cache_dir=cache)
    assert [p.will_run for p in plan_builds(config, cache_dir=cache)] == [False, False]
    report = run_builds(config, str(tmp_path / "logs"), 2, cache_dir=cache)
    assert [b.built for b in report.builds] == [False, False]
    assert sorted(p.name for p in (tmp_path / "cache" / "checkouts").iterdir()) == sorted(
        [git(repo, "rev-parse", "main"), git(repo, "rev-parse", "dev")])


def test_the_plan_resolves_revisions_without_checking_them_out(tmp_path, repo):
    config = load_config(tournament(tmp_path, TWO_REVISIONS))
    plan = plan_builds(config, cache_dir=str(tmp_path / "cache"))
    main = git(repo, "rev-parse", "main")
    assert plan[0].commit == main and plan[0].will_run and plan[0].reason == "its revision is not checked out yet"
    assert plan[0].describe().startswith(f"old at {main[:12]}: build: cc -O2")
    assert not (tmp_path / "cache").exists()


def test_a_moved_branch_is_a_new_commit_and_a_new_identity(tmp_path, repo):
    path = tournament(tmp_path, TWO_REVISIONS)
    cache = str(tmp_path / "cache")
    before = identify_bot(run_builds(load_config(path), str(tmp_path / "logs"), cache_dir=cache).config.bot("new"))
    git(repo, "checkout", "-q", "-f", "dev")
    (repo / "bot" / "README").write_text("docs only\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "docs")
    after = identify_bot(run_builds(load_config(path), str(tmp_path / "logs"), cache_dir=cache).config.bot("new"))
    assert before.commit != after.commit
    assert identity_changes(before, after) == [f"revision changed ({before.commit[:12]} -> {after.commit[:12]})"]


def test_a_bot_from_a_revision_without_a_build_and_a_subfolder_repo(tmp_path, repo):
    (repo / "py").mkdir()
    (repo / "py" / "bot.py").write_text((ROOT / "bots" / "random_bot.py").read_text())
    git(repo, "add", "py")
    git(repo, "commit", "-q", "-m", "a Python bot")
    # repo names a subfolder: cwd is relative to it, inside the checkout.
    path = tournament(tmp_path, "  - {name: py, cmd: $PYTHON bot.py, source: {repo: mybot/py, rev: main}}\n"
                                "  - {name: py2, cmd: $PYTHON bot.py, source: {repo: mybot/py, rev: main}}\n")
    report = run_builds(load_config(path), str(tmp_path / "logs"), cache_dir=str(tmp_path / "cache"))
    main = git(repo, "rev-parse", "main")
    assert report.builds == ()
    assert report.config.bot("py").resolved_cwd == str(tmp_path / "cache" / "checkouts" / main / "py")
    assert identify_bot(report.config.bot("py")).files[0][0] == "bot.py"
    assert [p.describe() for p in plan_builds(load_config(path), cache_dir=str(tmp_path / "cache"))][0] == (
        f"py at {main[:12]}: revision 'main' checked out, no build")


def test_arena_run_plays_a_bot_from_a_revision_in_its_checkout(tmp_path, repo):
    # The file's folder holds no bot.py: the bot finds it only in its checkout (`arena run`
    # once planned before the checkout and ran it from the file's folder, where it failed).
    (repo / "py").mkdir()
    (repo / "py" / "bot.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] in ('hello', 'new_match'):\n"
        "        print(json.dumps({'type': 'ready', 'name': 'first', 'protocol': 1}), flush=True)\n"
        "    elif msg['type'] == 'request':\n"
        "        print(json.dumps({'type': 'move', 'id': msg['id'], 'move': msg['legal'][0]}), flush=True)\n")
    git(repo, "add", "py")
    git(repo, "commit", "-q", "-m", "a Python bot")
    path = tmp_path / "t.yaml"
    path.write_text("name: t\nseed: 1\nrules: {target: 5}\nbots:\n"
                    "  - {name: py, cmd: $PYTHON bot.py, source: {repo: mybot/py, rev: main}}\n"
                    f"  - {{name: greedy, cmd: $PYTHON bots/greedy_bot.py, cwd: {ROOT}}}\n")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(path), "--strict", "--no-progress", "--no-report",
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "ARENA_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]  # --strict: no bot failure


@pytest.mark.parametrize("source, key, why", [
    ("{repo: mybot, rev: no-such-branch}", "source.rev", "unknown revision 'no-such-branch' in "),
    ("{repo: mybot, rev: --all}", "source.rev", "unknown revision '--all' in "),
    ("{repo: plain, rev: main}", "source.repo", "is not a git repository"),
])
def test_a_bad_source_is_one_line_naming_the_bot_and_the_key(tmp_path, repo, source, key, why):
    (tmp_path / "plain").mkdir()
    entries = "".join(f"  - {{name: {name}, cmd: ./b.bin, source: {source}}}\n" for name in "bc")
    path = tournament(tmp_path, entries)
    config = load_config(path)
    for attempt in (lambda: plan_builds(config, cache_dir=str(tmp_path / "cache")),
                    lambda: run_builds(config, str(tmp_path / "logs"), cache_dir=str(tmp_path / "cache"))):
        with pytest.raises(SourceError) as caught:
            attempt()
        assert caught.value.bot == "b" and caught.value.key == key
        assert str(caught.value).startswith(f"bot 'b': key '{key}': ") and why in str(caught.value)
        assert "\n" not in str(caught.value)


def test_a_cwd_missing_at_the_revision_is_refused(tmp_path, repo):
    path = tournament(tmp_path, "  - {name: b, cmd: ./b.bin, cwd: nowhere, source: {repo: mybot, rev: main}}\n"
                                "  - {name: c, cmd: ./b.bin, cwd: nowhere, source: {repo: mybot, rev: main}}\n")
    with pytest.raises(SourceError, match=r"bot 'b': key 'cwd': expected a folder at revision [0-9a-f]{12} of mybot"):
        run_builds(load_config(path), str(tmp_path / "logs"), cache_dir=str(tmp_path / "cache"))


def test_concurrent_checkouts_of_one_commit_share_one_complete_copy(tmp_path, repo):
    source = SourceSpec(repo="mybot", rev="dev", base_dir=str(tmp_path))
    cache = str(tmp_path / "cache")
    places, errors = [], []

    def take() -> None:
        try:
            places.append(checkout("b", source, cache))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len({p.root for p in places}) == 1
    root = Path(places[0].root)
    assert (root / "bot" / "firstmove.c").read_text() == git(repo, "show", "dev:bot/firstmove.c") + "\n"
    assert [p.name for p in root.parent.iterdir()] == [root.name]  # no temporary folder left


def test_bots_made_in_code_from_two_revisions_are_prepared_without_a_tournament_file(tmp_path, repo):
    # What `arena sprt --repo mybot --base main --dev dev --build ... --cmd ...` needs.
    bots = [
        BotConfig(name, "./firstmove.bin", "bot", base_dir=str(tmp_path), build=BuildSpec("cc -O2 -o firstmove.bin firstmove.c"),
                  source=SourceSpec("mybot", rev, base_dir=str(tmp_path)))
        for name, rev in (("base", "main"), ("dev", "dev"))
    ]
    ready, builds = prepare_bots(bots, str(tmp_path / "logs"), cache_dir=str(tmp_path / "cache"))
    assert [b.source.commit for b in ready] == [git(repo, "rev-parse", "main"), git(repo, "rev-parse", "dev")]
    assert [(b.bots, b.built) for b in builds] == [(("base",), True), (("dev",), True)]
    assert identify_bot(ready[0]) != identify_bot(ready[1])
