"""What the guard's refusals save, shown on an in-process Solana runtime (solders'
LiteSVM, with the real System and SPL Token programs): each case is refused by
txguard, and run anyway (signed by our own signer, bypassing the guard on
purpose) it really costs the wallet what the refusal says."""

from __future__ import annotations

import base64
import struct

from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import ID as SYSTEM
from solders.system_program import TransferParams, transfer
from solders.token.associated import get_associated_token_address
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.config import GuardConfig
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.decode import read, summarize
from tests.fixtures.chain import Chain
from tests.fixtures.wallet import TOKEN

POLICY = GuardPolicy.from_config(GuardConfig())
COMPUTE_BUDGET = Pubkey.from_string("ComputeBudget111111111111111111111111111111")
SOL = 10**9


def _price(micro_lamports: int) -> Instruction:
    return Instruction(COMPUTE_BUDGET, bytes([3]) + struct.pack("<Q", micro_lamports), [])


def test_the_fee_is_what_the_runtime_charges_and_is_capped() -> None:
    """Only SetComputeUnitPrice(10^12) and no limit: the runtime charges 3,000 units
    (its default for a builtin instruction) x 10^12 micro-lamports, 3 SOL, plus the
    signature: the guard computes the same and refuses it."""
    chain = Chain(Wallet.generate())
    me = chain.wallet.pubkey
    tx = chain.tx([_price(10**12)])
    fee = summarize(read(tx).tx, {}).compute_budget.total_fee_lamports
    verdict = inspect(tx, me, POLICY)
    assert not verdict.accepted
    assert any("fee" in r and "max_fee_lamports" in r for r in verdict.reasons), verdict.reasons
    before = chain.lamports(me)
    chain.execute(tx)
    assert before - chain.lamports(me) == fee == 3 * SOL + 5_000


def test_a_fair_fee_is_computed_to_the_lamport_and_accepted() -> None:
    chain = Chain(Wallet.generate())
    me = chain.wallet.pubkey
    tx = chain.tx(
        [_price(1_000), transfer(TransferParams(from_pubkey=me, to_pubkey=me, lamports=1))]
    )
    fee = summarize(read(tx).tx, {}).compute_budget.total_fee_lamports
    assert inspect(tx, me, POLICY).accepted
    before = chain.lamports(me)
    chain.execute(tx)
    assert before - chain.lamports(me) == fee


def test_create_account_allow_prefund_funds_a_strangers_account_from_ours() -> None:
    """System instruction 13: account 0 is the new account, account 1 the funder.
    A stranger's new account funded with 5 SOL of ours is refused; the runtime shows
    the 5 SOL leave the wallet for it."""
    chain = Chain(Wallet.generate())
    me, stranger = chain.wallet.pubkey, Keypair()
    data = struct.pack("<IQQ", 13, 5 * SOL, 0) + bytes(SYSTEM)
    ix = Instruction(
        SYSTEM, data,
        [AccountMeta(stranger.pubkey(), True, True), AccountMeta(me, True, True)],
    )  # fmt: skip
    message = MessageV0.try_compile(me, [ix], [], chain.blockhash)
    tx = VersionedTransaction(message, [chain.wallet._keypair, stranger])
    b64 = base64.b64encode(bytes(tx)).decode()
    verdict = inspect(b64, me, POLICY)
    assert not verdict.accepted
    assert any("pays 5000000000 lamports" in r for r in verdict.reasons), verdict.reasons
    before = chain.lamports(me)
    result = chain.svm.send_transaction(tx)
    assert not hasattr(result, "err"), result
    assert chain.lamports(stranger.pubkey()) == 5 * SOL
    assert before - chain.lamports(me) >= 5 * SOL


def _mint_with_freeze_authority(authority: Pubkey) -> bytes:
    """An SPL mint (82 bytes): no mint authority, supply, decimals, initialised,
    and a freeze authority."""
    data = bytes(36) + struct.pack("<QBB", 10**15, 6, 1) + struct.pack("<I", 1) + bytes(authority)
    assert len(data) == 82
    return data


def test_sol_parked_in_our_account_of_a_freezable_mint_can_be_locked_there() -> None:
    """5 SOL into our own token account of a mint whose freeze authority is a
    stranger's (an account that holds some of that token, as a swap's output does):
    refused. On the runtime the stranger then freezes the account: closing it (the
    only way to get the lamports back) needs it emptied first, and a frozen account
    can neither send nor burn its tokens: the 5 SOL are locked."""
    chain = Chain(Wallet.generate())
    me, stranger, mint = chain.wallet.pubkey, Keypair(), Keypair().pubkey()
    chain.put(mint, _mint_with_freeze_authority(stranger.pubkey()), TOKEN)
    ours = get_associated_token_address(me, mint)
    chain.put_token_account(ours, mint, me, TOKEN, amount=1_000)
    park = chain.tx([transfer(TransferParams(from_pubkey=me, to_pubkey=ours, lamports=5 * SOL))])
    verdict = inspect(park, me, POLICY, mints=[str(mint)])
    assert not verdict.accepted
    assert any("not a wrapped-SOL account" in r for r in verdict.reasons), verdict.reasons
    chain.execute(park)
    freeze = Instruction(TOKEN, bytes([10]), [
        AccountMeta(ours, False, True), AccountMeta(mint, False, False),
        AccountMeta(stranger.pubkey(), True, False),
    ])  # fmt: skip
    message = MessageV0.try_compile(stranger.pubkey(), [freeze], [], chain.blockhash)
    chain.svm.airdrop(stranger.pubkey(), SOL)
    frozen = chain.svm.send_transaction(VersionedTransaction(message, [stranger]))
    assert not hasattr(frozen, "err"), frozen
    burn = Instruction(TOKEN, bytes([8]) + struct.pack("<Q", 1_000), [
        AccountMeta(ours, False, True), AccountMeta(mint, False, True), AccountMeta(me, True, False),
    ])  # fmt: skip
    close = Instruction(TOKEN, bytes([9]), [
        AccountMeta(ours, False, True), AccountMeta(me, False, True), AccountMeta(me, True, False),
    ])  # fmt: skip
    unfrozen = Chain(Wallet.generate())  # the control: without the freeze, both work
    unfrozen.put(mint, _mint_with_freeze_authority(stranger.pubkey()), TOKEN)
    theirs = get_associated_token_address(unfrozen.wallet.pubkey, mint)
    unfrozen.put_token_account(theirs, mint, unfrozen.wallet.pubkey, TOKEN, amount=1_000)
    who = unfrozen.wallet.pubkey
    unfrozen.execute(unfrozen.tx([
        Instruction(TOKEN, burn.data, [AccountMeta(theirs, False, True),
                                      AccountMeta(mint, False, True), AccountMeta(who, True, False)]),
        Instruction(TOKEN, close.data, [AccountMeta(theirs, False, True),
                                       AccountMeta(who, False, True), AccountMeta(who, True, False)]),
    ]))  # fmt: skip
    assert unfrozen.lamports(theirs) == 0
    for attempt in ([burn, close], [close]):
        message = MessageV0.try_compile(me, attempt, [], chain.blockhash)
        result = chain.svm.send_transaction(VersionedTransaction(message, [chain.wallet._keypair]))
        assert hasattr(result, "err"), f"the frozen account gave its lamports back: {attempt}"
        chain.svm.expire_blockhash()
    assert chain.lamports(ours) >= 5 * SOL  # still there, out of our reach
