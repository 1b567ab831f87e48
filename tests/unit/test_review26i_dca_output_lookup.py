"""A recurring order's output mint, named through an address lookup table.

`open_dca_v2` names the mint the order buys (its `output_mint` account). A hostile
answer may load that account from a lookup table, which the guard cannot resolve:
the order would then buy a mint the plan never named (one whose pool its issuer
controls), with every other term the plan's. Only the order's own address can show
which mints it is for: the DCA account is the program's PDA of ("dca", user, input
mint, output mint, application_idx), checked on chain when the order opens (the
derivation is held to a mainnet order in tests/unit/test_emulator_jupiter.py).
"""

from __future__ import annotations

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.instruction import Instruction
from solders.pubkey import Pubkey

from jupcron.emulator import jupiter_ix as jix
from jupcron.runner.judge import judge
from jupcron.txguard import Verdict
from tests.fixtures.verdicts import POLICY, record, refused
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key

PLAN = {
    "name": "p",
    "kind": "recurring",
    "request": {
        "inputMint": str(USDC),
        "outputMint": str(WSOL),
        "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 2, "interval": 86_400}},
    },
}


def _open(me: Pubkey, output_mint: Pubkey) -> Instruction:
    """The plan's order (USDC, 2 x 100 USDC a day), but buying `output_mint`."""
    return jix.open_dca_v2(
        me, input_mint=USDC, output_mint=output_mint, application_idx=1,
        in_amount=200_000_000, in_amount_per_cycle=100_000_000, cycle_frequency=86_400,
    )  # fmt: skip


def _judged(me: Pubkey, ix: Instruction, table: list[Pubkey]) -> Verdict:
    tx = build(me, [*budget(), ix], lookups=[AddressLookupTableAccount(new_key(), table)])
    return judge(tx, record(PLAN), me, POLICY, ordered={})


def test_an_order_buying_a_strangers_mint_named_by_a_lookup_table_is_refused() -> None:
    me, stranger_mint = new_key(), new_key()
    v = _judged(me, _open(me, stranger_mint), [stranger_mint])
    refused(v, "output mint", "lookup table", str(WSOL))


def test_the_plans_mint_from_a_lookup_table_is_shown_by_the_orders_address() -> None:
    me = new_key()
    v = _judged(me, _open(me, WSOL), [WSOL])
    assert v.accepted, v.reasons
    assert any(
        dict(ix.roles).get("output_mint", "").startswith("lookup:") for ix in v.summary.instructions
    )


def test_a_plainly_named_strangers_mint_stays_refused() -> None:
    me, stranger_mint = new_key(), new_key()
    tx = build(me, [*budget(), _open(me, stranger_mint)])
    refused(judge(tx, record(PLAN), me, POLICY, ordered={}), "as its output mint")


def test_the_older_open_dca_is_held_the_same_way() -> None:
    """`open_dca` (no payer account; a trailing Option<bool> close_wsol_in_ata)."""
    me, stranger_mint = new_key(), new_key()
    v2 = _open(me, stranger_mint)
    metas = [m for i, m in enumerate(v2.accounts) if i != 2]  # open_dca has no payer
    data = jix.discriminator("open_dca") + bytes(v2.data)[8:] + bytes([0])
    v = _judged(me, Instruction(v2.program_id, data, metas), [stranger_mint])
    refused(v, "open_dca names its output mint from a lookup table")
