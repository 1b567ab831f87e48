"""Decoding the instructions of the programs txguard understands.

Each decoder turns an instruction's data and resolved accounts into a
`Parsed`: a readable name, its fields, and named *roles* (``from``, ``to``,
``delegate``, ``destination``...) that the rules look at. Layouts are the
programs' own: System uses a u32 little-endian tag and bincode fields; SPL
Token, Token-2022 and Compute Budget a one-byte tag; Jupiter's Anchor programs
an 8-byte discriminator and Borsh (daemon/txguard/jupiter.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from jupcron.chain.programs import TOKEN as TOKEN
from jupcron.chain.programs import TOKEN_2022 as TOKEN_2022
from jupcron.chain.programs import TOKEN_PROGRAMS as TOKEN_PROGRAMS
from jupcron.txguard import jupiter, token
from jupcron.txguard.borsh import Reader

SYSTEM = "11111111111111111111111111111111"
COMPUTE_BUDGET = "ComputeBudget111111111111111111111111111111"
ASSOCIATED_TOKEN = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"  # noqa: S105 (a program id, not a secret)
MEMO = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
WRAPPED_SOL = "So11111111111111111111111111111111111111112"


@dataclass(frozen=True)
class Parsed:
    """What one instruction does, as far as we can tell."""

    name: str
    fields: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    malformed: bool = False
    effect: str = ""  # token programs: a `token.Effect`
    cosigners: tuple[str, ...] = ()  # token programs: multisig signers after the authority


Decoder = Callable[[bytes, Sequence[str]], Parsed]


def _roles(accounts: Sequence[str], *names: str) -> dict[str, str]:
    return {name: accounts[i] for i, name in enumerate(names) if name and i < len(accounts)}


# --- System program -------------------------------------------------------

_SYSTEM_NAMES = {
    0: "create_account",
    1: "assign",
    2: "transfer",
    3: "create_account_with_seed",
    4: "advance_nonce_account",
    5: "withdraw_nonce_account",
    6: "initialize_nonce_account",
    7: "authorize_nonce_account",
    8: "allocate",
    9: "allocate_with_seed",
    10: "assign_with_seed",
    11: "transfer_with_seed",
    12: "upgrade_nonce_account",
    13: "create_account_allow_prefund",
}
NONCE_INSTRUCTIONS = frozenset(
    {
        "advance_nonce_account",
        "withdraw_nonce_account",
        "initialize_nonce_account",
        "authorize_nonce_account",
        "upgrade_nonce_account",
    }
)


def _system(data: bytes, accounts: Sequence[str]) -> Parsed:
    """System instructions as `solana_system_interface::instruction::SystemInstruction`
    defines them (github.com/anza-xyz/solana-sdk, system-interface/src/instruction.rs;
    the program's IDL: github.com/solana-program/system, idl.json): a u32 tag, then
    bincode fields (a seed is a u64 length and UTF-8)."""
    r = Reader(data, 0)
    tag = r.u32()
    if tag not in _SYSTEM_NAMES:
        return Parsed(f"unknown #{tag}", malformed=True)
    name = _SYSTEM_NAMES[tag]
    f: dict[str, str] = {}
    roles: dict[str, str] = {}
    if tag == 0:
        f = {"lamports": str(r.u64()), "space": str(r.u64()), "owner": r.pubkey()}
        roles = _roles(accounts, "from", "to")
    elif tag == 13:
        # the NEW account comes first; the funder second, and only when lamports > 0
        f = {"lamports": str(r.u64()), "space": str(r.u64()), "owner": r.pubkey()}
        roles = _roles(accounts, "to", "from")
    elif tag == 1:
        f = {"owner": r.pubkey()}
        roles = _roles(accounts, "account")
    elif tag == 2:
        f = {"lamports": str(r.u64())}
        roles = _roles(accounts, "from", "to")
    elif tag == 3:
        f = {"base": r.pubkey(), "seed": r.bincode_string()}
        f |= {"lamports": str(r.u64()), "space": str(r.u64()), "owner": r.pubkey()}
        roles = _roles(accounts, "from", "to", "base")  # base: optional, may be `from`
    elif tag == 4:
        roles = _roles(accounts, "nonce", "recent_blockhashes", "authority")
    elif tag == 5:
        f = {"lamports": str(r.u64())}
        roles = _roles(accounts, "nonce", "to", "recent_blockhashes", "rent", "authority")
    elif tag == 6:
        f = {"authority": r.pubkey()}
        roles = _roles(accounts, "nonce", "recent_blockhashes", "rent")
    elif tag == 7:
        f = {"new_authority": r.pubkey()}
        roles = _roles(accounts, "nonce", "authority")
    elif tag == 8:
        f = {"space": str(r.u64())}
        roles = _roles(accounts, "account")
    elif tag == 9:
        f = {"base": r.pubkey(), "seed": r.bincode_string()}
        f |= {"space": str(r.u64()), "owner": r.pubkey()}
        roles = _roles(accounts, "account", "base")
    elif tag == 10:
        f = {"base": r.pubkey(), "seed": r.bincode_string(), "owner": r.pubkey()}
        roles = _roles(accounts, "account", "base")
    elif tag == 11:
        f = {"lamports": str(r.u64()), "from_seed": r.bincode_string(), "from_owner": r.pubkey()}
        roles = _roles(accounts, "from", "base", "to")
    elif tag == 12:
        roles = _roles(accounts, "nonce")
    return Parsed(name, f, roles)


# --- SPL Token and Token-2022 (daemon/txguard/token.py) ----------------------


def _token_program(token_2022: bool) -> Decoder:
    def decode(data: bytes, accounts: Sequence[str]) -> Parsed:
        ix = token.decode(data, accounts, token_2022=token_2022)
        return Parsed(ix.name, ix.fields, ix.roles, effect=str(ix.effect), cosigners=ix.cosigners)

    return decode


# --- Compute Budget, Associated Token, Memo ---------------------------------


def _compute_budget(data: bytes, accounts: Sequence[str]) -> Parsed:
    r = Reader(data, 0)
    tag = r.u8()
    if tag == 1:
        return Parsed("request_heap_frame", {"bytes": str(r.u32())})
    if tag == 2:
        return Parsed("set_compute_unit_limit", {"units": str(r.u32())})
    if tag == 3:
        return Parsed("set_compute_unit_price", {"micro_lamports": str(r.u64())})
    if tag == 4:
        return Parsed("set_loaded_accounts_data_size_limit", {"bytes": str(r.u32())})
    return Parsed(f"unknown #{tag}", malformed=True)


_ATA_CREATE_ROLES = ("funder", "account", "wallet", "mint", "system", "token_program")
_ATA_MODES = ("always", "idempotent")


def _associated_token(data: bytes, accounts: Sequence[str]) -> Parsed:
    """`AssociatedTokenAccountInstruction` (github.com/solana-program/associated-token-account,
    interface/src/instruction.rs; `create_with_args` from its idl.json). Borsh: the data is
    exactly the tag and its arguments, and empty data means `create` (program/src/processor.rs)."""
    if len(data) <= 1:
        tag = data[0] if data else 0
        if tag in (0, 1):
            return Parsed(
                ("create", "create_idempotent")[tag], {}, _roles(accounts, *_ATA_CREATE_ROLES)
            )
        if tag == 2:
            roles = _roles(
                accounts, "nested", "nested_mint", "destination", "owner_account", "owner_mint",
                "wallet", "token_program", "nested_token_program",
            )  # fmt: skip
            return Parsed("recover_nested", {}, roles)
    elif data[0] == 3 and len(data) == 7 and data[1] < len(_ATA_MODES):
        r = Reader(data, 1)
        fields = {"mode": _ATA_MODES[r.u8()], "bump": str(r.u8()), "account_len": str(r.u32())}
        roles = _roles(accounts, *_ATA_CREATE_ROLES, "rent")
        return Parsed("create_with_args", fields, roles)
    return Parsed(f"unknown #{data[0]}", {"data_bytes": str(len(data))}, malformed=True)


def _memo(data: bytes, accounts: Sequence[str]) -> Parsed:
    text = data.decode("utf-8", "replace")
    return Parsed("memo", {"text": text[:80]})


DECODERS: dict[str, Decoder] = {
    SYSTEM: _system,
    TOKEN: _token_program(token_2022=False),
    TOKEN_2022: _token_program(token_2022=True),
    COMPUTE_BUDGET: _compute_budget,
    ASSOCIATED_TOKEN: _associated_token,
    MEMO: _memo,
}


def _jupiter(program: str) -> Decoder:
    def decode(data: bytes, accounts: Sequence[str]) -> Parsed:
        ix = jupiter.decode(program, data, accounts)
        return Parsed(ix.name, ix.fields, ix.roles, ix.malformed)

    return decode


# Jupiter's programs: decoded from their published interfaces (daemon/txguard/jupiter.py)
DECODERS.update({program: _jupiter(program) for program in jupiter.PROGRAMS})


def parse(program: str, data: bytes, accounts: Sequence[str]) -> Parsed:
    """Decode one instruction; unknown programs give a generic description."""
    decoder = DECODERS.get(program)
    if decoder is None:
        tag = data[:8].hex() if data else "-"
        return Parsed("call", {"data_bytes": str(len(data)), "tag": tag})
    try:
        return decoder(data, accounts)
    except (ValueError, IndexError):
        return Parsed("malformed", {"data_bytes": str(len(data))}, malformed=True)
