"""A diff names the first `SHOWN` plans of each kind by name and counts them all,
whatever order they come in (`plans apply` reads one file at a time)."""

from __future__ import annotations

import random

import pytest

from jupcron.store.plans import PlanDiff
from jupcron.store.plansync import Names

CASES = [
    # (names, in order, limit) -> the kept names are the first `limit` of sorted(names)
    (["b", "a", "c"], 5),
    (["b", "a", "c"], 2),
    (["e", "d", "c", "b", "a"], 3),
    ([f"p{i:03d}" for i in range(50)], 10),
    ([], 3),
]


@pytest.mark.parametrize(("names", "limit"), CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_names_keeps_the_first_by_name_and_counts_all(
    names: list[str], limit: int, seed: int
) -> None:
    shuffled = names[:]
    random.Random(seed).shuffle(shuffled)
    kept = Names(limit)
    for name in shuffled:
        kept.add(name)
    assert kept.kept == sorted(names)[:limit]
    assert kept.count == len(names)
    assert all(name in kept for name in kept.kept)


def test_lines_end_each_kind_with_how_many_more() -> None:
    diff = PlanDiff(
        added=("a", "b"), changed=("c",), disabled=("d",), versions={"c": 3},
        counts={"added": 5, "changed": 1, "disabled": 1002, "unchanged": 0},
    )  # fmt: skip
    assert diff.lines() == [
        "+ a", "+ b", "  … and 3 more added", "~ c (version 3)", "- d (disabled)",
        "  … and 1,001 more disabled",
    ]  # fmt: skip
    assert diff.count("added") == 5
    assert not diff.empty


def test_a_diff_without_counts_counts_its_names() -> None:
    diff = PlanDiff(added=("a",), unchanged=("b", "c"))
    assert (diff.count("added"), diff.count("unchanged"), diff.count("disabled")) == (1, 2, 0)
    assert diff.lines() == ["+ a"]
    assert PlanDiff(unchanged=("x",)).empty
