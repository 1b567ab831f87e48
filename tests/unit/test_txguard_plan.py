"""The Jupiter instruction held to the plan: kind, mints, amount, order, and who
receives. Transactions are the emulator's, shaped like the real API's answers
(real route_v2 / open_dca_v2 / cancel_order instructions), changed one way each."""

from __future__ import annotations

import random

import pytest
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jix
from jupcron.emulator.txbuild import build_unsigned, to_b64
from jupcron.txguard import GuardPolicy, check_and_sign, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key, route

POLICY = GuardPolicy()
USDT = Pubkey.from_string("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB")
U, S = str(USDC), str(WSOL)
SWAP = Expectation("swap", U, S, 5_000_000)
RECURRING = Expectation("recurring", U, S, 200_000_000)


def _emu(kind: str, me: Pubkey, **kw: object) -> str:
    return to_b64(build_unsigned(kind, me, rng=random.Random(7), **kw))  # type: ignore[arg-type]


@pytest.fixture
def wallet() -> Wallet:
    return Wallet.generate()


# --- what the real API hands out, for each plan kind: accepted and signed ------------


def test_a_swap_as_the_api_builds_it(wallet: Wallet) -> None:
    tx = _emu("swap", wallet.pubkey, input_mint=U, output_mint=S, amount=5_000_000)
    assert inspect(tx, wallet.pubkey, POLICY, expect=SWAP).accepted
    assert check_and_sign(wallet, tx, POLICY, expect=SWAP).signature


@pytest.mark.parametrize("variant", jix.ROUTES)
def test_every_route_form_the_emulator_builds(wallet: Wallet, variant: str) -> None:
    tx = _emu("swap", wallet.pubkey, input_mint=U, output_mint=S, amount=5_000_000, route=variant)
    verdict = inspect(tx, wallet.pubkey, POLICY, expect=SWAP)
    assert verdict.accepted, verdict.reasons


def test_a_sol_input_swap_wraps_and_unwraps(wallet: Wallet) -> None:
    tx = _emu("swap", wallet.pubkey, input_mint=S, output_mint=U, amount=10**9)
    expect = Expectation("swap", S, U, 10**9)
    assert inspect(tx, wallet.pubkey, POLICY, expect=expect).accepted


def test_a_recurring_order_as_the_api_builds_it(wallet: Wallet) -> None:
    tx = _emu("recurring", wallet.pubkey, input_mint=U, output_mint=S, amount=200_000_000)
    assert inspect(tx, wallet.pubkey, POLICY, expect=RECURRING).accepted


def test_a_cancel_as_the_api_builds_it(wallet: Wallet) -> None:
    order = new_key()
    tx = _emu("trigger_cancel", wallet.pubkey, input_mint=U, order=order)
    expect = Expectation("trigger-cancel", order=str(order))
    assert inspect(tx, wallet.pubkey, POLICY, expect=expect).accepted


def test_a_swap_paying_out_to_the_plans_receiver(wallet: Wallet) -> None:
    receiver = new_key()
    tx = _emu("swap", wallet.pubkey, input_mint=U, output_mint=S, amount=5_000_000,
              receiver=receiver)  # fmt: skip
    named = Expectation("swap", U, S, 5_000_000, receiver=str(receiver))
    assert inspect(tx, wallet.pubkey, POLICY, expect=named).accepted
    # the same transaction for a plan that names no receiver: the output is a stranger's
    reasons = " ".join(inspect(tx, wallet.pubkey, POLICY, expect=SWAP).reasons)
    assert "which is not ours" in reasons


# --- each breaks the plan one way: refused, nothing signed ------------------------------


def _two_routes(me: Pubkey) -> str:
    return build(
        me, [*budget(), route(me, USDC, WSOL, 3_000_000), route(me, USDC, WSOL, 3_000_000)]
    )


def _route_to(me: Pubkey, destination: Pubkey, mint: Pubkey = USDC) -> str:
    ix = jix.route_instruction(
        "route_v2", me, input_mint=mint, output_mint=WSOL,
        source=get_associated_token_address(me, mint), destination=destination,
        in_amount=5_000_000, quoted_out_amount=1, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    return build(me, [*budget(), ix])


def _dca_for(me: Pubkey, user: Pubkey) -> str:
    ix = jix.open_dca_v2(user, input_mint=USDC, output_mint=WSOL, application_idx=1,
                         in_amount=200_000_000, in_amount_per_cycle=100_000_000,
                         cycle_frequency=86_400, payer=me)  # fmt: skip
    return build(me, [*budget(), ix])


def _unknown_aggregator_call(me: Pubkey) -> str:
    ix = route(me, USDC, WSOL, 1)
    return build(
        me, [*budget(), Instruction(ix.program_id, b"\x99" * 8 + ix.data[8:], ix.accounts)]
    )


ORDER = new_key()
CANCEL = Expectation("trigger-cancel", order=str(ORDER))

CASES: list[tuple[str, object, Expectation, str]] = [
    ("swap over the plan's amount",
     lambda me: _emu("swap", me, input_mint=U, output_mint=S, amount=6_000_000), SWAP,
     "spend 6000000 of EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v in all, more than the 5000000"),
    ("the amount split across two routes", _two_routes, SWAP, "spend 6000000"),
    ("recurring over the plan's total",
     lambda me: _emu("recurring", me, input_mint=U, output_mint=S, amount=300_000_000), RECURRING,
     "spend 300000000"),
    ("a cancel plan signs a DCA opening",
     lambda me: _emu("recurring", me, input_mint=U, output_mint=S, amount=1), CANCEL,
     "is a recurring open, but the plan is a trigger-cancel plan"),
    ("a swap plan signs a cancel",
     lambda me: _emu("trigger_cancel", me, input_mint=U), SWAP,
     "is a trigger cancel, but the plan is a swap plan"),
    ("a recurring plan signs a swap",
     lambda me: _emu("swap", me, input_mint=U, output_mint=S, amount=1), RECURRING,
     "is a swap, but the plan is a recurring plan"),
    ("a swap plan signs a limit order",
     lambda me: _emu("trigger", me, input_mint=U, output_mint=S, amount=1), SWAP,
     "is a trigger open, but the plan is a swap plan"),
    ("the swap pays out to a stranger", lambda me: _route_to(me, new_key()), SWAP,
     "pays out to"),
    ("the DCA is opened for someone else at our cost",
     lambda me: _dca_for(me, Keypair().pubkey()), RECURRING, "not for our wallet"),
    ("the cancel refunds a stranger",
     lambda me: _emu("trigger_cancel", me, input_mint=U, order=ORDER, refund_to=new_key()), CANCEL,
     "refunds to"),
    ("a cancel of another order than the plan's",
     lambda me: _emu("trigger_cancel", me, input_mint=U, order=new_key()), CANCEL,
     "the plan names " + str(ORDER)),
    ("the swap spends another mint", lambda me: _route_to(me, get_associated_token_address(me, WSOL), USDT), SWAP,
     f"names {USDT} as its input mint"),
    ("an aggregator instruction that cannot be decoded", _unknown_aggregator_call, SWAP,
     "cannot be decoded"),
    ("no Jupiter instruction at all", lambda me: build(me, budget()), SWAP,
     "no Jupiter instruction of the kind the plan asked for"),
]  # fmt: skip


@pytest.mark.parametrize(("builder", "expect", "reason"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_transaction_that_breaks_the_plan_is_refused(
    wallet: Wallet, builder: object, expect: Expectation, reason: str
) -> None:
    tx = builder(wallet.pubkey)  # type: ignore[operator]
    verdict = inspect(tx, wallet.pubkey, POLICY, expect=expect)
    assert not verdict.accepted
    assert any(reason in r for r in verdict.reasons), verdict.reasons


def test_the_allowance_is_a_bounded_config_of_basis_points(wallet: Wallet) -> None:
    tx = _emu("swap", wallet.pubkey, input_mint=U, output_mint=S, amount=5_050_000)
    assert not inspect(tx, wallet.pubkey, POLICY, expect=SWAP).accepted
    one_percent = GuardPolicy(amount_allowance_bps=100)
    assert inspect(tx, wallet.pubkey, one_percent, expect=SWAP).accepted
