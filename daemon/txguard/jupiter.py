"""What the Jupiter programs the plans use are told: their instructions,
decoded from the programs' published interfaces.

`decode(program, data, accounts)` names the instruction, reads its amounts
(decimal strings of base units) and gives each account that matters a role
(see `anchor.ROLES`: owner, payer, source, destination, refund_to, order,
input_mint, output_mint, fee_account, vault). It never raises: data that does
not fit is `malformed`; an instruction the interface does not describe is
named "unknown" with a `cannot_decode` field saying why. `action_of` says what
kind of thing an instruction does, so the rules can hold it to the plan's kind.

Sources and gaps: docs/txguard.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from jupcron.txguard import jupiter_aggregator as aggregator
from jupcron.txguard import jupiter_orders as orders
from jupcron.txguard import jupiter_rfq as rfq
from jupcron.txguard.anchor import Decoded, InstructionSpec, decode_with, discriminator

AGGREGATOR = aggregator.PROGRAM
DCA = orders.DCA_PROGRAM
LIMIT_ORDER = orders.LIMIT_ORDER_PROGRAM
VALUE_AVERAGE = orders.VALUE_AVERAGE_PROGRAM
ORDER_ENGINE = rfq.PROGRAM
PROGRAMS = (AGGREGATOR, DCA, LIMIT_ORDER, VALUE_AVERAGE, ORDER_ENGINE)

ACTIONS = (
    "swap",
    "recurring_open",
    "recurring_close",
    "trigger_open",
    "trigger_cancel",
    "helper",
    "unknown",
)

_SPECS: dict[str, dict[bytes, InstructionSpec]] = {
    AGGREGATOR: aggregator.SPECS,
    DCA: orders.DCA_SPECS,
    LIMIT_ORDER: orders.LIMIT_ORDER_SPECS,
    VALUE_AVERAGE: {},
    ORDER_ENGINE: rfq.SPECS,
}
_UNKNOWN = {
    AGGREGATOR: "not an instruction of the Aggregator v6 interface (on-chain IDL, 2026-08)",
    DCA: "not an instruction of the DCA interface",
    LIMIT_ORDER: "not an instruction of the Limit Order v2 interface",
    VALUE_AVERAGE: orders.VALUE_AVERAGE_UNKNOWN,
    ORDER_ENGINE: "not an instruction of the order engine's interface (its IDL has only fill)",
}
_ACTIONS: dict[str, dict[str, str]] = {
    AGGREGATOR: {
        **dict.fromkeys(aggregator.SWAPS, "swap"),
        **dict.fromkeys(aggregator.HELPERS, "helper"),
    },
    DCA: {
        **dict.fromkeys(orders.RECURRING_OPEN, "recurring_open"),
        **dict.fromkeys(orders.RECURRING_CLOSE, "recurring_close"),
    },
    LIMIT_ORDER: {
        **dict.fromkeys(orders.TRIGGER_OPEN, "trigger_open"),
        **dict.fromkeys(orders.TRIGGER_CANCEL, "trigger_cancel"),
    },
    ORDER_ENGINE: dict.fromkeys(rfq.FILLS, "swap"),
}


def decode(program: str, data: bytes, accounts: Sequence[str]) -> Decoded:
    """One instruction of a Jupiter program; never raises."""
    if program not in _SPECS:
        return Decoded("unknown", {"cannot_decode": f"{program} is not a Jupiter program"})
    return decode_with(program, _SPECS[program], data, accounts, unknown=_UNKNOWN[program])


def action_of(program: str, name: str) -> str:
    """What the instruction `name` of `program` does: one of ACTIONS.

    "helper" is harmless bookkeeping (creating or closing the user's own token
    account, the token ledger); "unknown" is anything else, including the
    keeper's, taker's and admin's instructions, which a user never signs."""
    return _ACTIONS.get(program, {}).get(name, "unknown")


def instruction_names(program: str) -> tuple[str, ...]:
    """The instructions of `program` the decoder knows, by name."""
    return tuple(spec.name for spec in _SPECS.get(program, {}).values())


__all__ = [
    "ACTIONS",
    "AGGREGATOR",
    "DCA",
    "LIMIT_ORDER",
    "ORDER_ENGINE",
    "PROGRAMS",
    "VALUE_AVERAGE",
    "Decoded",
    "action_of",
    "decode",
    "discriminator",
    "instruction_names",
]
