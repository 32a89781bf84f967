"""Bots from a git revision: ``source: {repo: PATH, rev: REV}`` in a tournament file.

A revision is resolved to its full commit id and its tree is written, object by object
(``git ls-tree`` and ``git cat-file --batch``), into ``<cache>/checkouts/<commit>/``. The
repository is a stranger's: nothing of it may run (no filter, hook, fsmonitor or other
command its config names: see ``_git_process``), and no path or link of its tree may lead
out of the checkout. Only its objects are read: the user's working tree, index, branches
and worktree list are never touched. A checkout is written into a private temporary folder
and renamed into place when complete, so a checkout folder that exists is whole, and two
arenas extracting the same commit at once both end up using one complete copy. A commit's
tree never changes, so a checkout is never refreshed.

Files are as the repository stores them: ``.gitattributes`` changes nothing (no filter, no
end-of-line conversion, no ``export-ignore``); a submodule is an empty folder, a Git LFS file
its pointer; a bot needing them builds them in its ``build:``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, replace
from typing import IO, Any

from arena.errors import ArenaError
from arena.harness.scratch import make_folder, sweep_once

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


# Every git command of the arena runs through ``_git_process``. The repository is a
# stranger's, and git reads its ``.git/config`` whatever the environment says, so safety
# comes from two things together: the commands used (rev-parse, ls-tree, cat-file --batch)
# never run a filter, hook, pager, editor, textconv, diff driver, fsmonitor or credential
# helper, and the options below switch off what could still run something (a lazy fetch
# of a missing object through a promisor remote: any transport, ext:: included). The
# user's own and the system's config are not read either: a checkout must not depend on
# who runs the arena.
_GIT_OPTIONS = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "protocol.allow=never",
    "-c", "credential.helper=",
    "--no-pager",
)
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    # Set, it is the list of protocols allowed, above any protocol.<name>.allow of the
    # repository's config (which outranks protocol.allow): empty, it allows none.
    "GIT_ALLOW_PROTOCOL": "",
    # And no missing object fetched at all (git 2.39.4 and later; older ones ignore it).
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",
    # A replace ref would make the commit read here differ from the commit id recorded.
    "GIT_NO_REPLACE_OBJECTS": "1",
    # Reading must not write: no index refresh, no lock.
    "GIT_OPTIONAL_LOCKS": "0",
}


def _git_env() -> dict[str, str]:
    # Every GIT_* variable of the arena's environment goes: GIT_DIR, GIT_CONFIG_PARAMETERS,
    # GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND and the like would redirect or run something.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, **_GIT_ENV}


def _git_process(bot: str, key: str, repo: str, args: tuple[str, ...], *, stdin: Any = subprocess.DEVNULL,
                 stderr: Any = subprocess.PIPE) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(["git", *_GIT_OPTIONS, "-C", repo, *args], stdin=stdin, stdout=subprocess.PIPE,
                                stderr=stderr, env=_git_env())
    except FileNotFoundError:
        raise SourceError(bot, key, "git is not installed (it is needed to read a revision)") from None


def _git_failed(bot: str, key: str, repo: str, args: tuple[str, ...], stderr: bytes) -> SourceError:
    detail = (stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
    return SourceError(bot, key, f"git {args[0]} failed in {repo}: {detail}")


def _git_bytes(bot: str, key: str, repo: str, *args: str) -> bytes:
    proc = _git_process(bot, key, repo, args)
    try:
        out, err = proc.communicate(timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise SourceError(bot, key, f"git {args[0]} in {repo} did not finish within {GIT_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise _git_failed(bot, key, repo, args, err)
    return out


def _git(bot: str, key: str, repo: str, *args: str) -> str:
    return _git_bytes(bot, key, repo, *args).decode(errors="replace").strip()


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
    # An extraction that a kill -9 cut short left its folder: the next arena here removes it.
    sweep_once(os.path.dirname(place.root))
    if not os.path.isdir(place.root):
        _extract(bot, source.resolved_repo, place.commit, place.root)
    return place


def is_checked_out(cache_dir: str, commit: str) -> bool:
    return os.path.isdir(checkout_path(cache_dir, commit))


def _extract(bot: str, repo: str, commit: str, root: str) -> None:
    parent = os.path.dirname(root)
    os.makedirs(parent, exist_ok=True)
    tmp = make_folder(parent, label=f"{commit[:12]}-")
    try:
        try:
            _write_tree(bot, repo, commit, tmp)
        except OSError as exc:
            raise SourceError(bot, "source", f"extracting {commit[:12]} failed: {exc.strerror or exc}") from None
        try:
            os.rename(tmp, root)
        except OSError:
            # Another arena extracted the same commit first: its copy is complete, use it.
            if not os.path.isdir(root):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass(frozen=True)
class _Entry:
    mode: int
    kind: str  # blob or commit (a submodule)
    oid: str
    path: bytes


# Longer than any path a link of a real repository holds; read into memory, so bounded.
MAX_LINK_BYTES = 4096


def _tree_entries(bot: str, repo: str, commit: str) -> list[_Entry]:
    """Every file, link and submodule of the commit's tree, refused whole if one path could
    land outside the checkout or on top of another entry. git refuses such trees when it
    checks objects, but a hostile repository can be written without those checks."""
    out = _git_bytes(bot, "source.rev", repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid = meta.decode("ascii", errors="replace").split(" ")
        entries.append(_Entry(int(mode, 8), kind, oid, path))
    paths = {entry.path for entry in entries}
    if len(paths) != len(entries):
        raise _bad_tree(bot, commit, "the same path twice")
    for entry in entries:
        parts = entry.path.split(b"/")
        if entry.path.startswith(b"/") or any(p in (b"", b".", b"..") or p.lower() == b".git" for p in parts):
            raise _bad_tree(bot, commit, f"the path {os.fsdecode(entry.path)!r}")
        # A file beneath a link would be written wherever the link points.
        for i in range(1, len(parts)):
            if b"/".join(parts[:i]) in paths:
                raise _bad_tree(bot, commit, f"{os.fsdecode(entry.path)!r} beneath a file or link")
    return entries


def _bad_tree(bot: str, commit: str, what: str) -> SourceError:
    return SourceError(bot, "source.rev", f"revision {commit[:12]} holds {what}, which git itself refuses to "
                                          "check out; it is not extracted")


def _write_tree(bot: str, repo: str, commit: str, dest: str) -> None:
    """The commit's tree written into ``dest`` from its objects as stored: no filter, no
    attribute, no hook applies (git's checkout and archive would apply the repository's)."""
    entries = _tree_entries(bot, repo, commit)
    blobs = [e for e in entries if e.kind == "blob"]
    for entry in entries:
        if entry.kind == "commit":
            # A submodule: an empty folder, as git archive leaves it.
            os.makedirs(os.path.join(os.fsencode(dest), entry.path), exist_ok=True)
        elif entry.kind != "blob":
            raise _bad_tree(bot, commit, f"{os.fsdecode(entry.path)!r} of kind {entry.kind}")
    links: list[tuple[bytes, bytes]] = []
    with tempfile.TemporaryFile() as ids, tempfile.TemporaryFile() as err:
        ids.write(b"".join(e.oid.encode() + b"\n" for e in blobs))
        ids.seek(0)
        args = ("cat-file", "--batch")
        proc = _git_process(bot, "source.rev", repo, args, stdin=ids, stderr=err)
        assert proc.stdout is not None
        out = proc.stdout
        timer = threading.Timer(GIT_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            for entry in blobs:
                target = os.path.join(os.fsencode(dest), entry.path)
                size = _blob_header(out, entry)
                if entry.mode == 0o120000:
                    if size > MAX_LINK_BYTES:
                        raise _bad_tree(bot, commit, f"a link {os.fsdecode(entry.path)!r} of {size:,} bytes")
                    links.append((target, _read_exactly(out, size)))
                else:
                    _write_file(out, size, target, 0o755 if entry.mode & 0o111 else 0o644)
                if out.read(1) != b"\n":
                    raise _Unreadable()
            proc.wait()
        except _Unreadable:
            proc.kill()
            proc.wait()
            if timer.finished.is_set():
                raise SourceError(bot, "source.rev", f"git cat-file in {repo} did not finish within "
                                                     f"{GIT_TIMEOUT_S} s") from None
            err.seek(0)
            raise _git_failed(bot, "source.rev", repo, args, err.read() or b"an object of the tree is missing") from None
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            out.close()
        if proc.returncode != 0:
            err.seek(0)
            raise _git_failed(bot, "source.rev", repo, args, err.read())
    # Links last: no file is ever written through one, and each is checked where it lands.
    real_dest = os.path.realpath(dest)
    for path, link in links:
        if os.path.isabs(link) or b"\0" in link:
            raise _bad_tree(bot, commit, f"a link {os.fsdecode(path)!r} to {os.fsdecode(link)!r}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(link, path)
    for path, link in links:
        lands = os.path.realpath(path)
        if os.path.commonpath([real_dest, os.fsdecode(lands)]) != real_dest:
            rel = os.path.relpath(os.fsdecode(path), dest)
            raise SourceError(bot, "source.rev", f"revision {commit[:12]} holds a link {rel!r} to "
                                                 f"{os.fsdecode(link)!r}, which leads out of the bot's files; "
                                                 "it is not extracted")


class _Unreadable(Exception):
    """git's answer ended or was not the object asked for: it failed, or was stopped."""


def _blob_header(out: IO[bytes], entry: _Entry) -> int:
    header = out.readline().split()
    if len(header) != 3 or header[0] != entry.oid.encode() or header[1] != b"blob" or not header[2].isdigit():
        raise _Unreadable()
    return int(header[2])


def _read_exactly(out: IO[bytes], size: int) -> bytes:
    data = out.read(size)
    if len(data) != size:
        raise _Unreadable()
    return data


_CHUNK = 1 << 20


def _write_file(out: IO[bytes], size: int, path: bytes, mode: int) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # O_EXCL and O_NOFOLLOW: the folder is new and holds no link yet, so this only guards
    # against a mistake here, never a race.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        left = size
        while left:
            chunk = out.read(min(left, _CHUNK))
            if not chunk:
                raise _Unreadable()
            f.write(chunk)
            left -= len(chunk)
