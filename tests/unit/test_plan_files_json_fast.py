"""The JSON path of `jupcron.config.yamlfile.load` (`jsonfast.from_json`: json's C
scanner) reads what libyaml's composer reads, values and positions alike, or leaves
the text to the composer; and a plan file of JSON is reported as it was."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from jupcron.config import jsonfast, yamlfast
from jupcron.config.yamlfile import MAX_NODES
from jupcron.plans.load import load_plans

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def composed(text: str, exact: bool) -> tuple[Any, yamlfast.NodePositions] | None:
    """The reference: libyaml's nodes made plain (the path the JSON one stands in for)."""
    docs = yamlfast.compose(text)
    if docs is None or len(docs) != 1:
        return None
    try:
        return yamlfast.plain(docs[0], [MAX_NODES], exact), yamlfast.NodePositions(docs[0])
    except (yamlfast.GiveUp, yamlfast.TooBig):
        return None


def _plans(odd: str) -> list[dict[str, Any]]:
    plans: list[dict[str, Any]] = [
        {"name": f"p{i}", "kind": "swap", "schedule": {"cron": f"{i} 3 * * *"},
         "request": {"inputMint": USDC, "outputMint": SOL, "amount": 10**6 + i}}
        for i in range(4)
    ]  # fmt: skip
    plans[1]["description"] = odd
    plans[2]["limits"] = {"min_price": Decimal("1.50"), "list": [1, [2.5e3, None], {}]}
    plans[3] = {"kind": "swap", "name": "p3", "request": {"deep": {"er": [True, False]}}}
    return plans


TEXTS = [
    json.dumps({"plans": _plans(odd)}, indent=indent, ensure_ascii=ascii_only,
               separators=separators, default=str)
    for odd in ("plain", "café ☕ \"q\" \\ / \t", "😀 astral")
    for indent in (None, 2, "\t")
    for ascii_only in (True, False)
    for separators in (None, (",", ":"))
]  # fmt: skip


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("text", TEXTS)
def test_json_reads_what_the_composer_reads(text: str, exact: bool) -> None:
    want = composed(text, exact)
    got = jsonfast.from_json(text, MAX_NODES, exact)
    if got is None:  # (left to the composer: an escaped astral character, say)
        return
    assert want is not None
    assert repr(got[0]) == repr(want[0])  # (Decimal('1.50') is not Decimal('1.5'))
    paths = list(want[1])
    assert paths
    for path in paths:  # the noted ones and the ones found in the nodes
        assert got[1][path] == want[1][path], path
    assert ("plans", 9) not in got[1]
    assert ("plans", 0, "nope") not in got[1]


def test_most_plan_files_of_json_are_read_by_it() -> None:
    read = [t for t in TEXTS if jsonfast.from_json(t, MAX_NODES, True) is not None]
    assert len(read) >= len(TEXTS) // 2


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',  # a string to YAML
        '{"a": 1, "a": 2}',  # ruamel's duplicate key
        '{"p": [{"x": {"y": 1, "y": 2}}]}',
        '{"a": "\\ud83d\\ude00"}',  # libyaml refuses an escaped surrogate
        '{"a"\n: 1}',  # a key's ':' on the next line
        '{"k": {"' + "z" * 1100 + '": 1}}',  # a key longer than libyaml looks back
        '{"k": 1' + " " * 200 + ": 2}",
        '\t{"a": 1}',  # a tab where YAML's block context refuses it
        '{"a": 1}\n\t',
        '{"a": 1}\r\n',
        '{"a": "x\x7fy"}',  # not printable to YAML
        '{"a": "x\x85y"}',  # a line break to YAML
        '{"a": "x\u2028y"}',
        '{"a": 1} x',
        "[1]",
        "{'a': 1}",
        '{"a": ' + "9" * 5000 + "}",  # more digits than Python converts
        '{"a": ' + "[" * 3000 + "]" * 3000 + "}",
        '{"a": [' + "1," * MAX_NODES + "1]}",  # perhaps too many values: `plain` says
    ],
)
def test_what_libyaml_reads_otherwise_is_left_to_the_composer(text: str) -> None:
    assert jsonfast.from_json(text, MAX_NODES, True) is None


def test_a_problem_in_a_json_plan_file_is_where_it_was(tmp_path: Path) -> None:
    """The messages, lines and columns of a file the JSON path reads are those of the
    same plans with a comment after them (which only the composer reads)."""
    plans = _plans("d")[:3]
    plans[0]["request"]["amount"] = -1  # deep: found in the nodes
    plans[1]["schedule"]["cron"] = "nope"
    plans[2]["bogus"] = 1
    plans += [dict(_plans("d")[0], name="p9")] * 2  # a name used twice
    text = json.dumps({"plans": plans}, indent=2, default=str)
    commented = text + "\n# the end\n"
    assert jsonfast.from_json(text, MAX_NODES, True) is not None
    assert jsonfast.from_json(commented, MAX_NODES, True) is None
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "p.yaml").write_text(text)
    (tmp_path / "b" / "p.yaml").write_text(commented)
    fast = load_plans([tmp_path / "a"])
    slow = load_plans([tmp_path / "b"])
    shown = [str(p).replace("/a/", "/X/") for p in fast.problems]
    assert shown == [str(p).replace("/b/", "/X/") for p in slow.problems]
    assert len(shown) == 5
    assert "already used" in shown[-1]
