"""The documents the code cites are in the repository: "DESIGN §n" is a section of
docs/design.md, "API.md" is docs/api.md (with its research notes beside it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITES = re.compile(r"DESIGN §(\d+)")


def sections(markdown: str) -> set[str]:
    return set(re.findall(r"^## (\d+)\.", markdown, flags=re.MULTILINE))


def cited(
    folders: tuple[str, ...] = ("daemon", "migrations", "tests", "docs"),
) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".yaml") and path.is_file():
                for number in CITES.findall(path.read_text(encoding="utf-8", errors="replace")):
                    found.setdefault(number, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_sections_are_read_as_headings() -> None:
    assert sections("# t\n## 1. Layout\ntext\n## 12. More\n### 3. not a section\n") == {"1", "12"}


def test_every_design_section_cited_exists() -> None:
    have = sections((ROOT / "docs" / "design.md").read_text(encoding="utf-8"))
    citations = cited()
    assert citations, "the code cites DESIGN sections; the scan found none"
    assert {n: where for n, where in citations.items() if n not in have} == {}


def test_the_api_notes_the_code_cites_are_here() -> None:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "## Errors and codes" in api
    assert (ROOT / "docs" / "jupiter-api-notes.md").is_file()
