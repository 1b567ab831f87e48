"""A JupiterZ (RFQ) fill whose execute answer was lost, settled from the chain.

In a JupiterZ fill the market maker pays the fee: its key is account 0 and its
signature the transaction's first, i.e. the transaction id; ours is the second (the
docs' RFQ example, tests/fixtures/real/ultra-order-usdc-sol-jupiterz-rfq*.json). A
Solana node finds a transaction by its id only ("each signature must be a txid, the
first signature of a transaction": the getSignatureStatuses docs), so asking it for
OUR signature never finds the fill, landed or not. A fill that landed must be
settled succeeded (under the id that landed), not failed "never landed" once the
blockhash expired: caps would stop counting money that left.

The run is stored as the daemon leaves one whose execute answer was lost
(`submitted`, with the signed bytes and our signature); the fill is landed in the
emulator's chain as a market maker sends it (its signature first); the emulator's
RPC answers over loopback, finding transactions by their id only. On SQLite and
PostgreSQL."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from solders.keypair import Keypair
from solders.message import to_bytes_versioned
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from jupcron import failpoints
from jupcron.chain import txid as txid_module
from jupcron.chain.rpc import SolanaRpc
from jupcron.chain.wallet import sign_transaction
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.emulator.ledger import Execution
from jupcron.errors import ConfigError
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.recovery import recover
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.mutate import mutate
from tests.fixtures.runner import SOL, USDC, Clock, Rig, RigFactory
from tests.fixtures.runs import record_run

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
VALIDITY = 90.0  # runner.blockhash_validity's default
PAST_EXPIRY = 600  # seconds after the order: well past the blockhash's surely-expired point
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
RFQ = json.loads((REAL / "ultra-order-usdc-sol-jupiterz-rfq-2.json").read_text())["transaction"]


class Counting(httpx.HTTPTransport):
    """A real HTTP transport that counts the RPC methods asked."""

    def __init__(self) -> None:
        super().__init__()
        self.methods: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.methods.append(json.loads(request.content)["method"])
        return super().handle_request(request)


def _rig(make_rig: RigFactory, db_url: str) -> tuple[Clock, Rig]:
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, db_url=db_url,
                   emulator=Emulator(seed=5, clock=clock.wall))  # fmt: skip
    return clock, rig


def _signed_fill(rig: Rig, maker: Keypair) -> tuple[str, str, VersionedTransaction]:
    """The docs' JupiterZ fill with `maker` as its fee payer and our wallet as its
    taker, signed by our wallet (the daemon's signer): the stored bytes, our signature,
    and the fill as the maker sends it (its own signature put in slot 0)."""
    ours = Pubkey.from_string(rig.wallet.address)
    unsigned = mutate(RFQ, 1, keys={0: maker.pubkey(), 1: ours})
    signed = sign_transaction(rig.wallet, unsigned)
    tx = VersionedTransaction.from_bytes(base64.b64decode(signed.b64))
    assert str(tx.signatures[1]) == signed.signature  # ours is NOT the transaction id
    maker_signature = maker.sign_message(to_bytes_versioned(tx.message))
    sent = VersionedTransaction.populate(tx.message, [maker_signature, tx.signatures[1]])
    return signed.b64, signed.signature, sent


def _submitted_run(
    rig: Rig, clock: Clock, signed_b64: str, signature: str,
    status: RunStatus = RunStatus.SUBMITTED,
) -> int:  # fmt: skip
    """The run as the daemon leaves it when the execute answer is lost (or, `status`
    in_doubt, once it could not be settled)."""
    plan = rig.plan("swap", request={"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000})
    run_id = record_run(
        rig.engine, plan, SLOT, now=clock(), status=status,
        request_id="rfq-request-lost", signed_tx=signed_b64, signature=signature,
        expires_at=clock() + timedelta(seconds=VALIDITY), input_mint=USDC, output_mint=SOL,
        in_amount="5000000",
    )  # fmt: skip
    assert run_id is not None
    return run_id


def _land(rig: Rig, clock: Clock, sent: VersionedTransaction, ok: bool = True) -> str:
    """The market maker sends the fill and it lands: the chain holds it under its id,
    the maker's signature."""
    ledger = rig.emulator.ledger
    txid = str(sent.signatures[0])
    ledger.record(
        Execution(
            request_id="rfq-request-lost", signature=txid, kind="swap",
            owner=str(sent.message.account_keys[0]), at=clock.wall(), slot=ledger.next_slot(),
            landed=True, status="Success" if ok else "Failed", code=None if ok else 6001,
            signatures=tuple(str(s) for s in sent.signatures),
            accounts=tuple(str(k) for k in sent.message.account_keys),
        )
    )  # fmt: skip
    return txid


def _other_transactions(rig: Rig, clock: Clock, count: int, ago: float = 0.0) -> None:
    """Transactions of our wallet (other plans' swaps), each its own id, `ago` seconds
    before the clock's time."""
    ledger = rig.emulator.ledger
    for _ in range(count):
        other = str(Keypair().sign_message(b"other"))
        ledger.record(
            Execution(
                request_id="other", signature=other, kind="swap", owner=rig.wallet.address,
                at=clock.wall() - ago, slot=ledger.next_slot(), landed=True, status="Success",
            )
        )  # fmt: skip


def _recovered(rig: Rig, run_id: int) -> RunOutcome:
    """The run as recovery leaves it, the node asked over loopback."""
    rpc = rig.rpc()
    try:
        (settled,) = recover(rig.runner(rpc=rpc), runs=[run_id])
    finally:
        rpc.close()
    return settled


def test_a_landed_fill_whose_answer_was_lost_is_settled_succeeded_under_its_id(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = _rig(make_rig, db_url)
    signed_b64, ours, sent = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours)
    txid = _land(rig, clock, sent)
    _other_transactions(rig, clock, 3)  # our wallet kept trading after the fill
    clock.advance(PAST_EXPIRY)
    rpc = rig.rpc()
    try:
        assert rpc.signature_status(ours).found is False  # a node knows the fill by its id
        assert rpc.signature_status(txid).landed_ok
        (settled,) = recover(rig.runner(rpc=rpc), runs=[run_id])
    finally:
        rpc.close()
    run = rig.run(run_id)
    assert settled.status is RunStatus.SUCCEEDED, run.error
    assert run.status is RunStatus.SUCCEEDED
    assert run.signature == txid  # the id that landed, for `settle`, reports and explorers
    assert run.in_amount == "5000000"  # what the caps count
    assert rig.steps(run_id)[-1] == "settled_by_rpc"
    found = [d for _, s, d in rig.events(run_id) if s == "rpc_status"][-1]
    assert found["txid"] == txid
    assert found["found"] is True


def test_a_fill_that_landed_with_an_error_is_failed_with_it(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = _rig(make_rig, db_url)
    signed_b64, ours, sent = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours)
    txid = _land(rig, clock, sent, ok=False)
    clock.advance(PAST_EXPIRY)
    settled = _recovered(rig, run_id)
    run = rig.run(run_id)
    assert settled.status is RunStatus.FAILED
    assert run.signature == txid
    assert run.error is not None
    assert run.error.startswith("landed with error")


def test_a_fill_that_never_landed_is_failed_once_the_blockhash_expired(
    make_rig: RigFactory, db_url: str
) -> None:
    """The search covers every transaction of our wallet since the claim: "not there"
    is the node's word, so the run fails (nothing left the wallet), not in_doubt."""
    clock, rig = _rig(make_rig, db_url)
    _other_transactions(rig, clock, 4, ago=3600)  # long before the run: never read
    signed_b64, ours, _ = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours)
    _other_transactions(rig, clock, 2)
    rpc = rig.rpc()
    try:
        (early,) = recover(rig.runner(rpc=rpc), runs=[run_id])
        assert early.status is RunStatus.SUBMITTED  # it may still land: nothing decided
        clock.advance(PAST_EXPIRY)
        (settled,) = recover(rig.runner(rpc=rpc), runs=[run_id])
    finally:
        rpc.close()
    assert settled.status is RunStatus.FAILED
    assert rig.run(run_id).error == "blockhash expired and the signature never landed"
    status = [d for _, s, d in rig.events(run_id) if s == "rpc_status"][-1]
    assert status["complete"] is True
    assert status["searched"] == 2  # the wallet's transactions since the claim only


def test_the_search_pages_back_to_a_fill_behind_later_transactions(
    make_rig: RigFactory, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two ids (``before`` the last one read): the fill, behind five later
    transactions of our wallet, is on the third page."""
    monkeypatch.setattr(txid_module, "PAGE", 2)
    clock, rig = _rig(make_rig, db_url)
    signed_b64, ours, sent = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours)
    txid = _land(rig, clock, sent)
    _other_transactions(rig, clock, 5)
    clock.advance(PAST_EXPIRY)
    settled = _recovered(rig, run_id)
    assert settled.status is RunStatus.SUCCEEDED
    assert rig.run(run_id).signature == txid
    status = [d for _, s, d in rig.events(run_id) if s == "rpc_status"][-1]
    assert status["searched"] == 6


def test_a_search_the_node_cannot_finish_is_not_taken_for_not_landed(
    make_rig: RigFactory, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our wallet made more transactions since the claim than one search reads: the
    fill may be among those unread, so the run ends in_doubt, never failed."""
    clock, rig = _rig(make_rig, db_url)
    signed_b64, ours, sent = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours)
    _land(rig, clock, sent)
    _other_transactions(rig, clock, 6)
    monkeypatch.setattr(txid_module, "MAX_READS", 4)
    clock.advance(PAST_EXPIRY)
    settled = _recovered(rig, run_id)
    assert settled.status is RunStatus.IN_DOUBT
    assert "rpc_status" not in rig.steps(run_id)  # never booked as the node's "not found"
    status = [d for _, s, d in rig.events(run_id) if s == "rpc_search_incomplete"][-1]
    assert status["complete"] is False
    assert status["searched"] == 4


def test_a_run_whose_fee_our_wallet_pays_keeps_the_one_status_call(
    make_rig: RigFactory,
) -> None:
    """An aggregator route (our wallet pays the fee, our signature is the id) whose
    answer was lost settles with one getSignatureStatuses, as it always did: no search
    (then one getTransaction, to read what the swap gave and got)."""
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, emulator=Emulator(seed=5, clock=clock.wall))
    failpoints.arm("after_execute")
    try:
        with pytest.raises(failpoints.SimulatedCrash):
            rig.runner().fire(rig.plan("swap"), SLOT)
    finally:
        failpoints.disarm()
    clock.advance(PAST_EXPIRY)
    counting = Counting()
    rpc = SolanaRpc(rig.url + "/rpc", transport=counting)
    try:
        (settled,) = recover(rig.runner(rpc=rpc), startup=True)
    finally:
        rpc.close()
    assert settled.status is RunStatus.SUCCEEDED
    assert counting.methods == ["getSignatureStatuses", "getTransaction"]
    assert rig.run(settled.run_id).signature == rig.landed()[0].signature


def test_a_listing_that_ends_after_the_claim_is_not_taken_for_not_landed(
    make_rig: RigFactory, db_url: str
) -> None:
    """The node lists nothing of our wallet before the run (a node keeping a short
    history lists no further; a funded wallet has older transactions): its silence
    proves nothing, so the run ends in_doubt, not failed."""
    clock, rig = _rig(make_rig, db_url)
    signed_b64, ours, _ = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours)
    _other_transactions(rig, clock, 2)
    clock.advance(PAST_EXPIRY)
    settled = _recovered(rig, run_id)
    assert settled.status is RunStatus.IN_DOUBT
    assert "rpc_search_incomplete" in rig.steps(run_id)


def test_an_operators_verdict_on_an_in_doubt_fill_is_checked_by_its_id(
    make_rig: RigFactory, db_url: str
) -> None:
    """`jupcron settle` (`settle_in_doubt`) asks the node too: by our signature it found
    nothing, so a true "it landed" verdict on a fill left in_doubt was refused, and a
    false "it never landed" went through. Asked by the fill's id, the node backs the
    first and contradicts the second."""
    clock, rig = _rig(make_rig, db_url)
    signed_b64, ours, sent = _signed_fill(rig, Keypair())
    run_id = _submitted_run(rig, clock, signed_b64, ours, RunStatus.IN_DOUBT)
    txid = _land(rig, clock, sent)
    clock.advance(PAST_EXPIRY)
    store = SqlRunStore(rig.engine)
    rpc = rig.rpc()
    try:
        with pytest.raises(ConfigError, match="landed"):
            settle_in_doubt(store, run_id, Verdict(False, "no fill seen", "ops"), now=clock(),
                            rpc=rpc)  # fmt: skip
        settled = settle_in_doubt(store, run_id, Verdict(True, "explorer shows it", "ops"),
                                  now=clock(), rpc=rpc)  # fmt: skip
    finally:
        rpc.close()
    assert settled.status is RunStatus.SUCCEEDED
    said = [d for _, s, d in rig.events(run_id) if s == "settled_by_operator"]
    assert said, rig.events(run_id)
    assert said[-1]["rpc_txid"] == txid
