"""The order `make test` hands test modules to its workers: the longest first.

The workers take whole modules (`--dist loadscope`: a module's fixtures are set up
once), in the order collected. Collected as written, the slow end-to-end modules
came last and one worker ran them alone at the end while the others stood idle
(a demo module alone took a worker's last 130 s). Longest first, a worker done
early takes the next module and the short ones fill the gaps at the end.

`tests/durations.json` holds each module's seconds as measured (setup, call and
teardown); a module it does not name yet is taken for `UNKNOWN` seconds. Measure
again after adding slow tests:

    make test DURATIONS=0 > /tmp/durations.log
    .venv/bin/python -m tests.support.order /tmp/durations.log > tests/durations.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

KNOWN = Path(__file__).resolve().parent.parent / "durations.json"
UNKNOWN = 1.0  # seconds: a module not measured yet (new, or each test under 5 ms)
LINE = re.compile(r"^([0-9.]+)s\s+(?:setup|call|teardown)\s+(\S+?)(?:::|$)")


def module_seconds(log: str) -> dict[str, float]:
    """Each module's seconds in a `pytest --durations=0` output."""
    seconds: Counter[str] = Counter()
    for line in log.splitlines():
        found = LINE.match(line)
        if found:
            seconds[found.group(2)] += float(found.group(1))
    return {module: round(s, 2) for module, s in sorted(seconds.items())}


def longest_first(items: list[pytest.Item], known: dict[str, float]) -> None:
    """Sort `items` in place, module by module, the longest module first; a module's
    own tests keep their order."""
    first = {}
    for index, item in enumerate(items):
        first.setdefault(item.nodeid.split("::", 1)[0], index)

    def key(item: pytest.Item) -> tuple[float, int]:
        module = item.nodeid.split("::", 1)[0]
        return -known.get(module, UNKNOWN), first[module]

    items.sort(key=key)  # stable: a module's items stay in their order


def known_seconds() -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(KNOWN.read_text()).items()}
    except FileNotFoundError:
        return {}


if __name__ == "__main__":
    print(json.dumps(module_seconds(Path(sys.argv[1]).read_text()), indent=0))
