"""Trigger V2 plans: the documented limits at `plans validate`, each as
file:line:col with a clear message; Recurring v1 plans get a suggestion, never
a refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupcron.plans.load import load_plans
from jupcron.plans.trigger_v2 import TriggerV2DcaRequest, TriggerV2OrderRequest
from tests.fixtures.plans import recurring_plan, write_plans

CONFIG_V2 = Path(__file__).resolve().parents[2] / "config" / "plans-v2"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
HEAD = """plans:
  - name: p
    kind: {kind}
    schedule: {{every: 1w}}
    request:
"""
DCA = {"inputMint": USDC, "outputMint": SOL, "inputAmount": 40000000, "orderCount": 4,
       "intervalSeconds": 86400}  # fmt: skip
ORDER = {"inputMint": SOL, "outputMint": USDC, "inputAmount": 100000000, "triggerMint": SOL,
         "triggerCondition": "above", "triggerPriceUsd": 250, "expiresAfter": "7d"}  # fmt: skip


def _yaml(kind: str, request: dict[str, Any]) -> str:
    lines = [f"      {k}: {v}" for k, v in request.items()]
    return HEAD.format(kind=kind) + "\n".join(lines) + "\n"


def _messages(tmp_path: Path, kind: str, request: dict[str, Any]) -> list[str]:
    path = write_plans(tmp_path / "p.yaml", _yaml(kind, request))
    result = load_plans([path])
    return [str(p).removeprefix(str(path) + ":") for p in result.problems]


def test_the_shipped_v2_examples_validate_without_a_warning() -> None:
    result = load_plans([CONFIG_V2])
    assert result.problems == []
    assert result.warnings == []
    kinds = {str(p.spec.kind) for p in result.plans}
    assert kinds == {"trigger-v2-dca", "trigger-v2-order", "trigger-v2-cancel"}


def test_a_valid_dca_and_order_load_as_their_typed_requests(tmp_path: Path) -> None:
    for kind, request, model in (("trigger-v2-dca", DCA, TriggerV2DcaRequest),
                                 ("trigger-v2-order", ORDER, TriggerV2OrderRequest)):  # fmt: skip
        result = load_plans([write_plans(tmp_path / f"{kind}.yaml", _yaml(kind, request))])
        assert result.problems == []
        assert isinstance(result.plans[0].spec.request, model)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"orderCount": 1},
         ["9:7: request.orderCount: must be at least 2 (a Trigger V2 DCA has 2 rounds or more)"]),
        ({"intervalSeconds": 59},
         ["10:7: request.intervalSeconds: must be between 60 and 31536000 seconds (1 minute to 1 year)"]),
        ({"intervalSeconds": 31536001},
         ["10:7: request.intervalSeconds: must be between 60 and 31536000 seconds (1 minute to 1 year)"]),
        ({"inputAmount": 39000000},
         ["8:7: each round would be 9.75 USDC (inputAmount / orderCount); Trigger V2 DCA needs at least 10 USD a round"]),
        ({"outputMint": USDC},
         ["7:7: outputMint is the same as inputMint"]),
        ({"orderType": "price_conditional"},
         ["11:7: a price_conditional DCA needs triggerMint",
          "11:7: a price_conditional DCA needs minPriceUsd or maxPriceUsd (or both)"]),
        ({"orderType": "price_conditional", "triggerMint": USDC, "minPriceUsd": 1},
         ["12:7: triggerMint is the stablecoin leg; the API refuses it (use the other mint)"]),
        ({"orderType": "price_conditional", "triggerMint": SOL, "minPriceUsd": 200, "maxPriceUsd": 100},
         ["13:7: minPriceUsd is not below maxPriceUsd"]),
        ({"minPriceUsd": 100},
         ["11:7: minPriceUsd needs orderType: price_conditional (a time_based DCA has no price band)"]),
        ({"beginFillAt": "2001-01-01T00:00:00Z"},
         ["11:7: beginFillAt is in the past; it must be in the future"]),
        ({"jlEnabled": "true"},
         ["11:7: Earn While You Wait (jlEnabled, jlMint) is not supported: its deposit goes into Jupiter Lend, whose program the docs do not name, so txguard could not check it"]),
        ({"userPubkey": SOL},
         ["11:7: request.userPubkey: remove it; the daemon fills in 'userPubkey' with its wallet"]),
    ],
)  # fmt: skip
def test_dca_limits_are_checked_with_their_position(
    tmp_path: Path, changes: dict[str, Any], expected: list[str]
) -> None:
    assert _messages(tmp_path, "trigger-v2-dca", {**DCA, **changes}) == expected


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"inputMint": USDC, "outputMint": SOL, "inputAmount": 5000000},
         ["8:7: inputAmount is 5.00 USDC; a Trigger V2 order needs at least 10 USD"]),
        ({"trailingBps": 1000},
         ["9:7: a trailing order with triggerCondition above needs triggerMint = outputMint",
          "11:7: give exactly one of triggerPriceUsd (a fixed trigger) or trailingBps (trailing)"]),
        ({"trailingBps": 49, "triggerPriceUsd": None},
         ["12:7: request.trailingBps: must be between 50 and 9000 bps"]),
        ({"expiresAt": 1700000000000},
         ["12:7: give exactly one of expiresAfter (a duration from each fire, e.g. 7d) or expiresAt (milliseconds); every Trigger V2 price order expires"]),
        ({"expiresAfter": None, "expiresAt": 1700000000},
         ["12:7: request.expiresAt: 1700000000 looks like seconds; expiresAt is in milliseconds"]),
        ({"expiresAfter": None, "expiresAt": 1000000000000},
         ["12:7: expiresAt is in the past"]),
        ({"orderType": "oco"},
         ["13:7: oco price orders are not supported by jupcron (only single, static or trailing)"]),
        ({"slippageBps": 10001},
         ["13:7: request.slippageBps: must be between 0 and 10000 bps"]),
        ({"triggerCondition": "sideways"},
         ["10:7: request.triggerCondition: Input should be 'above' or 'below'"]),
    ],
)  # fmt: skip
def test_price_order_limits_are_checked_with_their_position(
    tmp_path: Path, changes: dict[str, Any], expected: list[str]
) -> None:
    request = {k: v for k, v in {**ORDER, **changes}.items() if v is not None}
    assert _messages(tmp_path, "trigger-v2-order", request) == expected


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ({"order": "../../vault", "family": "dca"},
         ["6:7: request.order: '../../vault' is not a Trigger V2 order id (the `id` the create call returned: letters, digits, '-' and '_', as in 019f02b5-0400-72cc-8943-007c4310a3de)"]),
        ({"order": "abc", "family": "recurring"},
         ["7:7: request.family: Input should be 'dca' or 'price'"]),
    ],
)  # fmt: skip
def test_cancel_requests_are_checked(
    tmp_path: Path, request_: dict[str, Any], expected: list[str]
) -> None:
    assert _messages(tmp_path, "trigger-v2-cancel", request_) == expected


def test_a_dca_schedule_that_could_keep_more_than_ten_orders_active_is_a_warning(
    tmp_path: Path,
) -> None:
    text = _yaml("trigger-v2-dca", DCA).replace("{every: 1w}", "{every: 1h}")
    result = load_plans([write_plans(tmp_path / "p.yaml", text)])
    assert result.problems == []
    (warning,) = result.warnings
    assert warning.line == 4
    assert "more than 10 of its orders could be active at once" in warning.message


def test_recurring_v1_plans_get_a_suggestion_never_a_refusal(tmp_path: Path) -> None:
    path = write_plans(tmp_path / "p.yaml", recurring_plan("old"))
    result = load_plans([path])
    assert result.problems == []
    assert result.warnings == []
    (suggestion,) = result.suggestions
    assert suggestion.message.startswith("warning: Recurring v1 is no longer actively maintained")
    assert "kind: trigger-v2-dca" in suggestion.message
    assert len(result.plans) == 1
