"""Listings in three formats: an aligned table for people, JSON and CSV for scripts."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import click

FORMATS = ("table", "json", "csv")

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


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
            writer.writerow([_text(row.get(c)) for c in columns])
        return buf.getvalue().rstrip("\n")
    cells = [[_text(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    if not rows:
        lines.append("(none)")
    return "\n".join(lines)
