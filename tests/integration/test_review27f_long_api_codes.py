"""An API code longer than the run's ``error_code`` column (VARCHAR(32)), or an error
text with a NUL character in it, is still recorded, on both backends.

API.md: ``code`` is possibly a string, and Jupiter's string codes run longer than 32
characters (``ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT``). SQLite ignores a
VARCHAR's length; PostgreSQL refused the write (``value too long for type character
varying(32)``), a `DataError` that left the store: the run's final state (and the
execute answer, and the attempts booked with it) was never written, `fire` raised a
driver error, and the run stayed in flight, to be ordered or re-posted again by every
recovery pass, failing the same way. A NUL (``\\u0000`` in the JSON answer) did the same:
PostgreSQL's text holds none."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.store.results import results_of
from tests.fixtures.runner import Rig, RigFactory, outcome_of
from tests.integration.test_runner import SLOT

LONG = "ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT"  # 42 characters


class Rewrite(httpx.BaseTransport):
    """The emulator's answers, those to `path` changed by `change` (a JSON body)."""

    def __init__(self, inner: httpx.BaseTransport, path: str, change: Callable[[Any], Any]) -> None:
        self.inner, self.path, self.change = inner, path, change

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path != self.path:
            return response
        body = self.change(json.loads(response.read()))
        return httpx.Response(response.status_code, json=body, request=request)


def runner_with(rig: Rig, path: str, change: Callable[[Any], Any]) -> Any:
    assert rig.transport is not None
    api = JupiterClient.from_config(
        rig.config, None, transport=Rewrite(rig.transport, path, change)
    )
    return rig.runner(api=api)


def declined(body: Any) -> Any:
    """Ultra's "no transaction" answer, with a long string errorCode."""
    return {**body, "transaction": "", "errorCode": LONG, "errorMessage": "no route"}


def test_an_order_declined_with_a_long_code_is_recorded_skipped(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    runner = runner_with(rig, "/ultra/v1/order", declined)
    outcome = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SKIPPED, (run.status, rig.steps(run.id))
    assert run.error_code
    assert LONG.startswith(run.error_code)
    assert run.error is not None
    assert LONG in run.error
    assert rig.steps(run.id)[-1] == "order_declined"


def failed_long(body: Any) -> Any:
    return {**body, "code": LONG}


def test_an_execute_failed_with_a_long_code_is_recorded_failed(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    # refused for good (no fresh order follows -1002), never landed
    rig.emulator.faults.add("failed", count=10, operation="execute_ultra", code=-1002)
    runner = runner_with(rig, "/ultra/v1/execute", failed_long)
    outcome = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.FAILED, (run.status, rig.steps(run.id))
    assert run.error_code
    assert LONG.startswith(run.error_code)
    with rig.factory() as session:
        (result,) = results_of(session, run.id)
    assert LONG.startswith(result["code"])
    assert result["answer"]["code"] == LONG  # the answer as it came, whole
    assert "attempt" in rig.steps(run.id)


def failed_with_nul(body: Any) -> Any:
    return {**body, "error": "route failed\u0000: no liquidity"}


def test_an_execute_failed_with_a_nul_in_its_error_is_recorded_failed(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    rig.emulator.faults.add("failed", count=10, operation="execute_ultra", code=-1002)
    runner = runner_with(rig, "/ultra/v1/execute", failed_with_nul)
    outcome = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.FAILED, (run.status, rig.steps(run.id))
    assert run.error is not None
    assert "route failed" in run.error
    assert "no liquidity" in run.error
    with rig.factory() as session:
        (result,) = results_of(session, run.id)
    assert result["answer"]["error"] == "route failed\u0000: no liquidity"  # as it came
