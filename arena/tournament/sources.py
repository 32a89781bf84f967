"""Bots from a git revision: ``source: {repo: PATH, rev: REV}`` in a tournament file.

A revision is resolved to its full commit id and its tree is extracted with ``git archive``
into ``<cache>/checkouts/<commit>/``. ``git archive`` only reads the repository: the user's
working tree, index, branches and worktree list are never touched. A checkout is extracted
into a private temporary folder and renamed into place when complete, so a checkout folder
that exists is whole, and two arenas extracting the same commit at once both end up using
one complete copy. A commit's tree never changes, so a checkout is never refreshed.

Not included by ``git archive``: submodules, Git LFS contents, and paths marked
``export-ignore`` in ``.gitattributes``; a bot needing them builds them in its ``build:``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

# A git command that reads a local repository takes well under a second; the limit is only
# there so that a wedged git (a lock held by a crashed process, a slow network filesystem)
# cannot hang the arena.
GIT_TIMEOUT_S = 120


class SourceError(ArenaError):
    """A bot's ``source:`` cannot be used: no such repository or revision, or no git."""

    def __init__(self, bot: str, key: str, message: str) -> None:
        self.bot = bot
        self.key = key
        self.message = message
        super().__init__(f"bot {bot!r}: key '{key}': {message}")


@dataclass(frozen=True)
class SourceSpec:
    """Where a bot's files come from: a revision of a local repository.

    ``repo`` and ``rev`` are as written (``repo`` relative to the tournament file's
    folder). ``commit`` is the full commit id, filled once the revision is resolved; it is
    not part of ``to_dict`` (the file's fingerprint), because the same file names a new
    commit when a branch moves: the bot's identity (identity.py) carries it instead.
    """

    repo: str
    rev: str
    base_dir: str = "."  # absolute folder of the tournament file
    commit: str | None = None

    @property
    def resolved_repo(self) -> str:
        return os.path.normpath(os.path.join(self.base_dir, os.path.expanduser(self.repo)))

    def to_dict(self) -> dict[str, Any]:
        return {"repo": self.repo, "rev": self.rev}


@dataclass(frozen=True)
class Checkout:
    """A revision extracted into the cache: ``root`` is the repository's top level at that
    commit; ``folder`` is the folder ``repo`` named inside it (the root, unless ``repo``
    pointed into a subfolder of a working tree)."""

    commit: str
    root: str
    folder: str


def _git(bot: str, key: str, repo: str, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", repo, *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise SourceError(bot, key, "git is not installed (it is needed to read a revision)") from None
    except subprocess.TimeoutExpired:
        raise SourceError(bot, key, f"git {args[0]} in {repo} did not finish within {GIT_TIMEOUT_S} s") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SourceError(bot, key, f"git {args[0]} failed in {repo}: {detail}")
    return done.stdout.strip()


def resolve(bot: str, source: SourceSpec) -> SourceSpec:
    """The source with ``commit`` set to the full id of ``rev``. Reads the repository only."""
    return replace(source, commit=resolve_commit(bot, source))


def resolve_commit(bot: str, source: SourceSpec) -> str:
    """The full commit id ``rev`` names now (a branch moves; a commit id never does)."""
    repo = source.resolved_repo
    if not os.path.isdir(repo):
        raise SourceError(bot, "source.repo", f"expected a folder holding a git repository, but {repo} is not one")
    try:
        _git(bot, "source.repo", repo, "rev-parse", "--git-dir")
    except SourceError:
        raise SourceError(bot, "source.repo", f"{repo} is not a git repository") from None
    try:
        # --end-of-options: a revision starting with '-' is a name, never an option.
        commit = _git(bot, "source.rev", repo, "rev-parse", "--verify", "--quiet", "--end-of-options",
                      f"{source.rev}^{{commit}}")
    except SourceError:
        commit = ""
    if len(commit) < 40:
        raise SourceError(bot, "source.rev", f"unknown revision {source.rev!r} in {repo} (expected a branch, tag or commit)")
    return commit


def checkout_path(cache_dir: str, commit: str) -> str:
    return os.path.join(cache_dir, "checkouts", commit)


def locate(bot: str, source: SourceSpec, cache_dir: str) -> Checkout:
    """Where the revision is (or will be) checked out. Reads the repository only."""
    commit = source.commit or resolve_commit(bot, source)
    # ``repo`` may name a subfolder of a working tree: the checkout holds the whole tree,
    # and the bot's folder is the same subfolder inside it.
    prefix = _git(bot, "source.repo", source.resolved_repo, "rev-parse", "--show-prefix")
    root = checkout_path(cache_dir, commit)
    return Checkout(commit=commit, root=root, folder=os.path.normpath(os.path.join(root, prefix)))


def checkout(bot: str, source: SourceSpec, cache_dir: str) -> Checkout:
    """Extract the revision into the cache, once: later calls, from this arena or another
    running at the same time, reuse the same complete copy."""
    place = locate(bot, source, cache_dir)
    if not os.path.isdir(place.root):
        _extract(bot, source.resolved_repo, place.commit, place.root)
    return place


def is_checked_out(cache_dir: str, commit: str) -> bool:
    return os.path.isdir(checkout_path(cache_dir, commit))


def _extract(bot: str, repo: str, commit: str, root: str) -> None:
    parent = os.path.dirname(root)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=parent)
    try:
        archive = Path(tmp) / ".archive.tar"
        # Run from the repository's git folder: run from a subfolder of a working tree,
        # git archive would extract that subfolder alone.
        git_dir = _git(bot, "source.repo", repo, "rev-parse", "--absolute-git-dir")
        _git(bot, "source.rev", repo, f"--git-dir={git_dir}", "archive", "--format=tar", "-o", str(archive), commit)
        try:
            done = subprocess.run(["tar", "-x", "-f", str(archive), "-C", tmp], capture_output=True, text=True,
                                  timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise SourceError(bot, "source", "tar is not installed (it is needed to extract a revision)") from None
        if done.returncode != 0:
            raise SourceError(bot, "source", f"extracting {commit[:12]} failed: {done.stderr.strip()[-200:]}")
        archive.unlink()
        try:
            os.rename(tmp, root)
        except OSError:
            # Another arena extracted the same commit first: its copy is complete, use it.
            if not os.path.isdir(root):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
