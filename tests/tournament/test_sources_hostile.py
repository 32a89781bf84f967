"""A ``source:`` repository written by a hostile bot author: its own git config, hooks,
attributes and tree try to run a command, or to write outside the checkout, when the arena
reads the revision. Each trap is first shown to work with plain git (so the test proves
something), then the arena reads the revision: the bot's files are right, and no trap fired."""

import os
import stat
import subprocess
from pathlib import Path

import pytest
from test_revisions import git

from arena.tournament.sources import SourceError, SourceSpec, checkout, checkout_path

BOT = "import sys\nprint('hello')\n"


def _script(path: Path, marker: Path) -> Path:
    path.write_text(f"#!/bin/sh\necho fired >> {marker}\ncat\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "fired"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "evil"
    (repo / "bot").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "bot" / "bot.py").write_text(BOT)
    run = repo / "bot" / "run.sh"
    run.write_text("#!/bin/sh\nexec python3 bot.py\n")
    run.chmod(0o755)
    return repo


def _commit(repo: Path) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a bot")
    return git(repo, "rev-parse", "HEAD")


def _read(tmp_path: Path, repo: Path, rev: str = "main") -> Path:
    place = checkout("evil", SourceSpec(repo=str(repo), rev=rev, base_dir=str(tmp_path)), str(tmp_path / "cache"))
    return Path(place.root)


def _assert_bot_files(root: Path) -> None:
    assert (root / "bot" / "bot.py").read_text() == BOT
    assert os.stat(root / "bot" / "run.sh").st_mode & stat.S_IXUSR
    assert not os.stat(root / "bot" / "bot.py").st_mode & stat.S_IXUSR


def test_a_smudge_filter_and_a_filter_process_never_run(tmp_path, marker):
    repo = _repo(tmp_path)
    script = _script(tmp_path / "filter.sh", marker)
    (repo / ".gitattributes").write_text("* filter=x\n")
    commit = _commit(repo)
    git(repo, "config", "filter.x.smudge", str(script))
    git(repo, "config", "filter.x.clean", str(script))
    git(repo, "config", "filter.x.required", "true")
    # Armed: git archive, which the arena used to call, runs the smudge filter.
    subprocess.run(["git", "-C", str(repo), "archive", "-o", str(tmp_path / "a.tar"), commit], check=True)
    assert marker.exists()
    marker.unlink()
    git(repo, "config", "filter.x.process", str(script))

    root = _read(tmp_path, repo)
    _assert_bot_files(root)
    assert (root / ".gitattributes").read_text() == "* filter=x\n"
    assert not marker.exists()


def test_hooks_fsmonitor_and_an_included_config_never_run(tmp_path, marker):
    repo = _repo(tmp_path)
    _commit(repo)
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc"):
        _script(hooks / hook, marker)
    own_hooks = tmp_path / "own-hooks"
    own_hooks.mkdir()
    _script(own_hooks / "post-checkout", marker)
    fsmonitor = _script(tmp_path / "fsmonitor.sh", marker)
    git(repo, "config", "core.fsmonitor", str(fsmonitor))
    # Armed: a status runs the fsmonitor, a checkout the hook.
    git(repo, "status", "--porcelain")
    assert marker.exists()
    marker.unlink()
    git(repo, "checkout", "-q", "-b", "other")
    assert marker.exists()
    marker.unlink()

    # More of the same, through an include the repository's config names for itself.
    included = tmp_path / "included.config"
    included.write_text(f"[core]\n\thooksPath = {own_hooks}\n\tpager = {fsmonitor}\n\teditor = {fsmonitor}\n"
                        f"\tsshCommand = {fsmonitor}\n\taskPass = {fsmonitor}\n[diff]\n\texternal = {fsmonitor}\n"
                        f"[credential]\n\thelper = !{fsmonitor}\n[uploadpack]\n\tpackObjectsHook = {fsmonitor}\n")
    git(repo, "config", f"includeIf.gitdir:{repo}/.git.path", str(included))
    git(repo, "config", "protocol.ext.allow", "always")

    root = _read(tmp_path, repo, "other")
    _assert_bot_files(root)
    assert not marker.exists()


def test_a_missing_object_is_never_fetched_through_the_repository_s_remote(tmp_path, marker):
    """A partial clone fetches a missing object from its promisor remote when read: here an
    ext:: remote, a command the repository's own config allows."""
    repo = _repo(tmp_path)
    commit = _commit(repo)
    blob = git(repo, "rev-parse", f"{commit}:bot/bot.py")
    obj = repo / ".git" / "objects" / blob[:2] / blob[2:]
    obj.unlink()
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.url", f"ext::sh -c echo% fired% >>{marker}")
    git(repo, "config", "remote.origin.promisor", "true")
    git(repo, "config", "protocol.ext.allow", "always")
    # Armed: plain git runs the remote's command to fetch the object.
    subprocess.run(["git", "-C", str(repo), "cat-file", "blob", blob], capture_output=True)
    assert marker.exists()
    marker.unlink()

    with pytest.raises(SourceError, match=r"key 'source.rev': git cat-file failed in "):
        _read(tmp_path, repo)
    assert not marker.exists()
    assert not (tmp_path / "cache" / "checkouts" / commit).exists()


def test_the_arena_s_own_git_environment_is_not_passed_on(tmp_path, marker, monkeypatch):
    repo = _repo(tmp_path)
    _commit(repo)
    fsmonitor = _script(tmp_path / "fsmonitor.sh", marker)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{fsmonitor}'")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    _assert_bot_files(_read(tmp_path, repo))
    assert not marker.exists()


def test_a_link_inside_the_tree_is_kept_and_one_leading_out_is_refused(tmp_path):
    repo = _repo(tmp_path)
    (repo / "bot" / "alias.py").symlink_to("bot.py")
    (repo / "up").symlink_to("bot/..")
    commit = _commit(repo)
    root = _read(tmp_path, repo)
    _assert_bot_files(root)
    assert os.readlink(root / "bot" / "alias.py") == "bot.py" and (root / "bot" / "alias.py").read_text() == BOT

    # "../up/.." stays inside by its letters, and leads out through the link up.
    for name, target in (("escape", "../../.."), ("abs", "/etc"), ("chain", "../up/..")):
        (repo / "bot" / name).symlink_to(target)
        commit = _commit(repo)
        with pytest.raises(SourceError, match=r"which leads out|a link"):
            _read(tmp_path, repo)
        assert not Path(checkout_path(str(tmp_path / "cache"), commit)).exists()
        (repo / "bot" / name).unlink()
    leftovers = [p.name for p in (tmp_path / "cache" / "checkouts").iterdir() if p.name.startswith(".")]
    assert leftovers == []


def _tree(repo: Path, entries: list[tuple[str, str, bytes]]) -> str:
    """A tree object written without git's checks: (mode, oid, name) entries."""
    raw = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, oid, name in entries)
    done = subprocess.run(["git", "-C", str(repo), "hash-object", "--literally", "-t", "tree", "-w", "--stdin"],
                          input=raw, capture_output=True, check=True)
    return done.stdout.decode().strip()


@pytest.mark.parametrize("name", [b"..", b".git", b".GIT", b"."])
def test_a_tree_with_a_path_git_refuses_is_not_extracted(tmp_path, marker, name):
    repo = _repo(tmp_path)
    _commit(repo)
    blob = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=b"[core]\n",
                          capture_output=True, check=True).stdout.decode().strip()
    inner = _tree(repo, [("100644", blob, b"config")])
    tree = _tree(repo, [("40000", inner, name), ("100644", blob, b"ok")])
    commit = git(repo, "commit-tree", "-m", "hostile", tree)
    git(repo, "update-ref", "refs/heads/hostile", commit)
    with pytest.raises(SourceError, match=r"key 'source.rev': revision [0-9a-f]{12} holds the path"):
        _read(tmp_path, repo, "hostile")
    assert not Path(checkout_path(str(tmp_path / "cache"), commit)).exists()
    assert not (tmp_path / "config").exists() and not (tmp_path / "cache" / "checkouts" / "config").exists()


def test_a_file_beneath_a_link_of_the_same_tree_is_refused(tmp_path):
    repo = _repo(tmp_path)
    _commit(repo)
    blob = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=b"x",
                          capture_output=True, check=True).stdout.decode().strip()
    link = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=b"/tmp",
                          capture_output=True, check=True).stdout.decode().strip()
    inner = _tree(repo, [("100644", blob, b"planted")])
    tree = _tree(repo, [("120000", link, b"d"), ("40000", inner, b"d")])
    commit = git(repo, "commit-tree", "-m", "hostile", tree)
    git(repo, "update-ref", "refs/heads/hostile", commit)
    with pytest.raises(SourceError, match=r"the same path twice|beneath a file or link"):
        _read(tmp_path, repo, "hostile")
    assert not Path("/tmp/planted").exists()
