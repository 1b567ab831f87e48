"""Real unsigned v0 transactions, shaped like the ones Jupiter's API hands out.

The fee payer is the caller and the only signer; the blockhash is fresh (random
here). Each kind carries the real Jupiter instruction with the published
account order, discriminator and arguments (daemon/emulator/jupiter_ix.py),
after Compute Budget and with the helpers the real answers carry:

- swap: a one-step exact-in route (`route_v2` by default; `route`,
  `shared_accounts_route` and `shared_accounts_route_v2` on request) from the
  owner's input token account to the receiver's output account, created first
  with `create_idempotent`; wSOL input is wrapped before and closed after, a
  wSOL output to the owner is closed after (unwrapped). Pool accounts and mints
  load through an address lookup table, as the real ones do.
- recurring: DCA `open_dca_v2` (user and payer = owner; the DCA account derived
  from the user, the mints and the application index), wSOL input wrapped first.
- trigger_cancel: Limit Order v2 `cancel_order`, refunding the maker's account.
- trigger_cancel_batch: one `cancel_order` per order of `batch` (order, input mint).
- trigger: Limit Order v2 `initialize_order`.
- recurring_price: the Value Average program's ``deposit`` into the order, with
  Anchor's discriminator and the account order of the docs' example transactions
  (its interface is not public: txguard cannot read it and refuses it).

`build_rfq_fill` is the one exception to "the caller pays and signs alone": a
JupiterZ (RFQ) fill, whose fee payer and first signer is the market maker.

`build_unsigned` is also what txguard's tests use to get realistic input.
"""

from __future__ import annotations

import base64
import random
import struct
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

from jupcron.emulator import jupiter_ix as jup
from jupcron.emulator.jupiter_ix import (
    AGGREGATOR_PROGRAM,
    DCA_PROGRAM,
    LIMIT_ORDER_PROGRAM,
    VA_PROGRAM,
    WHIRLPOOL_PROGRAM,
)

WSOL_MINT = "So11111111111111111111111111111111111111112"
USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

PROGRAMS: dict[str, Pubkey] = {
    "recurring": DCA_PROGRAM,
    "recurring_price": VA_PROGRAM,
    "recurring_cancel": DCA_PROGRAM,
    "trigger_cancel": LIMIT_ORDER_PROGRAM,
    "trigger_cancel_batch": LIMIT_ORDER_PROGRAM,
    "trigger": LIMIT_ORDER_PROGRAM,
    "swap": AGGREGATOR_PROGRAM,
}

DEFAULT_CU_LIMIT = 300_000
DEFAULT_CU_PRICE = 50_000  # micro-lamports per CU: 0.015 SOL cap is far above this
DEFAULT_SLIPPAGE_BPS = 50
DEFAULT_ROUTE = "route_v2"


def random_pubkey(rng: random.Random) -> Pubkey:
    return Pubkey(rng.randbytes(32))


def random_blockhash(rng: random.Random) -> Hash:
    return Hash(rng.randbytes(32))


def _mint(value: str | Pubkey | None, default: str) -> Pubkey:
    if isinstance(value, Pubkey):
        return value
    return Pubkey.from_string(value or default)


def dca_address(
    user: Pubkey, input_mint: str | Pubkey, output_mint: str | Pubkey, idx: int
) -> Pubkey:
    """The DCA account `open_dca_v2` creates for these arguments."""
    return jup.dca_address(user, _mint(input_mint, ""), _mint(output_mint, ""), idx)


def build_unsigned(
    kind: str,
    owner: Pubkey,
    *,
    rng: random.Random | None = None,
    blockhash: Hash | None = None,
    input_mint: str | Pubkey | None = None,
    output_mint: str | Pubkey | None = None,
    amount: int = 0,
    out_amount: int | None = None,
    order: Pubkey | None = None,
    compute_unit_limit: int = DEFAULT_CU_LIMIT,
    compute_unit_price: int = DEFAULT_CU_PRICE,
    hostile_to: Pubkey | None = None,
    hostile_lamports: int = 0,
    extra_instructions: Sequence[Instruction] = (),
    lookup_table: bool | None = None,
    route: str = DEFAULT_ROUTE,
    slippage_bps: int = DEFAULT_SLIPPAGE_BPS,
    receiver: Pubkey | None = None,
    refund_to: Pubkey | None = None,
    cycles: int = 2,
    interval: int = 86_400,
    application_idx: int | None = None,
    start_at: int | None = None,
    min_out_amount: int | None = None,
    max_out_amount: int | None = None,
    hidden_accounts: Sequence[Pubkey] = (),
    lookup_tables: dict[str, list[str]] | None = None,
    batch: Sequence[tuple[Pubkey, Pubkey]] = (),
) -> VersionedTransaction:
    """An unsigned v0 transaction for `kind` (recurring | recurring_price |
    recurring_cancel | trigger_cancel | trigger | swap) with `owner` as fee payer and only signer.

    swap: `amount` in, `out_amount` quoted out (default `amount`), `route` the
    aggregator instruction, `receiver` the owner of the output account (default
    the owner). recurring: `amount` over `cycles` orders `interval` seconds
    apart; the DCA account is derived from `application_idx` (random if None),
    so `order` does not apply. trigger_cancel: `order` (random if None) and
    `refund_to`, the account the unfilled input returns to (default the
    maker's). `hostile_to` adds a System transfer of `hostile_lamports`
    (default: all of it, u64 max) from the owner to that key, the drain txguard
    must refuse. `hidden_accounts` are appended, writable, to the Jupiter
    program call's accounts (what a hostile program would drain inside it).
    `lookup_tables`, when given, receives each table used (address -> its
    addresses), as the chain holds them.
    """
    if kind not in PROGRAMS:
        raise ValueError(f"unknown transaction kind {kind!r}")
    rng = rng or random.Random()
    in_mint = _mint(input_mint, USDC_MINT)
    out_mint = _mint(output_mint, WSOL_MINT)
    amount = max(amount, 0)
    quoted_out = amount if out_amount is None else out_amount
    table: list[Pubkey] = []
    if kind == "swap":
        body, table = _swap(
            owner,
            rng,
            in_mint,
            out_mint,
            amount,
            quoted_out,
            route=route,
            slippage_bps=slippage_bps,
            receiver=receiver or owner,
        )
    elif kind == "recurring":
        idx = rng.getrandbits(64) if application_idx is None else application_idx
        per_cycle = amount // max(cycles, 1)
        body = _wrap(owner, in_mint, amount)
        body.append(
            jup.open_dca_v2(
                owner,
                input_mint=in_mint,
                output_mint=out_mint,
                application_idx=idx,
                in_amount=amount,
                in_amount_per_cycle=per_cycle,
                cycle_frequency=interval,
                start_at=start_at,
                min_out_amount=min_out_amount,
                max_out_amount=max_out_amount,
            )
        )
    elif kind == "recurring_cancel":
        dca = order or random_pubkey(rng)
        body = [jup.close_dca(owner, dca, input_mint=in_mint, output_mint=out_mint)]
    elif kind == "trigger_cancel_batch":
        body = [jup.cancel_order(owner, key, input_mint=mint) for key, mint in batch]
    elif kind == "trigger_cancel":
        order_key = order or random_pubkey(rng)
        body = [jup.cancel_order(owner, order_key, input_mint=in_mint, refund_to=refund_to)]
    elif kind == "trigger":
        order_key = order or random_pubkey(rng)
        body = [
            jup.initialize_order(
                owner,
                order_key,
                input_mint=in_mint,
                output_mint=out_mint,
                unique_id=rng.getrandbits(64),
                making_amount=amount,
                taking_amount=quoted_out,
                fee_config=random_pubkey(rng),
            )
        ]
    else:
        body = [_value_average(owner, order or random_pubkey(rng), in_mint, out_mint, amount)]
    instructions = [
        set_compute_unit_limit(compute_unit_limit),
        set_compute_unit_price(compute_unit_price),
    ]
    if hostile_to is not None:
        lamports = hostile_lamports or 2**64 - 1
        params = TransferParams(from_pubkey=owner, to_pubkey=hostile_to, lamports=lamports)
        instructions.append(transfer(params))
    if hidden_accounts:
        body = [_with_hidden(ix, hidden_accounts) for ix in body]
    instructions += body
    instructions.extend(extra_instructions)
    tables: list[AddressLookupTableAccount] = []
    if kind == "swap" if lookup_table is None else lookup_table:
        keys = table or [in_mint, out_mint]
        tables.append(AddressLookupTableAccount(random_pubkey(rng), keys))
    if lookup_tables is not None:
        lookup_tables.update({str(t.key): [str(a) for a in t.addresses] for t in tables})
    message = MessageV0.try_compile(owner, instructions, tables, blockhash or random_blockhash(rng))
    return VersionedTransaction.populate(message, [Signature.default()])


def _with_hidden(ix: Instruction, hidden: Sequence[Pubkey]) -> Instruction:
    """The Jupiter call with `hidden` appended to its accounts (writable)."""
    if ix.program_id not in PROGRAMS.values():
        return ix
    extra = [AccountMeta(key, is_signer=False, is_writable=True) for key in hidden]
    return Instruction(ix.program_id, ix.data, [*ix.accounts, *extra])


def _wrap(owner: Pubkey, in_mint: Pubkey, amount: int) -> list[Instruction]:
    return jup.wrap_sol(owner, amount) if str(in_mint) == WSOL_MINT else []


def _swap(
    owner: Pubkey,
    rng: random.Random,
    in_mint: Pubkey,
    out_mint: Pubkey,
    amount: int,
    quoted_out: int,
    *,
    route: str,
    slippage_bps: int,
    receiver: Pubkey,
) -> tuple[list[Instruction], list[Pubkey]]:
    pool = [random_pubkey(rng) for _ in range(7)]
    source, destination = jup.ata(owner, in_mint), jup.ata(receiver, out_mint)
    body = _wrap(owner, in_mint, amount)
    body.append(jup.create_ata_idempotent(owner, receiver, out_mint))
    body.append(
        jup.route_instruction(
            route,
            owner,
            input_mint=in_mint,
            output_mint=out_mint,
            source=source,
            destination=destination,
            in_amount=amount,
            quoted_out_amount=quoted_out,
            slippage_bps=slippage_bps,
            pool_accounts=pool,
        )
    )
    if WSOL_MINT in (str(in_mint), str(out_mint) if receiver == owner else ""):
        body.append(jup.unwrap_sol(owner))
    table = [in_mint, out_mint, WHIRLPOOL_PROGRAM, *pool]
    if route.startswith("shared"):
        authority = jup.program_authority(0)
        table += [authority, jup.ata(authority, in_mint), jup.ata(authority, out_mint)]
    return body, table


def _value_average(
    owner: Pubkey, order: Pubkey, in_mint: Pubkey, out_mint: Pubkey, amount: int
) -> Instruction:
    """The Value Average program's ``deposit`` of `amount` into the order (its real
    discriminator and account order, as the docs' example transactions show; the
    program's own interface is not public, so txguard still cannot read it)."""
    del out_mint  # a deposit names only the input side
    return jup.va_deposit(owner, order, in_mint, amount)


ORDER_ENGINE_PROGRAM = Pubkey.from_string("61DFfeTKM7trxYcPQCM78bJ794ddZprZpAwAnLiwTpYH")
# the order engine's constant TEMPORARY_WSOL_TOKEN_ACCOUNT (its IDL): the seed of the
# maker's account that unwraps a SOL side (the docs' RFQ examples name it, writable)
TEMPORARY_WSOL_SEED = b"temporary-wsol-token-account"
RFQ_CU_LIMIT = 44_337  # the docs' RFQ example's budget (the maker pays, not the taker)
RFQ_CU_PRICE = 1_161


def build_rfq_fill(
    taker: Pubkey,
    maker: Pubkey,
    *,
    input_mint: str | Pubkey,
    output_mint: str | Pubkey,
    amount: int,
    out_amount: int,
    expire_at: int,
    rng: random.Random | None = None,
    blockhash: Hash | None = None,
) -> VersionedTransaction:
    """An unsigned JupiterZ fill, as Ultra / Swap V2 ``/order`` answers when the RFQ
    router wins (tests/fixtures/real/ultra-order-usdc-sol-jupiterz-rfq*.json): the
    market maker is the fee payer (account 0, first signer: its signature is the
    transaction's id) and `taker` the second signer; Compute Budget, then the order
    engine's ``fill(input_amount, output_amount, expire_at)`` with the IDL's account
    order (jup-ag/rfq-webhook-toolkit, idls/order_engine.json). A SOL side has no
    token account of the taker (absent: the program id, Anchor's None; the taker's
    lamports move) and names the maker's temporary wSOL account after the IDL's
    accounts. No lookup table, as in the real ones."""
    rng = rng or random.Random()
    in_mint, out_mint = _mint(input_mint, USDC_MINT), _mint(output_mint, WSOL_MINT)
    sol = {WSOL_MINT}
    program = ORDER_ENGINE_PROGRAM
    none = AccountMeta(program, is_signer=False, is_writable=False)

    def side(owner: Pubkey, mint: Pubkey, native: bool) -> AccountMeta:
        return none if native else AccountMeta(jup.ata(owner, mint), False, True)

    accounts = [
        AccountMeta(taker, is_signer=True, is_writable=True),
        AccountMeta(maker, is_signer=True, is_writable=True),
        side(taker, in_mint, str(in_mint) in sol),
        side(maker, in_mint, False),
        side(taker, out_mint, str(out_mint) in sol),
        side(maker, out_mint, False),
        AccountMeta(in_mint, is_signer=False, is_writable=False),
        AccountMeta(jup.TOKEN_PROGRAM, is_signer=False, is_writable=False),
        AccountMeta(out_mint, is_signer=False, is_writable=False),
        AccountMeta(jup.TOKEN_PROGRAM, is_signer=False, is_writable=False),
        AccountMeta(jup.SYSTEM_PROGRAM, is_signer=False, is_writable=False),
    ]
    if sol & {str(in_mint), str(out_mint)}:
        temporary, _ = Pubkey.find_program_address([TEMPORARY_WSOL_SEED, bytes(maker)], program)
        accounts.append(AccountMeta(temporary, is_signer=False, is_writable=True))
    data = jup.discriminator("fill") + struct.pack("<QQq", amount, out_amount, expire_at)
    instructions = [
        set_compute_unit_price(RFQ_CU_PRICE),
        set_compute_unit_limit(RFQ_CU_LIMIT),
        Instruction(program, data, accounts),
    ]
    message = MessageV0.try_compile(maker, instructions, [], blockhash or random_blockhash(rng))
    return VersionedTransaction.populate(message, [Signature.default()] * 2)


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
    return signature_ok(tx, owner, 0)


def signature_ok(tx: VersionedTransaction, signer: Pubkey, slot: int) -> bool:
    """Whether signature `slot` is `signer`'s (account `slot`) valid one over the
    message (a JupiterZ taker signs slot 1, the maker's slot 0 still empty)."""
    keys, signatures = tx.message.account_keys, tx.signatures
    if len(keys) <= slot or keys[slot] != signer or len(signatures) <= slot:
        return False
    return bool(signatures[slot].verify(signer, message_bytes(tx)))
