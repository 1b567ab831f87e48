"""Failpoint specs from $JUPCRON_FAILPOINTS: name, pass number, action (kill or stall)."""

from __future__ import annotations

import pytest

from jupcron import failpoints


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("after_sign", {"after_sign": (1, "kill")}),
        ("after_sign:3", {"after_sign": (3, "kill")}),
        ("after_sign=stall", {"after_sign": (1, "stall")}),
        (
            "after_sign:2=stall, after_claim",
            {"after_sign": (2, "stall"), "after_claim": (1, "kill")},
        ),
        ("after_order=kill", {"after_order": (1, "kill")}),
        ("", {}),
    ],
)
def test_specs(text: str, expected: dict[str, tuple[int, str]]) -> None:
    assert failpoints._parse_actions(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("after_sing", "unknown failpoint 'after_sing'"),
        ("after_sign=pause", "unknown failpoint action 'pause'; known: kill, stall"),
    ],
)
def test_bad_specs_are_refused_with_the_known_names(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        failpoints._parse_actions(text)
