"""The order `make test` hands modules to its workers (tests/support/order.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from tests.support.order import UNKNOWN, known_seconds, longest_first, module_seconds

LOG = """\
============================= slowest durations ==============================
12.50s setup    tests/e2e/test_demo.py::test_a
3.25s call     tests/e2e/test_demo.py::test_b
0.40s teardown tests/e2e/test_demo.py::test_a
1.00s call     tests/unit/test_x.py::test_p[sqlite]
0.01s call     tests/unit/test_y.py::Group::test_q
(3 durations < 0.005s hidden.  Use -vv to show these durations.)
"""


@dataclass
class _Item:
    nodeid: str


def test_a_durations_log_gives_each_modules_seconds() -> None:
    assert module_seconds(LOG) == {
        "tests/e2e/test_demo.py": 16.15,
        "tests/unit/test_x.py": 1.0,
        "tests/unit/test_y.py": 0.01,
    }


def test_modules_go_longest_first_each_in_its_own_order() -> None:
    ids = ["u/a.py::t1", "u/a.py::t2", "e/slow.py::t1", "n/new.py::t1", "e/slow.py::t2",
           "u/b.py::t1"]  # fmt: skip
    items: list[Any] = [_Item(i) for i in ids]
    known = {"u/a.py": 0.2, "e/slow.py": 30.0, "u/b.py": UNKNOWN + 1}
    longest_first(cast(Any, items), known)
    assert [i.nodeid for i in items] == ["e/slow.py::t1", "e/slow.py::t2", "u/b.py::t1",
                                         "n/new.py::t1", "u/a.py::t1", "u/a.py::t2"]  # fmt: skip


def test_the_measured_durations_name_modules_that_exist() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    known = known_seconds()
    assert known, "tests/durations.json is missing or empty"
    gone = [m for m in known if not (root / m).is_file()]
    assert len(gone) <= len(known) // 10, f"measure again (tests/support/order.py): {gone}"
