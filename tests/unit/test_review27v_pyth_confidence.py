"""A Pyth reading whose confidence interval reaches zero (conf >= price) is no price:
the docs say a reading is used only when it is a price; `judge` ignored ``conf``, so
such a reading set the reference every run was held to (review 27v)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jupcron.config import Config
from jupcron.domain import PlanKind
from jupcron.emulator.oracle import price_update_bytes
from jupcron.plans.schema import stored_request, stored_settings
from jupcron.price.oracle import DEFAULT_FEEDS, RECEIVER_PROGRAM, judge
from jupcron.price.protection import protection_for
from jupcron.scheduling.schedule import parse_schedule
from jupcron.store.records import PlanRecord

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
T = int(NOW.timestamp())


@dataclass(frozen=True)
class State:
    owner: str
    data: bytes


def _state(mint: str, price: int, conf: int) -> State:
    feed = DEFAULT_FEEDS[mint]
    return State(RECEIVER_PROGRAM, price_update_bytes(feed.feed_id or "", price, conf, T, 0))


class Rpc:
    def __init__(self, states: dict[str, State]) -> None:
        self.states = states

    def accounts(self, addresses: Any) -> list[State | None]:
        return [self.states.get(a) for a in addresses]

    def mint_decimals(self, mint: str) -> int | None:
        return None


def test_a_reading_whose_interval_reaches_zero_is_not_a_price() -> None:
    # SOL at 150 +- 300 USD: anything from nothing to 450
    reading = judge(SOL, DEFAULT_FEEDS[SOL], _state(SOL, 150 * 10**8, 300 * 10**8),
                    now=T, max_age=120)  # fmt: skip
    assert reading.problem is not None
    assert "confidence" in reading.problem
    assert reading.usd is None


def test_a_run_is_not_held_to_a_reference_with_no_confidence() -> None:
    rpc = Rpc({
        DEFAULT_FEEDS[SOL].account: _state(SOL, 150 * 10**8, 10**8),
        DEFAULT_FEEDS[USDC].account: _state(USDC, 10**8, 5 * 10**8),  # 1 +- 5 USD
    })  # fmt: skip
    request = {"inputMint": USDC, "outputMint": SOL, "amount": 50_000_000}
    base = {"dry_run": False, "max_in_amount": None, "caps": {"per_day": None, "per_week": None}}
    plan = PlanRecord(
        id=1, name="p", kind=PlanKind.SWAP, version=1, schedule=parse_schedule({"every": "1h"}),
        request=stored_request(PlanKind.SWAP, request), settings=stored_settings(base),
        enabled=True, description=None, created_at=NOW, updated_at=NOW,
    )  # fmt: skip
    config = Config.model_validate({"price": {"on_stale": "refuse"}})
    got = protection_for(plan, 50_000_000, rpc, config, NOW)
    assert got.reference_out is None
    assert got.problem is not None
    assert "confidence" in got.problem
