"""Real Jupiter instructions, built the way Jupiter's APIs hand them out: the
published account orders, Anchor discriminators and Borsh arguments (the
layouts txguard decodes; see docs/txguard.md), plus the helpers a real answer
puts around them (associated token accounts, wrapping SOL).

Addresses Jupiter derives are derived here the same way: the DCA account
(PDA of "dca", user, input mint, output mint, application_idx), the programs'
event authorities (PDA of "__event_authority"), the aggregator's program
authority for shared-accounts routes (PDA of "authority", id) and every
associated token account under the token program of its mint.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.token.associated import get_associated_token_address

AGGREGATOR_PROGRAM = Pubkey.from_string("JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4")
DCA_PROGRAM = Pubkey.from_string("DCA265Vj8a9CEuX1eb1LWRnDT7uK6q1xMipnNyatn23M")
VA_PROGRAM = Pubkey.from_string("VALaaymxQh2mNy2trH9jUqHT1mTow76wpTcGmSWSwJe")
LIMIT_ORDER_PROGRAM = Pubkey.from_string("j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X")
TOKEN_PROGRAM = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
ASSOCIATED_TOKEN_PROGRAM = Pubkey.from_string("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
SYSTEM_PROGRAM = Pubkey.from_string("11111111111111111111111111111111")
WHIRLPOOL_PROGRAM = Pubkey.from_string("whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc")
WSOL = Pubkey.from_string("So11111111111111111111111111111111111111112")

WHIRLPOOL_SWAP = 17  # the `Swap` enum's Whirlpool variant (a_to_b: bool)
ROUTES = ("route", "shared_accounts_route", "route_v2", "shared_accounts_route_v2")


def discriminator(name: str) -> bytes:
    return hashlib.sha256(f"global:{name}".encode()).digest()[:8]


def event_authority(program: Pubkey) -> Pubkey:
    return Pubkey.find_program_address([b"__event_authority"], program)[0]


def program_authority(route_id: int) -> Pubkey:
    return Pubkey.find_program_address([b"authority", bytes([route_id])], AGGREGATOR_PROGRAM)[0]


def dca_address(user: Pubkey, input_mint: Pubkey, output_mint: Pubkey, idx: int) -> Pubkey:
    seeds = [b"dca", bytes(user), bytes(input_mint), bytes(output_mint), struct.pack("<Q", idx)]
    return Pubkey.find_program_address(seeds, DCA_PROGRAM)[0]


def ata(owner: Pubkey, mint: Pubkey, token_program: Pubkey = TOKEN_PROGRAM) -> Pubkey:
    return get_associated_token_address(owner, mint, token_program)


def _w(key: Pubkey) -> AccountMeta:
    return AccountMeta(key, is_signer=False, is_writable=True)


def _r(key: Pubkey) -> AccountMeta:
    return AccountMeta(key, is_signer=False, is_writable=False)


def _signer(key: Pubkey, *, writable: bool = False) -> AccountMeta:
    return AccountMeta(key, is_signer=True, is_writable=writable)


def _option_u64(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x01" + struct.pack("<Q", value)


def _option_i64(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x01" + struct.pack("<q", value)


# --- helpers around the Jupiter instruction ------------------------------------------


def create_ata_idempotent(
    funder: Pubkey, wallet: Pubkey, mint: Pubkey, token_program: Pubkey = TOKEN_PROGRAM
) -> Instruction:
    """Associated Token Account `create_idempotent` (instruction 1)."""
    metas = [
        _signer(funder, writable=True),
        _w(ata(wallet, mint, token_program)),
        _r(wallet),
        _r(mint),
        _r(SYSTEM_PROGRAM),
        _r(token_program),
    ]
    return Instruction(ASSOCIATED_TOKEN_PROGRAM, bytes([1]), metas)


def wrap_sol(owner: Pubkey, lamports: int) -> list[Instruction]:
    """Fund the owner's wSOL account: create it, move lamports in, sync_native (17)."""
    account = ata(owner, WSOL)
    move = transfer(TransferParams(from_pubkey=owner, to_pubkey=account, lamports=lamports))
    sync = Instruction(TOKEN_PROGRAM, bytes([17]), [_w(account)])
    return [create_ata_idempotent(owner, owner, WSOL), move, sync]


def unwrap_sol(owner: Pubkey) -> Instruction:
    """Close the owner's wSOL account (close_account, 9): its lamports return to the owner."""
    metas = [_w(ata(owner, WSOL)), _w(owner), _signer(owner)]
    return Instruction(TOKEN_PROGRAM, bytes([9]), metas)


# --- Aggregator v6 ---------------------------------------------------------------------


def route_instruction(
    variant: str,
    owner: Pubkey,
    *,
    input_mint: Pubkey,
    output_mint: Pubkey,
    source: Pubkey,
    destination: Pubkey,
    in_amount: int,
    quoted_out_amount: int,
    slippage_bps: int,
    pool_accounts: Sequence[Pubkey],
    input_token_program: Pubkey = TOKEN_PROGRAM,
    output_token_program: Pubkey = TOKEN_PROGRAM,
    route_id: int = 0,
) -> Instruction:
    """An exact-in route of one Whirlpool step. `pool_accounts` are the pool's
    seven accounts (pool, vault A, vault B, three tick arrays, oracle)."""
    if variant not in ROUTES:
        raise ValueError(f"unknown route variant {variant!r}")
    v2, shared = variant.endswith("_v2"), variant.startswith("shared")
    authority = program_authority(route_id)
    # the AMM step's own accounts (remaining accounts), the token accounts it moves between
    hop_in = ata(authority, input_mint, input_token_program) if shared else source
    hop_out = ata(authority, output_mint, output_token_program) if shared else destination
    pool, vault_a, vault_b, *rest = pool_accounts
    remaining = [
        _r(WHIRLPOOL_PROGRAM), _r(input_token_program), _r(authority if shared else owner),
        _w(pool), _w(hop_in), _w(vault_a), _w(hop_out), _w(vault_b),
        *(_w(key) for key in rest[:3]), _r(rest[3]),
    ]  # fmt: skip
    step = bytes([WHIRLPOOL_SWAP, 1]) + (struct.pack("<H", 10_000) if v2 else bytes([100]))
    plan = struct.pack("<I", 1) + step + bytes([0, 1])
    tail = [_r(event_authority(AGGREGATOR_PROGRAM)), _r(AGGREGATOR_PROGRAM)]
    if shared:
        head = [
            _r(authority), _signer(owner), _w(source), _w(hop_in), _w(hop_out), _w(destination),
            _r(input_mint), _r(output_mint),
        ]  # fmt: skip
        if v2:
            head += [_r(input_token_program), _r(output_token_program)]
        else:
            head = [_r(input_token_program), *head, _r(AGGREGATOR_PROGRAM), _r(AGGREGATOR_PROGRAM)]
    elif v2:
        head = [
            _signer(owner), _w(source), _w(destination), _r(input_mint), _r(output_mint),
            _r(input_token_program), _r(output_token_program), _r(AGGREGATOR_PROGRAM),
        ]  # fmt: skip
    else:
        head = [
            _r(input_token_program), _signer(owner), _w(source), _w(destination),
            _r(AGGREGATOR_PROGRAM), _r(output_mint), _r(AGGREGATOR_PROGRAM),
        ]  # fmt: skip
    id_byte = bytes([route_id]) if shared else b""
    if v2:
        amounts = struct.pack("<QQHHH", in_amount, quoted_out_amount, slippage_bps, 0, 0)
        data = discriminator(variant) + id_byte + amounts + plan
    else:
        amounts = struct.pack("<QQHB", in_amount, quoted_out_amount, slippage_bps, 0)
        data = discriminator(variant) + id_byte + plan + amounts
    return Instruction(AGGREGATOR_PROGRAM, data, [*head, *tail, *remaining])


# --- DCA (Recurring, time) --------------------------------------------------------------


def open_dca_v2(
    user: Pubkey,
    *,
    input_mint: Pubkey,
    output_mint: Pubkey,
    application_idx: int,
    in_amount: int,
    in_amount_per_cycle: int,
    cycle_frequency: int,
    payer: Pubkey | None = None,
    min_out_amount: int | None = None,
    max_out_amount: int | None = None,
    start_at: int | None = None,
) -> Instruction:
    dca = dca_address(user, input_mint, output_mint, application_idx)
    metas = [
        _w(dca), _signer(user), _signer(payer or user, writable=True), _r(input_mint),
        _r(output_mint), _w(ata(user, input_mint)), _w(ata(dca, input_mint)),
        _w(ata(dca, output_mint)), _r(SYSTEM_PROGRAM), _r(TOKEN_PROGRAM),
        _r(ASSOCIATED_TOKEN_PROGRAM), _r(event_authority(DCA_PROGRAM)), _r(DCA_PROGRAM),
    ]  # fmt: skip
    args = struct.pack("<QQQq", application_idx, in_amount, in_amount_per_cycle, cycle_frequency)
    options = _option_u64(min_out_amount) + _option_u64(max_out_amount) + _option_i64(start_at)
    return Instruction(DCA_PROGRAM, discriminator("open_dca_v2") + args + options, metas)


def close_dca(user: Pubkey, dca: Pubkey, *, input_mint: Pubkey, output_mint: Pubkey) -> Instruction:
    """The DCA program's ``close_dca`` (what Recurring's cancelOrder answers): the
    order's input left and its output go back to the user's token accounts."""
    metas = [
        _signer(user, writable=True), _w(dca), _r(input_mint), _r(output_mint),
        _w(ata(dca, input_mint)), _w(ata(dca, output_mint)), _w(ata(user, input_mint)),
        _w(ata(user, output_mint)), _r(SYSTEM_PROGRAM), _r(TOKEN_PROGRAM),
        _r(ASSOCIATED_TOKEN_PROGRAM), _r(event_authority(DCA_PROGRAM)), _r(DCA_PROGRAM),
    ]  # fmt: skip
    return Instruction(DCA_PROGRAM, discriminator("close_dca"), metas)


# --- Limit Order v2 (Trigger) ------------------------------------------------------------


def cancel_order(
    maker: Pubkey,
    order: Pubkey,
    *,
    input_mint: Pubkey,
    refund_to: Pubkey | None = None,
    input_token_program: Pubkey = TOKEN_PROGRAM,
) -> Instruction:
    """Cancel `order`: the unfilled input returns to `refund_to` (default the
    maker's token account; for a SOL order none, so it returns as lamports)."""
    if refund_to is None and input_mint != WSOL:
        refund_to = ata(maker, input_mint, input_token_program)
    metas = [
        _signer(maker, writable=True), _w(maker), _w(order),
        _w(ata(order, input_mint, input_token_program)),
        _w(refund_to) if refund_to is not None else _r(LIMIT_ORDER_PROGRAM),
        _r(input_mint), _r(input_token_program), _r(event_authority(LIMIT_ORDER_PROGRAM)),
        _r(LIMIT_ORDER_PROGRAM),
    ]  # fmt: skip
    return Instruction(LIMIT_ORDER_PROGRAM, discriminator("cancel_order"), metas)


def initialize_order(
    maker: Pubkey,
    order: Pubkey,
    *,
    input_mint: Pubkey,
    output_mint: Pubkey,
    unique_id: int,
    making_amount: int,
    taking_amount: int,
    fee_config: Pubkey,
    expired_at: int | None = None,
) -> Instruction:
    metas = [
        _signer(maker, writable=True), _signer(maker), _w(order),
        _w(ata(order, input_mint)), _w(ata(maker, input_mint)), _r(fee_config),
        _r(LIMIT_ORDER_PROGRAM), _r(input_mint), _r(output_mint), _r(TOKEN_PROGRAM),
        _r(TOKEN_PROGRAM), _r(SYSTEM_PROGRAM), _r(ASSOCIATED_TOKEN_PROGRAM),
        _r(event_authority(LIMIT_ORDER_PROGRAM)), _r(LIMIT_ORDER_PROGRAM),
    ]  # fmt: skip
    args = struct.pack("<QQQ", unique_id, making_amount, taking_amount)
    args += _option_i64(expired_at) + b"\x00"  # fee_bps: None
    return Instruction(LIMIT_ORDER_PROGRAM, discriminator("initialize_order") + args, metas)


# --- Value Average (Recurring, price) ------------------------------------------------------


def va_deposit(user: Pubkey, order: Pubkey, input_mint: Pubkey, amount: int) -> Instruction:
    """Value Average ``deposit``: `amount` of the input mint from the user's token account
    into the order's. Anchor's discriminator and the account order of the docs' example
    transaction (recurring/deposit-price-order.mdx; tests/fixtures/real/
    recurring-price-deposit.json): user, order, input mint, the order's token account, the
    user's, token program, event authority, program; one u64 argument."""
    metas = [
        _signer(user, writable=True), _w(order), _r(input_mint), _w(ata(order, input_mint)),
        _w(ata(user, input_mint)), _r(TOKEN_PROGRAM), _r(event_authority(VA_PROGRAM)),
        _r(VA_PROGRAM),
    ]  # fmt: skip
    return Instruction(VA_PROGRAM, discriminator("deposit") + struct.pack("<Q", amount), metas)
