"""Jupiter Aggregator v6 (JUP6Lkb…): the route instructions and their helpers.

From the program's on-chain Anchor IDL (see docs/txguard.md). Ten route forms:

- v1: `route`, `route_with_token_ledger`, `exact_out_route`,
  `shared_accounts_route`, `shared_accounts_route_with_token_ledger`,
  `shared_accounts_exact_out_route`. Their arguments start with the route plan,
  so its every step must be sized before the amounts can be read; a step of a
  kind the IDL does not list leaves the amounts undecoded (`cannot_decode`).
  The token-ledger forms carry no input amount: they swap whatever the token
  ledger measured (set by `set_token_ledger` earlier in the transaction).
- v2: `route_v2`, `exact_out_route_v2`, `shared_accounts_route_v2`,
  `shared_accounts_exact_out_route_v2`. Amounts come first, then the plan, so
  an unlisted step kind only leaves the `route` field undecoded.

Roles: `owner` is user_transfer_authority; `source` the account the input
leaves; `destination` the account that receives the output (the optional
destination_token_account when given, else user_destination_token_account,
which is also `user_destination`); `fee_account` the platform fee account.
Derived fields: `min_out_amount` (exact in: quoted out less slippage, rounded
down) and `max_in_amount` (exact out: quoted in plus slippage, rounded up).
"""

from __future__ import annotations

from jupcron.txguard.anchor import (
    ArgsReader,
    Fields,
    InstructionSpec,
    Roles,
    accounts,
    arg,
    by_discriminator,
)
from jupcron.txguard.borsh import Reader
from jupcron.txguard.jupiter_swap import UnknownSwapError, read_route_plan

PROGRAM = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"
BPS = 10_000


def _plan(r: Reader, f: Fields, *, v2: bool) -> None:
    amms = read_route_plan(r, v2=v2)
    f["route_steps"] = str(len(amms))
    f["route"] = " > ".join(amms)


def _exact_in(f: Fields, quoted_out: int, slippage: int) -> None:
    f["swap_mode"] = "ExactIn"
    f["out_amount"] = str(quoted_out)
    f["slippage_bps"] = str(slippage)
    f["min_out_amount"] = str(quoted_out * max(BPS - slippage, 0) // BPS)


def _exact_out(f: Fields, out: int, quoted_in: int, slippage: int) -> None:
    f["swap_mode"] = "ExactOut"
    f["out_amount"] = str(out)
    f["quoted_in_amount"] = str(quoted_in)
    f["slippage_bps"] = str(slippage)
    f["max_in_amount"] = str(-(-quoted_in * (BPS + slippage) // BPS))


def _v1(*, shared: bool, ledger: bool = False, exact_out: bool = False) -> ArgsReader:
    def read(r: Reader, f: Fields) -> None:
        if shared:
            f["id"] = str(r.u8())
        _plan(r, f, v2=False)
        if exact_out:
            out, quoted_in = r.u64(), r.u64()
            _exact_out(f, out, quoted_in, r.u16())
        else:
            if ledger:
                f["in_amount_source"] = "token_ledger"
            else:
                f["in_amount"] = str(r.u64())
            quoted_out = r.u64()
            _exact_in(f, quoted_out, r.u16())
        f["platform_fee_bps"] = str(r.u8())

    return read


def _v2(*, shared: bool, exact_out: bool = False) -> ArgsReader:
    def read(r: Reader, f: Fields) -> None:
        if shared:
            f["id"] = str(r.u8())
        first, second = r.u64(), r.u64()
        slippage = r.u16()
        if exact_out:
            _exact_out(f, first, second, slippage)
        else:
            f["in_amount"] = str(first)
            _exact_in(f, second, slippage)
        f["platform_fee_bps"] = str(r.u16())
        f["positive_slippage_bps"] = str(r.u16())
        try:
            _plan(r, f, v2=True)
        except UnknownSwapError as exc:  # the amounts and accounts above are still exact
            f["route"] = f"cannot decode: {exc}"
            r.at = len(r.data)

    return read


def _destination(f: Fields, roles: Roles) -> None:
    """Without the optional destination account, the output stays in user_destination."""
    if "destination" not in roles and "user_destination" in roles:
        roles["destination"] = roles["user_destination"]


def _owner_pays(f: Fields, roles: Roles) -> None:
    if "owner" in roles:
        roles["payer"] = roles["owner"]


def _owner_refunded(f: Fields, roles: Roles) -> None:
    if "owner" in roles:
        roles["refund_to"] = roles["owner"]


def _close_token(r: Reader, f: Fields) -> None:
    f["id"] = str(r.u8())
    f["burn_all"] = str(r.boolean()).lower()


_ROUTE = "token_program owner source user_destination destination? output_mint"
_EXACT_OUT = "token_program owner source user_destination destination? input_mint output_mint"
_SHARED = (
    "token_program program_authority owner source program_source program_destination"
    " destination input_mint output_mint fee_account? token_2022_program?"
)
_ROUTE_V2 = (
    "owner source user_destination input_mint output_mint input_token_program"
    " output_token_program destination? - -"
)
_SHARED_V2 = (
    "program_authority owner source program_source program_destination destination"
    " input_mint output_mint input_token_program output_token_program - -"
)

SPECS = by_discriminator(
    [
        InstructionSpec(
            "route", accounts(f"{_ROUTE} fee_account? - -"), _v1(shared=False), _destination
        ),
        InstructionSpec(
            "route_with_token_ledger",
            accounts(f"{_ROUTE} fee_account? token_ledger - -"),
            _v1(shared=False, ledger=True),
            _destination,
        ),
        InstructionSpec(
            "exact_out_route",
            accounts(f"{_EXACT_OUT} fee_account? token_2022_program? - -"),
            _v1(shared=False, exact_out=True),
            _destination,
        ),
        InstructionSpec("shared_accounts_route", accounts(f"{_SHARED} - -"), _v1(shared=True)),
        InstructionSpec(
            "shared_accounts_route_with_token_ledger",
            accounts(f"{_SHARED} token_ledger - -"),
            _v1(shared=True, ledger=True),
        ),
        InstructionSpec(
            "shared_accounts_exact_out_route",
            accounts(f"{_SHARED} - -"),
            _v1(shared=True, exact_out=True),
        ),
        InstructionSpec("route_v2", accounts(_ROUTE_V2), _v2(shared=False), _destination),
        InstructionSpec(
            "exact_out_route_v2",
            accounts(_ROUTE_V2),
            _v2(shared=False, exact_out=True),
            _destination,
        ),
        InstructionSpec("shared_accounts_route_v2", accounts(_SHARED_V2), _v2(shared=True)),
        InstructionSpec(
            "shared_accounts_exact_out_route_v2",
            accounts(_SHARED_V2),
            _v2(shared=True, exact_out=True),
        ),
        # helpers a swap transaction may carry
        InstructionSpec("create_token_ledger", accounts("token_ledger payer -")),
        InstructionSpec("set_token_ledger", accounts("token_ledger account")),
        InstructionSpec(
            "create_token_account",
            accounts("account owner mint token_program -"),
            arg("bump", Reader.u8),
            _owner_pays,
        ),
        InstructionSpec(
            "close_wsol_token_account", accounts("account owner - -"), None, _owner_refunded
        ),
        # Jupiter's own operations (its fee wallet and operator sign these)
        InstructionSpec("claim", accounts("destination program_authority -"), arg("id", Reader.u8)),
        InstructionSpec(
            "claim_token",
            accounts("payer - program_authority source destination mint token_program - -"),
            arg("id", Reader.u8),
        ),
        InstructionSpec(
            "close_token",
            accounts("signer destination program_authority account mint token_program"),
            _close_token,
        ),
    ]
)

SWAPS = frozenset(
    {
        "route",
        "route_with_token_ledger",
        "exact_out_route",
        "shared_accounts_route",
        "shared_accounts_route_with_token_ledger",
        "shared_accounts_exact_out_route",
        "route_v2",
        "exact_out_route_v2",
        "shared_accounts_route_v2",
        "shared_accounts_exact_out_route_v2",
    }
)
HELPERS = frozenset(
    {"create_token_ledger", "set_token_ledger", "create_token_account", "close_wsol_token_account"}
)
