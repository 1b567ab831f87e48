"""The transactions the emulator's Trigger V2 hands out: deposits into the
vault, withdrawals out of it, and the hostile shapes the tests need.

The docs show one withdrawal in full (the spec's DCA cancel example, see
docs/products.md): a legacy message signed by the wallet (fee payer), the
vault and a read-only co-signer, with Compute Budget, an SPL Token ``Transfer``
from the vault's per-order account to the wallet's, and ``CloseAccount`` of that
account with its rent to the wallet. Withdrawals here have that shape.

No deposit is shown in full; the emulator's (v0, the wallet the only signer)
creates the per-order input account (with a seed of the wallet, or the vault's
associated token account), initialises it with the vault as owner and moves
the amount in (``TransferChecked``; native SOL: lamports and ``SyncNative``).
"""

from __future__ import annotations

import base64
import random
import struct
from collections.abc import Sequence

from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.message import Message, MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import (
    CreateAccountWithSeedParams,
    TransferParams,
    create_account_with_seed,
    transfer,
)
from solders.transaction import VersionedTransaction

from jupcron.emulator.jupiter_ix import TOKEN_PROGRAM, WSOL, ata, create_ata_idempotent

# the read-only co-signer of the documented withdrawal example (its role is not documented)
COSIGNER = Pubkey.from_string("trfb53BmkHNeoqaa3REgqnrbwUZqAFYdjTkivkJ6aWg")
TOKEN_ACCOUNT_RENT = 2_039_280
TOKEN_ACCOUNT_SIZE = 165
CU_LIMIT = 60_000
CU_PRICE = 250_000  # micro-lamports, as the documented example
SHAPES = ("seeded", "ata")


def _w(key: Pubkey, signer: bool = False) -> AccountMeta:
    return AccountMeta(key, is_signer=signer, is_writable=True)


def _r(key: Pubkey, signer: bool = False) -> AccountMeta:
    return AccountMeta(key, is_signer=signer, is_writable=False)


def initialize_account3(account: Pubkey, mint: Pubkey, owner: Pubkey) -> Instruction:
    return Instruction(TOKEN_PROGRAM, bytes([18]) + bytes(owner), [_w(account), _r(mint)])


def transfer_checked(
    source: Pubkey, mint: Pubkey, dest: Pubkey, authority: Pubkey, amount: int, decimals: int
) -> Instruction:
    data = bytes([12]) + struct.pack("<QB", amount, decimals)
    metas = [_w(source), _r(mint), _w(dest), _r(authority, signer=True)]
    return Instruction(TOKEN_PROGRAM, data, metas)


def token_transfer(
    source: Pubkey, dest: Pubkey, authority: Pubkey, amount: int, cosigner: Pubkey | None
) -> Instruction:
    metas = [_w(source), _w(dest), _w(authority, signer=True)]
    if cosigner is not None:
        metas.append(_r(cosigner, signer=True))
    return Instruction(TOKEN_PROGRAM, bytes([3]) + struct.pack("<Q", amount), metas)


def close_account(account: Pubkey, dest: Pubkey, owner: Pubkey) -> Instruction:
    return Instruction(TOKEN_PROGRAM, bytes([9]), [_w(account), _w(dest), _w(owner, signer=True)])


def sync_native(account: Pubkey) -> Instruction:
    return Instruction(TOKEN_PROGRAM, bytes([17]), [_w(account)])


def order_account(user: Pubkey, seed: str) -> Pubkey:
    """The per-order input account a "seeded" deposit creates."""
    return Pubkey.create_with_seed(user, seed, TOKEN_PROGRAM)


def deposit(
    user: Pubkey,
    owner: Pubkey,
    mint: Pubkey,
    amount: int,
    decimals: int,
    *,
    seed: str,
    rng: random.Random,
    shape: str = "seeded",
    extra: Sequence[Instruction] = (),
) -> tuple[VersionedTransaction, Pubkey]:
    """A deposit of `amount` of `mint` from `user` into an account of `owner` (the
    vault; a stranger for the hostile shapes): the transaction and that account."""
    native = mint == WSOL
    body: list[Instruction] = []
    if shape == "seeded":
        account = order_account(user, seed)
        lamports = TOKEN_ACCOUNT_RENT + (amount if native else 0)
        params = CreateAccountWithSeedParams(
            from_pubkey=user, to_pubkey=account, base=user, seed=seed, lamports=lamports,
            space=TOKEN_ACCOUNT_SIZE, owner=TOKEN_PROGRAM,
        )  # fmt: skip
        body += [create_account_with_seed(params), initialize_account3(account, mint, owner)]
        if native:
            body.append(sync_native(account))
    else:
        account = ata(owner, mint)
        body.append(create_ata_idempotent(user, owner, mint))
        if native:
            params_t = TransferParams(from_pubkey=user, to_pubkey=account, lamports=amount)
            body += [transfer(params_t), sync_native(account)]
    if not native:
        body.append(transfer_checked(ata(user, mint), mint, account, user, amount, decimals))
    instructions = [
        set_compute_unit_limit(CU_LIMIT), set_compute_unit_price(CU_PRICE), *body, *extra
    ]  # fmt: skip
    message = MessageV0.try_compile(user, instructions, [], Hash(rng.randbytes(32)))
    return VersionedTransaction.populate(message, [Signature.default()]), account


def withdrawal(
    user: Pubkey,
    vault: Pubkey,
    mint: Pubkey,
    account: Pubkey,
    amount: int,
    *,
    rng: random.Random,
    to: Pubkey | None = None,
) -> VersionedTransaction:
    """The documented shape: `amount` from the vault's `account` to `to`'s (default:
    the user's) token account, then the account closed, its lamports to `to`."""
    to = to or user
    body = []
    if mint != WSOL:
        body.append(token_transfer(account, ata(to, mint), vault, amount, COSIGNER))
    close = close_account(account, to, vault)
    if mint == WSOL:  # the documented co-signer signs every withdrawal
        close = Instruction(close.program_id, close.data, [*close.accounts, _r(COSIGNER, True)])
    body.append(close)
    instructions = [set_compute_unit_limit(CU_LIMIT), set_compute_unit_price(CU_PRICE), *body]
    message = Message.new_with_blockhash(instructions, user, Hash(rng.randbytes(32)))
    signers = message.header.num_required_signatures
    return VersionedTransaction.populate(message, [Signature.default()] * signers)


def login_drain(user: Pubkey, rng: random.Random) -> VersionedTransaction:
    """A "login transaction" that is in truth a transfer of everything the user
    has to a stranger: what a hostile challenge hides."""
    stranger = Pubkey(rng.randbytes(32))
    move = transfer(TransferParams(from_pubkey=user, to_pubkey=stranger, lamports=2**63))
    memo = Instruction(
        Pubkey.from_string("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"),
        b"Sign in to Jupiter Trigger Order API",
        [_r(user, signer=True)],
    )
    message = Message.new_with_blockhash([memo, move], user, Hash(rng.randbytes(32)))
    return VersionedTransaction.populate(message, [Signature.default()])


def fee_only_message(user: Pubkey, rng: random.Random) -> bytes:
    """The smallest message a signature makes valid (it pays a fee for nothing)."""
    return bytes(Message.new_with_blockhash([], user, Hash(rng.randbytes(32))))


MEMO = Pubkey.from_string("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")


def memo_transaction(user: Pubkey, text: str, rng: random.Random) -> str:
    """The documented ``transaction`` challenge (for hardware wallets): the text in a
    memo the user signs, never submitted. Base64."""
    memo = Instruction(MEMO, text.encode("utf-8"), [_r(user, signer=True)])
    message = Message.new_with_blockhash([memo], user, Hash(rng.randbytes(32)))
    tx = VersionedTransaction.populate(message, [Signature.default()])
    return base64.b64encode(bytes(tx)).decode("ascii")


def memo_signed(signed_b64: str, user: Pubkey, text: str) -> bool:
    """Whether `signed_b64` is a memo transaction of `text` signed by `user`."""
    try:
        tx = VersionedTransaction.from_bytes(base64.b64decode(signed_b64, validate=True))
    except Exception:  # noqa: BLE001  # solders' own error types: not a transaction
        return False
    message = tx.message
    keys = list(message.account_keys)
    if not keys or keys[0] != user or not tx.signatures:
        return False
    memos = [bytes(ix.data) for ix in message.instructions if keys[ix.program_id_index] == MEMO]
    return memos == [text.encode("utf-8")] and bool(
        tx.signatures[0].verify(user, to_bytes_versioned(message))
    )


def random_signature(rng: random.Random) -> str:
    return str(Signature(rng.randbytes(64)))
