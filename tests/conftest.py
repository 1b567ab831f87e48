"""Shared fixtures. Each area keeps its fixtures in tests/fixtures/<area>.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import order, stopping

pytest_plugins = [
    "tests.fixtures.database",
    "tests.fixtures.runner",
    "tests.fixtures.daemon",
    "tests.fixtures.plans",
    "tests.fixtures.service",
    "tests.fixtures.wallet",
    "tests.fixtures.emulator",
    "tests.fixtures.follow",
    "tests.fixtures.browser",
    "tests.fixtures.receivers",
    "tests.fixtures.scheduler",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On pytest-xdist's workers (`make test`), the longest modules first
    (tests/support/order.py); run without workers, the order as written."""
    if hasattr(config, "workerinput"):
        order.longest_first(items, order.known_seconds())


@pytest.fixture(scope="session", autouse=True)
def _servers_stopped_behind() -> Iterator[None]:
    """Every server a fixture stopped behind its test (tests/support/stopping.py) has
    stopped by the session's end, and a stop that raised fails the session there."""
    yield
    stopping.drain()
