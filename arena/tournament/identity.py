"""A bot's identity: what makes a stored result belong to this bot and no other version.

A tournament names its bots, but a name outlives a rebuild: results stored for ``c-bot``
yesterday were played by yesterday's binary. ``BotIdentity`` records what was run: the command
as written, the SHA-256 of every file the command names (the program, or the script an
interpreter runs), the digest of the build's inputs, the commit of a bot taken from a
revision, the environment the file gives it, and the name the bot gave in its ``ready`` reply.

Its ``key`` is the identity proper, and it is what the program *is*, never how the command
spells it: each file the command names counts by its content (so an absolute path, a relative
one with ``cwd`` and a symlink to the same file are one key), an interpreter by its family
(``$PYTHON``, ``python3`` and ``/usr/bin/python3.11`` are all ``python``: the interpreter is
not the bot), a built bot by its build's inputs when they are known (its binary is what the
build made of them), a bot from a revision by its commit, and the other arguments and the
environment by their text. The key is a function of the recorded fields alone, so a store
written before keys were recorded gets its keys recomputed, never guessed
(``fill_from``: its environment is in the store's config). ``version`` and ``label`` are what
people read (``mybot@2.0`` for the bot the file names ``mybot``, from a ready name ending in
its version, ``2.0``, else a short hash), and
``identity_changes`` says, in words, why two identities differ.

This module also owns the question "which files does a command name?", which the build
step (build.py) asks too: a build's outputs are the files the bot's command names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from arena.harness.botproc import _SOURCE_SUFFIXES, expand_python, split_command
from arena.tournament.buildspec import match_inputs, unmatched_text
from arena.tournament.grants import written_folders
from arena.tournament.sources import SourceError

if TYPE_CHECKING:
    from arena.tournament.config import BotConfig

_READ_CHUNK = 1 << 20

# A bot's later versions in one results folder play as ``name~2``, ``name~3`` (versions.py):
# ``~`` is never in a configured name, so an entrant name says whose version it is.
VERSION_MARK = "~"


def entrant_name(bot: str, number: int) -> str:
    return f"{bot}{VERSION_MARK}{number}"


def bot_name(entrant: str) -> str:
    """The configured name of an entrant (``mybot~2`` -> ``mybot``)."""
    return entrant.split(VERSION_MARK, 1)[0]


def label_bot(label: str) -> str:
    """The bot a label names (``mybot@2.0`` -> ``mybot``; a plain name is its own):
    ``BotIdentity.label`` read back."""
    return label.split("@", 1)[0]


def sha256_file(path: str) -> str | None:
    """The file's SHA-256 in hex, or None if it is not a readable regular file."""
    if not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_READ_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def program_files(cmd: str | tuple[str, ...]) -> tuple[str, ...]:
    """The files a bot command names, as written (relative to the bot's cwd): the program
    when it is a path (``./bot.bin``), and each argument with a script's ending
    (``bot.py``, ``bot.js``, ``Bot.java``, ``bot.jar``, ...), the same files
    ``botproc.missing_program`` requires to exist. A shell command line names none: what it
    runs is the shell's business. Give the command as written (``$PYTHON`` unexpanded): the
    interpreter is not the bot.
    """
    # $PYTHON stands for an interpreter on the PATH, as far as files go (and its '$' is not
    # shell syntax).
    argv = split_command(expand_python(cmd, "python3"))
    if argv[:2] == ("/bin/sh", "-c"):
        return ()
    named = [argv[0]] if os.sep in argv[0] else []
    named += [arg for arg in argv[1:] if arg.endswith(_SOURCE_SUFFIXES) and not arg.startswith("-")]
    return tuple(dict.fromkeys(named))


def _words(cmd: str | tuple[str, ...]) -> list[str]:
    """The words of a command, shell operators apart (``a.c&&b`` -> ``a.c``, ``&&``, ``b``)."""
    if not isinstance(cmd, str):
        return list(cmd)
    lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the command fails at run time and says so
        return cmd.split()


def command_outputs(cmd: str | tuple[str, ...]) -> tuple[str, ...]:
    """The files a build command says it writes: the argument of each ``-o``."""
    words = _words(cmd)
    return tuple(dict.fromkeys(words[i + 1] for i, word in enumerate(words[:-1]) if word == "-o"))


def build_input_files(cmd: str | tuple[str, ...], inputs: tuple[str, ...], cwd: str,
                      outputs: Iterable[str] = (), written: Sequence[str] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The build's inputs, as paths relative to ``cwd``, sorted, and the ``inputs`` patterns
    that matched nothing.

    With declared ``inputs`` (globs relative to ``cwd``, ``**`` for any depth), the files
    they match. Without, the existing files the build command names (``cc -o bot bot.c``:
    ``bot.c``), except its outputs (``-o`` arguments and ``outputs``, the files the bot's
    command names), and those below the folders of ``written`` (the bot's ``writable`` ones,
    absolute). Give the command as written (``$PYTHON`` is not a file).
    """
    exclude = {os.path.normpath(p) for p in (*outputs, *command_outputs(cmd))}
    found: set[str] = set()
    unmatched: list[str] = []
    if inputs:
        found, unmatched = match_inputs(inputs, cwd, written)
    else:
        for word in _words(cmd):
            path = os.path.normpath(word)
            if not word.startswith("-") and os.path.isfile(os.path.join(cwd, os.path.expanduser(word))):
                found.add(path)
    return tuple(sorted(found - exclude)), tuple(unmatched)


def outside_input_folders(bot: BotConfig) -> tuple[str, ...]:
    """The folders of an unbuilt bot's ``inputs:`` files that lie outside its own (``inputs:
    ['../shared/*.py']``), absolute: the file says the bot is made of them, and sealed it sees
    its own folder and no other of the user's, so it is given these to read as well. A built
    bot's inputs are its build's, not its program's."""
    if bot.build is not None or not bot.inputs:
        return ()
    cwd = bot.resolved_cwd
    paths, _ = build_input_files("", bot.inputs, cwd, (), written_folders(bot))
    outside = {os.path.dirname(os.path.normpath(os.path.join(cwd, path))) for path in paths
               if path == os.pardir or path.startswith(os.pardir + os.sep)}
    return tuple(sorted(outside))


def digest_files(cwd: str, paths: Iterable[str]) -> dict[str, str | None]:
    """Each path (relative to ``cwd``) -> its SHA-256, None when missing."""
    return {path: sha256_file(os.path.join(cwd, os.path.expanduser(path))) for path in paths}


def digest_of(data: Any) -> str:
    """SHA-256 of a JSON-able value in canonical form."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# --- the identity ---------------------------------------------------------------------


@dataclass(frozen=True)
class BotIdentity:
    """What was run under a bot's name. Plain, hashable, and JSON-able through ``to_dict``.

    ``files``: (path as the command names it, SHA-256 or None if it was missing), in the
    command's order. ``inputs_sha256``: the digest of the build's inputs, or of an unbuilt
    bot's ``inputs:`` (None: neither, or a build whose inputs are not known). ``commit``: the full commit id of a bot from a
    ``source:``. ``env``: the variables the file gives it (None: not recorded, a store of an
    older arena; ``fill_from`` completes it). ``built``: it has a ``build:``. ``ready_name``:
    the name the bot gave in its ``ready`` reply, known once it has started (None until then).
    """

    name: str
    cmd: str | tuple[str, ...]
    files: tuple[tuple[str, str | None], ...] = ()
    inputs_sha256: str | None = None
    commit: str | None = None
    ready_name: str | None = None
    env: tuple[tuple[str, str], ...] | None = ()
    built: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "cmd": self.cmd if isinstance(self.cmd, str) else list(self.cmd),
            "files": {path: sha for path, sha in self.files},
            "inputs_sha256": self.inputs_sha256,
            "commit": self.commit,
            "ready_name": self.ready_name,
        }
        if self.env is not None:
            out.update(env=dict(self.env), built=self.built, identity=self.key)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BotIdentity:
        cmd = data["cmd"]
        files = data.get("files") or {}
        env = data.get("env")
        return cls(
            name=str(data["name"]),
            cmd=cmd if isinstance(cmd, str) else tuple(str(part) for part in cmd),
            files=tuple((str(path), None if sha is None else str(sha)) for path, sha in files.items()),
            inputs_sha256=data.get("inputs_sha256"),
            commit=data.get("commit"),
            ready_name=data.get("ready_name"),
            env=None if env is None else tuple(sorted((str(k), str(v)) for k, v in env.items())),
            built=bool(data.get("built", False)),
        )

    def with_ready_name(self, ready_name: str | None) -> BotIdentity:
        return replace(self, ready_name=ready_name)

    def fill_from(self, bot: BotConfig) -> BotIdentity:
        """An identity recorded by an older arena (no ``env``) completed from its bot's
        configuration, which the store kept: its key is then computed as a new one's."""
        if self.env is not None:
            return self
        return replace(self, env=tuple(sorted(bot.env)), built=bot.build is not None)

    @property
    def digest(self) -> str:
        """SHA-256 of the fields as recorded, but the names: what a resume compared before
        identities had a ``key`` (kept for the stores and tests that name it)."""
        data = self.to_dict()
        for field in ("name", "ready_name", "env", "built", "identity"):
            data.pop(field, None)
        return digest_of(data)

    @property
    def key(self) -> str:
        """The identity: SHA-256 of what runs (the module's docstring says what counts)."""
        return content_key(self.cmd, dict(self.files), self.inputs_sha256, self.commit, self.env or (), self.built)

    @property
    def version(self) -> str:
        """The version people read: the ready name's (``mybot 2.0`` -> ``2.0``), else the
        commit's short id for a bot from a revision, else the key's first 7 digits."""
        return ready_version(self.ready_name) or (self.commit or self.key)[:7]

    @property
    def label(self) -> str:
        """``name@version``: the configured name (the file's, never the bot's own word for
        itself: a bot answering ready as ``greedy 1.0`` would pass for greedy) and ``version``
        (``evil`` answering ``greedy 1.0`` is ``evil@1.0``)."""
        return f"{bot_name(self.name)}@{self.version}"


# A label is a side of an export, its team's members joined by "+", which arena rate reads back:
# its name is the file's (config.py), and a version holds no "+".
_VERSION = re.compile(r"v?\d[\w.-]*")


def ready_version(ready_name: str | None) -> str | None:
    """The version a ready name announces as its last word (``mybot 2.0``, ``go-bot v1.2-rc``),
    without build metadata (``1.0.0+build.7`` -> ``1.0.0``, as semver orders them), or None."""
    words = (ready_name or "").split()
    if len(words) >= 2 and "@" not in words[0]:
        version = words[-1].split("+", 1)[0]
        if _VERSION.fullmatch(version):
            return version
    return None


def interpreter_family(program: str) -> str:
    """``/usr/bin/python3.11`` -> ``python``: an interpreter counts by what it is, not its path."""
    return re.sub(r"[\d.]+$", "", os.path.basename(program)) or os.path.basename(program)


def content_key(cmd: str | tuple[str, ...], files: Mapping[str, str | None], inputs_sha256: str | None,
                commit: str | None, env: Iterable[tuple[str, str]], built: bool) -> str:
    """The identity of what a command runs (BotIdentity.key): each word of the command as what
    it stands for. ``files`` maps the files the command names (as written) to their SHA-256."""
    words = [word for word, _path in _command_words(cmd, files, inputs_sha256, built)]
    return digest_of({"words": words, "inputs": inputs_sha256, "commit": commit, "env": sorted(map(list, env))})


def _command_words(cmd: str | tuple[str, ...], files: Mapping[str, str | None], inputs_sha256: str | None,
                   built: bool) -> list[tuple[list[str], str | None]]:
    """Each word of the command as what it stands for, with the path of a file it names (None
    for the other words)."""
    argv = split_command(expand_python(cmd, "python3"))
    if argv[:2] == ("/bin/sh", "-c"):
        return [(["shell", argv[2]], None)]
    scripts = [word for word in argv[1:] if word in files]
    words: list[tuple[list[str], str | None]] = []
    for position, word in enumerate(argv):
        if word in files and not (position == 0 and scripts):
            # A built bot's binary is what the build made of its known inputs.
            words.append((["built"] if built and inputs_sha256 is not None else ["file", files[word] or "missing"], word))
        elif position == 0:
            words.append((["program", interpreter_family(word)], None))
        else:
            words.append((["arg", word], None))
    return words


def identify_bot(bot: BotConfig) -> BotIdentity:
    """The identity of a configured bot as its files are now. For a bot with a
    ``source:``, call it on the bot ``run_builds`` returns (checked out, commit known)."""
    if bot.source is not None and bot.source.commit is None:
        raise SourceError(bot.name, "source", "the revision is not resolved yet (identify the bots run_builds returns)")
    cwd = bot.resolved_cwd
    inputs_sha256 = None
    written = written_folders(bot)
    if bot.build is not None:
        outputs = program_files(bot.cmd)
        paths, _ = build_input_files(bot.build.cmd, bot.build.inputs, cwd, outputs, written)
        if paths:
            inputs_sha256 = digest_of(digest_files(cwd, paths))
    elif bot.inputs:
        # The modules a script imports, say: what runs as much as the files its command names.
        paths, unmatched = build_input_files("", bot.inputs, cwd, program_files(bot.cmd), written)
        if unmatched:  # checked when the file was read, unless the bot is in a checkout
            raise SourceError(bot.name, "inputs", unmatched_text(unmatched[0], cwd))
        inputs_sha256 = digest_of(digest_files(cwd, paths))
    return BotIdentity(
        name=bot.name,
        cmd=bot.cmd,
        files=tuple(digest_files(cwd, program_files(bot.cmd)).items()),
        inputs_sha256=inputs_sha256,
        commit=bot.source.commit if bot.source is not None else None,
        env=tuple(sorted(bot.env)),
        built=bot.build is not None,
    )


def _short(sha: str | None, none: str = "missing") -> str:
    return none if sha is None else f"sha256 {sha[:12]}.."


def _change(old: str | None, new: str | None, none: str = "missing") -> str:
    if old is not None and new is not None:
        return f"sha256 {old[:12]}.. -> {new[:12]}.."
    return f"{_short(old, none)} -> {_short(new, none)}"


def _cmd_text(cmd: str | tuple[str, ...]) -> str:
    return cmd if isinstance(cmd, str) else shlex.join(cmd)


def identity_changes(old: BotIdentity, new: BotIdentity) -> list[str]:
    """Why ``new`` is not the bot ``old`` describes, in words; empty when it is the same program
    (the same ``key``: a command spelled another way is the same bot). The ready names count
    only when both are known."""
    if old.env is not None and new.env is not None and old.key == new.key:
        return _ready_change(old, new)
    reasons: list[str] = []
    old_words = _command_words(old.cmd, dict(old.files), old.inputs_sha256, old.built)
    new_words = _command_words(new.cmd, dict(new.files), new.inputs_sha256, new.built)

    def shape(words: list[tuple[list[str], str | None]]) -> list[list[str]]:
        return [word if path is None else ["file"] for word, path in words]

    respelled = shape(old_words) == shape(new_words)
    if not respelled:
        # More than where its files are: the program, an argument, the files it names.
        reasons.append(f"command changed ({_cmd_text(old.cmd)!r} -> {_cmd_text(new.cmd)!r})")
    if old.commit != new.commit:
        if old.commit and new.commit:
            reasons.append(f"revision changed ({old.commit[:12]} -> {new.commit[:12]})")
        elif new.commit:
            reasons.append(f"now from revision {new.commit[:12]}")
        elif old.commit:
            reasons.append(f"no longer from revision {old.commit[:12]}")
    old_files, new_files = dict(old.files), dict(new.files)
    if respelled:
        # The same command, its files perhaps elsewhere: each counts by its content, in its place.
        pairs = [(o, n) for (_w, o), (_v, n) in zip(old_words, new_words, strict=True) if o is not None and n is not None]
        for old_path, new_path in pairs:
            if old_files[old_path] != new_files[new_path]:
                where = old_path if old_path == new_path else f"{old_path} (now {new_path})"
                reasons.append(f"program file {where} changed ({_change(old_files[old_path], new_files[new_path])})")
        return reasons + _other_changes(old, new) + _ready_change(old, new)
    for path in dict.fromkeys([*old_files, *new_files]):
        if path not in old_files:
            reasons.append(f"program file {path} is new ({_short(new_files[path])})")
        elif path not in new_files:
            reasons.append(f"program file {path} is no longer run")
        elif old_files[path] != new_files[path]:
            reasons.append(f"program file {path} changed ({_change(old_files[path], new_files[path])})")
    return reasons + _other_changes(old, new) + _ready_change(old, new)


def _other_changes(old: BotIdentity, new: BotIdentity) -> list[str]:
    reasons = []
    if old.inputs_sha256 != new.inputs_sha256:
        what, none = ("build inputs", "none known") if old.built or new.built else ("inputs", "none declared")
        reasons.append(f"{what} changed ({_change(old.inputs_sha256, new.inputs_sha256, none)})")
    if old.env is not None and new.env is not None and old.env != new.env:
        reasons.append("environment changed")
    return reasons


def _ready_change(old: BotIdentity, new: BotIdentity) -> list[str]:
    if old.ready_name is not None and new.ready_name is not None and old.ready_name != new.ready_name:
        return [f"ready name changed ({old.ready_name!r} -> {new.ready_name!r})"]
    return []
