"""A swap may not delegate our tokens to an account it only *initialises* as ours
(review 17e).

txguard let our tokens be delegated to "an account of ours off the curve (no
secret key exists for it)". Off the curve is not "no one can sign": a program
signs for its own program-derived addresses (`invoke_signed`), whatever account
sits there. A hostile answer took a PDA of a program it controls, pre-created
there an empty 165-byte account owned by SPL Token (in an earlier transaction of
its own), and added to the swap ``initialize_account3`` (making it "our" token
account) and ``approve(our input account, that PDA, u64::MAX)``. Accepted; once
signed, the program drains our input account as its delegate at any later time.

The delegates that stay allowed: the wallet, and the wallet's associated token
accounts (the ATA program signs for one only in ``recover_nested``, moving a nested
account's tokens to the wallet, with the wallet's own signature).
"""

from __future__ import annotations

import struct

from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jix
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures import hostile as h
from tests.fixtures.chain import ACCOUNT_SIZE, Chain
from tests.fixtures.wallet import TOKEN, USDC, WSOL, approve, budget, build, new_key

POLICY = GuardPolicy()
U64_MAX = 2**64 - 1
DELEGATE_AT = 76  # SPL Token account: COption<Pubkey> delegate at 72 (tag) + 4
DELEGATED_AMOUNT_AT = 121


def _attacker_pda() -> Pubkey:
    """An address only the attacker's program can sign for (it is off the curve)."""
    program = new_key()
    pda, _ = Pubkey.find_program_address([b"drain"], program)
    assert not pda.is_on_curve()
    return pda


def _route(me: Pubkey, mint: Pubkey) -> Instruction:
    return jix.route_instruction(
        "route_v2", me, input_mint=mint, output_mint=WSOL,
        source=get_associated_token_address(me, mint),
        destination=get_associated_token_address(me, WSOL),
        in_amount=1_000_000, quoted_out_amount=500_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip


def _hostile(me: Pubkey, mint: Pubkey, pda: Pubkey) -> list[Instruction]:
    """Make the PDA "our" token account, then delegate our whole input account to it."""
    ours = get_associated_token_address(me, mint)
    return [h.tok_init_account3(pda, mint, me), approve(ours, pda, me, U64_MAX)]


def test_a_delegate_at_a_program_derived_address_initialised_as_ours_is_refused() -> None:
    wallet = Wallet.generate()
    chain = Chain(wallet)
    me, mint = wallet.pubkey, chain.mints[TOKEN]
    pda = _attacker_pda()
    hostile = _hostile(me, mint, pda)
    swap = Expectation("swap", str(mint), str(WSOL), 1_000_000)
    tx = build(me, [*budget(), *hostile, _route(me, mint)])

    verdict = inspect(tx, me, POLICY, expect=swap)
    assert not verdict.accepted
    assert any("delegates" in r and str(pda) in r for r in verdict.reasons), verdict.reasons
    no_plan = inspect(tx, me, POLICY)
    assert any("delegates" in r and str(pda) in r for r in no_plan.reasons), no_plan.reasons

    # on the real SPL Token program: the attacker's empty account at its PDA becomes
    # "ours", and our whole balance is delegated to an address its program signs for
    chain.put(pda, bytes(ACCOUNT_SIZE), TOKEN)
    ours = chain.ata(me, TOKEN)
    chain.execute(chain.tx(hostile))
    assert chain.token_field(ours, DELEGATE_AT) == bytes(pda)
    amount = chain.svm.get_account(ours)
    assert amount is not None
    assert struct.unpack_from("<Q", bytes(amount.data), DELEGATED_AMOUNT_AT)[0] == U64_MAX


def test_delegating_to_the_wallet_or_its_associated_accounts_stays_allowed() -> None:
    me = Wallet.generate().pubkey
    usdc = get_associated_token_address(me, USDC)
    swap = Expectation("swap", str(USDC), str(WSOL), 1_000_000)
    for delegate in (me, get_associated_token_address(me, WSOL)):
        tx = build(me, [*budget(), approve(usdc, delegate, me), _route(me, USDC)])
        verdict = inspect(tx, me, POLICY, expect=swap)
        assert verdict.accepted, verdict.reasons


def test_the_checked_form_of_the_same_delegation_is_refused_too() -> None:
    me = Wallet.generate().pubkey
    pda = _attacker_pda()
    usdc = get_associated_token_address(me, USDC)
    swap = Expectation("swap", str(USDC), str(WSOL), 1_000_000)
    approve_checked = Instruction(
        TOKEN, bytes([13]) + struct.pack("<Q", U64_MAX) + bytes([6]),
        [AccountMeta(usdc, False, True), AccountMeta(USDC, False, False),
         AccountMeta(pda, False, False), AccountMeta(me, True, False)],
    )  # fmt: skip
    tx = build(me, [*budget(), h.tok_init_account3(pda, USDC, me), approve_checked,
                    _route(me, USDC)])  # fmt: skip
    verdict = inspect(tx, me, POLICY, expect=swap)
    assert not verdict.accepted
    assert any("approve_checked delegates" in r for r in verdict.reasons), verdict.reasons
