"""SPL Token and Token-2022 instructions, decoded completely.

Every instruction of both programs gets a name, its amounts, its accounts by
role, the account that authorises it (``authority``: multisig co-signers follow
it in the account list) and an *effect*: what it does to value. The rules judge
effects, not opcodes, so a new form of an old effect (a checked variant, a
``with_fee`` variant, a multisig owner) cannot slip past them.

Layouts are the programs' own published interfaces (github.com/solana-program/
token and token-2022, `interface/src/instruction.rs` and `idl.json`): a one-byte
tag, little-endian integers, a ``COption`` as a tag byte (0 or 1, nothing else)
then the value; Token-2022 extensions carry a second byte, their
sub-instruction, each named in daemon/txguard/token_extensions.py. A tag or
sub-instruction the interface does not define is refused, never guessed;
tests/unit/test_txguard_interfaces.py holds these tables to the published facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from jupcron.txguard.borsh import Reader
from jupcron.txguard.token_extensions import FAMILIES, SUB_INSTRUCTIONS


class Effect(StrEnum):
    """What an instruction does to the value in the accounts it names."""

    MOVES = "moves"  # tokens from `source` to `destination`
    BURNS = "burns"  # tokens destroyed
    DELEGATES = "delegates"  # someone else may spend them
    REAUTHORISES = "reauthorises"  # an authority handed over
    CLOSES = "closes"  # account closed, its lamports to `destination`
    FREEZES = "freezes"  # freeze or thaw
    MINTS = "mints"  # new tokens minted
    WITHDRAWS = "withdraws"  # lamports or withheld fees to `destination`
    PAYS_RENT = "pays_rent"  # `payer` funds more space for `account`
    CREATES = "creates"  # initialises an account, mint or multisig
    HARMLESS = "harmless"  # moves nothing: revoke, sync_native, queries
    EXTENSION = "extension"  # a Token-2022 extension instruction we do not judge


@dataclass(frozen=True)
class _Layout:
    name: str
    roles: tuple[str, ...]
    authority: int | None  # index of the authorising account; co-signers follow
    effect: Effect
    args: tuple[str, ...] = ()  # argument names, read by their type in ARG_TYPES


# Every argument by the type its interface gives it. "option<T>" is a COption: a
# tag byte (0 none, 1 some, anything else refused) then T; "string<rest>" the
# remaining bytes as UTF-8; "array<u16>" the remaining bytes as u16 extension types.
ARG_TYPES: dict[str, str] = {
    "amount": "u64",
    "fee": "u64",
    "decimals": "u8",
    "m": "u8",
    "num_token_accounts": "u8",
    "owner": "pubkey",
    "mint_authority": "pubkey",
    "delegate": "pubkey",
    "freeze_authority": "option<pubkey>",
    "close_authority": "option<pubkey>",
    "new_authority": "option<pubkey>",
    "authority_type": "authority_type",
    "lamports": "option<u64>",  # unwrap_lamports' `amount`: none means all of it
    "ui_amount": "string<rest>",
    "extension_types": "array<u16>",
}

_M = ("mint",)
_MULTISIG_ARGS = ("m",)
_MINT_ARGS = ("decimals", "mint_authority", "freeze_authority")
# SPL Token (interface/src/instruction.rs of github.com/solana-program/token) and the
# same tags in Token-2022, which keeps SPL Token's instruction set as a subset.
_BASE: dict[int, _Layout] = {
    0: _Layout("initialize_mint", ("mint", "rent"), None, Effect.CREATES, _MINT_ARGS),
    1: _Layout("initialize_account", ("account", "mint", "owner", "rent"), None, Effect.CREATES),
    2: _Layout("initialize_multisig", ("multisig", "rent"), None, Effect.CREATES, _MULTISIG_ARGS),
    3: _Layout("transfer", ("source", "destination", "authority"), 2, Effect.MOVES, ("amount",)),
    4: _Layout("approve", ("source", "delegate", "authority"), 2, Effect.DELEGATES, ("amount",)),
    5: _Layout("revoke", ("source", "authority"), 1, Effect.HARMLESS),
    6: _Layout(
        "set_authority",
        ("account", "authority"),
        1,
        Effect.REAUTHORISES,
        ("authority_type", "new_authority"),
    ),
    7: _Layout("mint_to", ("mint", "destination", "authority"), 2, Effect.MINTS, ("amount",)),
    8: _Layout("burn", ("account", "mint", "authority"), 2, Effect.BURNS, ("amount",)),
    9: _Layout("close_account", ("account", "destination", "authority"), 2, Effect.CLOSES),
    10: _Layout("freeze_account", ("account", "mint", "authority"), 2, Effect.FREEZES),
    11: _Layout("thaw_account", ("account", "mint", "authority"), 2, Effect.FREEZES),
    12: _Layout(
        "transfer_checked",
        ("source", "mint", "destination", "authority"),
        3,
        Effect.MOVES,
        ("amount", "decimals"),
    ),
    13: _Layout(
        "approve_checked",
        ("source", "mint", "delegate", "authority"),
        3,
        Effect.DELEGATES,
        ("amount", "decimals"),
    ),
    14: _Layout(
        "mint_to_checked",
        ("mint", "destination", "authority"),
        2,
        Effect.MINTS,
        ("amount", "decimals"),
    ),
    15: _Layout(
        "burn_checked", ("account", "mint", "authority"), 2, Effect.BURNS, ("amount", "decimals")
    ),
    16: _Layout(
        "initialize_account2", ("account", "mint", "rent"), None, Effect.CREATES, ("owner",)
    ),
    17: _Layout("sync_native", ("account", "rent"), None, Effect.HARMLESS),
    18: _Layout("initialize_account3", ("account", "mint"), None, Effect.CREATES, ("owner",)),
    19: _Layout("initialize_multisig2", ("multisig",), None, Effect.CREATES, _MULTISIG_ARGS),
    20: _Layout("initialize_mint2", _M, None, Effect.CREATES, _MINT_ARGS),
    21: _Layout("get_account_data_size", _M, None, Effect.HARMLESS),
    22: _Layout("initialize_immutable_owner", ("account",), None, Effect.HARMLESS),
    23: _Layout("amount_to_ui_amount", _M, None, Effect.HARMLESS, ("amount",)),
    24: _Layout("ui_amount_to_amount", _M, None, Effect.HARMLESS, ("ui_amount",)),
    # added to SPL Token with its p-token rewrite (idl.json 3.3.0); Token-2022 has them too
    38: _Layout(
        "withdraw_excess_lamports", ("source", "destination", "authority"), 2, Effect.WITHDRAWS
    ),
    45: _Layout(
        "unwrap_lamports",
        ("source", "destination", "authority"),
        2,
        Effect.WITHDRAWS,
        ("lamports",),
    ),
    # a batch of instructions of this program, packed in the data: judged as one opaque
    # unit (refused when it touches our accounts), never looked into
    255: _Layout("batch", (), None, Effect.EXTENSION),
}

# Token-2022 only (interface/src/instruction.rs of github.com/solana-program/token-2022);
# the tags that carry a sub-instruction byte are in daemon/txguard/token_extensions.py.
_TOKEN_2022: dict[int, _Layout] = {
    21: _Layout("get_account_data_size", _M, None, Effect.HARMLESS, ("extension_types",)),
    25: _Layout("initialize_mint_close_authority", _M, None, Effect.CREATES, ("close_authority",)),
    29: _Layout(
        "reallocate",
        ("account", "payer", "system", "authority"),
        3,
        Effect.PAYS_RENT,
        ("extension_types",),
    ),
    31: _Layout("create_native_mint", ("payer", "mint", "system"), None, Effect.PAYS_RENT),
    32: _Layout("initialize_non_transferable_mint", _M, None, Effect.EXTENSION),
    35: _Layout("initialize_permanent_delegate", _M, None, Effect.EXTENSION, ("delegate",)),
}
_AUTHORITY_TYPES = (
    "mint_tokens",
    "freeze_account",
    "account_owner",
    "close_account",
    # Token-2022 only from here (SPL Token refuses these)
    "transfer_fee_config",
    "withheld_withdraw",
    "close_mint",
    "interest_rate",
    "permanent_delegate",
    "confidential_transfer_mint",
    "transfer_hook_program_id",
    "confidential_transfer_fee_config",
    "metadata_pointer",
    "group_pointer",
    "group_member_pointer",
    "scaled_ui_amount",
    "pause",
    "permissioned_burn",
)
_SPL_AUTHORITY_TYPES = 4


@dataclass(frozen=True)
class TokenInstruction:
    name: str
    effect: Effect
    fields: dict[str, str]
    roles: dict[str, str]
    cosigners: tuple[str, ...]  # multisig signers after the authority


def _layout(tag: int, data: bytes, token_2022: bool) -> _Layout:
    if token_2022 and tag in _TOKEN_2022:
        return _TOKEN_2022[tag]
    if tag in _BASE:
        return _BASE[tag]
    if token_2022 and tag in FAMILIES:
        if len(data) < 2:
            raise ValueError(f"token-2022 {FAMILIES[tag]} without its sub-instruction")
        entry = SUB_INSTRUCTIONS.get((tag, data[1]))
        if entry is None:
            raise ValueError(f"unknown token-2022 {FAMILIES[tag]} instruction #{data[1]}")
        name, roles, authority, effect, args = entry
        return _Layout(name, tuple(roles.split()), authority, Effect(effect), tuple(args.split()))
    raise ValueError(f"unknown token instruction #{tag}")


def _arg(r: Reader, kind: str, token_2022: bool) -> str:
    if kind == "u64":
        return str(r.u64())
    if kind == "u8":
        return str(r.u8())
    if kind == "pubkey":
        return r.pubkey()
    if kind in ("option<pubkey>", "option<u64>"):
        present = r.u8()
        if present > 1:
            raise ValueError(f"a COption tag of {present}")
        if not present:
            return "none" if kind == "option<pubkey>" else "all"
        return r.pubkey() if kind == "option<pubkey>" else str(r.u64())
    if kind == "authority_type":
        index = r.u8()
        if index >= (len(_AUTHORITY_TYPES) if token_2022 else _SPL_AUTHORITY_TYPES):
            raise ValueError(f"unknown authority type #{index}")
        return _AUTHORITY_TYPES[index]
    rest = r.take(r.left)
    if kind == "string<rest>":
        return rest.decode("utf-8")  # the programs refuse text that is not UTF-8
    if len(rest) % 2:
        raise ValueError("extension types are u16 values")
    return ",".join(str(int.from_bytes(rest[i : i + 2], "little")) for i in range(0, len(rest), 2))


def decode(data: bytes, accounts: Sequence[str], *, token_2022: bool) -> TokenInstruction:
    """One instruction of either token program; ValueError when it cannot be read
    (an unknown tag or sub-instruction, short data, a bad option tag): the caller
    treats that as malformed."""
    r = Reader(data, 0)
    tag = r.u8()
    layout = _layout(tag, data, token_2022)
    if token_2022 and tag in FAMILIES:
        r.u8()  # the extension's sub-instruction byte
    fields: dict[str, str] = {}
    if layout.effect is Effect.EXTENSION:
        fields["extension"] = layout.name
    for arg in layout.args:
        value = _arg(r, ARG_TYPES[arg], token_2022)
        fields["amount" if arg == "lamports" else arg] = value
    roles = {name: accounts[i] for i, name in enumerate(layout.roles) if i < len(accounts)}
    if tag == 1 and "owner" in roles:
        fields["owner"] = roles["owner"]
    cosigners: tuple[str, ...] = ()
    if layout.authority is not None and layout.authority < len(accounts):
        cosigners = tuple(accounts[layout.authority + 1 :])
    return TokenInstruction(layout.name, layout.effect, fields, roles, cosigners)
