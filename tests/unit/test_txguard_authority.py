"""txguard: who may act on our tokens and our rent, beyond where the value goes.

- a delegate can spend: our tokens are delegated only to the wallet itself, or to an
  account of ours no key can sign for (off the curve). An account the transaction
  initialises as ours at a key the API generated counts as ours for receiving, but
  that key can still sign as a delegate and take everything delegated to it;
- the aggregator's `create_token_account` pays our rent like the ATA program does:
  with a plan, only for a token account of the plan's mints;
- a recurring cancel closes the order (`close_dca`): a lone `withdraw` leaves the
  order running, and a withdrawal names no account of ours it does not pay.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from hashlib import sha256

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.emulator import jupiter_ix as jix
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures.wallet import (
    AGGREGATOR,
    TOKEN,
    USDC,
    WSOL,
    approve,
    budget,
    build,
    program_call,
    token_ix,
)

POLICY = GuardPolicy()
SWAP = Expectation(kind="swap", input_mint=str(USDC), output_mint=str(WSOL), amount=1_000_000)


def _init_as_ours(account: Pubkey, me: Pubkey, mint: Pubkey = USDC) -> Instruction:
    """initialize_account3: `account` becomes a token account owned by our wallet."""
    return token_ix(bytes([18]) + bytes(me), (account, False, True), (mint, False, False))


def _approve_checked(source: Pubkey, delegate: Pubkey, me: Pubkey) -> Instruction:
    data = bytes([13]) + struct.pack("<Q", 2**64 - 1) + bytes([6])
    return token_ix(
        data, (source, False, True), (USDC, False, False), (delegate, False, False),
        (me, True, False),
    )  # fmt: skip


@pytest.mark.parametrize("form", [approve, _approve_checked], ids=["approve", "approve_checked"])
@pytest.mark.parametrize("plan", [None, SWAP], ids=["no-plan", "swap-plan"])
def test_a_delegate_at_a_key_the_api_holds_is_refused(
    form: Callable[[Pubkey, Pubkey, Pubkey], Instruction], plan: Expectation | None
) -> None:
    me = Keypair().pubkey()
    held = Keypair().pubkey()  # the API generated it and keeps its secret key
    usdc = get_associated_token_address(me, USDC)
    tx = build(
        me,
        [*budget(), _init_as_ours(held, me), form(usdc, held, me), program_call(AGGREGATOR, me)],
    )
    verdict = inspect(tx, me, POLICY, expect=plan)
    assert not verdict.accepted
    assert any("delegates" in r and str(held) in r for r in verdict.reasons), verdict.reasons


def test_a_delegate_of_ours_no_key_can_sign_for_stays_allowed() -> None:
    me = Keypair().pubkey()
    usdc = get_associated_token_address(me, USDC)
    wsol = get_associated_token_address(me, WSOL)  # an associated account: off the curve
    for delegate in (me, wsol):
        tx = build(me, [*budget(), approve(usdc, delegate, me), program_call(AGGREGATOR, me)])
        assert inspect(tx, me, POLICY).accepted
        assert inspect(tx, me, POLICY, expect=SWAP).accepted


TOKEN_ACCOUNT_SEED = b"token_account"


def _create_token_account(me: Pubkey, mint: Pubkey) -> Instruction:
    """The aggregator's create_token_account (accounts: account owner mint token_program
    system_program; argument: bump), as genuine SOL swaps carry it."""
    account, bump = Pubkey.find_program_address(
        [TOKEN_ACCOUNT_SEED, bytes(me), bytes(mint)], AGGREGATOR
    )
    tag = sha256(b"global:create_token_account").digest()[:8]
    metas = [
        AccountMeta(account, False, True),
        AccountMeta(me, True, True),
        AccountMeta(mint, False, False),
        AccountMeta(TOKEN, False, False),
        AccountMeta(Pubkey.from_string("11111111111111111111111111111111"), False, False),
    ]
    return Instruction(AGGREGATOR, tag + bytes([bump]), metas)


def test_the_aggregators_token_account_of_a_strangers_mint_is_refused_with_a_plan() -> None:
    me = Keypair().pubkey()
    stranger = Keypair().pubkey()  # a mint whose freeze authority is not ours
    tx = build(me, [*budget(), _create_token_account(me, stranger), program_call(AGGREGATOR, me)])
    verdict = inspect(tx, me, POLICY, expect=SWAP)
    assert not verdict.accepted
    assert any("rent" in r and str(stranger) in r for r in verdict.reasons), verdict.reasons


def test_the_aggregators_token_account_of_the_plans_mint_stays_allowed() -> None:
    me = Keypair().pubkey()
    tx = build(me, [*budget(), _create_token_account(me, WSOL), program_call(AGGREGATOR, me)])
    assert inspect(tx, me, POLICY, expect=SWAP).accepted


def _dca_withdraw(me: Pubkey, order: Pubkey, side: int, to: Pubkey) -> Instruction:
    """The DCA program's `withdraw` (jup-ag/dca-cpi idl.json): the user takes `side`
    (0 in, 1 out) of `order` out into `to`; the order stays open."""
    data = jix.discriminator("withdraw") + struct.pack("<Q", 1_000_000) + bytes([side])
    dca = jix.DCA_PROGRAM
    keys = [
        (me, True, True), (order, False, True), (USDC, False, False), (WSOL, False, False),
        (jix.ata(order, WSOL if side else USDC), False, True),
        (to if side == 0 else dca, False, side == 0), (to if side == 1 else dca, False, side == 1),
        (Pubkey.from_string("11111111111111111111111111111111"), False, False),
        (TOKEN, False, False), (jix.ASSOCIATED_TOKEN_PROGRAM, False, False),
        (jix.event_authority(dca), False, False), (dca, False, False),
    ]  # fmt: skip
    return Instruction(dca, data, [AccountMeta(k, s, w) for k, s, w in keys])


def _recurring_cancel(order: Pubkey) -> Expectation:
    return Expectation(
        kind="recurring-cancel", order=str(order), input_mint=str(USDC), output_mint=str(WSOL)
    )


def test_a_recurring_cancel_that_only_withdraws_is_refused() -> None:
    me, order = Keypair().pubkey(), Pubkey.new_unique()
    ours = get_associated_token_address(me, WSOL)
    tx = build(me, [*budget(), _dca_withdraw(me, order, 1, ours)])
    verdict = inspect(tx, me, POLICY, expect=_recurring_cancel(order))
    assert not verdict.accepted
    assert any("close_dca" in r for r in verdict.reasons), verdict.reasons


def test_a_recurring_cancel_closes_its_order() -> None:
    me, order = Keypair().pubkey(), Pubkey.new_unique()
    close = jix.close_dca(me, order, input_mint=USDC, output_mint=WSOL)
    tx = build(me, [*budget(), close])
    assert inspect(tx, me, POLICY, expect=_recurring_cancel(order)).accepted
    with_withdraw = build(
        me, [*budget(), _dca_withdraw(me, order, 0, get_associated_token_address(me, USDC)), close]
    )
    assert not inspect(with_withdraw, me, POLICY, expect=_recurring_cancel(order)).accepted
