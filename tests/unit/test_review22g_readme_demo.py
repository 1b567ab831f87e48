"""README's 'What `make demo` shows' is the demo a new operator is about to watch:
its table must list every plan the demo runs, each with its kind and the status
the story ends it in, and its prose must count them as the demo does.

It listed six plans 'two seconds apart' while the demo runs seven (the price-limit
plan, `demo-swap-limit`, ends `skipped`), so the last line of the run and the last
row of the audit table were nowhere in the README.
"""

from __future__ import annotations

import re
from pathlib import Path

from jupcron.demo.workspace import demo_plans

README = Path(__file__).resolve().parents[2] / "README.md"
NUMBERS = {5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def demo_section() -> str:
    text = README.read_text()
    return text.split("## What `make demo` shows", 1)[1].split("\n## ", 1)[0]


def table() -> dict[str, tuple[str, str]]:
    """plan -> (kind, what happens) from the section's table."""
    rows = {}
    for line in demo_section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found = re.fullmatch(r"`(demo-[a-z-]+)`", cells[0]) if len(cells) == 3 else None
        if found:
            rows[found[1]] = (cells[1], cells[2])
    return rows


def test_the_table_lists_every_plan_the_demo_runs_with_its_kind() -> None:
    plans = demo_plans("-")
    assert {name: kind for name, (kind, _) in table().items()} == {p.name: p.kind for p in plans}


def test_each_row_says_the_status_the_story_ends_that_plan_in() -> None:
    rows = table()
    for plan in demo_plans("-"):
        assert f"`{plan.expect}`" in rows[plan.name][1], (plan.name, plan.expect)


def test_the_prose_counts_the_plans_as_the_demo_does() -> None:
    count = len(demo_plans("-"))
    section = " ".join(demo_section().split())  # the prose, whatever its line breaks
    assert f"{NUMBERS[count]} one-shot plans" in section
    assert not [n for k, n in NUMBERS.items() if k != count and f"{n} one-shot plans" in section]
