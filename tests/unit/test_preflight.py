"""Which plans the pre-flight cap check (and its serialized transaction) applies to."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from jupcron.config import Config
from jupcron.domain import PlanKind
from jupcron.plans.schema import stored_request, stored_settings
from jupcron.runner.preflight import caps_apply
from jupcron.scheduling.schedule import parse_schedule
from jupcron.store.records import PlanRecord

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
NO_CAPS = {"dry_run": False, "max_in_amount": None, "caps": {"per_day": None, "per_week": None}}
SWAP = {"inputMint": USDC, "outputMint": SOL, "amount": 1_000_000}


def plan(kind: str = "swap", request: dict[str, Any] | None = None, **settings: Any) -> PlanRecord:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    return PlanRecord(
        id=1, name="p", kind=PlanKind(kind), version=1, schedule=parse_schedule({"every": "1h"}),
        request=stored_request(PlanKind(kind), request if request is not None else SWAP),
        settings=stored_settings({**NO_CAPS, **settings}),
        enabled=True, description=None, created_at=now, updated_at=now,
    )  # fmt: skip


def config(*caps: dict[str, Any]) -> Config:
    return Config.model_validate(
        {"api": {"base_url": "http://127.0.0.1:9"}, "safety": {"caps": list(caps)}}
    )


@pytest.mark.parametrize(
    ("the_plan", "the_config", "expected"),
    [
        (plan(), config(), False),  # settings as `plans apply` stores them: every cap None
        (plan(max_in_amount=5), config(), True),
        (plan(caps={"per_day": 10, "per_week": None}), config(), True),
        (plan(caps={"per_day": None, "per_week": 10}), config(), True),
        (plan(), config({"mint": USDC, "per_day": 10}), True),
        (plan(), config({"mint": SOL, "per_day": 10}), False),  # a cap on another mint
        (plan("trigger-cancel", {"order": SOL}, max_in_amount=5), config(), False),  # spends none
    ],
)
def test_caps_apply_only_where_a_cap_limits_the_plan(
    the_plan: PlanRecord, the_config: Config, expected: bool
) -> None:
    assert caps_apply(the_plan, the_config) is expected
