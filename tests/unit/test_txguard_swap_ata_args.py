"""The ATA program's ``create_with_args`` at our cost is held to a token account's
size (review 17e).

The program's published IDL (tests/fixtures/interfaces/associated_token.json) gives
``create_with_args`` an ``account_len``: the size of the account it creates, its
rent paid by the funder. txguard decoded it and held its owner and mint, but not
its size: a swap could have our wallet fund our output account at 10 MB (~70 SOL of
rent parked where the output mint's freeze authority can lock it), where every
other way of making a token account is held to 165 bytes (263 under Token-2022).

The ATA program bundled with LiteSVM here predates the instruction (it answers
"invalid instruction data"); the guard holds it to what the interface says it does.
"""

from __future__ import annotations

import struct

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jix
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures.wallet import ATA_PROGRAM, SYSTEM, TOKEN, USDC, WSOL, budget, build, new_key

POLICY = GuardPolicy()
RENT_SYSVAR = Pubkey.from_string("SysvarRent111111111111111111111111111111111")
SWAP = Expectation("swap", str(WSOL), str(USDC), 1_000_000)


def _create_with_args(me: Pubkey, mint: Pubkey, account_len: int) -> Instruction:
    account = get_associated_token_address(me, mint)
    data = bytes([3, 1, 255]) + struct.pack("<I", account_len)  # idempotent, bump, len
    keys = [(me, True, True), (account, False, True), (me, False, False), (mint, False, False),
            (SYSTEM, False, False), (TOKEN, False, False), (RENT_SYSVAR, False, False)]  # fmt: skip
    return Instruction(ATA_PROGRAM, data, [AccountMeta(k, s, w) for k, s, w in keys])


def _swap(me: Pubkey, account_len: int) -> str:
    route = jix.route_instruction(
        "route_v2", me, input_mint=WSOL, output_mint=USDC,
        source=get_associated_token_address(me, WSOL),
        destination=get_associated_token_address(me, USDC),
        in_amount=1_000_000, quoted_out_amount=150_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    return build(me, [*budget(), _create_with_args(me, USDC, account_len), route])


@pytest.mark.parametrize("expect", [SWAP, None], ids=["plan", "no-plan"])
def test_our_output_account_funded_at_ten_megabytes_is_refused(
    expect: Expectation | None,
) -> None:
    me = Wallet.generate().pubkey
    verdict = inspect(_swap(me, 10_000_000), me, POLICY, expect=expect)
    assert not verdict.accepted
    assert any("10000000 bytes" in r and "at most 165" in r for r in verdict.reasons), (
        verdict.reasons
    )


def test_a_token_accounts_size_stays_allowed() -> None:
    me = Wallet.generate().pubkey
    verdict = inspect(_swap(me, 165), me, POLICY, expect=SWAP)
    assert verdict.accepted, verdict.reasons
