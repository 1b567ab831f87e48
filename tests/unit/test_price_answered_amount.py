"""Price protection is for what the plan spends, never for the amount an order answer
claims (review 2026-11-27): an answer claiming a smaller ``inAmount`` shrank the
``max_price``/``min_price`` floor and the reference floor, and ``"0"`` removed even
``limits.min_out``, while txguard let the transaction spend the plan's whole amount.
Now the floors come from the plan's amount, and an answer for any other amount
(missing, zero, smaller, larger) is refused: by the runner at the order step
(`pricecheck.answered_amount`) and, should such a protection reach it, by txguard."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.config import Config, GuardConfig
from jupcron.domain import PlanKind
from jupcron.emulator import jupiter_ix as jix
from jupcron.plans.schema import stored_request, stored_settings
from jupcron.price.protection import protection_for
from jupcron.products.base import Ordered, SwapTerms
from jupcron.runner.judge import judge
from jupcron.runner.pricecheck import answered_amount
from jupcron.scheduling.schedule import parse_schedule
from jupcron.store.records import PlanRecord
from jupcron.txguard import GuardPolicy
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
POLICY = GuardPolicy.from_config(GuardConfig())
AMOUNT = 50_000_000  # 50 USDC
BUY_LIMIT = {"limits": {"max_price": 250, "quote": "USDC"}}  # >= 0.2 SOL for 50 USDC
MIN_OUT = {"limits": {"min_out": 200_000_000}}


def swap_plan(**settings: Any) -> PlanRecord:
    request = {"inputMint": str(USDC), "outputMint": str(WSOL), "amount": AMOUNT}
    base = {"dry_run": False, "max_in_amount": None, "caps": {"per_day": None, "per_week": None}}
    return PlanRecord(
        id=1, name="p", kind=PlanKind.SWAP, version=1, schedule=parse_schedule({"every": "1h"}),
        request=stored_request(PlanKind.SWAP, request),
        settings=stored_settings({**base, **settings}),
        enabled=True, description=None, created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def swap_tx(me: Pubkey, quoted_out: int) -> str:
    """The plan's whole 50 USDC into SOL, guaranteeing `quoted_out` less 50 bps."""
    route = jix.route_instruction(
        "route_v2", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(me, WSOL),
        in_amount=AMOUNT, quoted_out_amount=quoted_out, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    return build(me, [*budget(), route])


# the answer's inAmount: smaller, zero, negative, larger than the plan's 50 USDC
OTHER_AMOUNTS = [1_000_000, 0, -1, 60_000_000]


@pytest.mark.parametrize("answered", OTHER_AMOUNTS)
def test_the_floors_are_for_what_the_plan_spends_whatever_the_answer_says(answered: int) -> None:
    config = Config.model_validate({})
    honest = protection_for(swap_plan(**BUY_LIMIT), AMOUNT, None, config, NOW)
    assert (honest.min_out, honest.problem) == (200_000_000, None)
    other = protection_for(swap_plan(**BUY_LIMIT), answered, None, config, NOW)
    assert other.min_out == 200_000_000  # never the smaller floor of a smaller amount
    assert other.problem is not None
    assert f"input amount {answered} is not the plan's {AMOUNT}" in other.problem


@pytest.mark.parametrize("answered", OTHER_AMOUNTS)
def test_an_answer_amount_of_zero_keeps_the_plans_min_out(answered: int) -> None:
    got = protection_for(swap_plan(**MIN_OUT), answered, None, Config.model_validate({}), NOW)
    assert got.min_out == 200_000_000
    assert got.problem is not None


@pytest.mark.parametrize("limits", [BUY_LIMIT, MIN_OUT], ids=["max_price", "min_out"])
@pytest.mark.parametrize("answered", [1_000_000, 0])
def test_a_swap_under_a_floor_made_for_another_amount_is_refused(
    limits: dict[str, Any], answered: int
) -> None:
    """The transaction spends the plan's 50 USDC for >= 0.004975 SOL (~10,050 USDC/SOL)."""
    me = Keypair().pubkey()
    plan = swap_plan(**limits)
    protection = protection_for(plan, answered, None, Config.model_validate({}), NOW)
    verdict = judge(swap_tx(me, 5_000_000), plan, me, POLICY,
                    ordered={"price": protection.detail()})  # fmt: skip
    assert not verdict.accepted
    assert any("price protection cannot vouch" in r for r in verdict.reasons), verdict.reasons


def test_the_same_swap_at_a_fair_price_for_the_plans_amount_is_accepted() -> None:
    me = Keypair().pubkey()
    plan = swap_plan(**BUY_LIMIT)
    protection = protection_for(plan, AMOUNT, None, Config.model_validate({}), NOW)
    fair = judge(swap_tx(me, 330_000_000), plan, me, POLICY,
                 ordered={"price": protection.detail()})  # fmt: skip
    assert fair.accepted, fair.reasons
    cheap = judge(swap_tx(me, 5_000_000), plan, me, POLICY,
                  ordered={"price": protection.detail()})  # fmt: skip
    assert not cheap.accepted


SWAP = SwapTerms("swap-v2")


@pytest.mark.parametrize(
    ("in_amount", "swap", "refused"),
    [
        (AMOUNT, SWAP, False),  # every genuine answer: inAmount is the plan's amount
        (None, None, False),  # a recurring or cancel answer states no amount
        (None, SWAP, True),  # a swap's quote without inAmount
        (0, SWAP, True),
        (1_000_000, SWAP, True),
        (AMOUNT + 1, SWAP, True),
        (1_000_000, None, True),  # any kind's answer stating another amount
    ],
)
def test_the_runner_refuses_an_answer_for_another_amount(
    in_amount: int | None, swap: SwapTerms | None, refused: bool
) -> None:
    ordered = Ordered("req-1", "tx", in_amount=in_amount, swap=swap)
    reason = answered_amount(AMOUNT, ordered)
    assert (reason is not None) is refused
    if reason is not None:
        assert f"the plan spends {AMOUNT}" in reason
