"""Reading a tournament file's YAML within bounds, as a tree of nodes that keep their lines.

Every error names the file, the line, the key and what is allowed, so the YAML is walked as
a node tree (``yaml.compose``) rather than loaded as plain data, which has lost its line
numbers. The bounds (``MAX_*``) hold for any file, however hostile: ``arena.tournament.config``
turns the tree into a ``TournamentConfig``.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, TypeVar, cast

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.error import MarkedYAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError
from yaml.resolver import Resolver

from arena.errors import ArenaError

E = TypeVar("E", bound=Enum)

# What a tournament file may hold (docs/TOURNAMENTS.md, "Limits"). They bound the cost of
# reading any file, however hostile, to well under a second and 100 MB, and are far above
# what a real tournament needs.
MAX_FILE_BYTES = 1_000_000
MAX_VALUES = 50_000  # every key and value, an alias counting as all the values it repeats
MAX_DEPTH = 32  # lists and mappings inside each other, aliases expanded
MAX_TEXT_CHARS = 10_000  # one key or value
# An integer literal longer than this is out of every range the file allows; it is never
# converted (int() of a long decimal string is slow, and refused beyond 4,300 digits).
MAX_NUMBER_CHARS = 100
_EXCERPT_CHARS = 40  # of a value shown in an error
_MESSAGE_CHARS = 300  # of an error's message, whatever it quotes
_WORD_CHARS = 160  # of one word of it (a path may be long; a hostile command longer)
_LIST_ITEMS = 10  # of a list of choices shown in an error


class ConfigError(ArenaError, ValueError):
    """A tournament file is unreadable or invalid; says where and what is allowed."""

    def __init__(self, file: str, line: int | None, key: str | None, message: str) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        where = f"{file}:{line}" if line is not None else file
        what = f"key '{key}': " if key else ""
        super().__init__(f"{where}: {what}{message}")


# --- reading YAML within bounds -----------------------------------------------------

_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, NULL, MERGE, SEQ, MAP = (_TAG + t for t in ("str", "int", "float", "null", "merge", "seq", "map"))
# Explicit tags a file may write: the ones that change nothing but the node's kind. Others
# build Python objects (!!python/...), bytes (!!binary), sets, or nothing known (!mine).
_EXPLICIT_TAGS = (STR, MAP, SEQ)
# libyaml's parser when PyYAML has it (its wheels do): the bounds below hold either way,
# but the pure-Python one is about 20 times slower on a 1 MB file.
_LOADER: Any = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class _Open:
    """A list or mapping being composed."""

    __slots__ = ("node", "anchor", "start", "height", "key")

    def __init__(self, node: SequenceNode | MappingNode, anchor: str | None, start: int) -> None:
        self.node = node
        self.anchor = anchor
        self.start = start  # the running count of values when it opened
        self.height = 1  # its levels of nesting, aliases expanded
        self.key: Node | None = None  # a mapping's key waiting for its value


class _Composer:
    """``yaml.compose`` with bounds: the same node tree, built from the parser's events
    without recursion, refusing (before building it) a document that is nested more than
    MAX_DEPTH deep, holds more than MAX_VALUES values once aliases are expanded, holds a
    value longer than MAX_TEXT_CHARS, a tag other than _EXPLICIT_TAGS, an alias to the
    value it sits in, or a second document.

    Aliases stay shared nodes, as in PyYAML; what is bounded is what anything that walks
    the tree (the checks, merges, a repr in a message) could ever visit. The loop runs once
    per event of a file that may hold 50,000 of them, hence its plainness.
    """

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self.resolver = Resolver()
        self.count = 0
        self.stack: list[_Open] = []
        # anchor -> (node, values, height); None while the anchored value is still open
        self.anchors: dict[str, tuple[Node, int, int] | None] = {}
        self.tags: dict[str, str] = {}  # plain scalar -> its tag (keys and small values repeat)

    def compose(self, text: str) -> Node | None:
        parser = _LOADER(text)
        try:
            root: Node | None = None
            documents = 0
            while parser.check_event():
                event = parser.get_event()
                node: Node
                height = 0
                if isinstance(event, yaml.ScalarEvent):
                    node = self.scalar(event)
                elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                    done = self.stack.pop()
                    done.node.end_mark = event.end_mark
                    if done.anchor is not None:
                        self.anchors[done.anchor] = (done.node, self.count - done.start, done.height)
                    node, height = done.node, done.height
                elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                    self.open(event)
                    continue
                elif isinstance(event, yaml.AliasEvent):
                    node, height = self.alias(event)
                else:
                    if isinstance(event, yaml.DocumentStartEvent):
                        documents += 1
                        if documents > 1:
                            raise self.fail(event, "a second YAML document (after ---); a tournament file holds one")
                    continue
                # A finished node goes into the list or mapping being read; the root if none.
                stack = self.stack
                if not stack:
                    root = node
                    continue
                frame = stack[-1]
                if height >= frame.height:
                    frame.height = height + 1
                    if len(stack) + height > MAX_DEPTH:
                        raise self.fail(event, self.too_deep)
                if isinstance(frame.node, SequenceNode):
                    frame.node.value.append(node)
                elif frame.key is None:
                    frame.key = node
                else:
                    frame.node.value.append((frame.key, node))
                    frame.key = None
            return root
        finally:
            parser.dispose()

    too_deep = f"nested more than {MAX_DEPTH} levels deep (lists and mappings, aliases expanded)"
    too_many = f"more than {MAX_VALUES:,} values once aliases are expanded; a tournament file holds at most that many"

    def fail(self, event: yaml.Event, message: str) -> ConfigError:
        mark = event.start_mark
        path = self.path()
        return ConfigError(self.doc.file, mark.line + 1 if mark is not None else None,
                           cut(path, 2 * _EXCERPT_CHARS) if path else None, message)

    def path(self) -> str | None:
        """Where the event being read sits, as the checks name it: 'bots[2].env'."""
        path = ""
        for frame in self.stack:
            if isinstance(frame.node, SequenceNode):
                path += f"[{len(frame.node.value)}]"
            elif frame.key is None:
                break  # reading a key: the mapping is the place
            else:
                name = frame.key.value if isinstance(frame.key, ScalarNode) else "?"
                path = _join(path, cut(name, _EXCERPT_CHARS))
        return path or None

    def anchor(self, event: yaml.NodeEvent) -> None:
        name = event.anchor
        if name is not None:
            if name in self.anchors:
                raise self.fail(event, f"invalid YAML: found duplicate anchor {_excerpt(name)}")
            self.anchors[name] = None

    def tag(self, event: yaml.ScalarEvent | yaml.CollectionStartEvent) -> str | None:
        tag = event.tag
        if tag is None or tag == "!":
            return None
        if tag not in _EXPLICIT_TAGS:
            shown = "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag
            raise self.fail(event, f"the tag {cut(shown, _EXCERPT_CHARS)} is not allowed; "
                                   "a tournament file holds plain text, numbers, true/false, lists and mappings")
        return tag

    def scalar(self, event: yaml.ScalarEvent) -> ScalarNode:
        self.count += 1
        if self.count > MAX_VALUES:
            raise self.fail(event, self.too_many)
        value = event.value
        if len(value) > MAX_TEXT_CHARS:
            raise self.fail(event, f"a value of {len(value):,} characters; at most {MAX_TEXT_CHARS:,}")
        if "\0" in value:
            raise self.fail(event, "a value holding a NUL character (\\0), which no path, command or name can")
        if event.anchor is not None:
            self.anchor(event)
        tag = self.tag(event) if event.tag is not None else None
        if tag is None:
            if not event.implicit[0]:
                tag = STR  # quoted, or a block of text: what the resolver says of it
            else:
                tag = self.tags.get(value) or self.resolve(value)
        start: Any = event.start_mark  # libyaml's marks: another class, same fields
        end: Any = event.end_mark
        node = ScalarNode(tag, value, start, end, style=event.style)
        if event.anchor is not None:
            self.anchors[event.anchor] = (node, 1, 0)
        return node

    def resolve(self, value: str) -> str:
        """The tag YAML gives a plain scalar: int for 12, bool for yes, str for the rest..."""
        tag = self.resolver.resolve(ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]  # untyped in PyYAML's stubs
        if len(value) <= _EXCERPT_CHARS:
            self.tags[value] = tag
        return cast(str, tag)

    def alias(self, event: yaml.AliasEvent) -> tuple[Node, int]:
        name = event.anchor or ""
        if name not in self.anchors:
            raise self.fail(event, f"invalid YAML: found undefined alias {_excerpt(name)}")
        target = self.anchors[name]
        if target is None:
            raise self.fail(event, f"an alias inside the value it names (*{cut(name, _EXCERPT_CHARS)}), a loop")
        node, values, height = target
        self.count += values
        if self.count > MAX_VALUES:
            raise self.fail(event, self.too_many)
        return node, height

    def open(self, event: yaml.CollectionStartEvent) -> None:
        self.count += 1
        if self.count > MAX_VALUES:
            raise self.fail(event, self.too_many)
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(event, self.too_deep)
        self.anchor(event)
        start: Any = event.start_mark  # libyaml's marks: another class, same fields
        node: SequenceNode | MappingNode
        if isinstance(event, yaml.SequenceStartEvent):
            node = SequenceNode(self.tag(event) or SEQ, [], start, None, flow_style=event.flow_style)
        else:
            node = MappingNode(self.tag(event) or MAP, [], start, None, flow_style=event.flow_style)
        self.stack.append(_Open(node, event.anchor, self.count - 1))


# --- the node walker -------------------------------------------------------------


class Doc:
    """Reads typed values out of YAML nodes, raising ConfigError with file and line."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._constructor = SafeConstructor()
        # (node, key, cmd, cwd, env) of every bot command, checked once the file is valid.
        self.cmd_nodes: list[tuple[Node, str, str | tuple[str, ...], str, dict[str, str]]] = []

    def error(self, node: Node | None, key: str | None, message: str) -> ConfigError:
        line = node.start_mark.line + 1 if node is not None else None
        # Messages quote values through describe; this bounds whatever else they quote
        # (a command's program, a path) to one short line, keeping the words around it.
        words = (cut(word, _WORD_CHARS) for word in message.split())
        message = cut(" ".join(words), _MESSAGE_CHARS)
        return ConfigError(self.file, line, cut(key, 2 * _EXCERPT_CHARS) if key else key, message)

    def value(self, node: Node, key: str) -> Any:
        try:
            return self._constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, ArithmeticError) as exc:
            # e.g. a date that does not exist (2026-02-30), which YAML still reads as a date
            why = exc.problem if isinstance(exc, MarkedYAMLError) else str(exc)
            raise self.error(node, key, f"unreadable value {describe(node)} ({why})") from None

    def text_key(self, node: Node, parent: str | None, allowed: tuple[str, ...] | None) -> str:
        """A mapping's key: text, nothing else (a list, a mapping, a number, nothing)."""
        if isinstance(node, ScalarNode) and node.tag == STR:
            return cast(str, node.value)
        what = f" (allowed: {', '.join(allowed)})" if allowed else ""
        raise self.error(node, parent, f"expected a text key, got {describe(node)}{what}")

    def mapping(self, node: Node, key: str | None, allowed: tuple[str, ...] | None) -> dict[str, tuple[Node, Node]]:
        """The mapping's entries by key; ``allowed=None`` lets the caller judge the keys."""
        if not isinstance(node, MappingNode):
            what = ", ".join(allowed) if allowed else "keys to values"
            raise self.error(node, key, f"expected a mapping of {what}, got {describe(node)}")
        own: set[str] = set()
        for key_node, _ in node.value:
            if key_node.tag == MERGE:
                continue
            name = self.text_key(key_node, key, allowed)
            if name in own:
                raise self.error(key_node, _join(key, name), "given twice")
            own.add(name)
        try:
            # YAML merge keys (<<: *defaults): merged entries come first, so the
            # mapping's own keys, read later, override them as YAML says.
            self._constructor.flatten_mapping(node)
        except ConstructorError as exc:
            raise self.error(node, key, f"bad merge ({exc.problem})") from None
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            name = self.text_key(key_node, key, allowed)
            if allowed is not None and name not in allowed:
                raise self.error(key_node, _join(key, name), f"unknown key (allowed: {', '.join(allowed)})")
            out[name] = (key_node, value_node)
        return out

    def string(self, node: Node, key: str, allowed: str = "a string") -> str:
        value = self.value(node, key) if isinstance(node, ScalarNode) else None
        if isinstance(value, str) and value:
            return value
        raise self.error(node, key, f"expected {allowed}, got {describe(node)}")

    def choice(self, node: Node, key: str, choices: tuple[str, ...]) -> str:
        value = self.value(node, key) if isinstance(node, ScalarNode) else None
        if isinstance(value, str) and value in choices:
            return value
        raise self.error(node, key, f"expected one of {some(choices)}, got {describe(node)}")

    def member(self, node: Node, key: str, kind: type[E]) -> E:
        """``choice`` among the values of an enum, parsed to its member."""
        return kind(self.choice(node, key, tuple(m.value for m in kind)))

    def integer(self, node: Node, key: str, low: int, high: int | None = None, allowed: str | None = None) -> int:
        # Only an integer literal is read: no float, true/false or date is converted, and a
        # literal too long for any allowed range is not converted at all.
        # Decimal digits only: YAML 1.1 reads 0123 as octal (83), 0x10 as 16, 1_000 and 1:30
        # as numbers too, which a seed or a count written so would silently become.
        decimal = isinstance(node, ScalarNode) and _DECIMAL.fullmatch(node.value) is not None
        if isinstance(node, ScalarNode) and node.tag == INT and len(node.value) <= MAX_NUMBER_CHARS and decimal:
            value = self.value(node, key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high):
                return value
        wanted = allowed or (f"an integer from {low} to {high}" if high is not None else f"an integer >= {low}")
        if isinstance(node, ScalarNode) and node.tag == INT and not decimal:
            wanted += " in decimal digits (no leading zero, '+', '_' or base prefix)"
        raise self.error(node, key, f"expected {wanted}, got {describe(node)}")

    def boolean(self, node: Node, key: str) -> bool:
        value = self.value(node, key) if isinstance(node, ScalarNode) else None
        if isinstance(value, bool):
            return value
        raise self.error(node, key, f"expected true or false, got {describe(node)}")

    def sequence(self, node: Node, key: str, what: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.error(node, key, f"expected a list of {what}, got {describe(node)}")
        return list(node.value)


_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")


def _join(parent: str | None, child: str) -> str:
    return f"{parent}.{child}" if parent else child


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _excerpt(text: str) -> str:
    """A text as an error shows it: quoted, escaped, at most _EXCERPT_CHARS of it."""
    shown = repr(cut(text, _EXCERPT_CHARS))
    return shown if len(text) <= _EXCERPT_CHARS else f"{shown} ({len(text):,} characters)"


def some(items: tuple[str, ...] | list[str]) -> str:
    """A list of choices as an error shows it: the first few, and how many in all."""
    shown = ", ".join(cut(item, _EXCERPT_CHARS) for item in items[:_LIST_ITEMS])
    return shown if len(items) <= _LIST_ITEMS else f"{shown}, ... ({len(items):,} in all)"


def describe(node: Node, value: Any = None) -> str:
    """What a node holds, as an error shows it. (``value`` is ignored: the node says it all.)"""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if node.tag == NULL:
        return "nothing"
    return _excerpt(str(node.value))


# --- reading a file

def read_text(file: str) -> str:
    """The file's text: refused if it is not a readable file of UTF-8 text of at most
    MAX_FILE_BYTES (never read further, so /dev/zero is refused too)."""
    try:
        with open(file, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(file, None, None, "no such file") from None
    except IsADirectoryError:
        raise ConfigError(file, None, None, "a folder, not a tournament file") from None
    except OSError as exc:
        raise ConfigError(file, None, None, f"cannot read the file ({exc.strerror or exc.__class__.__name__})") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(file, None, None, f"larger than {MAX_FILE_BYTES:,} bytes, the limit of a tournament file")
    try:
        return data.decode("utf-8-sig")  # a leading byte order mark is dropped
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(file, line, None, f"not UTF-8 text (byte {data[exc.start]:#04x}); save the file as UTF-8") from None


def compose(doc: Doc, text: str) -> Node | None:
    """The document's node tree, within the file's limits; any YAML error as one line."""
    try:
        return _Composer(doc).compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join((exc.problem or exc.context or "invalid YAML").split())
        if problem == "exceeded maximum nesting depth":
            # libyaml's own limit (1,000), met while its scanner looks ahead, before the
            # composer reaches MAX_DEPTH: the same refusal, in the same words.
            raise ConfigError(doc.file, line, None, _Composer.too_deep) from None
        raise ConfigError(doc.file, line, None, f"invalid YAML: {cut(problem, _MESSAGE_CHARS)}") from None
    except ReaderError as exc:
        raise _reader_error(doc, text, exc) from None
    except (yaml.YAMLError, UnicodeError) as exc:
        # libyaml reports a few problems without a position; a lone surrogate cannot be encoded
        problem = " ".join(str(exc).split())
        raise ConfigError(doc.file, None, None, f"invalid YAML: {cut(problem, _MESSAGE_CHARS)}") from None


def _reader_error(doc: Doc, text: str, exc: ReaderError) -> ConfigError:
    """A character YAML refuses (a control character, say), said by its code, not shown.
    libyaml gives the code and a byte offset; the pure-Python reader the character and an
    offset in characters."""
    code, line = -1, None
    if isinstance(exc.character, int) and isinstance(exc.position, int):
        code, line = exc.character, text.encode("utf-8", "surrogatepass").count(b"\n", 0, exc.position) + 1
    elif isinstance(exc.character, str) and isinstance(exc.position, int):
        code, line = ord(exc.character), text.count("\n", 0, exc.position) + 1
    what = f" #x{code:04x}" if code >= 0 else ""
    return ConfigError(doc.file, line, None, f"invalid YAML: unacceptable character{what}")
