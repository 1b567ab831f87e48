"""Text from the API, plans or the store, made safe to show as written: the one
function every table (`jupcron status`, `audit`, `report`, `plans`), the status
page and the charts pass such text through.

Bidi controls (U+202E reverses what follows: ``invoice\u202etxt.exe``), other
invisible format characters and C0/C1 controls (a terminal's escape sequences)
become a visible escape (``\\u202e``), never obeyed; a newline becomes a space (a table's
rows and a reader's eyes stay where they are). Letters of right-to-left scripts
are left alone: only the invisible controls are touched.
"""

from __future__ import annotations

import re

UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)


def visible(text: str) -> str:
    """`text` with its controls shown as ``\\u`` escapes (four hex digits) and newlines
    as spaces."""
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).replace("\n", " ")


def clipped(value: object, limit: int) -> str:
    """`value` as text, cut to `limit` characters (its end shown as ``...``): a value
    quoted in an error message, however long the input was."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
