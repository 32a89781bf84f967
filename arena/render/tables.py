"""Render a table of rows as text in one of the user-selectable output formats.

Shared by the commands that print tables (``arena rate``, standings). Pure: returns
strings, never prints.

Every cell and header is shown with its control characters escaped (``arena.printable``), in
every format: a bot's name or a CSV cell holding ESC, BEL or CR cannot act on the terminal, and
a newline cannot break a row. JSON needs no such care: ``json.dumps`` escapes them itself.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from enum import Enum

from arena.printable import printable


class TableFormat(str, Enum):
    """Output formats offered by table-printing commands (``--format``)."""

    PLAIN = "plain"
    GITHUB = "github"
    CSV = "csv"
    JSON = "json"


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    fmt: TableFormat,
    *,
    colalign: Sequence[str] | None = None,
) -> str:
    """A text table (plain or GitHub markdown) or CSV; cells are printed as given, their control
    characters escaped.

    ``None`` cells print as empty. JSON is not a table layout: use :func:`render_json`.
    """
    cells = [["" if cell is None else _shown(cell) for cell in row] for row in rows]
    headers = [printable(str(h)) for h in headers]
    if fmt is TableFormat.CSV:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(cells)
        return buf.getvalue().rstrip("\n")
    if fmt is TableFormat.JSON:
        raise ValueError("render_table does not produce JSON; use render_json")
    import tabulate as tabulate_module  # here: a command that prints no table does not load it (50 ms)

    tablefmt = "github" if fmt is TableFormat.GITHUB else "simple"
    # tabulate widens every column by two spaces beyond its widest cell, on top of the two
    # between columns: the plain tables keep only the latter, so that they fit 100 columns.
    # (The setting is a module global of tabulate's, read once per call: set for this call.)
    padding = tabulate_module.MIN_PADDING
    tabulate_module.MIN_PADDING = 0 if fmt is TableFormat.PLAIN else padding
    try:
        # Cells were formatted by the caller; stop tabulate re-parsing "+12" or "1e3" as numbers.
        return tabulate_module.tabulate(
            cells,
            headers=list(headers),
            tablefmt=tablefmt,
            disable_numparse=True,
            colalign=tuple(colalign) if colalign is not None else None,
        )
    finally:
        tabulate_module.MIN_PADDING = padding


def _shown(cell: object) -> object:
    # Numbers stay numbers (tabulate aligns them); text is escaped.
    return printable(cell) if isinstance(cell, str) else cell


def _json_safe(value: object) -> object:
    # JSON has no infinities or NaN; the caller's status fields carry that meaning.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Enum):
        return value.value
    return value


def render_json(records: Sequence[Mapping[str, object]]) -> str:
    """A JSON list of objects, one per row, keys in the given order."""
    return json.dumps([{key: _json_safe(val) for key, val in rec.items()} for rec in records], indent=2)
