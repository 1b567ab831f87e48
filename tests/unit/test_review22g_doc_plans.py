"""Every whole plan the README and docs/ show in a YAML block loads as a plan file
when copied into one, as a new operator does.

docs/price-protection.md showed its plan as a bare list item (`- name: ...`), which
`plans validate` refuses ("expected a plan (a mapping) or 'plans:' with a list of
plans, not a list"): the first example of price limits did not load as written.

A block is a whole plan when it says `name:`, `kind:`, `schedule:` and `request:` and
leaves nothing out (no `...`, `…` or `<placeholder>`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupcron.plans.load import load_plans

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# docs/design.md is the design card, kept unchanged (its examples are sketches)
CONTRACT = {ROOT / "docs" / "design.md"}


def plan_blocks() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        if doc in CONTRACT:
            continue
        for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(), flags=re.S):
            keys = set(re.findall(r"^(?:- )?\s*([a-z_]+):", block, flags=re.M))
            whole = {"name", "kind", "schedule", "request"} <= keys
            if whole and not re.search(r"\.\.\.|…|<[a-z ]+>", block):
                first = re.search(r"name: (\S+)", block)
                found.append((f"{doc.name}:{first[1] if first else '?'}", block))
    return found


BLOCKS = plan_blocks()


def test_the_docs_show_plans_to_check() -> None:
    names = [name for name, _ in BLOCKS]
    assert "README.md:hourly-swap" in names
    assert "price-protection.md:daily-sol-buy-limited" in names


@pytest.mark.parametrize(("name", "block"), BLOCKS, ids=[n for n, _ in BLOCKS])
def test_a_plan_shown_in_the_docs_loads_as_a_file(name: str, block: str, tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(block)
    path.chmod(0o600)
    result = load_plans([path])
    assert [str(p) for p in result.problems] == [], name
    assert result.plans, name
