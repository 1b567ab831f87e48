"""Real unsigned v0 transactions, shaped like the ones Jupiter's API hands out.

The fee payer is the caller and the only signer; the blockhash is fresh (random
here); the instructions call the real program ids plus Compute Budget; swaps
load route accounts through an address lookup table, as the real ones do.
`build_unsigned` is also what txguard's tests use to get realistic input.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.message import MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

DCA_PROGRAM = Pubkey.from_string("DCA265Vj8a9CEuX1eb1LWRnDT7uK6q1xMipnNyatn23M")
VA_PROGRAM = Pubkey.from_string("VALaaymxQh2mNy2trH9jUqHT1mTow76wpTcGmSWSwJe")
LIMIT_ORDER_PROGRAM = Pubkey.from_string("j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X")
AGGREGATOR_PROGRAM = Pubkey.from_string("JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4")
TOKEN_PROGRAM = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
SYSTEM_PROGRAM = Pubkey.from_string("11111111111111111111111111111111")
WSOL_MINT = "So11111111111111111111111111111111111111112"
USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

PROGRAMS: dict[str, Pubkey] = {
    "recurring": DCA_PROGRAM,
    "recurring_price": VA_PROGRAM,
    "trigger_cancel": LIMIT_ORDER_PROGRAM,
    "trigger": LIMIT_ORDER_PROGRAM,
    "swap": AGGREGATOR_PROGRAM,
}
# 8-byte instruction discriminators (made up, stable)
_DISCRIMINATORS = {
    "recurring": b"dcaopen\x00",
    "recurring_price": b"vaopen\x00\x00",
    "trigger_cancel": b"locancel",
    "trigger": b"locancel",
    "swap": b"jupRoute",
}

DEFAULT_CU_LIMIT = 300_000
DEFAULT_CU_PRICE = 50_000  # micro-lamports per CU: 0.015 SOL cap is far above this


def random_pubkey(rng: random.Random) -> Pubkey:
    return Pubkey(rng.randbytes(32))


def random_blockhash(rng: random.Random) -> Hash:
    return Hash(rng.randbytes(32))


def _mint(value: str | Pubkey | None, default: str) -> Pubkey:
    if isinstance(value, Pubkey):
        return value
    return Pubkey.from_string(value or default)


def build_unsigned(
    kind: str,
    owner: Pubkey,
    *,
    rng: random.Random | None = None,
    blockhash: Hash | None = None,
    input_mint: str | Pubkey | None = None,
    output_mint: str | Pubkey | None = None,
    amount: int = 0,
    order: Pubkey | None = None,
    compute_unit_limit: int = DEFAULT_CU_LIMIT,
    compute_unit_price: int = DEFAULT_CU_PRICE,
    hostile_to: Pubkey | None = None,
    hostile_lamports: int = 0,
    extra_instructions: Sequence[Instruction] = (),
    lookup_table: bool | None = None,
    hidden_accounts: Sequence[Pubkey] = (),
    lookup_tables: dict[str, list[str]] | None = None,
) -> VersionedTransaction:
    """An unsigned v0 transaction for `kind` (recurring | recurring_price |
    trigger_cancel | swap) with `owner` as fee payer and only signer.

    `hostile_to` adds a System transfer of `hostile_lamports` (default: all of
    it, u64 max) from the owner to that key, the drain txguard must refuse.
    `hidden_accounts` are appended, writable, to the program call's accounts
    (what a hostile program would drain inside it). `lookup_tables`, when given,
    receives each table used (address -> its addresses), as the chain holds them.
    """
    if kind not in PROGRAMS:
        raise ValueError(f"unknown transaction kind {kind!r}")
    rng = rng or random.Random()
    program = PROGRAMS[kind]
    in_mint = _mint(input_mint, USDC_MINT)
    out_mint = _mint(output_mint, WSOL_MINT)
    order_key = order or random_pubkey(rng)
    route = [random_pubkey(rng) for _ in range(3 if kind == "swap" else 1)]
    accounts = [
        AccountMeta(owner, is_signer=True, is_writable=True),
        AccountMeta(order_key, is_signer=False, is_writable=True),
        AccountMeta(in_mint, is_signer=False, is_writable=False),
        AccountMeta(out_mint, is_signer=False, is_writable=False),
        *(AccountMeta(key, is_signer=False, is_writable=True) for key in route),
        AccountMeta(TOKEN_PROGRAM, is_signer=False, is_writable=False),
        AccountMeta(SYSTEM_PROGRAM, is_signer=False, is_writable=False),
        *(AccountMeta(key, is_signer=False, is_writable=True) for key in hidden_accounts),
    ]
    data = _DISCRIMINATORS[kind] + max(amount, 0).to_bytes(8, "little")
    instructions = [
        set_compute_unit_limit(compute_unit_limit),
        set_compute_unit_price(compute_unit_price),
    ]
    if hostile_to is not None:
        lamports = hostile_lamports or 2**64 - 1
        params = TransferParams(from_pubkey=owner, to_pubkey=hostile_to, lamports=lamports)
        instructions.append(transfer(params))
    instructions.append(Instruction(program, data, accounts))
    instructions.extend(extra_instructions)
    tables: list[AddressLookupTableAccount] = []
    if kind == "swap" if lookup_table is None else lookup_table:
        tables.append(AddressLookupTableAccount(random_pubkey(rng), [in_mint, out_mint, *route]))
    if lookup_tables is not None:
        lookup_tables.update({str(t.key): [str(a) for a in t.addresses] for t in tables})
    message = MessageV0.try_compile(owner, instructions, tables, blockhash or random_blockhash(rng))
    return VersionedTransaction.populate(message, [Signature.default()])


def to_b64(tx: VersionedTransaction) -> str:
    return base64.b64encode(bytes(tx)).decode("ascii")


def from_b64(text: str) -> VersionedTransaction:
    """Decode a base64 transaction; ValueError when it is not one."""
    try:
        raw = base64.b64decode(text, validate=True)
        return VersionedTransaction.from_bytes(raw)
    except Exception as exc:  # solders raises its own error types
        raise ValueError("not a base64 versioned transaction") from exc


def message_bytes(tx: VersionedTransaction) -> bytes:
    """The bytes a signer signs (the versioned message)."""
    return to_bytes_versioned(tx.message)


def fee_payer_signature_ok(tx: VersionedTransaction, owner: Pubkey) -> bool:
    """Whether slot 0 is the owner's valid signature over the message."""
    keys = tx.message.account_keys
    if not keys or keys[0] != owner or not tx.signatures:
        return False
    return bool(tx.signatures[0].verify(owner, message_bytes(tx)))
