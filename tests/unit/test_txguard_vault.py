"""txguard for Trigger V2: a deposit may pay the vault (its proven accounts, the
plan's mint, at most the plan's amount) and no one else; a withdrawal may pay
only us; the co-signers and programs each flow may have."""

from __future__ import annotations

import random

import pytest
from solders.instruction import Instruction
from solders.pubkey import Pubkey
from solders.system_program import (
    CreateAccountWithSeedParams,
    TransferParams,
    create_account_with_seed,
    transfer,
)
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator.products.trigger_v2 import tx as txs
from jupcron.emulator.txbuild import to_b64
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from jupcron.txguard.ours import rent_exempt
from jupcron.txguard.vault import DOCUMENTED_COSIGNER
from tests.fixtures.hostile import ata_create, tok_init_account3, tok_transfer, tok_transfer_checked
from tests.fixtures.wallet import TOKEN_2022, budget, build

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
SOL = "So11111111111111111111111111111111111111112"
AMOUNT = 20_000_000
POLICY = GuardPolicy()


@pytest.fixture
def vault() -> Pubkey:
    return Pubkey.new_unique()


def _deposit_expect(vault: Pubkey, mint: Pubkey = USDC, receiver: Pubkey | None = None,
                    amount: int = AMOUNT) -> Expectation:  # fmt: skip
    return Expectation(kind="trigger-v2-dca", input_mint=str(mint), output_mint=SOL,
                       amount=amount, vault=str(vault),
                       deposit=(str(receiver or vault), str(mint), str(amount)))  # fmt: skip


def _cancel_expect(vault: Pubkey, mint: Pubkey = USDC) -> Expectation:
    return Expectation(kind="trigger-v2-cancel", input_mint=str(mint), vault=str(vault))


def _deposit(wallet: Wallet, owner: Pubkey, mint: Pubkey = USDC, amount: int = AMOUNT,
             shape: str = "seeded", extra: list[Instruction] | None = None) -> str:  # fmt: skip
    decimals = 9 if str(mint) == SOL else 6
    tx, _ = txs.deposit(wallet.pubkey, owner, mint, amount, decimals, seed="order-seed-1",
                        rng=random.Random(1), shape=shape, extra=extra or [])  # fmt: skip
    return to_b64(tx)


@pytest.mark.parametrize("shape", txs.SHAPES)
@pytest.mark.parametrize("mint", [USDC, txs.WSOL])
def test_a_deposit_into_the_vault_is_accepted(
    wallet: Wallet, vault: Pubkey, shape: str, mint: Pubkey
) -> None:
    verdict = inspect(_deposit(wallet, vault, mint, shape=shape), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault, mint))  # fmt: skip
    assert verdict.reasons == ()


@pytest.mark.parametrize("shape", txs.SHAPES)
def test_a_deposit_to_a_stranger_is_refused(wallet: Wallet, vault: Pubkey, shape: str) -> None:
    stranger = Pubkey.new_unique()
    verdict = inspect(_deposit(wallet, stranger, shape=shape), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault))  # fmt: skip
    assert not verdict.accepted
    assert any("which is not ours" in r for r in verdict.reasons), verdict.reasons
    assert "the deposit moves nothing into the vault" in verdict.reasons


def test_a_deposit_whose_receiver_is_not_our_vault_is_refused(
    wallet: Wallet, vault: Pubkey
) -> None:
    stranger = Pubkey.new_unique()
    verdict = inspect(_deposit(wallet, vault), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault, receiver=stranger))  # fmt: skip
    assert verdict.reasons == (
        f"the deposit's receiverAddress {stranger} is not our vault {vault} (GET /vault)",
    )


def test_a_deposit_of_more_than_the_plan_is_refused(wallet: Wallet, vault: Pubkey) -> None:
    verdict = inspect(_deposit(wallet, vault, amount=AMOUNT + 1), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault))  # fmt: skip
    assert verdict.reasons == (
        f"the deposit moves {AMOUNT + 1} of {USDC} into the vault; the plan: {AMOUNT}",
    )


def test_a_native_sol_deposit_of_more_lamports_than_amount_and_rent_is_refused(
    wallet: Wallet, vault: Pubkey
) -> None:
    verdict = inspect(_deposit(wallet, vault, txs.WSOL, amount=AMOUNT + 10**9), wallet.pubkey,
                      POLICY, expect=_deposit_expect(vault, txs.WSOL))  # fmt: skip
    assert any("lamports and wrapped SOL together" in r for r in verdict.reasons), verdict.reasons


def test_a_deposit_with_a_hidden_drain_is_refused(wallet: Wallet, vault: Pubkey) -> None:
    drain = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=Pubkey.new_unique(),
                                    lamports=10**9))  # fmt: skip
    verdict = inspect(_deposit(wallet, vault, extra=[drain]), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault))  # fmt: skip
    assert any("moves 1000000000 lamports from our wallet" in r for r in verdict.reasons)


def test_a_deposit_calling_a_program_the_flow_does_not_use_is_refused(
    wallet: Wallet, vault: Pubkey
) -> None:
    memo = Instruction(txs.MEMO, b"hello", [])
    verdict = inspect(_deposit(wallet, vault, extra=[memo]), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault))  # fmt: skip
    assert verdict.reasons == (
        "instruction #6 calls Memo, which a Trigger V2 deposit does not use",
    )


def test_without_a_known_vault_nothing_is_accepted(wallet: Wallet, vault: Pubkey) -> None:
    expect = Expectation(kind="trigger-v2-dca", input_mint=str(USDC), amount=AMOUNT)
    verdict = inspect(_deposit(wallet, vault), wallet.pubkey, POLICY, expect=expect)
    assert (
        "the vault is not known (GET /vault), so nothing may go to or come from it"
        in verdict.reasons
    )


def test_the_same_deposit_for_a_swap_plan_is_refused(wallet: Wallet, vault: Pubkey) -> None:
    """The vault's accounts are a deposit's only: for any other plan they are strangers."""
    expect = Expectation(kind="swap", input_mint=str(USDC), output_mint=SOL, amount=AMOUNT)
    verdict = inspect(_deposit(wallet, vault), wallet.pubkey, POLICY, expect=expect)
    assert any("which is not ours" in r for r in verdict.reasons)


def _withdrawal(
    wallet: Wallet, vault: Pubkey, mint: Pubkey = USDC, to: Pubkey | None = None
) -> str:
    account = Pubkey.new_unique()
    return to_b64(txs.withdrawal(wallet.pubkey, vault, mint, account, 10_000_000,
                                 rng=random.Random(2), to=to))  # fmt: skip


@pytest.mark.parametrize("mint", [USDC, txs.WSOL])
def test_the_documented_withdrawal_is_accepted_with_its_co_signers(
    wallet: Wallet, vault: Pubkey, mint: Pubkey
) -> None:
    verdict = inspect(_withdrawal(wallet, vault, mint), wallet.pubkey, POLICY,
                      expect=_cancel_expect(vault, mint))  # fmt: skip
    assert verdict.reasons == ()
    signers = {s.address for s in verdict.summary.signers}
    assert signers == {wallet.address, str(vault), DOCUMENTED_COSIGNER}


def test_a_withdrawal_to_a_stranger_is_refused(wallet: Wallet, vault: Pubkey) -> None:
    stranger = Pubkey.new_unique()
    verdict = inspect(_withdrawal(wallet, vault, to=stranger), wallet.pubkey, POLICY,
                      expect=_cancel_expect(vault))  # fmt: skip
    assert len(verdict.reasons) == 2
    assert "which is not ours" in verdict.reasons[0]
    assert f"sends the closed account's lamports to {stranger}" in verdict.reasons[1]


def test_a_withdrawal_signed_by_someone_else_than_the_vault_is_refused(
    wallet: Wallet, vault: Pubkey
) -> None:
    other = Pubkey.new_unique()
    verdict = inspect(_withdrawal(wallet, vault), wallet.pubkey, POLICY,
                      expect=_cancel_expect(other))  # fmt: skip
    assert f"another signer is required besides our wallet: {vault}" in verdict.reasons


def test_the_vaults_co_signers_are_no_ones_for_other_plans(wallet: Wallet, vault: Pubkey) -> None:
    expect = Expectation(kind="trigger-cancel", input_mint=str(USDC), vault=str(vault))
    verdict = inspect(_withdrawal(wallet, vault), wallet.pubkey, POLICY, expect=expect)
    assert f"another signer is required besides our wallet: {vault}" in verdict.reasons
    assert (
        f"another signer is required besides our wallet: {DOCUMENTED_COSIGNER}" in verdict.reasons
    )


@pytest.mark.parametrize("shape", txs.SHAPES)
def test_a_native_deposit_counted_across_every_form_of_sol(
    wallet: Wallet, vault: Pubkey, shape: str
) -> None:
    """The plan's amount as lamports, and the plan's amount again as a wrapped-SOL
    transfer from our own wrapped-SOL account: twice the plan, refused."""

    _, account = txs.deposit(wallet.pubkey, vault, txs.WSOL, AMOUNT, 9, seed="order-seed-1",
                             rng=random.Random(1), shape=shape)  # fmt: skip
    ours = txs.ata(wallet.pubkey, txs.WSOL)
    again = tok_transfer(ours, account, wallet.pubkey, AMOUNT)
    tx = _deposit(wallet, vault, txs.WSOL, shape=shape, extra=[again])
    verdict = inspect(tx, wallet.pubkey, POLICY, expect=_deposit_expect(vault, txs.WSOL))
    assert any(f"moves {2 * AMOUNT} of {SOL}" in r for r in verdict.reasons), verdict.reasons


def test_rent_for_a_vault_account_of_a_mint_the_plan_never_names_is_refused(
    wallet: Wallet, vault: Pubkey
) -> None:

    other = Pubkey.new_unique()
    extra = [ata_create(wallet.pubkey, vault, other)]
    verdict = inspect(_deposit(wallet, vault, extra=extra), wallet.pubkey, POLICY,
                      expect=_deposit_expect(vault))  # fmt: skip
    assert any("rent" in r and str(other) in r for r in verdict.reasons), verdict.reasons


# --- the rent of the vault's accounts (review 2026-11-27) -------------------------------

PYUSD = Pubkey.from_string("2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo")  # Token-2022


def _pyusd_deposit(wallet: Wallet, vault: Pubkey, space: int) -> str:
    """A Token-2022 deposit into a seeded vault account of `space` bytes, its rent-exempt
    minimum paid by our wallet."""
    me = wallet.pubkey
    account = Pubkey.create_with_seed(me, "order-1", TOKEN_2022)
    create = create_account_with_seed(CreateAccountWithSeedParams(
        from_pubkey=me, to_pubkey=account, base=me, seed="order-1",
        lamports=rent_exempt(space), space=space, owner=TOKEN_2022,
    ))  # fmt: skip
    source = get_associated_token_address(me, PYUSD, TOKEN_2022)
    move = tok_transfer_checked(source, PYUSD, account, me, AMOUNT, TOKEN_2022)
    return build(me, [*budget(), create, tok_init_account3(account, PYUSD, vault, TOKEN_2022),
                      move])  # fmt: skip


def test_a_vault_account_of_a_megabyte_is_refused(wallet: Wallet, vault: Pubkey) -> None:
    """Its 7.3 SOL of "rent" was once subtracted as exact rent and waved through."""
    expect = _deposit_expect(vault, PYUSD)
    normal = inspect(_pyusd_deposit(wallet, vault, 165), wallet.pubkey, POLICY, expect=expect)
    assert normal.accepted, normal.reasons
    big = inspect(_pyusd_deposit(wallet, vault, 1024 * 1024), wallet.pubkey, POLICY,
                  expect=expect)  # fmt: skip
    assert not big.accepted
    assert any(
        "vault account of 1048576 bytes; a token account takes at most 263" in r
        for r in big.reasons
    ), big.reasons


@pytest.mark.parametrize("shape", txs.SHAPES)
@pytest.mark.parametrize("mint", [USDC, txs.WSOL])
def test_the_vaults_account_rent_is_bounded_by_the_allowance(
    wallet: Wallet, vault: Pubkey, shape: str, mint: Pubkey
) -> None:
    """`guard.order_rent_allowance_lamports` bounds the rent of the vault's accounts:
    one token account's (2,039,280) fits the default, not an allowance below it."""
    tx = _deposit(wallet, vault, mint, shape=shape)
    expect = _deposit_expect(vault, mint)
    assert inspect(tx, wallet.pubkey, POLICY, expect=expect).accepted
    tight = GuardPolicy(order_rent_allowance_lamports=2_000_000)
    verdict = inspect(tx, wallet.pubkey, tight, expect=expect)
    assert verdict.reasons == (
        "the deposit has our wallet pay 2039280 lamports of rent for the vault's accounts, "
        "more than guard.order_rent_allowance_lamports (2000000)",
    )
