"""Two drivers of one run: a live fire (or a recovery) and another process's recovery
(`jupcron fire` recovered every run in the store; a daemon gaining a wallet took
runs its old leader was still driving). Every move of a run is a compare-and-set on
its status AND its order (requestId, unsigned transaction): a driver that finds the
run moved, even round to the same status with another order (requested -> pending
-> requested), stops there and posts nothing. Before, the status-only check let the
first driver's stale `signed` pass over the second's fresh order: it posted its
old order, and a transaction that landed was recorded as failed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jupcron import failpoints
from jupcron.api.client import JupiterClient
from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.emulator.transport import in_process_transport
from jupcron.runner.recovery import recover
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import Rig, RigFactory

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


class Gate(httpx.BaseTransport):
    """Passes requests to `inner`, counting those whose path contains `on`; the first
    of them (once `when()` holds) waits until released, and says it arrived."""

    def __init__(
        self, inner: httpx.BaseTransport, on: str, when: Callable[[], bool] | None = None
    ) -> None:
        self.inner, self.on, self.when = inner, on, when
        self.arrived, self.release = threading.Event(), threading.Event()
        self.used = False
        self.seen = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.on in request.url.path:
            self.seen += 1
            if not self.used and (self.when is None or self.when()):
                self.used = True
                self.arrived.set()
                assert self.release.wait(20)
        return self.inner.handle_request(request)


def never() -> bool:
    """A gate that only counts."""
    return False


def api(rig: Rig, transport: httpx.BaseTransport) -> JupiterClient:
    return JupiterClient.from_config(rig.config, None, transport=transport)


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    result: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: result.__setitem__("value", target()))
    thread.start()
    return thread, result


@pytest.fixture(autouse=True)
def _disarm() -> Any:
    yield
    failpoints.disarm()


def test_a_driver_whose_order_another_replaced_stops_without_posting(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    plan = rig.plan("swap")
    inner = in_process_transport(rig.emulator, sleep=lambda s: None)

    def requested() -> bool:
        ids = rig.run_ids()
        return bool(ids) and rig.run(ids[0]).status is RunStatus.REQUESTED

    # driver A: the live fire, held while txguard's RPC judges its order (req1)
    a_rpc, a_api = Gate(inner, "/rpc", requested), Gate(inner, "execute", never)
    runner_a = rig.runner(api=api(rig, a_api), rpc=SolanaRpc(rig.url + "/rpc", transport=a_rpc))
    # driver B: another process's recovery, held while judging its fresh order (req2)
    b_rpc = Gate(inner, "/rpc", requested)
    runner_b = rig.runner(api=api(rig, inner), rpc=SolanaRpc(rig.url + "/rpc", transport=b_rpc))

    ta, a = in_thread(lambda: runner_a.fire(plan, SLOT))
    assert a_rpc.arrived.wait(20)  # A: requested (req1) stored, judging
    tb, b = in_thread(lambda: recover(runner_b, startup=True))
    assert b_rpc.arrived.wait(20)  # B: requested -> pending -> requested (req2), judging
    a_rpc.release.set()
    ta.join(20)  # A's signed (of req1) finds req2: A stops
    assert not ta.is_alive()
    assert a_api.seen == 0  # A posted nothing
    assert a["value"].taken_over
    b_rpc.release.set()
    tb.join(20)
    assert not tb.is_alive()

    run = rig.run(rig.run_ids()[0])
    (landed,) = rig.landed()
    assert run.status is RunStatus.SUCCEEDED, (run.status, run.error)
    assert (run.request_id, run.signature) == (landed.request_id, landed.signature)
    assert [o.status for o in b["value"]] == [RunStatus.SUCCEEDED]


def test_the_driver_that_lost_the_race_to_post_a_signed_run_posts_nothing(
    make_rig: RigFactory, db_url: str
) -> None:
    """Two recoveries of one signed run: the first to move it to submitted posts it;
    the other (its copy still `signed`) stops, where before it posted the bytes again
    as their "first" post."""
    rig = make_rig(db_url=db_url, swap_api="swap-v2")
    plan = rig.plan("swap")
    run_id = rig.signed_then_crashed(plan, SLOT)
    inner = in_process_transport(rig.emulator, sleep=lambda s: None)
    # A reads the run (signed), then waits on the block height its first post needs
    a_rpc, a_api = Gate(inner, "/rpc"), Gate(inner, "execute", never)
    runner_a = rig.runner(api=api(rig, a_api), rpc=SolanaRpc(rig.url + "/rpc", transport=a_rpc))
    ta, a = in_thread(lambda: runner_a.drive(run_id, plan))
    assert a_rpc.arrived.wait(20)
    # meanwhile B drives it to the end: submitted, posted, succeeded
    (b,) = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert b.status is RunStatus.SUCCEEDED
    a_rpc.release.set()
    ta.join(20)
    assert not ta.is_alive()
    assert a_api.seen == 0  # A posted nothing
    assert a["value"].taken_over
    run = rig.run(run_id)
    (landed,) = rig.landed()
    assert run.status is RunStatus.SUCCEEDED
    assert run.signature == landed.signature


def test_an_advance_matches_the_order_it_was_read_with(make_rig: RigFactory, db_url: str) -> None:
    """The store's compare-and-set (both backends; PostgreSQL's pipelined batch too):
    a copy of the run whose order was replaced since does not move it."""
    rig = make_rig(db_url=db_url)
    plan = rig.plan("swap")
    store = SqlRunStore(rig.engine)
    now = datetime.now(UTC)
    claimed = store.claim(plan, SLOT, now=now, trigger="schedule", claimed_by=None)
    assert claimed is not None
    order = {"request_id": "req-1", "unsigned_tx": "tx-1"}
    first, moved = store.advance(
        claimed, RunStatus.REQUESTED, now=now, expect=[RunStatus.PENDING], step="ordered",
        detail={}, fields=order, match={"request_id": None, "unsigned_tx": None},
    )  # fmt: skip
    assert moved
    assert first.request_id == "req-1"
    # another driver: back to pending, and a fresh order (req-2)
    again, _ = store.advance(
        first, RunStatus.PENDING, now=now, expect=[RunStatus.REQUESTED], step="reorder",
        detail={}, match=order,
    )  # fmt: skip
    fresh = {"request_id": "req-2", "unsigned_tx": "tx-2"}
    store.advance(
        again, RunStatus.REQUESTED, now=now, expect=[RunStatus.PENDING], step="ordered",
        detail={}, fields=fresh, match=order,
    )  # fmt: skip
    # the first copy (requested, req-1): its status matches, its order does not
    stale, moved = store.advance(
        first, RunStatus.SIGNED, now=now, expect=[RunStatus.REQUESTED], step="signed",
        detail={}, fields={"signature": "sig-1"}, match=order,
    )  # fmt: skip
    assert not moved
    assert (stale.status, stale.request_id, stale.signature) == (
        RunStatus.REQUESTED, "req-2", None,
    )  # fmt: skip
    # the current copy moves it
    current, moved = store.advance(
        stale, RunStatus.SIGNED, now=now, expect=[RunStatus.REQUESTED], step="signed",
        detail={}, fields={"signature": "sig-2"}, match=fresh,
    )  # fmt: skip
    assert moved
    assert (current.request_id, current.signature) == ("req-2", "sig-2")
