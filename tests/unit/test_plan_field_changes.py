"""`plans apply` shows what changed in a plan, field by field (issue 28 item 6)."""

from __future__ import annotations

from typing import Any

import pytest

from jupcron.store.plans import PlanDiff, field_changes

CASES: list[tuple[str, Any, Any, list[str]]] = [
    ("same", {"a": 1}, {"a": 1}, []),
    ("value", {"request": {"amount": 1}}, {"request": {"amount": 2}}, ["request.amount: 1 → 2"]),
    ("added", {"request": {}}, {"request": {"slippageBps": 50}},
     ["request.slippageBps: (none) → 50"]),
    ("removed", {"schedule": {"every": 60, "grace": 5}}, {"schedule": {"every": 60}},
     ["schedule.grace: 5 → (removed)"]),
    ("text", {"description": None}, {"description": "x"}, ['description: null → "x"']),
    ("list whole", {"l": [1, 2]}, {"l": [1, 3]}, ["l: [1, 2] → [1, 3]"]),
    ("sorted paths", {"b": 1, "a": 1}, {"b": 2, "a": 2}, ["a: 1 → 2", "b: 1 → 2"]),
]  # fmt: skip


@pytest.mark.parametrize(("what", "old", "new", "lines"), CASES, ids=[c[0] for c in CASES])
def test_field_changes(what: str, old: Any, new: Any, lines: list[str]) -> None:
    assert field_changes(old, new) == lines


def test_a_long_value_is_cut() -> None:
    (line,) = field_changes({"x": "a" * 500}, {"x": "b"})
    assert len(line) < 140
    assert line.endswith('→ "b"')


def test_lines_show_fields_only_when_asked() -> None:
    diff = PlanDiff(changed=("p",), versions={"p": 3}, changes={"p": ["request.amount: 1 → 2"]})
    assert diff.lines() == ["~ p (version 3)"]
    assert diff.lines(fields=True) == ["~ p (version 3)", "    request.amount: 1 → 2"]
