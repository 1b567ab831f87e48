"""Listings in three formats: an aligned table for people, JSON and CSV for scripts
(the CLI's commands and the demo print through `render`)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from jupcron.visible import visible

FORMATS = ("table", "json", "csv")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


# what a spreadsheet reads as a formula at the start of a cell (OWASP "CSV injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one that would start a formula gets a
    leading apostrophe (what spreadsheets expect); plain numbers stay numbers."""
    if text.startswith(FORMULA_START) and not NUMBER.fullmatch(text):
        return "'" + text
    return text


# a cell a terminal shows as written: the one neutraliser (daemon/visible.py), also the
# status page's and the charts'
table_cell = visible


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return str(value)


def render(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([{c: row.get(c) for c in columns} for row in rows],
                          default=_json_default, indent=2)  # fmt: skip
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([csv_cell(_text(row.get(c))) for c in columns])
        return buf.getvalue().rstrip("\n")
    cells = [[table_cell(_text(row.get(c))) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    if not rows:
        lines.append("(none)")
    return "\n".join(lines)
