"""Jupiter's order programs: DCA (Recurring by time), Limit Order v2 (Trigger)
and Value Average (Recurring by price, which has no public interface).

DCA (DCA265Vj…), from the Anchor IDL in jup-ag/dca-cpi (idl.json) and the
instruction set of its on-chain IDL as carried by sevenlabs-hq/carbon
(decoders/jupiter-dca-decoder). The DCA account is a PDA of
("dca", user, input mint, output mint, application_idx as u64 LE); its output
is paid to the user's own token account by the program's keeper, so the
`owner` (user) is the account that decides where the proceeds go.

Limit Order v2 (j1o2qRpj…), from the on-chain IDL as carried by
sevenlabs-hq/carbon (decoders/jupiter-limit-order-2-decoder). `cancel_order`
returns the unfilled input to maker_input_mint_account, or, when that optional
account is absent (a SOL order), as lamports to the maker; the order's rent
always goes to the maker.
"""

from __future__ import annotations

import struct
from functools import lru_cache

from solders.pubkey import Pubkey

from jupcron.txguard.anchor import (
    ArgsReader,
    Fields,
    InstructionSpec,
    Roles,
    accounts,
    arg,
    by_discriminator,
    optional,
)
from jupcron.txguard.borsh import Reader

DCA_PROGRAM = "DCA265Vj8a9CEuX1eb1LWRnDT7uK6q1xMipnNyatn23M"
LIMIT_ORDER_PROGRAM = "j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X"
VALUE_AVERAGE_PROGRAM = "VALaaymxQh2mNy2trH9jUqHT1mTow76wpTcGmSWSwJe"

VALUE_AVERAGE_UNKNOWN = (
    "no public interface (IDL) of the Value Average program could be found: "
    "its instructions cannot be read"
)

# --- DCA ------------------------------------------------------------------------


@lru_cache(maxsize=256)
def dca_order(user: str, input_mint: str, output_mint: str, application_idx: int) -> str | None:
    """The DCA account of (user, input mint, output mint, application_idx): the
    program's PDA of ("dca", user, input mint, output mint, idx as u64 LE), which it
    checks when the order opens (held to a mainnet order in test_emulator_jupiter.py);
    None when a key is not a public key or idx is not a u64."""
    try:
        keys = [bytes(Pubkey.from_string(k)) for k in (user, input_mint, output_mint)]
        idx = struct.pack("<Q", application_idx)
    except (ValueError, struct.error):
        return None
    seeds = [b"dca", *keys, idx]
    return str(Pubkey.find_program_address(seeds, Pubkey.from_string(DCA_PROGRAM))[0])


def _open_dca(*, v1: bool) -> ArgsReader:
    def read(r: Reader, f: Fields) -> None:
        f["application_idx"] = str(r.u64())
        f["in_amount"] = str(r.u64())
        f["in_amount_per_cycle"] = str(r.u64())
        f["cycle_frequency"] = str(r.i64())
        f["min_out_amount"] = optional(r.option_u64())
        f["max_out_amount"] = optional(r.option_u64())
        f["start_at"] = optional(r.option_i64())
        if v1:
            close = r.option_bool()
            f["close_wsol_in_ata"] = "none" if close is None else str(close).lower()

    return read


def _withdraw(r: Reader, f: Fields) -> None:
    f["amount"] = str(r.u64())
    f["withdrawal"] = ("in", "out")[r.variant(2)]


def _withdraw_to(f: Fields, roles: Roles) -> None:
    """A withdrawal pays into the user's account of the side it names."""
    side = roles.pop("in_destination", None), roles.pop("out_destination", None)
    chosen = side[0] if f.get("withdrawal") == "in" else side[1]
    if chosen is not None:
        roles["destination"] = chosen


def _user_pays(f: Fields, roles: Roles) -> None:
    if "owner" in roles:
        roles["payer"] = roles["owner"]


_DCA_SPECS = [
    InstructionSpec(
        "open_dca",
        accounts("order owner input_mint output_mint source vault out_vault - - - - -"),
        _open_dca(v1=True),
        _user_pays,
    ),
    InstructionSpec(
        "open_dca_v2",
        accounts("order owner payer input_mint output_mint source vault out_vault - - - - -"),
        _open_dca(v1=False),
    ),
    InstructionSpec(
        "close_dca",
        accounts(
            "owner order input_mint output_mint vault out_vault refund_to destination - - - - -"
        ),
    ),
    InstructionSpec(
        "withdraw",
        accounts(
            "owner order input_mint output_mint vault in_destination? out_destination? - - - - -"
        ),
        _withdraw,
        _withdraw_to,
    ),
    InstructionSpec(
        "deposit", accounts("owner order vault source token_program - -"), arg("in_amount")
    ),
    # the keeper's and the admin's instructions: never signed by a user
    InstructionSpec(
        "withdraw_fees", accounts("admin mint - fee_vault admin_fee_account"), arg("amount")
    ),
    InstructionSpec("initiate_flash_fill", accounts("keeper order input_mint keeper_account")),
    InstructionSpec(
        "fulfill_flash_fill", accounts("keeper order input_mint output_mint"), arg("repay_amount")
    ),
    InstructionSpec("initiate_dlmm_fill", accounts("keeper order input_mint keeper_account")),
    InstructionSpec(
        "fulfill_dlmm_fill", accounts("keeper order input_mint output_mint"), arg("repay_amount")
    ),
    InstructionSpec("transfer", accounts("keeper order user output_mint out_vault destination?")),
    InstructionSpec(
        "end_and_close",
        accounts("keeper order input_mint output_mint vault out_vault user"),
    ),
]

# --- Limit Order v2 ---------------------------------------------------------------


def _initialize_order(r: Reader, f: Fields) -> None:
    f["unique_id"] = str(r.u64())
    f["in_amount"] = str(r.u64())  # making_amount
    f["out_amount"] = str(r.u64())  # taking_amount
    f["expired_at"] = optional(r.option_i64())
    f["fee_bps"] = optional(r.option_u16())


def _refund(f: Fields, roles: Roles) -> None:
    """Without maker_input_mint_account the unfilled input returns to the maker as lamports."""
    if "refund_to" not in roles and "owner" in roles:
        roles["refund_to"] = roles["owner"]


def _fees(r: Reader, f: Fields) -> None:
    f["normal_fee_bps"] = str(r.u16())
    f["stable_fee_bps"] = str(r.u16())


_LIMIT_SPECS = [
    InstructionSpec(
        "initialize_order",
        accounts(
            "payer owner order vault source? fee_config fee_account? input_mint output_mint"
            " input_token_program output_token_program - - - -"
        ),
        _initialize_order,
    ),
    InstructionSpec(
        "cancel_order",
        accounts("signer owner order vault refund_to? input_mint input_token_program - -"),
        None,
        _refund,
    ),
    # takers' and the admin's instructions
    InstructionSpec(
        "pre_flash_fill_order",
        accounts("taker order vault taker_account input_mint"),
        arg("making_amount"),
    ),
    InstructionSpec(
        "flash_fill_order", accounts("taker maker order vault"), arg("max_taking_amount")
    ),
    InstructionSpec("update_fee", accounts("admin fee_config -"), _fees),
    InstructionSpec("withdraw_fee", accounts("admin fee_config fee_vault admin_account")),
]

DCA_SPECS = by_discriminator(_DCA_SPECS)
LIMIT_ORDER_SPECS = by_discriminator(_LIMIT_SPECS)

RECURRING_OPEN = frozenset({"open_dca", "open_dca_v2", "deposit"})
# the opens that create a new order (Anchor `init`: the order account cannot exist yet);
# `deposit` funds an order that exists, which a recurring plan never signs
RECURRING_NEW = frozenset({"open_dca", "open_dca_v2"})
RECURRING_CLOSE = frozenset({"close_dca", "withdraw"})
# what a recurring cancel signs (cancelOrder answers close_dca): a `withdraw` takes
# funds out but leaves the order open and spending, so it is no cancel
RECURRING_CANCEL = frozenset({"close_dca"})
TRIGGER_OPEN = frozenset({"initialize_order"})
TRIGGER_CANCEL = frozenset({"cancel_order"})
