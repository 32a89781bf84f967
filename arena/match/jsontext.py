"""The JSON text of game records, where the arena reads or writes much of it (a results
store's records, a report's replay data): orjson, some three times as fast as the standard
library's ``json``, with ``json`` as the reference for every text orjson reads differently.

orjson refuses what ``json`` takes (``NaN``, ``Infinity``, numbers beyond a float's range, a lone
surrogate's escape): ``loads`` leaves each text orjson refuses to ``json``, so a text reads to the
same values either way and one that neither reads raises ``json``'s own error. One difference is
left, for the caller to weigh: orjson reads an integer beyond 64 bits as a float, where ``json``
keeps it exact (scanning each text for one would cost most of what orjson saves).
"""

from __future__ import annotations

import codecs
import json
from typing import Any

import orjson


def loads(text: str) -> Any:
    """The values of a JSON text, as ``json.loads`` reads them but for an integer beyond 64 bits,
    which orjson reads as a float: for a text whose reader refuses such an integer either way
    (a game record: every integer of it has at most 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def ascii_dumps(data: Any, escaped: str = "") -> str:
    """``data`` as compact JSON text in ASCII: ``json.dumps(data, ensure_ascii=True,
    separators=(",", ":"), allow_nan=False)``, each character of ``escaped`` (ASCII that JSON's own
    syntax never uses, such as ``<``) written as a ``\\uXXXX`` escape too, but for the digits of
    a float (orjson writes ``1e-5`` for ``1e-05``: the same value). What orjson does not write (a
    lone surrogate, a key that is not a string, an integer beyond 64 bits) is left to ``json``. A
    float that is not finite has no JSON text and is the caller's to keep out: orjson writes it
    as ``null``."""
    try:
        text = orjson.dumps(data).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    for char in escaped:  # str.replace, and the scan below only where needed: a tenth of a regex's time
        if char in text:
            text = text.replace(char, f"\\u{ord(char):04x}")
    # What ``json``'s ``ensure_ascii`` escapes and orjson writes as it is: every character beyond
    # ASCII, by the ASCII codec's error handler (C's speed over the ASCII between them, where a
    # regular expression took a report's replay data four times as long as orjson wrote it, for
    # the one "·" of its title), and DEL.
    if not text.isascii():
        text = text.encode("ascii", _ESCAPES).decode("ascii")
    if "\x7f" in text:
        text = text.replace("\x7f", "\\u007f")
    return text


def _escape(error: UnicodeError) -> tuple[str, int]:
    """The ``\\uXXXX`` escapes of the characters the ASCII codec could not encode."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = []
    for char in error.object[error.start:error.end]:
        code = ord(char)
        if code > 0xFFFF:  # a surrogate pair, as JSON's escapes write a character beyond the BMP
            code -= 0x10000
            out.append(f"\\u{0xD800 | code >> 10:04x}\\u{0xDC00 | code & 0x3FF:04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), error.end


_ESCAPES = "arena.json-escapes"
codecs.register_error(_ESCAPES, _escape)
