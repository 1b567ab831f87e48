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

from jupcron.chain.wallet import Unsigned, read_transaction
from jupcron.errors import GuardRejectedError
from jupcron.txguard.instructions import COMPUTE_BUDGET, Parsed, parse

MAX_TX_BYTES = 1232  # the network's packet limit for a transaction
# input this long is not decoded at all: base64 of four times the network's limit
MAX_INPUT_CHARS = 4 * (4 * MAX_TX_BYTES + 2) // 3 + 64

# The fee as Agave computes it. Constants: solana-compute-budget's
# compute_budget_limits.rs (github.com/anza-xyz/agave, compute-budget/src/) and
# solana-fee's calculate_signature_fee (fee/src/lib.rs, commit 14c2ee9c).
DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000
MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000  # SIMD-0170
MAX_COMPUTE_UNITS = 1_400_000  # MAX_COMPUTE_UNIT_LIMIT
MICRO_LAMPORTS = 1_000_000  # MICRO_LAMPORTS_PER_LAMPORT
LAMPORTS_PER_SIGNATURE = 5_000
# Programs whose instructions get MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT when no
# limit is set: NON_MIGRATING_BUILTINS_COSTS of builtins-default-costs/src/lib.rs
# (github.com/anza-xyz/agave at 003c671f). Stake, Config and Address Lookup Table
# left that list when they moved to Core BPF: they get 200,000 like any program.
# Vote is left out on purpose: SIMD-0387 takes it off the list behind a feature, so
# it is counted at 200,000, the larger figure, and the cap can never under-count.
BUILTIN_PROGRAMS = frozenset(
    {
        "11111111111111111111111111111111",  # System
        COMPUTE_BUDGET,
        "BPFLoaderUpgradeab1e11111111111111111111111",
        "BPFLoader1111111111111111111111111111111111",  # deprecated loader
        "BPFLoader2111111111111111111111111111111111",
        "LoaderV411111111111111111111111111111111111",
        "KeccakSecp256k11111111111111111111111111111",  # secp256k1 precompile
        "Ed25519SigVerify111111111111111111111111111",  # ed25519 precompile
    }
)
# Precompiles whose signatures the base fee counts (their data's first byte is how
# many): secp256k1, ed25519 and secp256r1 (which is not in the builtin list above).
PRECOMPILES = frozenset(
    {
        "KeccakSecp256k11111111111111111111111111111",
        "Ed25519SigVerify111111111111111111111111111",
        "Secp256r1SigVerify1111111111111111111111111",
    }
)


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
    """The fee the runtime charges the fee payer, and how it comes about."""

    unit_limit: int | None  # None: the runtime default applies
    unit_price_micro_lamports: int | None
    effective_limit: int
    priority_fee_lamports: int  # ceil(price x limit / 10^6)
    signatures: int = 1  # the message's required signatures plus precompile ones
    builtin_instructions: int = 0  # for the default limit: 3,000 units each ...
    other_instructions: int = 0  # ... and 200,000 units each

    @property
    def base_fee_lamports(self) -> int:
        return LAMPORTS_PER_SIGNATURE * self.signatures

    @property
    def total_fee_lamports(self) -> int:
        return self.base_fee_lamports + self.priority_fee_lamports


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


def read(tx_b64: str) -> Unsigned:
    """Base64 text to the transaction it holds, or `NotATransactionError`. Text far
    beyond the network's limit is refused before it is decoded at all."""
    if len(tx_b64) > MAX_INPUT_CHARS:
        raise OversizeError(f"about {len(tx_b64) * 3 // 4} bytes")
    try:
        return read_transaction(tx_b64)
    except ValueError as exc:
        raise NotATransactionError(str(exc)) from None


def _resolver(message: Message | MessageV0, static: list[str]) -> list[str]:
    """Every account an index may name: the `static` keys (the message's own, as
    text), then a label for each one a lookup table loads, in the runtime's order:
    the writable entries of every table, then the read-only entries of every table
    (solana-message's `LoadedAddresses`), not table by table."""
    keys = list(static)
    if isinstance(message, MessageV0):
        lookups = [(str(lu.account_key), lu) for lu in message.address_table_lookups]
        writable = [(t, i) for t, lu in lookups for i in bytes(lu.writable_indexes)]
        readonly = [(t, i) for t, lu in lookups for i in bytes(lu.readonly_indexes)]
        keys += [f"lookup:{table}[{i}]" for table, i in (*writable, *readonly)]
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
    static = [str(k) for k in message.account_keys]
    keys = _resolver(message, static)
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
    precompiled = 0  # signatures precompile instructions verify: each one's first data byte
    known = len(keys)
    for number, ix in enumerate(message.instructions, start=1):
        program = _key(keys, ix.program_id_index)
        # `_key` of each index, inline (an instruction names dozens of accounts)
        accounts = [keys[i] if i < known else f"invalid-index:{i}" for i in bytes(ix.accounts)]
        data = bytes(ix.data)
        if program in PRECOMPILES and data:  # named by a static key (not a lookup's label)
            precompiled += data[0]
        parsed: Parsed = parse(program, data, accounts)
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
        compute_budget=compute_budget(instructions, required, precompiled),
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


def compute_budget(
    instructions: list[Instruction], required_signatures: int = 1, precompile_signatures: int = 0
) -> ComputeBudget:
    """The fee the runtime would charge, as Agave computes it
    (compute-budget-instruction/src/compute_budget_instruction_details.rs):

    - the limit: the SetComputeUnitLimit given, else a default of 3,000 units per
      instruction of a builtin program (Compute Budget's own included) and 200,000
      per other instruction; either way at most 1,400,000;
    - the priority fee: ceil(price x limit / 10^6) lamports, price in micro-lamports;
    - the base fee: 5,000 lamports per signature the message requires, plus one per
      signature a precompile instruction verifies.

    The runtime refuses a transaction with two instructions of one compute-budget kind;
    here the first counts and the `fee` rule refuses the duplicate."""
    limit: int | None = None
    price: int | None = None
    builtins = others = 0
    for ix in instructions:
        if ix.program in BUILTIN_PROGRAMS:
            builtins += 1
        else:
            others += 1
        if ix.program != COMPUTE_BUDGET or ix.malformed:
            continue
        fields = dict(ix.fields)
        if ix.name == "set_compute_unit_limit" and limit is None:
            limit = int(fields["units"])
        elif ix.name == "set_compute_unit_price" and price is None:
            price = int(fields["micro_lamports"])
    default = MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT * builtins
    default += DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT * others
    effective = min(limit if limit is not None else default, MAX_COMPUTE_UNITS)
    fee = -(-(price or 0) * effective // MICRO_LAMPORTS)
    signatures = required_signatures + precompile_signatures
    return ComputeBudget(limit, price, effective, fee, signatures, builtins, others)
