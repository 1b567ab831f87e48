"""Review 17f: a Trigger V2 deposit may have the vault co-sign (`vault.cosigners`), and
what the vault authorises our signature authorises too. Its token moves were held as
ours (`vault.acts_for_vault`); its own lamports were not: a System transfer out of the
vault, a reassignment of the vault, or the vault funding a stranger's token account
rode along with a genuine deposit and were accepted."""

from __future__ import annotations

import random

import pytest
from solders.instruction import Instruction
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import (
    AllocateParams,
    AssignParams,
    CreateAccountWithSeedParams,
    TransferParams,
    allocate,
    assign,
    create_account_with_seed,
    transfer,
)
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.emulator.products.trigger_v2 import tx as txs
from jupcron.emulator.txbuild import to_b64
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures.hostile import ata_create

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
WSOL = Pubkey.from_string("So11111111111111111111111111111111111111112")
SOL = "So11111111111111111111111111111111111111112"
AMOUNT = 20_000_000
POLICY = GuardPolicy()
VAULT = Pubkey.new_unique()
STRANGER = Pubkey.new_unique()


def _expect(mint: Pubkey = USDC) -> Expectation:
    return Expectation(kind="trigger-v2-dca", input_mint=str(mint), output_mint=SOL,
                       amount=AMOUNT, vault=str(VAULT),
                       deposit=(str(VAULT), str(mint), str(AMOUNT)))  # fmt: skip


def _deposit(wallet: Wallet, extra: list[Instruction], mint: Pubkey = USDC,
             shape: str = "seeded") -> tuple[str, Pubkey]:  # fmt: skip
    """The emulator's deposit with `extra` after it; a slot for every signer it needs."""
    tx, account = txs.deposit(wallet.pubkey, VAULT, mint, AMOUNT, 6, seed="order-seed-1",
                              rng=random.Random(1), shape=shape, extra=extra)  # fmt: skip
    message: MessageV0 = tx.message  # type: ignore[assignment]
    slots = [Signature.default()] * message.header.num_required_signatures
    return to_b64(VersionedTransaction.populate(message, slots)), account


HOSTILE = {
    "the vault's SOL to a stranger": lambda: transfer(
        TransferParams(from_pubkey=VAULT, to_pubkey=STRANGER, lamports=5 * 10**9)
    ),
    "the vault handed to another program": lambda: assign(
        AssignParams(pubkey=VAULT, owner=STRANGER)
    ),
    "the vault given data": lambda: allocate(AllocateParams(pubkey=VAULT, space=10_000)),
    "the vault funds a stranger's token account": lambda: ata_create(VAULT, STRANGER, USDC),
    "the vault funds a stranger's new account": lambda: create_account_with_seed(
        CreateAccountWithSeedParams(
            from_pubkey=VAULT,
            to_pubkey=Pubkey.create_with_seed(VAULT, "x", STRANGER),
            base=VAULT,
            seed="x",
            lamports=10**9,
            space=0,
            owner=STRANGER,
        )
    ),
}


@pytest.mark.parametrize("mint", [USDC, WSOL])
def test_the_deposit_itself_is_accepted(wallet: Wallet, mint: Pubkey) -> None:
    tx, _ = _deposit(wallet, [], mint)
    assert inspect(tx, wallet.pubkey, POLICY, expect=_expect(mint)).reasons == ()


@pytest.mark.parametrize("name", list(HOSTILE))
def test_the_vaults_own_lamports_are_held_as_ours(wallet: Wallet, name: str) -> None:
    tx, _ = _deposit(wallet, [HOSTILE[name]()])
    verdict = inspect(tx, wallet.pubkey, POLICY, expect=_expect())
    assert not verdict.accepted, name
    assert any("the vault" in r and "instruction #6" in r for r in verdict.reasons), verdict.reasons


def test_the_vault_may_fund_its_own_deposit_account(wallet: Wallet) -> None:
    """What the vault pays into its own proven account (or to our wallet) stays ours."""
    _, account = _deposit(wallet, [])
    own = transfer(TransferParams(from_pubkey=VAULT, to_pubkey=account, lamports=1))
    back = transfer(TransferParams(from_pubkey=VAULT, to_pubkey=wallet.pubkey, lamports=1))
    own_ata = ata_create(VAULT, VAULT, USDC)
    tx, _ = _deposit(wallet, [own, back, own_ata])
    verdict = inspect(tx, wallet.pubkey, POLICY, expect=_expect())
    assert not any("the vault's own" in r for r in verdict.reasons), verdict.reasons
