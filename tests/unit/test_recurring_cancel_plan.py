"""Plan kind ``recurring-cancel`` at `plans validate` (one request model, for plans
and the API client alike), and its guard terms: only the named order may close."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from jupcron.api.client import JupiterClient
from jupcron.config import GuardConfig
from jupcron.domain import PlanKind
from jupcron.emulator.txbuild import build_unsigned, to_b64
from jupcron.errors import ApiRejectedError
from jupcron.plans.load import load_plans
from jupcron.plans.schema import stored_request, stored_settings
from jupcron.products.kinds import spec
from jupcron.products.recurring_cancel.model import RecurringCancelRequest
from jupcron.runner.judge import judge
from jupcron.scheduling.schedule import parse_schedule
from jupcron.store.records import PlanRecord
from jupcron.txguard import GuardPolicy
from tests.fixtures.plans import write_plans

ORDER = "4DWzP4TdTsuwvYMaMWrRqzya4UTFKFoVjfUWNWh8zhzd"  # the docs' example
WALLET = "BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def _load(tmp_path: Path, request: dict[str, Any]) -> tuple[list[str], list[Any]]:
    plan = {"name": "stop", "kind": "recurring-cancel", "schedule": {"at": "2030-01-01T00:00:00Z"},
            "request": request}  # fmt: skip
    path = write_plans(tmp_path / "p.yaml", {"plans": [plan]})
    result = load_plans([path])
    return [str(p).removeprefix(str(path) + ":") for p in result.problems], result.plans


def test_a_cancel_by_order_account_loads_as_its_typed_request(tmp_path: Path) -> None:
    problems, plans = _load(tmp_path, {"order": ORDER})
    assert problems == []
    (plan,) = plans
    assert isinstance(plan.spec.request, RecurringCancelRequest)
    assert plan.spec.request_dict() == {"order": ORDER, "recurringType": "time"}
    assert spec(PlanKind.RECURRING_CANCEL).spend(plan.spec.request) is None  # spends nothing


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ({"order": "nope"}, "request.order"),
        ({"order": ORDER, "recurringType": "price"}, "request.recurringType"),
        ({"order": ORDER, "user": WALLET}, "the daemon fills in 'user'"),
        ({}, "give either order, or both inputMint and outputMint"),
        ({"order": ORDER, "inputMint": USDC, "outputMint": SOL}, "give either order"),
        ({"inputMint": USDC}, "give either order"),
        ({"inputMint": USDC, "outputMint": USDC}, "outputMint is the same as inputMint"),
    ],
)
def test_a_bad_cancel_is_refused_with_its_position(
    tmp_path: Path, request_: dict[str, Any], expected: str
) -> None:
    problems, plans = _load(tmp_path, request_)
    assert plans == []
    assert len(problems) == 1
    assert expected in problems[0]


def test_the_client_refuses_a_bad_cancel_before_any_http() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"requestId": "r", "transaction": "AQ=="})

    api = JupiterClient("http://api", api_key=None, transport=httpx.MockTransport(handle),
                        rate_limit=1000, max_attempts=2, sleep=lambda s: None)  # fmt: skip
    with pytest.raises(ApiRejectedError, match="order"):
        api.cancel_recurring_order(WALLET, {"order": "nope"})
    with pytest.raises(ApiRejectedError, match="give either order"):  # a pair is the plan's
        api.cancel_recurring_order(WALLET, {"inputMint": USDC, "outputMint": SOL})
    assert seen == []
    api.cancel_recurring_order(WALLET, {"order": ORDER})
    (sent,) = seen
    assert sent.url.path == "/recurring/v1/cancelOrder"
    assert httpx.Response(200, content=sent.content).json() == {
        "order": ORDER, "recurringType": "time", "user": WALLET,
    }  # fmt: skip


def _plan(order: str) -> PlanRecord:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    kind = PlanKind.RECURRING_CANCEL
    return PlanRecord(
        id=1, name="stop", kind=kind, version=1, schedule=parse_schedule({"every": "1h"}),
        request=stored_request(kind, {"order": order}), settings=stored_settings({}),
        enabled=True, description=None, created_at=now, updated_at=now,
    )  # fmt: skip


def test_the_guard_lets_only_the_named_order_close_to_our_accounts() -> None:
    owner = Keypair().pubkey()
    policy = GuardPolicy.from_config(GuardConfig())
    ours = Keypair().pubkey()

    def verdict(order: Pubkey, **hostile: Any) -> list[str]:
        tx = to_b64(build_unsigned("recurring_cancel", owner, order=order, **hostile))
        return list(judge(tx, _plan(str(ours)), owner, policy, ordered={}).reasons)

    assert verdict(ours) == []
    other = verdict(Keypair().pubkey())
    assert any("the plan names " + str(ours) in r for r in other), other
    drained = verdict(ours, hostile_to=Keypair().pubkey())
    assert drained != []
