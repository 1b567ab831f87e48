"""A Trigger V2 deposit wraps none of our SOL it does not deposit (review 27r).

Lamports wrapped into our own wrapped-SOL account are an order's input in another
form (docs/txguard.md, "Which accounts are ours"): with a plan, only when the plan
spends SOL, and at most its amount plus the rent of the wrapped-SOL accounts made.
The rule skipped every Trigger V2 plan, so a USDC deposit the API padded with a
transfer of 5 SOL of ours into our wrapped-SOL account (and a `sync_native`) was
accepted: the wallet's SOL, which pays every later run's fees and rent, turned into
wrapped SOL that the plan never asked for (and that simulation counts as still ours).
"""

from __future__ import annotations

import random

import pytest
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from jupcron.emulator.products.trigger_v2 import tx as txs
from jupcron.emulator.txbuild import to_b64
from jupcron.txguard import GuardPolicy, Verdict, inspect
from jupcron.txguard.expect import Expectation

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
AMOUNT = 20_000_000
POLICY = GuardPolicy()


def _judge(mint: Pubkey, shape: str, lamports: int | None) -> Verdict:
    me, vault = Keypair().pubkey(), Pubkey.new_unique()
    other = USDC if mint == txs.WSOL else txs.WSOL
    expect = Expectation(kind="trigger-v2-dca", input_mint=str(mint), output_mint=str(other),
                         amount=AMOUNT, vault=str(vault),
                         deposit=(str(vault), str(mint), str(AMOUNT)))  # fmt: skip
    extra: list[Instruction] = []
    if lamports is not None:
        ours = txs.ata(me, txs.WSOL)
        extra = [transfer(TransferParams(from_pubkey=me, to_pubkey=ours, lamports=lamports)),
                 txs.sync_native(ours)]  # fmt: skip
    tx, _ = txs.deposit(me, vault, mint, AMOUNT, 6, seed="order-seed-1", rng=random.Random(1),
                        shape=shape, extra=extra)  # fmt: skip
    return inspect(to_b64(tx), me, POLICY, expect=expect)


@pytest.mark.parametrize("shape", txs.SHAPES)
@pytest.mark.parametrize("mint", [USDC, txs.WSOL])
def test_the_deposit_alone_is_accepted(mint: Pubkey, shape: str) -> None:
    verdict = _judge(mint, shape, None)
    assert verdict.accepted, verdict.reasons


@pytest.mark.parametrize("shape", txs.SHAPES)
def test_a_usdc_deposit_that_wraps_our_sol_is_refused(shape: str) -> None:
    verdict = _judge(USDC, shape, 5_000_000_000)
    assert not verdict.accepted
    assert any("wraps 5000000000 lamports" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("shape", txs.SHAPES)
def test_a_sol_deposit_that_also_wraps_more_of_our_sol_is_refused(shape: str) -> None:
    verdict = _judge(txs.WSOL, shape, 5_000_000_000)
    assert not verdict.accepted
    assert any("wraps 5000000000 lamports" in r for r in verdict.reasons), verdict.reasons
