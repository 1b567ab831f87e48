"""The fee as the runtime computes it (`decode.compute_budget`), and its cap.

Agave (compute-budget-instruction/src/compute_budget_instruction_details.rs):
without SetComputeUnitLimit the limit is 3,000 units per instruction of a
builtin program (Compute Budget's own included) plus 200,000 per other
instruction, at most 1,400,000; the priority fee is ceil(price x limit / 10^6);
the base fee 5,000 lamports per required and per precompile signature.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.instruction import Instruction
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.decode import summarize
from tests.fixtures.wallet import AGGREGATOR, build, new_key, program_call

ED25519 = Pubkey.from_string("Ed25519SigVerify111111111111111111111111111")
STAKE = Pubkey.from_string("Stake11111111111111111111111111111111111111")


def _send(me: Pubkey) -> Instruction:
    return transfer(TransferParams(from_pubkey=me, to_pubkey=new_key(), lamports=1))


def _ed25519(signatures: int) -> Instruction:
    return Instruction(ED25519, bytes([signatures, 0]) + bytes(14), [])


CASES = [
    # name, instructions(me), limit, priority fee, signatures
    ("no limit, only a price: one builtin", lambda me: [set_compute_unit_price(10**12)],
     3_000, 3 * 10**9, 1),
    ("two transfers and a program call",
     lambda me: [set_compute_unit_price(10**6), _send(me), _send(me), program_call(AGGREGATOR, me)],
     3 * 3_000 + 200_000, 209_000, 1),
    ("Stake left the builtins for Core BPF",
     lambda me: [set_compute_unit_price(10**6), Instruction(STAKE, b"", [])], 203_000, 203_000, 1),
    ("an explicit limit",
     lambda me: [set_compute_unit_limit(50_000), set_compute_unit_price(2 * 10**6),
                 program_call(AGGREGATOR, me)], 50_000, 100_000, 1),
    ("an explicit limit above the cap",
     lambda me: [set_compute_unit_limit(5_000_000), set_compute_unit_price(10**6),
                 program_call(AGGREGATOR, me)], 1_400_000, 1_400_000, 1),
    ("a default above the cap",
     lambda me: [set_compute_unit_price(10**6), *[program_call(AGGREGATOR, me)] * 8],
     1_400_000, 1_400_000, 1),
    ("rounded up to a lamport",
     lambda me: [set_compute_unit_limit(1), set_compute_unit_price(1)], 1, 1, 1),
    ("no price: no priority fee", lambda me: [program_call(AGGREGATOR, me)], 200_000, 0, 1),
    ("a precompile's signatures count",
     lambda me: [set_compute_unit_limit(10_000), _ed25519(2)], 10_000, 0, 3),
    ("each precompile counts, one with no data none",
     lambda me: [set_compute_unit_limit(10_000), _ed25519(2), Instruction(ED25519, b"", []),
                 _ed25519(1)], 10_000, 0, 4),
]  # fmt: skip


@pytest.mark.parametrize(
    ("build_ixs", "limit", "priority", "signatures"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_the_fee_is_computed_as_the_runtime_does(
    build_ixs: Callable[[Pubkey], list[Instruction]], limit: int, priority: int, signatures: int
) -> None:
    me = new_key()
    tx = VersionedTransaction.from_bytes(base64.b64decode(build(me, build_ixs(me))))
    budget = summarize(tx, {}).compute_budget
    assert (budget.effective_limit, budget.priority_fee_lamports) == (limit, priority)
    assert budget.signatures == signatures
    assert budget.total_fee_lamports == 5_000 * signatures + priority


def test_a_lone_compute_unit_price_costing_3_sol_is_refused(wallet: Wallet) -> None:
    tx = build(wallet.pubkey, [set_compute_unit_price(10**12)])
    verdict = inspect(tx, wallet.pubkey, GuardPolicy())
    assert not verdict.accepted
    assert (
        "our wallet would pay a fee of 3000005000 lamports (1 signatures x 5,000 + "
        "1000000000000 micro-lamports x the runtime's default of 3000 units (1 builtin "
        "instructions x 3,000 + 0 others x 200,000)), above the cap of 10000000 lamports "
        "(guard.max_fee_lamports)"
    ) in verdict.reasons


def test_the_total_cap_counts_the_signatures(wallet: Wallet) -> None:
    ixs = [set_compute_unit_limit(200_000), set_compute_unit_price(10**6),
           program_call(AGGREGATOR, wallet.pubkey)]  # fmt: skip
    tx = build(wallet.pubkey, ixs)  # 200,000 lamports of priority + 5,000
    assert inspect(tx, wallet.pubkey, GuardPolicy(max_fee_lamports=205_000)).accepted
    refused = inspect(tx, wallet.pubkey, GuardPolicy(max_fee_lamports=204_999))
    assert any("guard.max_fee_lamports" in r for r in refused.reasons)


def test_the_caps_are_ours_only_when_we_pay(wallet: Wallet) -> None:
    # a market maker paying the fee: whatever it spends is not ours (fee_payer judges it)
    tx = build(new_key(), [set_compute_unit_price(10**12), program_call(AGGREGATOR, wallet.pubkey)])
    reasons = inspect(tx, wallet.pubkey, GuardPolicy()).reasons
    assert not any("fee of" in r for r in reasons)
    assert any(r.startswith("the fee payer is ") for r in reasons)


@pytest.mark.parametrize("second", [set_compute_unit_limit(1), set_compute_unit_price(1)])
def test_a_duplicate_compute_budget_instruction_is_refused(
    wallet: Wallet, second: Instruction
) -> None:
    ixs = [set_compute_unit_limit(100_000), set_compute_unit_price(1), second,
           program_call(AGGREGATOR, wallet.pubkey)]  # fmt: skip
    reasons = inspect(build(wallet.pubkey, ixs), wallet.pubkey, GuardPolicy()).reasons
    assert any("appears twice (the runtime refuses the transaction)" in r for r in reasons)
