"""Runs stored before 0013_run_owner whose fill a market maker paid for (JupiterZ/RFQ,
gasless) are given OUR keypair by the upgrade too (review 22a).

Such a run's ``runs.signature`` is not our signature once it is settled: the runner
records the transaction's id (the execute answer's ``signature``, or the chain's txid),
which is the MAKER's signature, slot 0, absent from the bytes we signed (that slot is
still the order's placeholder there). 0014 looked for ``runs.signature`` among the
signed transaction's signatures, found nothing, and left the owner NULL: the run then
counted under its wallet's name only, so the rename 0013 was meant to make harmless
still restarted the cap's window: 5 USDC of RFQ fill signed as `default` before the
upgrade, the same keypair renamed `main`, and 5 more were signed under a 7 USDC/day cap.

With the real runner over loopback HTTP to the emulator (its ``rfq`` fault: the real
RFQ order shape), the real signer and txguard, on SQLite and PostgreSQL."""

from __future__ import annotations

import base64

import sqlalchemy as sa
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from jupcron.domain import RunStatus
from jupcron.store import migrate
from tests.fixtures.runner import USDC, Rig, RigFactory
from tests.integration.test_caps_follow_the_keypair import (
    BEFORE_OWNER,
    FIVE_USDC,
    assert_capped,
    cap,
    fire,
    owner_of,
)


def _rfq_rig(make_rig: RigFactory, db_url: str) -> Rig:
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    rig.emulator.faults.add("rfq", operation="ultra_order")
    return rig


def _as_before_the_upgrade(rig: Rig, url: str) -> None:
    """The store taken back to 0012 (runs.owner dropped, every row kept), then
    upgraded to head: its runs are rows from before 0013, as `db upgrade` finds them."""
    rig.engine.dispose()
    migrate.downgrade(url, BEFORE_OWNER)
    migrate.upgrade(url)
    rig.engine.dispose()


def _our_slot(rig: Rig, run_id: int) -> int:
    run = rig.run(run_id)
    signed = VersionedTransaction.from_bytes(base64.b64decode(run.signed_tx or ""))
    keys = [str(k) for k in signed.message.account_keys]
    return keys.index(rig.wallet.address)


def test_an_upgraded_rfq_run_is_given_our_key_not_none(make_rig: RigFactory, db_url: str) -> None:
    rig = _rfq_rig(make_rig, db_url)
    first = fire(rig, {"default": rig.wallet}, "default")
    run = rig.run(first)
    assert run.status is RunStatus.SUCCEEDED, (run.error, rig.steps(first))
    assert _our_slot(rig, first) == 1  # the maker pays and signs first: an RFQ fill
    assert run.in_amount == str(FIVE_USDC)
    assert run.input_mint == USDC

    _as_before_the_upgrade(rig, db_url)

    assert owner_of(rig, first) == rig.wallet.address


def test_an_upgraded_rfq_run_keeps_its_cap_after_a_rename(
    make_rig: RigFactory, db_url: str
) -> None:
    """7 USDC/day: 5 of RFQ fill under `default` before the upgrade, then the same
    keypair as `main` after it: skipped by the cap, nothing more ordered or signed."""
    rig = _rfq_rig(make_rig, db_url)
    keypair = rig.wallet
    first = fire(rig, {"default": keypair}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED
    _as_before_the_upgrade(rig, db_url)
    issued = rig.issued()

    second = fire(rig, {"main": keypair}, "main")

    assert_capped(rig, second, "main", FIVE_USDC)
    assert rig.issued() == issued


def test_a_run_whose_maker_signature_is_in_the_bytes_is_still_ours(
    make_rig: RigFactory, db_url: str
) -> None:
    """The maker's signature present in the stored bytes too (a fill whose order came
    signed by its maker): ``runs.signature`` (the id, the maker's) is then among the
    transaction's signatures, at slot 0; the run is still ours, not the maker's: a run
    put under the maker's key would count against no budget of ours at all."""
    rig = _rfq_rig(make_rig, db_url)
    first = fire(rig, {"default": rig.wallet}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED
    (landed,) = rig.landed()
    maker = landed.all_accounts[0]
    assert maker != rig.wallet.address
    # the bytes as the chain holds them: the maker's signature in slot 0, ours in 1
    run = rig.run(first)
    stored = VersionedTransaction.from_bytes(base64.b64decode(run.signed_tx or ""))
    assert [str(s) for s in stored.signatures][1] == landed.all_signatures[1]
    both = VersionedTransaction.populate(
        stored.message, [Signature.from_string(s) for s in landed.all_signatures]
    )
    with rig.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE runs SET signed_tx = :tx WHERE id = :id"),
            {"tx": base64.b64encode(bytes(both)).decode("ascii"), "id": first},
        )
    assert rig.run(first).signature == landed.all_signatures[0]

    _as_before_the_upgrade(rig, db_url)

    assert owner_of(rig, first) == rig.wallet.address
