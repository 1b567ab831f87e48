"""A driver frozen between storing `submitted` and its execute POST (review 22b,
lead 1), while the wallet's new leader re-posts the same bytes, must not order
afresh when it resumes.

Daemon A stores the run `submitted` and stops before its POST reaches the API (a
freeze: SIGSTOP, a VM pause; its lease goes with its connection). Daemon B, the
wallet's new leader, finds the run stale and re-posts the same signed bytes: they
land, but B hears no answer (the run stays `submitted`, for the chain or
`in_doubt` to settle). A resumes more than two minutes after the order and posts
the bytes: the API has forgotten the requestId (-1, "not found, it might have
expired", docs/jupiter-api-notes.md §3.2). A's drive still takes its post for the
first one of these bytes (it moved the run from `signed` itself), reads -1 as
"nothing landed" and orders afresh inside the slot's grace: a second swap lands
for the slot. DESIGN §2 invariant 1 broken.

Real PostgreSQL, the emulator (in process, through the HTTP transport seam: A's
transport holds its execute request until released), real signatures."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.emulator.transport import in_process_transport
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Clock, RigFactory


class FrozenBeforeExecute(httpx.BaseTransport):
    """A's transport: its first execute request waits (the process frozen) until
    released; everything else goes straight to the emulator."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.reached = threading.Event()
        self.release = threading.Event()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if "execute" in request.url.path and not self.reached.is_set():
            self.reached.set()
            assert self.release.wait(30), "never released"
        return self.inner.handle_request(request)


def test_a_driver_frozen_before_its_post_does_not_reorder_a_run_re_posted_by_its_heir(
    make_rig: RigFactory, pg_url: str
) -> None:
    clock = Clock(datetime.now(UTC).replace(microsecond=0))
    rig = make_rig(db_url=pg_url, clock=clock)
    plan = rig.plan("swap", schedule={"every": "1h", "grace": 3600})
    gate = FrozenBeforeExecute(in_process_transport(rig.emulator, sleep=lambda s: None))
    api = JupiterClient.from_config(rig.config, None, transport=gate)
    frozen = rig.runner(node="frozen", api=api)
    heir = rig.runner(node="heir")
    got: list[RunOutcome | None] = []
    thread = threading.Thread(target=lambda: got.append(frozen.fire(plan, clock.now)))
    thread.start()
    try:
        assert gate.reached.wait(30), "A never came to its execute"
        (run_id,) = rig.run_ids()
        assert rig.run(run_id).status is RunStatus.SUBMITTED
        # B, the new leader, re-posts the same bytes: they land; B hears nothing back
        rig.emulator.faults.add("lost_answer", count=0, operation="execute_ultra")
        (settled,) = recover(heir, runs={run_id})
        assert settled.status is RunStatus.SUBMITTED
        assert len(rig.landed()) == 1
        rig.emulator.faults.clear()
        # A resumes 2.5 minutes after the order: the API has forgotten the requestId
        clock.advance(150)
    finally:
        gate.release.set()
        thread.join(60)
    assert got, "A's drive did not end"
    api.close()
    # one swap for the slot: A must not have ordered afresh
    assert len(rig.landed()) == 1, [e.request_id for e in rig.landed()]
