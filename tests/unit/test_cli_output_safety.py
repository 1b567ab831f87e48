"""CLI listings that cannot be turned against their reader (issue 28 item 8): a cell
starting a formula is neutralised in CSV; bidi overrides and control characters are
shown as escapes in tables."""

from __future__ import annotations

import csv
import io

import pytest

from jupcron.cli.output import csv_cell, render, table_cell

CSV_CASES = [
    ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("-5", "-5"),  # a number stays a number
    ("+1.5e3", "+1.5e3"),
    ("HTTP 400: no matching orders found", "HTTP 400: no matching orders found"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "cell"), CSV_CASES)
def test_csv_cells(text: str, cell: str) -> None:
    assert csv_cell(text) == cell


def test_csv_output_is_neutralised_and_still_csv() -> None:
    out = render([{"error": "=cmd()", "n": "-7"}], ["error", "n"], "csv")
    assert list(csv.reader(io.StringIO(out))) == [["error", "n"], ["'=cmd()", "-7"]]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("invoice\u202etxt.exe", "invoice\\u202etxt.exe"),
        ("a\u2066b\u2069", "a\\u2066b\\u2069"),
        ("red\x1b[31m", "red\\u001b[31m"),
        ("two\nlines", "two lines"),
        ("plain ünïcode", "plain ünïcode"),
    ],
)
def test_table_cells(text: str, shown: str) -> None:
    assert table_cell(text) == shown
    assert shown in render([{"c": text}], ["c"], "table")
