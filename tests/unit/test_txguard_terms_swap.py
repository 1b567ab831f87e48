"""A swap held to what its order answered and to the plan's referral.

- The route's guaranteed minimum (its own quote less its slippage) is held to the
  order answer's ``outAmount`` less the slippage the plan allows: a transaction
  quoting below what the order answered is refused.
- A plan's referral fee goes to its ``referralAccount`` or that account's referral
  token account (Jupiter's Referral program), nowhere else.

Genuine transactions (tests/fixtures/real) changed one way each, judged exactly as
a run of their plan (`runner.judge`), beside the unchanged genuine one.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.emulator import jupiter_ix as jix
from jupcron.runner.judge import expectation, judge, ordered_facts
from jupcron.txguard.swap_terms import REFERRAL_PROGRAM, referral_token_account
from tests.fixtures import real
from tests.fixtures.mutate import mutate, put
from tests.fixtures.verdicts import CORPUS, POLICY, record, refused, verdict
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key

METIS = CORPUS["ultra-order-usdc-sol-route_v2-metis"]  # route_v2 at #4: outAmount 461208958
RFQ = CORPUS["ultra-order-usdc-sol-jupiterz-rfq-2"]  # fill at #3: outAmount 460250418
FIVE_HOP = CORPUS["ultra-order-usdc-sol-shared-route-5hop"]  # fee account from a lookup table
QUOTED_OUT = 16  # route_v2: discriminator, in_amount u64, then quoted_out_amount u64
FILL_OUT = 16  # fill: discriminator, input_amount u64, then output_amount u64


def quoted(out: int) -> str:
    return mutate(METIS.transaction, 4, edit=lambda d: put(d, QUOTED_OUT, struct.pack("<Q", out)))


# --- the order's quote --------------------------------------------------------------------

SWAPS = [t for t in CORPUS.values() if t.plan.get("kind") == "swap" and t.expect == "accept"]


@pytest.mark.parametrize("tx", SWAPS, ids=lambda t: t.name)
def test_every_genuine_swap_is_held_to_its_orders_out_amount(tx: real.RealTx) -> None:
    """The hold is not vacuous: every genuine swap's run knows its answer's outAmount,
    and guarantees no less than it less the plan's slippage."""
    assert expectation(record(tx.plan), ordered_facts(tx.ordered)).quoted_out
    assert verdict(tx).accepted


def test_a_route_quoting_one_percent_of_the_orders_out_amount_is_refused() -> None:
    """Only the quote inside the transaction sets its minimum: cut to 1% of the answer's
    outAmount, at the answer's own 26 bps, it guarantees ~1% of the price ordered."""
    refused(verdict(METIS, quoted(4_612_089)), "guarantees only 4600097", "outAmount of 461208958")


def test_the_hold_is_the_plans_slippage_below_the_answer_rounded_down() -> None:
    """With the plan's 26 bps: at least 461208958 * 9974 // 10000 = 460009814. The least
    quote reaching it is accepted; one unit less is refused."""
    floor = 461_208_958 * (10_000 - 26) // 10_000
    least = -(-floor * 10_000 // (10_000 - 26))  # the smallest quote whose minimum reaches it
    assert least * 9974 // 10_000 == floor
    assert verdict(METIS, quoted(least), slippageBps=26).accepted
    refused(verdict(METIS, quoted(least - 1), slippageBps=26), f"at least {floor}", "26 bps")
    # without slippageBps the plan allows guard.max_slippage_bps (300) below the answer
    assert verdict(METIS, quoted(least - 1)).accepted
    refused(verdict(METIS, quoted(461_208_958 * 96 // 100)), "max_slippage_bps")


def test_a_fill_delivering_less_than_the_order_answered_is_refused() -> None:
    """A JupiterZ fill's output is exact: less than the answer's outAmount allows is
    refused, with no price limit in the plan."""
    low = mutate(RFQ.transaction, 3, edit=lambda d: put(d, FILL_OUT, struct.pack("<Q", 10**6)))
    refused(verdict(RFQ, low), "guarantees only 1000000", "outAmount of 460250418")


# --- the referral's fee account -----------------------------------------------------------

# published derivations: gemwalletcom/core gemstone/src/swapper/jupiter/referral.rs (tests)
PUBLISHED = [
    ("CK8n55Y664YjfifoVYfud8jXuSx9JV4NgVakEaRceVXu", str(USDC),
     "8zENcuZni4EMpoy8fyGQ6FZffX7utkDCx9fL3SySuTWn"),
    ("CK8n55Y664YjfifoVYfud8jXuSx9JV4NgVakEaRceVXu", str(WSOL),
     "6n5sDEwnejH1PC7ymh8WcoraXWuJeZAQ5WsPr3yebChd"),
    ("97q7TdebuvmxXCM1JzgqzpB1i7Wgvk4ACUWanhiL6Dk1", str(USDC),
     "9HyUVfNr858FHzLyZt3Cdr3b5Mp1dGwjaudpVWD6Qawv"),
]  # fmt: skip


@pytest.mark.parametrize(("referral", "mint", "account"), PUBLISHED)
def test_the_referral_token_account_is_derived_as_jupiter_derives_it(
    referral: str, mint: str, account: str
) -> None:
    assert REFERRAL_PROGRAM == "REFER4ZgmyYx9c6He5XfaTMiGfdLwRnkV4RPp9t9iF3"
    assert referral_token_account(referral, mint) == account


def _route_with_fee(me: Pubkey, fee_account: Pubkey, fee_bps: int) -> Instruction:
    """A v1 `route` (USDC -> SOL) paying `fee_bps` to its platform_fee_account."""
    ix = jix.route_instruction(
        "route", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(me, WSOL),
        in_amount=5_000_000, quoted_out_amount=30_000_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    metas = list(ix.accounts)
    metas[6] = AccountMeta(fee_account, False, True)  # platform_fee_account (optional)
    return Instruction(ix.program_id, bytes(ix.data)[:-1] + bytes([fee_bps]), metas)


def _referral_plan(referral: Pubkey) -> dict[str, Any]:
    request = {"inputMint": str(USDC), "outputMint": str(WSOL), "amount": 5_000_000,
               "referralAccount": str(referral), "referralFee": 100}  # fmt: skip
    return {"name": "p", "kind": "swap", "request": request}


def test_a_referral_fee_paid_to_a_stranger_is_refused() -> None:
    me, referral, stranger = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
    tx = build(me, [*budget(), _route_with_fee(me, stranger, 100)])
    v = judge(tx, record(_referral_plan(referral)), me, POLICY, ordered={})
    refused(v, f"platform fee of 100 bps to {stranger}", str(referral))


@pytest.mark.parametrize("to", ["input mint", "output mint", "the account itself"])
def test_a_referral_fee_paid_to_the_plans_referral_is_accepted(to: str) -> None:
    me, referral = Keypair().pubkey(), Keypair().pubkey()
    account = {
        "input mint": referral_token_account(str(referral), str(USDC)),
        "output mint": referral_token_account(str(referral), str(WSOL)),
        "the account itself": str(referral),
    }[to]  # fmt: skip
    tx = build(me, [*budget(), _route_with_fee(me, Pubkey.from_string(account), 100)])
    assert judge(tx, record(_referral_plan(referral)), me, POLICY, ordered={}).accepted


def test_a_referral_token_account_of_another_mint_is_refused() -> None:
    me, referral = Keypair().pubkey(), Keypair().pubkey()
    other = referral_token_account(str(referral), str(new_key()))
    tx = build(me, [*budget(), _route_with_fee(me, Pubkey.from_string(other), 100)])
    refused(judge(tx, record(_referral_plan(referral)), me, POLICY, ordered={}), other)


def test_a_referral_fee_account_from_a_lookup_table_cannot_be_shown_the_referrals() -> None:
    """The genuine 5-hop route takes Jupiter's 2 bps to a fee account from a lookup
    table: accepted as Jupiter's own fee without a referral; a referral plan cannot
    be shown that the account is its referral's, so nothing is signed."""
    assert verdict(FIVE_HOP).accepted
    referral = {"referralAccount": str(new_key()), "referralFee": 50}
    refused(verdict(FIVE_HOP, **referral), "platform fee of 2 bps to lookup:")
