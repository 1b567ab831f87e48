"""Token-2022 ``reallocate`` of one of our own token accounts, paid by our wallet, is
refused (review 17e).

txguard bounds the rent our wallet puts into a token account to a token account's
size (263 bytes under Token-2022): lamports parked in a token account of a mint
someone else controls can be frozen there (tests/unit/test_txguard_rent.py). It
refused ``reallocate`` only for an account that is not ours, so a swap could grow
our own Token-2022 input account with every account extension there is: on the
real Token-2022 program, 2,777,040 more lamports of ours parked in a 564-byte
account, where the input mint's freeze authority can lock them. No Jupiter answer
reallocates anything.
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
from jupcron.txguard.ours import TOKEN_2022_ACCOUNT_MAX_SPACE
from tests.fixtures.chain import Chain
from tests.fixtures.wallet import SYSTEM, TOKEN_2022, WSOL, budget, build, new_key

POLICY = GuardPolicy()
# account extensions (ExtensionType): TransferFeeAmount 2, ConfidentialTransferAccount 5,
# MemoTransfer 8, CpiGuard 11, NonTransferableAccount 13, TransferHookAccount 15,
# ConfidentialTransferFeeAmount 17
EVERY_ACCOUNT_EXTENSION = (5, 8, 11, 17, 2, 15, 13)


def _reallocate(account: Pubkey, me: Pubkey) -> Instruction:
    data = bytes([29]) + b"".join(struct.pack("<H", t) for t in EVERY_ACCOUNT_EXTENSION)
    return Instruction(
        TOKEN_2022, data,
        [AccountMeta(account, False, True), AccountMeta(me, True, True),
         AccountMeta(SYSTEM, False, False), AccountMeta(me, True, False)],
    )  # fmt: skip


def _route(me: Pubkey, mint: Pubkey, source: Pubkey) -> Instruction:
    return jix.route_instruction(
        "route_v2", me, input_mint=mint, output_mint=WSOL, source=source,
        destination=get_associated_token_address(me, WSOL),
        in_amount=1_000_000, quoted_out_amount=500_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip


def test_growing_our_own_token_2022_account_at_our_cost_is_refused() -> None:
    wallet = Wallet.generate()
    chain = Chain(wallet)
    me, mint = wallet.pubkey, chain.mints[TOKEN_2022]
    ours = chain.ata(me, TOKEN_2022)
    swap = Expectation("swap", str(mint), str(WSOL), 1_000_000)
    tx = build(me, [*budget(), _reallocate(ours, me), _route(me, mint, ours)])

    for expect in (swap, None):
        verdict = inspect(tx, me, POLICY, expect=expect)
        assert not verdict.accepted
        assert any("reallocate" in r and str(ours) in r for r in verdict.reasons), verdict.reasons
    # the same swap without it is accepted
    plain = build(me, [*budget(), _route(me, mint, ours)])
    assert inspect(plain, me, POLICY, expect=swap).accepted

    # on the real Token-2022 program: our lamports parked in the grown account
    before, held = chain.lamports(me), chain.lamports(ours)
    chain.execute(chain.tx([_reallocate(ours, me)]))
    account = chain.svm.get_account(ours)
    assert account is not None
    assert len(account.data) > TOKEN_2022_ACCOUNT_MAX_SPACE
    assert chain.lamports(ours) - held == 2_777_040
    assert before - chain.lamports(me) == 2_777_040 + 5_000  # and the signature's fee
