"""Jupiter's order engine (61DFfeTK…): the JupiterZ (RFQ) `fill`.

From the program's published Anchor IDL (jup-ag/rfq-webhook-toolkit,
idls/order_engine.json) and its source there (programs/order-engine,
instructions/fill.rs). One user instruction, `fill(input_amount, output_amount,
expire_at)`, with accounts taker, maker (both signers), the four optional token
accounts (taker's and maker's of each mint), the two mints, their token
programs and the System program. The taker (our wallet) pays exactly
`input_amount` of the input mint from its token account (absent: as lamports
from the taker, the input being SOL) to the maker; the maker pays exactly
`output_amount` of the output mint to the taker's token account (absent: as
lamports to the taker, the output being SOL). Nothing is quoted against a
slippage: the output is exact, so it is also the guaranteed minimum out.
The market maker is the transaction's fee payer and second signer.

Roles: `owner` the taker; `maker`; `source` / `destination` the taker's input
and output token accounts when present, else the taker itself (lamports);
`input_mint`, `output_mint`.
"""

from __future__ import annotations

from jupcron.txguard.anchor import Fields, InstructionSpec, Roles, accounts, by_discriminator
from jupcron.txguard.borsh import Reader

PROGRAM = "61DFfeTKM7trxYcPQCM78bJ794ddZprZpAwAnLiwTpYH"


def _fill(r: Reader, f: Fields) -> None:
    f["in_amount"] = str(r.u64())
    out = r.u64()
    f["out_amount"] = str(out)
    f["min_out_amount"] = str(out)  # exact: the maker pays this or the fill fails
    f["expire_at"] = str(r.i64())
    f["swap_mode"] = "ExactIn"
    f["slippage_bps"] = "0"
    f["platform_fee_bps"] = "0"


def _taker_side(f: Fields, roles: Roles) -> None:
    """An absent taker token account: that side is native SOL, to or from the taker."""
    taker = roles.get("owner")
    if taker is not None:
        roles.setdefault("source", taker)
        roles.setdefault("destination", taker)


SPECS = by_discriminator(
    [
        InstructionSpec(
            "fill",
            accounts(
                "owner maker source? maker_source? destination? maker_destination?"
                " input_mint input_token_program output_mint output_token_program -"
            ),
            _fill,
            _taker_side,
        )
    ]
)
FILLS = frozenset({"fill"})
