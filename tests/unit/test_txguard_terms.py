"""The plan's whole terms, held against hostile answers.

Most cases are genuine Jupiter transactions (tests/fixtures/real) changed one
way each, as a hostile API could answer the same order; each is judged exactly
as a run of its plan is judged (`runner.judge`). Every case is refused, and the
unchanged genuine transaction is accepted beside it (so a refusal is the
change's doing, not the fixture's).
"""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import read_transaction
from jupcron.emulator import jupiter_ix as jix
from jupcron.runner.judge import expectation, judge
from jupcron.txguard import inspect
from tests.fixtures import real
from tests.fixtures.mutate import instruction_data, mutate, put
from tests.fixtures.verdicts import CORPUS, POLICY, record, refused, verdict
from tests.fixtures.wallet import DCA as DCA_PROGRAM
from tests.fixtures.wallet import (
    TOKEN,
    USDC,
    WSOL,
    budget,
    build,
    create_ata_idempotent,
    new_key,
)

METIS = CORPUS["ultra-order-usdc-sol-route_v2-metis"]  # route_v2 at #4, USDC -> SOL
SOLFI = CORPUS["ultra-order-sol-usdc-route-solfi"]  # v1 route at #6, SOL -> USDC
DCA = CORPUS["recurring-create-order-sol-usdc"]  # open_dca_v2 at #6
USDT = Pubkey.from_string("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB")


@pytest.mark.parametrize("tx", [METIS, SOLFI, DCA], ids=lambda t: t.name)
def test_the_genuine_transactions_these_cases_change_are_accepted(tx: real.RealTx) -> None:
    assert verdict(tx).accepted


# --- slippage ---------------------------------------------------------------------------

ROUTE_V2_SLIPPAGE = 24  # discriminator, in_amount, quoted_out_amount, then slippage_bps: u16
ROUTE_V2_FEE = 26  # then platform_fee_bps: u16


def test_slippage_of_10000_bps_is_refused() -> None:
    """10,000 bps makes the guaranteed minimum out 0: the input could buy nothing."""
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, ROUTE_V2_SLIPPAGE, b"\x10\x27"))
    refused(verdict(METIS, hostile), "allows 10000 bps of slippage", "guard.max_slippage_bps")


def test_slippage_above_the_plans_own_is_refused() -> None:
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, ROUTE_V2_SLIPPAGE, b"\xc8\x00"))
    refused(verdict(METIS, hostile, slippageBps=100), "allows 200 bps", "slippageBps")
    assert verdict(METIS, hostile, slippageBps=200).accepted  # the plan allows it


def test_a_v1_routes_slippage_is_held_too() -> None:
    data = instruction_data(SOLFI.transaction, 6)
    at = len(data) - 3  # ... quoted_out_amount, slippage_bps: u16, platform_fee_bps: u8
    hostile = mutate(SOLFI.transaction, 6, data=put(data, at, struct.pack("<H", 5000)))
    refused(verdict(SOLFI, hostile), "allows 5000 bps of slippage")


# --- fees -------------------------------------------------------------------------------


def test_a_platform_fee_the_plan_never_asked_for_is_refused() -> None:
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, ROUTE_V2_FEE, b"\x64\x00"))
    refused(verdict(METIS, hostile), "platform fee of 100 bps", "at most 2")
    # without the order's declared fee: the config's cap
    v = judge(hostile, record(METIS.plan), Pubkey.from_string(METIS.wallet), POLICY, ordered={})
    refused(v, "platform fee of 100 bps", "guard.max_platform_fee_bps")


def test_a_share_of_positive_slippage_the_plan_never_gave_is_refused() -> None:
    """route_v2's positive_slippage_bps (after the platform fee): 10,000 sends all of
    any output above the quote to someone else's collector."""
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, 28, struct.pack("<H", 10_000)))
    refused(verdict(METIS, hostile), "10000 bps of any positive slippage")


def test_a_fee_above_what_the_order_declared_is_refused() -> None:
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, ROUTE_V2_FEE, b"\x0a\x00"))
    refused(verdict(METIS, hostile), "platform fee of 10 bps", "feeBps the order answer declared")


def test_a_referral_plan_bounds_the_fee_by_its_referral_fee() -> None:
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, ROUTE_V2_FEE, b"\x64\x00"))
    referral = {"referralAccount": str(new_key()), "referralFee": 50}
    refused(verdict(METIS, hostile, **referral), "platform fee of 100 bps", "referralFee")
    assert verdict(METIS, hostile, **{**referral, "referralFee": 100}).accepted


# --- amounts and mints -------------------------------------------------------------------


def test_spending_more_than_the_plan_is_refused() -> None:
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, 8, struct.pack("<Q", 2 * 10**8)))
    refused(verdict(METIS, hostile), "spend 200000000", "more than the 100000000")


def test_a_plan_for_another_input_mint_is_not_served_by_this_route() -> None:
    """The route_v2's input mint sits in a lookup table: its source account tells."""
    refused(verdict(METIS, inputMint=str(USDT)), "not our token account of the plan's input mint")


def test_a_plan_for_another_output_mint_is_not_served_by_this_route() -> None:
    refused(verdict(SOLFI, outputMint=str(USDT)), "output")


def test_a_v1_route_spending_our_account_of_another_mint_is_refused(wallet_key: Pubkey) -> None:
    """A v1 `route` names no input mint: it spends whatever its source account holds.
    Spending from our USDT account for a USDC plan is refused."""
    me = wallet_key
    ix = jix.route_instruction(
        "route", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDT),
        destination=get_associated_token_address(me, WSOL),
        in_amount=1_000_000, quoted_out_amount=6_000_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    tx = build(me, [*budget(), ix])
    plan = {"name": "p", "kind": "swap",
            "request": {"inputMint": str(USDC), "outputMint": str(WSOL), "amount": 1_000_000}}  # fmt: skip
    v = judge(tx, record(plan), me, POLICY, ordered={})
    refused(v, "takes its input from", "not our token account of the plan's input mint")
    honest = jix.route_instruction(
        "route", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(me, WSOL),
        in_amount=1_000_000, quoted_out_amount=6_000_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    assert judge(build(me, [*budget(), honest]), record(plan), me, POLICY, ordered={}).accepted


def test_wrapping_more_sol_than_the_plan_spends_is_refused() -> None:
    """A SOL-input swap wraps its input into the aggregator's temporary account:
    at most the plan's amount plus that account's rent."""
    data = instruction_data(SOLFI.transaction, 3)  # System transfer: u32 tag, u64 lamports
    hostile = mutate(SOLFI.transaction, 3, data=put(data, 4, struct.pack("<Q", 5 * 10**9)))
    refused(verdict(SOLFI, hostile), "wraps 5000000000 lamports")


def test_rent_for_an_account_of_a_mint_the_plan_never_names_is_refused(wallet_key: Pubkey) -> None:
    me = wallet_key
    stranger_mint = new_key()
    ix = jix.route_instruction(
        "route_v2", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(me, WSOL),
        in_amount=1_000_000, quoted_out_amount=6_000_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    tx = build(me, [*budget(), create_ata_idempotent(me, stranger_mint), ix])
    plan = {"name": "p", "kind": "swap",
            "request": {"inputMint": str(USDC), "outputMint": str(WSOL), "amount": 1_000_000}}  # fmt: skip
    refused(judge(tx, record(plan), me, POLICY, ordered={}), "rent", str(stranger_mint))


# --- lamports parked where they can be frozen ----------------------------------------------


def test_sol_parked_in_our_account_of_a_mint_a_stranger_controls_is_refused(
    wallet_key: Pubkey,
) -> None:
    """Our own USDC account is ours, but lamports sent there are recoverable only by
    closing it, which its mint's freeze authority can prevent: refused."""
    me = wallet_key
    parked = transfer(
        TransferParams(
            from_pubkey=me, to_pubkey=get_associated_token_address(me, USDC), lamports=5 * 10**9
        )
    )
    tx = build(me, [*budget(), parked])
    plan = {"name": "p", "kind": "swap",
            "request": {"inputMint": str(USDC), "outputMint": str(WSOL), "amount": 1_000_000}}  # fmt: skip
    refused(judge(tx, record(plan), me, POLICY, ordered={}), "not a wrapped-SOL account")


# --- recurring orders -------------------------------------------------------------------

# open_dca_v2: discriminator, application_idx u64, in_amount u64, in_amount_per_cycle u64,
# cycle_frequency i64, min_out_amount Option<u64>, max_out_amount Option<u64>, start_at ...
PER_CYCLE, FREQUENCY = 24, 32


def test_a_recurring_order_with_another_per_cycle_amount_is_refused() -> None:
    hostile = mutate(DCA.transaction, 6, edit=lambda d: put(d, PER_CYCLE, struct.pack("<Q", 1)))
    refused(verdict(DCA, hostile), "amount per cycle of 1", "the plan: 100000000")


def test_a_recurring_order_with_another_cycle_is_refused() -> None:
    hostile = mutate(DCA.transaction, 6, edit=lambda d: put(d, FREQUENCY, struct.pack("<q", 60)))
    refused(verdict(DCA, hostile), "cycle (seconds) of 60", "the plan: 300")


def test_a_recurring_order_with_price_bounds_the_plan_never_set_is_refused() -> None:
    data = instruction_data(DCA.transaction, 6)
    bounded = data[:40] + b"\x01" + struct.pack("<Q", 10**12) + data[41:]  # max_out: Some(huge)
    hostile = mutate(DCA.transaction, 6, data=bounded)
    refused(verdict(DCA, hostile), "bounds the price", "sets 0 of minPrice / maxPrice")


def test_a_recurring_plan_with_a_price_bound_needs_it_in_the_order() -> None:
    params = {"time": {**DCA.plan["request"]["params"]["time"], "maxPrice": 300}}
    refused(verdict(DCA, params=params), "bounds the price of each cycle 0 way(s)")


def test_a_recurring_order_with_another_deposit_is_refused() -> None:
    hostile = mutate(DCA.transaction, 6, edit=lambda d: put(d, 16, struct.pack("<Q", 4 * 10**8)))
    refused(verdict(DCA, hostile), "deposit of 400000000")


def _dca_deposit(me: Pubkey, order: Pubkey, amount: int) -> Instruction:
    """The DCA program's `deposit` (IDL: user, dca, in_ata, user_in_ata, token_program,
    event_authority, program; in_amount u64): funds an order that exists."""
    data = jix.discriminator("deposit") + struct.pack("<Q", amount)
    return Instruction(DCA_PROGRAM, data, [
        AccountMeta(me, True, False), AccountMeta(order, False, True),
        AccountMeta(new_key(), False, True),
        AccountMeta(get_associated_token_address(me, USDC), False, True),
        AccountMeta(TOKEN, False, False), AccountMeta(new_key(), False, False),
        AccountMeta(DCA_PROGRAM, False, False),
    ])  # fmt: skip


def test_a_recurring_plan_signs_no_deposit_into_an_order_it_never_opened(
    wallet_key: Pubkey,
) -> None:
    """createOrder opens a new order (the genuine answer is `open_dca_v2`); a `deposit`
    of the plan's budget into an existing order, whose cadence, output mint and
    bounds the plan never set, is refused, alone or beside the plan's own open."""
    me = wallet_key
    time = {"inAmount": 200_000_000, "numberOfOrders": 2, "interval": 86_400}
    plan = record({"name": "p", "kind": "recurring", "request": {
        "inputMint": str(USDC), "outputMint": str(WSOL), "params": {"time": time}}})  # fmt: skip
    own = jix.open_dca_v2(
        me, input_mint=USDC, output_mint=WSOL, application_idx=1, in_amount=200_000_000,
        in_amount_per_cycle=100_000_000, cycle_frequency=86_400,
    )  # fmt: skip
    assert judge(build(me, [*budget(), own]), plan, me, POLICY, ordered={}).accepted
    order = new_key()
    alone = build(me, [*budget(), _dca_deposit(me, order, 200_000_000)])
    refused(judge(alone, plan, me, POLICY, ordered={}), f"adds funds to order {order}")
    beside = build(me, [*budget(), own, _dca_deposit(me, order, 1)])
    refused(judge(beside, plan, me, POLICY, ordered={}), "only opens a new order")


# --- JupiterZ fills ---------------------------------------------------------------------

RFQ = CORPUS["ultra-order-usdc-sol-jupiterz-rfq-2"]
FILL_IN, FILL_OUT = 8, 16  # discriminator, input_amount u64, output_amount u64, expire_at i64


def test_a_fill_spending_more_than_the_plan_is_refused() -> None:
    assert verdict(RFQ).accepted
    hostile = mutate(RFQ.transaction, 3, edit=lambda d: put(d, FILL_IN, struct.pack("<Q", 10**9)))
    refused(verdict(RFQ, hostile), "spend 1000000000")


def test_a_fill_paying_out_to_someone_else_is_refused() -> None:
    """The taker's output account (position 4 of the fill) swapped for a stranger's."""
    tx = read_transaction(RFQ.transaction).tx
    accounts = list(bytes(tx.message.instructions[2].accounts))
    stranger = len(tx.message.account_keys) - 1  # a read-only key of the message, not ours
    accounts[4] = stranger
    hostile = mutate(RFQ.transaction, 3, accounts=accounts)
    refused(verdict(RFQ, hostile), "pays out to")


def test_a_fill_guarantees_its_exact_output_against_the_plans_limit() -> None:
    """A fill's output is exact (no slippage): it is what the plan's minimum out holds."""
    low = mutate(RFQ.transaction, 3, edit=lambda d: put(d, FILL_OUT, struct.pack("<Q", 1)))
    expect = replace(expectation(record(RFQ.plan), {}), min_out=400_000_000)
    wallet = Pubkey.from_string(RFQ.wallet)
    assert inspect(RFQ.transaction, wallet, POLICY, expect=expect).accepted  # 460250418 out
    refused(inspect(low, wallet, POLICY, expect=expect), "guarantees only 1", "limit")


@pytest.fixture
def wallet_key() -> Pubkey:
    return Pubkey.from_string(str(new_key()))


# --- co-signers without a plan ----------------------------------------------------------

WITHDRAWAL = CORPUS["trigger-v2-dca-cancel-withdrawal"]


def test_without_a_plan_a_cosigner_may_only_pay_us() -> None:
    """`tx inspect` without a plan: the genuine Trigger V2 withdrawal's vault signs a
    transfer to our account and a close to our wallet: accepted. The same vault
    signing its transfer to a stranger's account is refused: the co-signer then
    does more than pay us."""
    wallet = Pubkey.from_string(WITHDRAWAL.wallet)
    assert inspect(WITHDRAWAL.transaction, wallet, POLICY).accepted
    tx = read_transaction(WITHDRAWAL.transaction).tx
    keys = list(tx.message.account_keys)
    ours = get_associated_token_address(wallet, USDC)
    hostile = mutate(WITHDRAWAL.transaction, 3, keys={keys.index(ours): new_key()})
    refused(inspect(hostile, wallet, POLICY), "another signer is required")
