"""A transaction, decoded into a `TxSummary` a person (and the rules) can read.

Decoding never trusts the input: account indices out of range, accounts loaded
from address lookup tables (which we cannot resolve without an RPC node) and
garbage instruction data all come out as labels, never as exceptions. Only
input that is not a transaction at all raises `NotATransactionError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from solders.message import Message, MessageV0
from solders.transaction import SanitizeError, VersionedTransaction

from daemon.errors import GuardRejectedError
from daemon.txguard.instructions import COMPUTE_BUDGET, Parsed, parse
from daemon.wallet import decode_transaction

MAX_TX_BYTES = 1232  # the network's packet limit for a transaction
# input this long is not decoded at all: base64 of four times the network's limit
MAX_INPUT_CHARS = 4 * (4 * MAX_TX_BYTES + 2) // 3 + 64
DEFAULT_UNITS_PER_INSTRUCTION = 200_000
MAX_COMPUTE_UNITS = 1_400_000
MICRO_LAMPORTS = 1_000_000


class NotATransactionError(GuardRejectedError, ValueError):
    """The input is not a base64 Solana transaction at all."""

    exit_code = 2

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__([f"not a transaction: {problem}"])


@dataclass(frozen=True)
class Signer:
    address: str
    writable: bool
    signed: bool  # a non-empty signature is already in its slot


@dataclass(frozen=True)
class Instruction:
    index: int  # 1-based, as people count
    program: str
    program_name: str | None
    name: str
    accounts: tuple[str, ...]
    fields: tuple[tuple[str, str], ...]
    roles: tuple[tuple[str, str], ...]
    malformed: bool
    effect: str = ""  # token programs: what it does to value (`token.Effect`)
    cosigners: tuple[str, ...] = ()  # multisig signers after the authority

    @property
    def role(self) -> dict[str, str]:
        return dict(self.roles)

    @property
    def title(self) -> str:
        return f"{self.program_name or self.program} {self.name}"


@dataclass(frozen=True)
class ComputeBudget:
    unit_limit: int | None  # None: the runtime default applies
    unit_price_micro_lamports: int | None
    effective_limit: int
    priority_fee_lamports: int  # ceil(price x limit / 10^6)


@dataclass(frozen=True)
class Lookup:
    table: str
    writable: int
    readonly: int


@dataclass(frozen=True)
class TxSummary:
    version: str  # "legacy" | "0" | ...
    fee_payer: str | None
    signers: tuple[Signer, ...]
    programs: tuple[tuple[str, str | None], ...]  # (id, name), in first-use order
    instructions: tuple[Instruction, ...]
    compute_budget: ComputeBudget
    recent_blockhash: str
    lookups: tuple[Lookup, ...]
    static_keys: tuple[str, ...]
    sanitize_error: str | None  # why the message is malformed, if it is
    uses_durable_nonce: bool
    size: int = 0  # bytes on the wire (the network takes at most MAX_TX_BYTES)


class OversizeError(GuardRejectedError):
    """The transaction is larger than the network accepts."""

    exit_code = 3

    def __init__(self, size: str) -> None:
        super().__init__([f"the transaction is {size}; the network takes at most {MAX_TX_BYTES}"])


def load(tx_b64: str) -> tuple[VersionedTransaction, int]:
    """Base64 text to (transaction, its size in bytes), or `NotATransactionError`.
    Text far beyond the network's limit is refused before it is decoded at all."""
    if len(tx_b64) > MAX_INPUT_CHARS:
        raise OversizeError(f"about {len(tx_b64) * 3 // 4} bytes")
    try:
        tx, raw = decode_transaction(tx_b64)
    except ValueError as exc:
        raise NotATransactionError(str(exc)) from None
    return tx, len(raw)


def _resolver(message: Message | MessageV0) -> list[str]:
    keys = [str(k) for k in message.account_keys]
    if isinstance(message, MessageV0):
        for lookup in message.address_table_lookups:
            table = str(lookup.account_key)
            keys += [f"lookup:{table}[{i}]" for i in bytes(lookup.writable_indexes)]
            keys += [f"lookup:{table}[{i}]" for i in bytes(lookup.readonly_indexes)]
    return keys


def _key(keys: list[str], index: int) -> str:
    return keys[index] if index < len(keys) else f"invalid-index:{index}"


def summarize(tx: VersionedTransaction, names: Mapping[str, str], size: int = 0) -> TxSummary:
    """Decode a transaction for people and rules; never raises on hostile content."""
    message = tx.message
    if not isinstance(message, (Message, MessageV0)):
        raise NotATransactionError(
            f"unsupported transaction version {tx.version()!r} (Jupiter sends v0)"
        )
    try:
        tx.sanitize()
        sanitize_error = None
    except SanitizeError as exc:
        sanitize_error = str(exc) or type(exc).__name__
    keys = _resolver(message)
    static = [str(k) for k in message.account_keys]
    header = message.header
    required = header.num_required_signatures
    readonly_signed = header.num_readonly_signed_accounts
    signatures = list(tx.signatures)
    signers = tuple(
        Signer(
            address=static[i],
            writable=i < required - readonly_signed,
            signed=i < len(signatures) and bytes(signatures[i]) != bytes(64),
        )
        for i in range(min(required, len(static)))
    )
    instructions: list[Instruction] = []
    programs: dict[str, str | None] = {}
    for number, ix in enumerate(message.instructions, start=1):
        program = _key(keys, ix.program_id_index)
        accounts = [_key(keys, i) for i in bytes(ix.accounts)]
        parsed: Parsed = parse(program, bytes(ix.data), accounts)
        programs.setdefault(program, names.get(program))
        instructions.append(
            Instruction(
                index=number,
                program=program,
                program_name=names.get(program),
                name=parsed.name,
                accounts=tuple(accounts),
                fields=tuple(parsed.fields.items()),
                roles=tuple(parsed.roles.items()),
                malformed=parsed.malformed,
                effect=parsed.effect,
                cosigners=parsed.cosigners,
            )
        )
    lookups: tuple[Lookup, ...] = ()
    if isinstance(message, MessageV0):
        lookups = tuple(
            Lookup(
                str(lu.account_key),
                len(bytes(lu.writable_indexes)),
                len(bytes(lu.readonly_indexes)),
            )
            for lu in message.address_table_lookups
        )
    return TxSummary(
        version="legacy" if isinstance(message, Message) else "0",
        fee_payer=static[0] if static else None,
        signers=signers,
        programs=tuple(programs.items()),
        instructions=tuple(instructions),
        compute_budget=compute_budget(instructions),
        recent_blockhash=str(message.recent_blockhash),
        lookups=lookups,
        static_keys=tuple(static),
        sanitize_error=sanitize_error,
        uses_durable_nonce=_uses_durable_nonce(tx, sanitize_error),
        size=size or len(bytes(tx)),
    )


def _uses_durable_nonce(tx: VersionedTransaction, sanitize_error: str | None) -> bool:
    if sanitize_error is not None:
        return False  # solders may index out of range on a malformed message
    return bool(tx.uses_durable_nonce())


def compute_budget(instructions: list[Instruction]) -> ComputeBudget:
    """The budget the runtime would apply: the last limit/price set, else defaults."""
    limit: int | None = None
    price: int | None = None
    others = 0
    for ix in instructions:
        if ix.program != COMPUTE_BUDGET:
            others += 1
            continue
        fields = dict(ix.fields)
        if ix.name == "set_compute_unit_limit":
            limit = int(fields["units"])
        elif ix.name == "set_compute_unit_price":
            price = int(fields["micro_lamports"])
    effective = limit if limit is not None else DEFAULT_UNITS_PER_INSTRUCTION * others
    effective = min(effective, MAX_COMPUTE_UNITS)
    fee = -(-(price or 0) * effective // MICRO_LAMPORTS)
    return ComputeBudget(limit, price, effective, fee)
