"""JupiterZ (RFQ) swaps end to end: the emulator's ``/order`` answers a market maker's
fill when the ``rfq`` fault makes JupiterZ win the quote (the maker pays the fee and
signs first, our wallet second: tests/fixtures/real/ultra-order-usdc-sol-jupiterz-rfq*
.json), and its execute signs and sends the fill as the maker does, so it lands
under the MAKER's signature, the transaction's id.

Through the real runner over loopback, with txguard, the real signer, the emulator's
RPC (rpc.url set: simulation, and the chain search of `jupcron.chain.txid`), on
SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from solders.keypair import Keypair
from solders.message import to_bytes_versioned
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.emulator.ledger import Execution
from jupcron.emulator.txbuild import ORDER_ENGINE_PROGRAM
from jupcron.runner.recovery import recover
from jupcron.txguard.decode import summarize
from tests.fixtures.runner import SOL, USDC, Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PAST_EXPIRY = 600  # seconds: well past the blockhash's surely-expired point
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
SWAP_APIS = (
    ("ultra-v1", "execute_ultra", "ultra_order"),
    ("swap-v2", "execute_swap", "swap_order"),
)


def _rig(make_rig: RigFactory, db_url: str, api: str) -> Rig:
    clock = Clock(SLOT)
    return make_rig(loopback=True, clock=clock, db_url=db_url, swap_api=api,
                    emulator=Emulator(seed=11, clock=clock.wall))  # fmt: skip


def _fire(rig: Rig, name: str) -> int:
    rpc = rig.rpc()
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(rig.plan("swap", name=name), SLOT))
    finally:
        rpc.close()
    return outcome.run_id


def _ordered(rig: Rig, run_id: int) -> dict[str, Any]:
    return next(d for _, s, d in rig.events(run_id) if s == "ordered")


def _assert_landed_fill(rig: Rig, run_id: int) -> None:
    """One fill landed, under the maker's signature (slot 0, account 0 is not our
    wallet); ours is its second signature; the run records that id."""
    (landed,) = rig.landed()
    maker, ours = landed.all_accounts[0], landed.all_accounts[1]
    assert ours == rig.wallet.address
    assert maker != ours
    assert landed.signature == landed.all_signatures[0]
    run = rig.run(run_id)
    assert run.signature == landed.signature, (run.signature, landed.all_signatures)
    signed = VersionedTransaction.from_bytes(base64.b64decode(run.signed_tx or ""))
    message = to_bytes_versioned(signed.message)
    assert signed.signatures[1].verify(Pubkey.from_string(ours), message)
    assert str(signed.signatures[1]) == landed.all_signatures[1]


def test_the_emulators_fill_has_the_real_rfq_shape(make_rig: RigFactory) -> None:
    """The emulator's fill against the docs' one: same header, the order engine's
    fill as the only call after Compute Budget, the same account roles."""
    rig = make_rig()
    rig.emulator.faults.add("rfq", operation="ultra_order")
    query = {"inputMint": USDC, "outputMint": SOL, "amount": "5000000",
             "taker": rig.wallet.address}  # fmt: skip
    answer = rig.emulator.handle("GET", "/ultra/v1/order", query, {}, b"").json()
    assert (answer["router"], answer["swapType"], answer["gasless"]) == ("jupiterz", "rfq", True)
    ours = VersionedTransaction.from_bytes(base64.b64decode(answer["transaction"]))
    real_fixture = json.loads((REAL / "ultra-order-usdc-sol-jupiterz-rfq.json").read_text())
    real = VersionedTransaction.from_bytes(base64.b64decode(real_fixture["transaction"]))
    assert ours.message.header == real.message.header
    assert str(ours.message.account_keys[0]) == answer["maker"]
    assert str(ours.message.account_keys[1]) == rig.wallet.address
    mine, theirs = summarize(ours, {}), summarize(real, {})
    fills = [ix for ix in mine.instructions if ix.program == str(ORDER_ENGINE_PROGRAM)]
    real_fills = [ix for ix in theirs.instructions if ix.program == str(ORDER_ENGINE_PROGRAM)]
    assert [ix.name for ix in fills] == [ix.name for ix in real_fills] == ["fill"]
    assert sorted(fills[0].role) == sorted(real_fills[0].role)
    assert len(fills[0].accounts) == len(real_fills[0].accounts)
    assert fills[0].role["maker"] == answer["maker"]
    assert dict(fills[0].fields)["out_amount"] == answer["outAmount"]


def test_an_rfq_swap_lands_under_the_makers_signature_and_the_run_records_it(
    make_rig: RigFactory, db_url: str
) -> None:
    for api, _execute, order in SWAP_APIS:
        rig = _rig(make_rig, db_url, api)
        rig.emulator.faults.add("rfq", operation=order)
        run_id = _fire(rig, f"rfq-{api}")
        run = rig.run(run_id)
        assert run.status is RunStatus.SUCCEEDED, (api, run.error, rig.steps(run_id))
        assert _ordered(rig, run_id).get("router") == "jupiterz", _ordered(rig, run_id)
        _assert_landed_fill(rig, run_id)
        assert rig.emulator.ledger.requests.get(order, 0) == 1


def test_an_rfq_swap_whose_answer_was_lost_once_is_answered_by_the_repost_with_the_id(
    make_rig: RigFactory, db_url: str
) -> None:
    """The same signed bytes posted again: the emulator's maker signs them again (the
    same id: ed25519 is deterministic) and answers what was decided, not a second fill."""
    for api, execute, order in SWAP_APIS:
        rig = _rig(make_rig, db_url, api)
        rig.emulator.faults.add("rfq", operation=order)
        rig.emulator.faults.add("lost_answer", operation=execute)
        run_id = _fire(rig, f"rfq-repost-{api}")
        run = rig.run(run_id)
        assert run.status is RunStatus.SUCCEEDED, (api, run.error, rig.steps(run_id))
        _assert_landed_fill(rig, run_id)
        assert rig.emulator.ledger.requests.get(execute, 0) == 2


def test_an_rfq_swap_whose_answer_was_lost_is_settled_from_the_chain_under_the_makers_id(
    make_rig: RigFactory, db_url: str
) -> None:
    for api, execute, order in SWAP_APIS:
        rig = _rig(make_rig, db_url, api)
        rig.emulator.faults.add("rfq", operation=order)
        rig.emulator.faults.add("lost_answer", count=0, operation=execute)  # every answer
        run_id = _fire(rig, f"rfq-lost-{api}")
        run = rig.run(run_id)
        steps = rig.steps(run_id)
        assert run.status is RunStatus.SUCCEEDED, (api, run.error, steps)
        assert steps[-1] == "settled_by_rpc", steps
        _assert_landed_fill(rig, run_id)
        found = [d for _, s, d in rig.events(run_id) if s == "rpc_status"][-1]
        assert found["found"] is True
        assert found["txid"] == run.signature
        assert rig.emulator.ledger.requests.get(order, 0) == 1


@pytest.mark.parametrize("code", [-2003, -2005])
def test_an_rfq_fill_that_landed_after_a_may_have_landed_answer_is_not_ordered_again(
    make_rig: RigFactory, db_url: str, code: int
) -> None:
    for api, execute, order in SWAP_APIS:
        rig = _rig(make_rig, db_url, api)
        rig.emulator.faults.add("rfq", operation=order)
        rig.emulator.faults.add("timed_out", operation=execute, code=code, error="Quote expired")
        run_id = _fire(rig, f"rfq-{code}-{api}")
        run = rig.run(run_id)
        steps = rig.steps(run_id)
        assert "reorder" not in steps, steps
        assert rig.emulator.ledger.requests.get(order, 0) == 1  # never ordered again
        assert run.status is RunStatus.SUCCEEDED, (api, run.error, steps)
        _assert_landed_fill(rig, run_id)


def test_an_rfq_fill_sent_before_a_crash_is_settled_by_recovery_under_the_makers_id(
    make_rig: RigFactory, db_url: str
) -> None:
    """The daemon dies right after the execute call (the fill landed, nothing recorded
    of the answer): recovery finds it on the chain from our wallet's side."""
    for api, _execute, order in SWAP_APIS:
        rig = _rig(make_rig, db_url, api)
        rig.emulator.faults.add("rfq", operation=order)
        failpoints.arm("after_execute")
        try:
            with pytest.raises(failpoints.SimulatedCrash):
                rig.runner().fire(rig.plan("swap", name=f"rfq-crash-{api}"), SLOT)
        finally:
            failpoints.disarm()
        assert rig.clock is not None
        rig.clock.advance(PAST_EXPIRY)
        rpc = rig.rpc()
        try:
            (settled,) = recover(rig.runner(rpc=rpc), startup=True)
        finally:
            rpc.close()
        assert settled.status is RunStatus.SUCCEEDED, (api, rig.steps(settled.run_id))
        assert rig.steps(settled.run_id)[-1] == "settled_by_rpc"
        _assert_landed_fill(rig, settled.run_id)
        assert rig.emulator.ledger.requests.get(order, 0) == 1


def test_a_quote_the_maker_never_sent_fails_once_expired_and_is_never_ordered_again(
    make_rig: RigFactory, db_url: str
) -> None:
    """Posted after its quote expired (fault ``expired``): the emulator's maker sends
    nothing and the API answers -2003. The daemon cannot tell that from a late fill, so
    the run waits; once the blockhash surely expired and the search of our wallet's
    transactions since the claim found nothing, it fails. One order, nothing landed."""
    for api, execute, order in SWAP_APIS:
        rig = _rig(make_rig, db_url, api)
        _older_transaction(rig)  # the one that funded the wallet: the search can end
        rig.emulator.faults.add("rfq", operation=order)
        rig.emulator.faults.add("expired", operation=execute)
        run_id = _fire(rig, f"rfq-stale-{api}")
        assert rig.run(run_id).status is RunStatus.SUBMITTED, rig.steps(run_id)
        assert rig.clock is not None
        rig.clock.advance(PAST_EXPIRY)
        rpc = rig.rpc()
        try:
            (settled,) = recover(rig.runner(rpc=rpc), runs=[run_id])
        finally:
            rpc.close()
        assert settled.status is RunStatus.FAILED, (api, rig.steps(run_id))
        assert rig.run(run_id).error == "blockhash expired and the signature never landed"
        assert [e.request_id for e in rig.landed()] == ["funding"]  # no fill
        assert "reorder" not in rig.steps(run_id)
        assert rig.emulator.ledger.requests.get(order, 0) == 1


def test_a_sol_input_rfq_swap_passes_the_simulation(make_rig: RigFactory, db_url: str) -> None:
    rig = _rig(make_rig, db_url, "swap-v2")
    rig.emulator.faults.add("rfq", operation="swap_order")
    request = {"inputMint": SOL, "outputMint": USDC, "amount": 50_000_000}
    rpc = rig.rpc()
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(rig.plan("swap", request=request), SLOT))
    finally:
        rpc.close()
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SUCCEEDED, run.error
    _assert_landed_fill(rig, outcome.run_id)


def _older_transaction(rig: Rig) -> None:
    """A transaction of our wallet an hour before the slot (never read by a search)."""
    ledger = rig.emulator.ledger
    ledger.record(
        Execution(
            request_id="funding", signature=str(Keypair().sign_message(b"funding")),
            kind="swap", owner=rig.wallet.address, at=SLOT.timestamp() - 3600,
            slot=ledger.next_slot(), landed=True, status="Success",
        )
    )  # fmt: skip
