"""Writing files without being led out of the folder they belong in.

A results folder is written by the arena while untrusted bots run beside it, and it can be a
folder someone else sent. A symbolic link planted in it (``standings.txt -> ~/.bashrc``), or a
hard link (a second name of a file elsewhere), must never make the arena write a file outside
it. Every file the arena writes goes through this module, under two rules:

- **Files written whole** (tables, report and replay pages, logs) are *replaced*: a page or a
  table is written to a new temporary file, created under a fresh random name that cannot
  exist (``O_EXCL``), in the same folder, then renamed over its name; a log is opened without
  following a link (``O_NOFOLLOW``), and when its name holds a link, a hard link or anything
  but a plain file, that name is removed and a new file made. Either way the link itself goes
  and what it pointed at is never touched. No fixed temporary name (``standings.txt.tmp``) is
  ever used, so a link planted under one leads nowhere.
- **Files that hold state** (``run.lock``, ``results.sqlite`` and its ``-wal``, ``-shm`` and
  ``-journal``), **folders the arena writes in** (the results folder itself, ``logs/``, a
  report's replay folder, the folder a log is opened in) are *refused* when they are links: one
  line naming the link, exit code 2, nothing written. They are not replaced: replacing a lock
  would let two runs write one store, and a store or a folder is the user's data.

The path *to* a folder (its parents, as the user or the tournament file gave it) is followed as
given: it is the user's layout (``/tmp`` is a link on macOS), and nothing written inside the
results folder can change it. Each file is created, checked and renamed relative to a
descriptor of its folder, opened once (without following a link at the folder), so neither the
name nor the folder can be swapped for a link between the check and the write. SQLite opens its
files by name: they are checked just before it does.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable, Iterable
from typing import BinaryIO, TextIO

from arena.errors import ArenaError, WriteError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# O_NONBLOCK: opening a fifo planted under a file's name must not wait for a reader.
_FILE_FLAGS = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TRIES = 5  # a name re-planted this many times in a row is refused rather than fought over


class LinkRefusedError(ArenaError):
    """A link, or something other than a plain file or a folder, where the arena must write."""


def _what(path: str) -> str | None:
    """What is at ``path`` when it is not what the arena writes there: a link, a fifo..."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"a symbolic link (to {target})"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISREG(st.st_mode):
        return f"a file with {st.st_nlink} names (hard links)" if st.st_nlink > 1 else None
    kinds = ((stat.S_ISFIFO, "a fifo"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
    return next((name for test, name in kinds if test(st.st_mode)), "not a plain file")


def _refused(path: str, what: str, why: str) -> LinkRefusedError:
    return LinkRefusedError(f"{path} is {what}; {why}")


_NO_LINKS = "the arena writes there only a plain file or folder of its own, never through a link: remove it"


def _split(path: str | os.PathLike[str]) -> tuple[str, str]:
    folder, name = os.path.split(os.fspath(path))
    if not name or name in (".", ".."):
        raise WriteError(f"cannot write {os.fspath(path)}: not a file name")
    return folder or ".", name


def _open_folder(folder: str, *, follow: bool) -> int:
    """A descriptor of ``folder``; unless ``follow``, the folder itself must not be a link."""
    try:
        return os.open(folder, _DIR_FLAGS | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        what = _what(folder)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and what is not None:
            raise _refused(folder, what, f"expected a folder; {_NO_LINKS}") from None
        raise


def make_folder(path: str | os.PathLike[str]) -> None:
    """Make sure ``path`` is a folder, not a link to one: created if missing (its missing
    parents too), refused (``LinkRefusedError``) if it is a link or not a folder."""
    folder = os.fspath(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        pass  # a dangling link or a file: said below
    except OSError as exc:
        raise WriteError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None
    try:
        os.close(_open_folder(folder, follow=False))
    except OSError as exc:
        raise WriteError(f"cannot open the folder {folder}: {exc.strerror or exc}") from None


def refuse_links(folder: str | os.PathLike[str], names: Iterable[str], *, one_name: bool) -> None:
    """Refuse when any of ``names`` in ``folder`` is a symbolic link or not a plain file, and,
    with ``one_name``, a file with other names (a hard link): for files another program opens
    by name (SQLite's). A missing name is fine."""
    for name in names:
        path = os.path.join(os.fspath(folder), name)
        what = _what(path)
        if what is None or (not one_name and what.startswith("a file with")):
            continue
        why = ("writing it would change the file under its other names too: give it a name of its own (copy it)"
               if what.startswith("a file with") else _NO_LINKS)
        raise _refused(path, what, why)


def open_lock_file(folder: str | os.PathLike[str], name: str) -> int:
    """A descriptor of ``folder/name``, read-write, created if missing: for a lock, whose file
    is shared by every process that takes it, so a link there is refused, never replaced.
    The folder itself must not be a link. Raises ``LinkRefusedError``, or ``OSError``."""
    where = os.fspath(folder)
    path = os.path.join(where, name)
    dir_fd = _open_folder(where, follow=False)
    try:
        try:
            fd = os.open(name, os.O_RDWR | _FILE_FLAGS, 0o644, dir_fd=dir_fd)
        except OSError:
            what = _what(path)
            if what is not None:
                raise _refused(path, what, _NO_LINKS) from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                raise _refused(path, _what(path) or "not a plain file", _NO_LINKS)
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd
    finally:
        os.close(dir_fd)


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def _open_replacing(path: str | os.PathLike[str], *, append: bool) -> int:
    folder, name = _split(path)
    shown = os.fspath(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        pass  # a dangling link or a file: said by _open_folder
    dir_fd = _open_folder(folder, follow=False)
    try:
        for _ in range(_TRIES):
            try:
                fd = os.open(name, os.O_WRONLY | _FILE_FLAGS | (os.O_APPEND if append else 0), 0o666, dir_fd=dir_fd)
            except OSError as exc:
                # ELOOP: a symbolic link; ENXIO: a fifo (or socket) with no reader.
                if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EOPNOTSUPP):
                    _unlink(name, dir_fd)
                    continue
                if exc.errno == errno.EISDIR:
                    raise _refused(shown, "a folder", "expected a file") from None
                raise
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                os.set_blocking(fd, True)
                if not append:
                    os.ftruncate(fd, 0)  # only now: a hard-linked file must not be emptied
                return fd
            # A hard link (its other names keep its content) or a fifo with a reader: this
            # name becomes a new file of its own.
            os.close(fd)
            _unlink(name, dir_fd)
        raise _refused(shown, _what(shown) or "replaced again each time", "a link keeps reappearing under its name")
    finally:
        os.close(dir_fd)


def open_log(path: str | os.PathLike[str], *, append: bool = True) -> BinaryIO:
    """``path`` opened for writing bytes, appending by default: a log. A link (symbolic or hard)
    or anything but a plain file under its name is replaced by a new file, never followed; the
    folder it is in must not be a link (``LinkRefusedError``). Other failures: ``OSError``."""
    fd = _open_replacing(path, append=append)
    return os.fdopen(fd, "ab" if append else "wb")


def open_text_log(path: str | os.PathLike[str], *, append: bool = False, errors: str = "replace") -> TextIO:
    """``open_log`` for text (UTF-8), emptied first unless ``append``."""
    fd = _open_replacing(path, append=append)
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8", errors=errors)


def write_bytes(path: str | os.PathLike[str], data: bytes, *, folder_may_be_link: bool = True) -> None:
    """Write ``path`` whole: a new file in the same folder, renamed over the name, so a link or
    a hard link there is replaced, never written through. Missing folders are created. With
    ``folder_may_be_link`` False, the folder must not be a link itself (``LinkRefusedError``).
    Raises ``WriteError`` when it cannot be written (a full disk, no permission)."""
    _write_whole(path, lambda fh: fh.write(data), make_folders=True, follow=folder_may_be_link)


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """``write_bytes`` for text given line by line (each ended by a newline), written as it
    comes: an export of many records is never held whole. Its folder must exist. Raises
    ``WriteError``."""

    def write(fh: BinaryIO) -> None:
        text = io.TextIOWrapper(fh, encoding="utf-8", newline="\n")
        for line in lines:
            text.write(line)
            text.write("\n")
        text.flush()
        text.detach()  # the file is closed by its owner, _write_new

    _write_whole(path, write, make_folders=False, follow=True)


def _write_whole(path: str | os.PathLike[str], write: Callable[[BinaryIO], object], *, make_folders: bool,
                 follow: bool) -> None:
    folder, name = _split(path)
    shown = os.fspath(path)
    try:
        if make_folders:
            try:
                os.makedirs(folder, exist_ok=True)
            except FileExistsError:
                pass  # said by _open_folder
        dir_fd = _open_folder(folder, follow=follow)
    except OSError as exc:
        raise WriteError(f"cannot write {shown}: {exc.strerror or exc}") from None
    try:
        _write_new(dir_fd, name, write)
    except OSError as exc:
        raise WriteError(f"cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(dir_fd)


def _write_new(dir_fd: int, name: str, write: Callable[[BinaryIO], object]) -> None:
    """What ``write`` writes, in a new file of a fresh name in the folder ``dir_fd``, renamed to
    ``name``."""
    for _ in range(_TRIES):
        tmp = f".{name[:180]}.{os.urandom(8).hex()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue  # someone else's file: never touched
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            raise
        return
    raise OSError(errno.EEXIST, "no fresh temporary name")


def write_text(path: str | os.PathLike[str], text: str, *, folder_may_be_link: bool = True) -> None:
    """``write_bytes`` for text, in UTF-8."""
    write_bytes(path, text.encode("utf-8"), folder_may_be_link=folder_may_be_link)


__all__ = [
    "LinkRefusedError",
    "make_folder",
    "open_lock_file",
    "open_log",
    "open_text_log",
    "refuse_links",
    "write_bytes",
    "write_lines",
    "write_text",
]
