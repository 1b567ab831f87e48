"""Review 17g: YAML tags in plan and config files. A core tag reads as ruamel (the
reference) reads it, on the fast path too; any other tag is a clear error at its
place, never dropped (``!!python/object:x v`` read as ``v``) nor turned into text
(``!!binary`` as ``"b'...'"``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from jupcron.config.yamlfile import load
from jupcron.errors import YamlLoadError

# (value as written, as read)
READ = [
    ("!!bool yes", True), ("!!bool on", True), ("!!bool Y", True), ("!!bool no", False),
    ("!!bool off", False), ("!!bool tRUE", True), ("!!bool true", True), ("false", False),
    ("!!str 12", "12"), ("!!int '7'", 7), ("!!map {b: 1}", {"b": 1}), ("!!seq [1]", [1]),
    ("=", "="), ("2026-12-01", "2026-12-01"),
]  # fmt: skip


@pytest.mark.parametrize(("written", "value"), READ)
def test_a_core_tag_reads_as_ruamel_reads_it(written: str, value: Any) -> None:
    text = f"x: 1\nkey: {written}\n"
    data, _ = load(Path("f.yaml"), text)
    assert data["key"] == value
    reference = YAML(typ="rt").load(text)["key"]
    assert data["key"] == (str(reference) if isinstance(value, str) else reference)


# (value as written, the tag named)
REFUSED = [
    ("!!python/object:os.system x", "!!python/object:os.system"),
    ("!!python/object/apply:os.system [ls]", "!!python/object/apply:os.system"),
    ("!!binary YWJj", "!!binary"), ("!!set {a, b}", "!!set"), ("!!pairs [{a: 1}]", "!!pairs"),
    ("!custom x", "!custom"), ("!custom {a: 1}", "!custom"), ("[1, !custom x]", "!custom"),
]  # fmt: skip


@pytest.mark.parametrize(("written", "tag"), REFUSED)
def test_any_other_tag_is_an_error_at_its_key(written: str, tag: str) -> None:
    with pytest.raises(YamlLoadError) as caught:
        load(Path("f.yaml"), f"x: 1\nkey: {written}\n")
    problem = caught.value.problem
    assert problem.line == 2
    assert problem.message == (
        f"unsupported YAML tag {tag} (write a plain string, number, boolean, list or mapping)"
    )
