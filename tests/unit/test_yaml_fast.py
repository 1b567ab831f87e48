"""The fast YAML path (libyaml's nodes, daemon/config/yamlfast.py) gives what ruamel's
round-trip loader gives, values and positions alike, or leaves the file to ruamel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupcron.config import yamlfast
from jupcron.config.yamlfile import MAX_NODES, Locator, load
from jupcron.errors import YamlLoadError

ROOT = Path(__file__).resolve().parents[2]


def ruamel(text: str, exact: bool) -> tuple[Any, dict[Any, tuple[int, int]]]:
    """The reference: ruamel alone (the fast path turned off by a text it gives up on)."""
    data, locator = _ruamel_load(text, exact)
    return data, locator.positions


def _ruamel_load(text: str, exact: bool) -> tuple[Any, Locator]:
    from jupcron.config import yamlfile

    saved = yamlfile._load_fast
    yamlfile._load_fast = lambda *a: None  # type: ignore[assignment]
    try:
        return load(Path("f.yaml"), text, exact_floats=exact)
    finally:
        yamlfile._load_fast = saved


def fast(text: str, exact: bool) -> tuple[Any, dict[Any, tuple[int, int]]] | None:
    docs = yamlfast.compose(text)
    if docs is None or len(docs) > 1:
        return None
    try:
        data = yamlfast.plain(docs[0], [MAX_NODES], exact) if docs else None
    except yamlfast.GiveUp:
        return None
    positions = dict(yamlfast.NodePositions(docs[0])) if docs else {}
    positions.setdefault((), (1, 1))
    return data, positions


# (scalar as written, does the fast path build it itself)
SCALARS = [
    ("abc", True), ("'quoted'", True), ('"1"', True), ("yes", True), ("No", True),
    ("on", True), ("true", True), ("False", True), ("TRUE", True), ("~", True),
    ("null", True), ("NULL", True), ("", True), ("0", True), ("7", True), ("-12", True),
    ("+5", True), ("1.5", True), ("-0.25", True), ("1e3", True), ("2.5E-4", True),
    ("5.", True), ("0.1", True), ("12345678901234567890.123456789", True),
    ("010", False), ("0x1f", False), ("0o17", False), ("0b101", False), ("1_000", False),
    ("_5", False), ("1_0.5", False), (".5", False), ("-.5e+3", False), (".inf", False),
    ("-.Inf", False), (".nan", False), ("2026-12-01", False),
    ("2026-12-01T09:00:00Z", False), ("2026-12-01 09:00:00", False), ("1:30", True),
    ("=", False), ("0xZZ", True), ("1.2.3", True), ("12:00", True),
    ("So11111111111111111111111111111111111111112", True), ("0 9 * * *", True),
]  # fmt: skip


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize(("written", "built"), SCALARS)
def test_a_scalar_reads_as_ruamel_reads_it(written: str, built: bool, exact: bool) -> None:
    text = f"key: {written}\nlist:\n  - {written}\n"
    reference = ruamel(text, exact)
    mine = fast(text, exact)
    assert (mine is not None) == built
    if mine is not None:
        assert mine == reference
        # the same kind of value (ruamel's are subclasses: ScalarInt, ScalarFloat)
        pairs = zip(mine[0].values(), reference[0].values(), strict=True)
        assert all(isinstance(r, type(m)) for m, r in pairs)
    assert load(Path("f.yaml"), text, exact_floats=exact) == (
        reference[0],
        Locator("f.yaml", reference[1]),
    )


DOCUMENTS = [
    "plans:\n  - name: a\n    kind: swap\n    schedule: {cron: '0 9 * * *'}\n"
    "    request:\n      amount: 5\n  - {name: b, x: [1, 2, {y: z}]}\n",
    "a: &x {b: 1}\nc: *x\nd: [*x, *x]\n",
    "- 1\n- - 2\n  - 3\n- key: |\n    text\n    more\n",
    "k: >\n  folded\n  text\n\n# comment\nn: 1\n",
    "1: int key\n2: other\n",
    "",
    "# only a comment\n",
    "just a string\n",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_a_document_reads_as_ruamel_reads_it(text: str) -> None:
    mine = fast(text, True)
    assert mine is not None
    assert mine == ruamel(text, True)


GIVE_UPS = [
    "a: 1\na: 2\n",  # a duplicate key: ruamel's error
    "a: {b: 1}\n<<: {c: 2}\n",  # a merge key
    "? [a, b]\n: c\n",  # a complex key
    "a: !custom 1\n",  # a tag of one's own
    "a: [1, 2\n",  # invalid: ruamel's message
    "a: 1\n---\nb: 2\n",  # two documents
    "null: 1\n",  # a key that is not a string or int
]


@pytest.mark.parametrize("text", GIVE_UPS)
def test_what_the_fast_path_leaves_to_ruamel_behaves_as_before(text: str) -> None:
    assert fast(text, True) is None
    try:
        expected: Any = _ruamel_load(text, True)
    except YamlLoadError as exc:
        expected = exc.problem
    try:
        got: Any = load(Path("f.yaml"), text, exact_floats=True)
    except YamlLoadError as exc:
        got = exc.problem
    assert got == expected


def test_aliases_past_the_budget_are_too_large_on_the_fast_path_too() -> None:
    layers = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for n in range(1, 7):
        layers.append(f"a{n}: &a{n} [{', '.join(f'*a{n - 1}' for _ in range(10))}]")
    text = "\n".join(layers) + "\n"
    assert yamlfast.compose(text) is not None
    with pytest.raises(YamlLoadError, match="too large once aliases are expanded"):
        load(Path("f.yaml"), text)


REPO_YAML = sorted(
    p
    for folder in ("config", "docs", "tests/fixtures", "tests/unit/plan_corpus")
    if (ROOT / folder).is_dir()
    for p in (ROOT / folder).rglob("*.y*ml")
)


@pytest.mark.parametrize("path", REPO_YAML, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_in_the_repository_reads_the_same(path: Path) -> None:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: refused before any YAML is read")
    for exact in (True, False):
        try:
            reference: Any = ruamel(text, exact)
        except YamlLoadError as exc:
            reference = exc.problem
        try:
            data, locator = load(path, text, exact_floats=exact)
            got: Any = (data, locator.positions)
        except YamlLoadError as exc:
            got = exc.problem
        if isinstance(reference, tuple):
            assert got == reference
        else:
            assert (got.line, got.message) == (reference.line, reference.message)
