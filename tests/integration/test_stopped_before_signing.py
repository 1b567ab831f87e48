"""The kill switch stops all spending at once, and a pause stops its plan's: a run whose
order was already asked for when the switch went on (the file touched while the order
call was in flight), or when its plan was paused, is not signed; it is `skipped` with
the reason, and nothing lands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.store import control
from jupcron.store.engine import begin
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def touching(inner: httpx.BaseTransport, switch: Path) -> httpx.BaseTransport:
    """The emulator; the operator touches the kill switch file while the order call
    is on its way (after the pre-flight passed, before the answer is signed)."""

    class Touch(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = inner.handle_request(request)
            if request.url.path.endswith("/order"):
                switch.touch()
            return response

    return Touch()


def test_a_kill_switch_turned_on_during_the_order_call_signs_nothing(
    make_rig: RigFactory, db_url: str, tmp_path: Path
) -> None:
    switch = tmp_path / "STOP"
    rig = make_rig(db_url=db_url, safety={"kill_switch_file": str(switch)})
    assert rig.transport is not None
    api = JupiterClient(rig.url, api_key=None, transport=touching(rig.transport, switch),
                        rate_limit=1000, sleep=lambda s: None)  # fmt: skip
    try:
        outcome = outcome_of(rig.runner(api=api).fire(rig.plan("swap"), SLOT))
    finally:
        api.close()
    assert rig.emulator.ledger.requests.get("ultra_order") == 1  # it was asked for
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error == f"kill switch file {switch} exists"
    run = rig.run(outcome.run_id)
    assert (run.signed_tx, run.signature) == (None, None)
    assert "signed" not in rig.steps(outcome.run_id)
    assert rig.landed() == []
    assert rig.emulator.ledger.requests.get("execute_ultra", 0) == 0


def test_a_pause_made_during_the_order_call_signs_nothing(
    make_rig: RigFactory, db_url: str
) -> None:
    """`jupcron pause` while the order call is in flight (its retries may take a while):
    the answer is not signed, and the slot is skipped as any paused slot is (unsaid)."""
    rig = make_rig(db_url=db_url)
    assert rig.transport is not None
    plan = rig.plan("swap")
    inner = rig.transport

    class Pausing(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = inner.handle_request(request)
            if request.url.path.endswith("/order"):
                with begin(rig.engine) as conn:
                    control.pause(conn, [plan.name], reason="hold on", by="ops",
                                  now=datetime.now(UTC))  # fmt: skip
            return response

    api = JupiterClient(rig.url, api_key=None, transport=Pausing(), rate_limit=1000,
                        sleep=lambda s: None)  # fmt: skip
    store = SqlRunStore(rig.engine, pause_ttl=0)  # (the daemon's copy is at most 0.5 s old)
    try:
        outcome = outcome_of(rig.runner(api=api, store=store).fire(plan, SLOT))
    finally:
        api.close()
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error is not None
    assert outcome.error.startswith("paused: hold on (by ops;")
    run = rig.run(outcome.run_id)
    assert (run.signed_tx, run.signature) == (None, None)
    assert "stopped_before_signing" in rig.steps(outcome.run_id)
    assert rig.landed() == []
