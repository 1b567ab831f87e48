"""SPL Token and Token-2022 instructions, decoded completely.

Every instruction of both programs gets a name, its amounts, its accounts by
role, the account that authorises it (``authority``: multisig co-signers follow
it in the account list) and an *effect*: what it does to value. The rules judge
effects, not opcodes, so a new form of an old effect (a checked variant, a
``with_fee`` variant, a multisig owner) cannot slip past them.

Layouts are the programs' own: a one-byte tag, little-endian integers, a
``COption<Pubkey>`` as one byte then 32; Token-2022 extensions carry a second
byte (their sub-instruction), decoded where it moves value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from daemon.txguard.borsh import Reader


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
    args: tuple[str, ...] = ()  # "amount" (u64), "decimals" (u8), "owner" (pubkey) ...


_M = ("mint",)
_BASE: dict[int, _Layout] = {
    0: _Layout("initialize_mint", ("mint", "rent"), None, Effect.CREATES),
    1: _Layout("initialize_account", ("account", "mint", "owner", "rent"), None, Effect.CREATES),
    2: _Layout("initialize_multisig", ("multisig", "rent"), None, Effect.CREATES),
    3: _Layout("transfer", ("source", "destination", "authority"), 2, Effect.MOVES, ("amount",)),
    4: _Layout("approve", ("source", "delegate", "authority"), 2, Effect.DELEGATES, ("amount",)),
    5: _Layout("revoke", ("source", "authority"), 1, Effect.HARMLESS),
    6: _Layout("set_authority", ("account", "authority"), 1, Effect.REAUTHORISES),
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
    17: _Layout("sync_native", ("account",), None, Effect.HARMLESS),
    18: _Layout("initialize_account3", ("account", "mint"), None, Effect.CREATES, ("owner",)),
    19: _Layout("initialize_multisig2", ("multisig",), None, Effect.CREATES),
    20: _Layout("initialize_mint2", _M, None, Effect.CREATES),
    21: _Layout("get_account_data_size", _M, None, Effect.HARMLESS),
    22: _Layout("initialize_immutable_owner", ("account",), None, Effect.HARMLESS),
    23: _Layout("amount_to_ui_amount", _M, None, Effect.HARMLESS),
    24: _Layout("ui_amount_to_amount", _M, None, Effect.HARMLESS),
}

# Token-2022 only, from tag 25 on. The extension families (one tag, a sub-instruction
# byte) are judged as one unit, except the ones that move value, decoded below.
_EXTENSIONS: dict[int, str] = {
    25: "initialize_mint_close_authority",
    26: "transfer_fee_extension",
    27: "confidential_transfer_extension",
    28: "default_account_state_extension",
    29: "reallocate",
    30: "memo_transfer_extension",
    31: "create_native_mint",
    32: "initialize_non_transferable_mint",
    33: "interest_bearing_mint_extension",
    34: "cpi_guard_extension",
    35: "initialize_permanent_delegate",
    36: "transfer_hook_extension",
    37: "confidential_transfer_fee_extension",
    38: "withdraw_excess_lamports",
    39: "metadata_pointer_extension",
    40: "group_pointer_extension",
    41: "group_member_pointer_extension",
    42: "confidential_mint_burn_extension",
    43: "scaled_ui_amount_extension",
    44: "pausable_extension",
}
_VALUE_EXTENSIONS: dict[tuple[int, int | None], _Layout] = {
    (25, None): _Layout("initialize_mint_close_authority", _M, None, Effect.CREATES),
    (26, 1): _Layout(
        "transfer_checked_with_fee",
        ("source", "mint", "destination", "authority"),
        3,
        Effect.MOVES,
        ("amount", "decimals", "fee"),
    ),
    (26, 2): _Layout(
        "withdraw_withheld_tokens_from_mint",
        ("mint", "destination", "authority"),
        2,
        Effect.WITHDRAWS,
    ),
    (26, 3): _Layout(
        "withdraw_withheld_tokens_from_accounts",
        ("mint", "destination", "authority"),
        2,
        Effect.WITHDRAWS,
    ),
    (29, None): _Layout(
        "reallocate", ("account", "payer", "system", "authority"), 3, Effect.PAYS_RENT
    ),
    (31, None): _Layout("create_native_mint", ("payer", "mint", "system"), None, Effect.PAYS_RENT),
    (38, None): _Layout(
        "withdraw_excess_lamports", ("source", "destination", "authority"), 2, Effect.WITHDRAWS
    ),
}
_AUTHORITY_TYPES = (
    "mint_tokens",
    "freeze_account",
    "account_owner",
    "close_account",
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
)


@dataclass(frozen=True)
class TokenInstruction:
    name: str
    effect: Effect
    fields: dict[str, str]
    roles: dict[str, str]
    cosigners: tuple[str, ...]  # multisig signers after the authority


def _layout(tag: int, data: bytes, token_2022: bool) -> _Layout:
    if tag in _BASE:
        return _BASE[tag]
    if not token_2022 or tag not in _EXTENSIONS:
        raise ValueError(f"unknown token instruction #{tag}")
    sub = data[1] if len(data) > 1 else None
    for key in ((tag, sub), (tag, None)):
        if key in _VALUE_EXTENSIONS:
            return _VALUE_EXTENSIONS[key]
    name = _EXTENSIONS[tag] + (f"/{sub}" if sub is not None else "")
    return _Layout(name, (), None, Effect.EXTENSION)


def decode(data: bytes, accounts: Sequence[str], *, token_2022: bool) -> TokenInstruction:
    """One instruction of either token program; ValueError when it cannot be read
    (an unknown tag, short data): the caller treats that as malformed."""
    r = Reader(data, 0)
    tag = r.u8()
    layout = _layout(tag, data, token_2022)
    if tag == 26:
        r.u8()  # the extension's sub-instruction byte
    fields: dict[str, str] = {}
    if layout.effect is Effect.EXTENSION:
        fields["extension"] = layout.name
    for arg in layout.args:
        if arg == "owner":
            fields[arg] = r.pubkey()
        elif arg == "decimals":
            fields[arg] = str(r.u8())
        else:
            fields[arg] = str(r.u64())
    if tag == 6:
        kind = r.u8()
        fields["authority_type"] = (
            _AUTHORITY_TYPES[kind] if kind < len(_AUTHORITY_TYPES) else f"#{kind}"
        )
        fields["new_authority"] = r.pubkey() if r.u8() else "none"
    roles = {name: accounts[i] for i, name in enumerate(layout.roles) if i < len(accounts)}
    if tag == 1 and "owner" in roles:
        fields["owner"] = roles["owner"]
    cosigners: tuple[str, ...] = ()
    if layout.authority is not None and layout.authority < len(accounts):
        cosigners = tuple(accounts[layout.authority + 1 :])
    return TokenInstruction(layout.name, layout.effect, fields, roles, cosigners)
