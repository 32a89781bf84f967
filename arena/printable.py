"""Text from bots and files, made safe to show on a terminal: the one place that escapes it.

A bot's name, a move it sent, a failure's detail or a cell of a results CSV may hold any
character. Written raw to a terminal, ESC starts a control sequence (it can clear the screen,
move the cursor, retitle the window, rewrite what was printed before), BEL rings, CR returns
to the start of the line to overwrite it, and the Unicode bidi overrides reorder what follows
(so ``evil\\u202egnp.exe`` reads as ``evilexe.png``). ``printable`` replaces each such
character by its Python escape (``\\x1b``, ``\\u202e``): the text stays readable, shows that
something odd was there, and cannot act on the terminal.

Escaped: every character of Unicode category Cc (the C0 controls U+0000-U+001F, DEL U+007F and
the C1 controls U+0080-U+009F; tab and newline too, since a name or a move is one line), Cf
(format characters: the bidi embeddings, overrides and isolates U+202A-U+202E and
U+2066-U+2069, the marks U+200E, U+200F and U+061C, zero-width characters, the BOM), Cs (lone
surrogates, which no terminal encoding can write) and Zl, Zp (the line and paragraph
separators). Everything else, accented letters, CJK, emoji and the suit symbols, is shown as
is. A backslash is not escaped: the escapes are for reading, not for parsing back.

The arena's own styling (the ANSI colours the terminal replay adds) is applied after the data
is escaped, so it keeps working.
"""

from __future__ import annotations

import unicodedata

_ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every control, format and separator character escaped (see the module)."""
    # The common case at C speed: isprintable() is True only when no character is in
    # Cc, Cf, Cs, Co, Cn, Zl, Zp or Zs (but space), a superset of what is escaped here.
    if text.isprintable():
        return text
    return "".join(_escape(ch) if unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch for ch in text)


def printable_lines(text: str) -> str:
    """``printable`` for text of several lines: each line escaped, the newlines kept."""
    return "\n".join(printable(line) for line in text.split("\n"))


__all__ = ["printable", "printable_lines"]
