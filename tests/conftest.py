"""Shared fixtures. Each area keeps its fixtures in tests/fixtures/<area>.py."""

from __future__ import annotations

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
