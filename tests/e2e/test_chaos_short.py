"""The short chaos run inside `make test` (the full one is `make chaos`, tests/chaos):
fixed seed, SQLite, about 25-35 s.

The daemon is SIGKILLed (from outside and at a failpoint), the emulator
injects faults and the plans are re-applied while it runs; at the end no slot
is doubled or lost. The checks themselves are then shown to catch a lost and a
doubled order, so a green run means something.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from tests.chaos.check import check
from tests.chaos.run import Result, chaos
from tests.support.once import once

pytestmark = pytest.mark.slow

SEED = 20261121
SECONDS = 42.0


@pytest.fixture(scope="module")
def short_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, str]:
    """One run for the module, made once for the session (tests/support/once.py)."""

    def run() -> tuple[Result, str]:
        root = tmp_path_factory.mktemp("chaos")
        url = f"sqlite:///{root / 'jupcron.db'}"
        return chaos(root, url, SEED, SECONDS, None), url

    return once(tmp_path_factory, "chaos-short", run)


def test_short_chaos_run_keeps_every_slot_once(short_run: tuple[Result, str]) -> None:
    result, _ = short_run
    print(result.line)
    assert result.ok, result.line
    verdict = result.verdict
    assert verdict.duplicates == 0, verdict.details
    assert verdict.lost == 0, verdict.details
    assert verdict.wrong == 0, verdict.details
    assert "kills=0" not in result.line
    assert "crashes=0" in result.line
    assert verdict.runs >= verdict.fires > 20
    assert verdict.status["succeeded"] > 10
    assert len(result.landed) >= verdict.status["succeeded"]


def test_checks_catch_a_lost_run_and_a_doubled_order(short_run: tuple[Result, str]) -> None:
    result, url = short_run
    landed = result.landed
    assert landed
    victim = landed[0]
    # the same run's order landing twice (another signature, the same requestId)
    doubled = [*landed, replace(victim, signature=victim.signature[:-4] + "1111")]
    assert check(url, doubled, result.stopped_at).duplicates == 1

    # a run row disappears: its slot and its landed order are both unexplained
    with sqlite3.connect(Path(url.removeprefix("sqlite:///"))) as db:
        (run_id,) = db.execute(
            "SELECT id FROM runs WHERE signature = ?", (victim.signature,)
        ).fetchone()
        db.execute("DELETE FROM run_events WHERE run_id = ?", (run_id,))
        db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    verdict = check(url, landed, result.stopped_at)
    assert verdict.lost >= 1
    assert any("landed order with no run" in d for d in verdict.details)
