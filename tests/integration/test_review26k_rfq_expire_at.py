"""A JupiterZ (RFQ) run signed but never posted (a crash after signing) whose quote's
``expireAt`` has passed when it is recovered. The order engine takes a fill only while
the chain's clock is not past its ``expire_at`` (jup-ag/rfq-webhook-toolkit,
programs/order-engine, fill.rs: ``require_gte!(expire_at, Clock::get()?.unix_timestamp)``)
and the docs call ``expireAt`` "the quote expiry timestamp from the market maker":
posting such bytes is pointless, and the answer (-2003 "quote expired", which after a
first post in time may mean the maker sent it late) would leave the run unsettled,
then ``in_doubt``, without an RPC node. Nothing of them was ever sent, so they are
never posted: a fresh order inside the slot's grace, else a clean failure.
Before, they were posted between ``expireAt`` and the blockhash's time fallback (the
validity and its margin). On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Clock, Rig, RigFactory

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
SWAP_APIS = (
    ("ultra-v1", "execute_ultra", "ultra_order"),
    ("swap-v2", "execute_swap", "swap_order"),
)


@pytest.fixture(autouse=True)
def _disarm() -> Any:
    yield
    failpoints.disarm()


def _signed_then_crashed(
    make_rig: RigFactory, db_url: str, api: str, order: str, grace: int
) -> tuple[Rig, Clock, int]:
    clock = Clock(SLOT)
    rig = make_rig(db_url=db_url, clock=clock, swap_api=api,
                   emulator=Emulator(seed=11, clock=clock.wall))  # fmt: skip
    rig.emulator.faults.add("rfq", operation=order)  # JupiterZ wins the first quote
    plan = rig.plan("swap", schedule={"every": "1h", "grace": grace}, name=f"rfq-{api}")
    run_id = rig.signed_then_crashed(plan, SLOT)
    (ordered,) = [d for _, s, d in rig.events(run_id) if s == "ordered"]
    assert ordered.get("router") == "jupiterz"
    # past the quote's expireAt, short of the blockhash's time fallback (90 s and 30 s)
    (issued,) = rig.emulator.ledger.issued.values()
    clock.advance(int(issued.extra["expire_at"]) - clock.wall() + 5)
    assert (clock() - SLOT).total_seconds() < 120
    return rig, clock, run_id


@pytest.mark.parametrize(("api", "execute", "order"), SWAP_APIS)
def test_an_expired_rfq_quote_is_never_posted_and_ordered_afresh(
    make_rig: RigFactory, db_url: str, api: str, execute: str, order: str
) -> None:
    rig, _, run_id = _signed_then_crashed(make_rig, db_url, api, order, grace=900)
    first = rig.run(run_id)
    outcomes = recover(rig.runner(), startup=True)  # no RPC node
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], rig.steps(run_id)
    assert rig.emulator.ledger.execution(first.signature or "") is None  # never posted
    assert rig.emulator.ledger.requests.get(execute, 0) == 1  # only the fresh order's
    assert rig.issued() == 2
    assert len(rig.landed()) == 1
    (reorder,) = [d for _, s, d in rig.events(run_id) if s == "reorder"]
    assert "expireAt" in reorder["expired"], reorder


def test_past_its_grace_an_expired_rfq_quote_fails_and_nothing_is_sent(
    make_rig: RigFactory, db_url: str
) -> None:
    api, execute, order = SWAP_APIS[1]
    rig, _, run_id = _signed_then_crashed(make_rig, db_url, api, order, grace=60)
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.FAILED], rig.steps(run_id)
    assert (outcomes[0].error or "").startswith("expired before it was posted, nothing was sent:")
    assert execute not in rig.emulator.ledger.requests
    assert rig.issued() == 1
    assert rig.landed() == []
