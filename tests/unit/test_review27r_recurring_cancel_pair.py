"""A recurring cancel by pair closes only an order of that pair (review 27r).

A plan that names a pair (``inputMint``, ``outputMint``) has no order account of its
own: the run closes the one the API's order list says is the pair's oldest. That
list is the API's word; the close itself is the only proof of which order it
closes. The DCA program checks the order's mints against the accounts
``close_dca`` names, so those accounts show its pair, unless they come from an
address lookup table, which the guard cannot read: then nothing shows that the
order closed is of the plan's pair, and a hostile API could close another of our
orders (one the operator keeps running) under a plan that never named it.
"""

from __future__ import annotations

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from jupcron.emulator import jupiter_ix as jix
from jupcron.runner.judge import judge
from tests.fixtures.verdicts import POLICY, record, refused
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key, sync_native

USDT = Pubkey.from_string("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB")


def _pair_plan() -> object:
    return record({"name": "p", "kind": "recurring-cancel",
                   "request": {"inputMint": str(USDC), "outputMint": str(WSOL)}})  # fmt: skip


def test_a_pair_cancel_of_the_pairs_order_is_accepted() -> None:
    me, order = new_key(), new_key()
    close = jix.close_dca(me, order, input_mint=USDC, output_mint=WSOL)
    tx = build(me, [*budget(), close])
    v = judge(tx, _pair_plan(), me, POLICY, ordered={"order": str(order)})
    assert v.accepted, v.reasons


def test_a_pair_cancel_closing_an_order_of_another_pair_is_refused() -> None:
    me, other = new_key(), new_key()  # our USDT -> SOL order, which the plan never names
    close = jix.close_dca(me, other, input_mint=USDT, output_mint=WSOL)
    tx = build(me, [*budget(), close])
    refused(judge(tx, _pair_plan(), me, POLICY, ordered={"order": str(other)}), str(USDT))


def test_a_pair_cancel_whose_mints_come_from_a_lookup_table_is_refused() -> None:
    """The same close of another pair's order, its mints named from a lookup table."""
    me, other = new_key(), new_key()
    close = jix.close_dca(me, other, input_mint=USDT, output_mint=WSOL)
    table = AddressLookupTableAccount(new_key(), [USDT, WSOL])
    tx = build(me, [*budget(), close], lookups=[table])
    v = judge(tx, _pair_plan(), me, POLICY, ordered={"order": str(other)})
    refused(v, "lookup table")


def test_a_pair_cancel_of_a_sol_order_wraps_none_of_our_sol() -> None:
    """A cancel spends nothing: a plan on a SOL pair gives no licence to wrap the
    wallet's SOL (the ceiling of the wrapping rule is the plan's amount, which a
    cancel has none of, and it was skipped)."""
    me, order = new_key(), new_key()
    plan = record({"name": "p", "kind": "recurring-cancel",
                   "request": {"inputMint": str(WSOL), "outputMint": str(USDC)}})  # fmt: skip
    close = jix.close_dca(me, order, input_mint=WSOL, output_mint=USDC)
    ours = jix.ata(me, WSOL)
    wrap = [transfer(TransferParams(from_pubkey=me, to_pubkey=ours, lamports=5_000_000_000)),
            sync_native(ours)]  # fmt: skip
    assert judge(build(me, [*budget(), close]), plan, me, POLICY, ordered={"order": str(order)}
                 ).accepted  # fmt: skip
    v = judge(build(me, [*budget(), *wrap, close]), plan, me, POLICY,
              ordered={"order": str(order)})  # fmt: skip
    refused(v, "wraps 5000000000 lamports")
