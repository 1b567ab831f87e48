"""A run's `runs.owner` must be the keypair that spends for it: a run claimed under
one keypair and ordered, after a restart, under another keypair of the same wallet
name (the key file replaced while the run was pending) is signed by the new key, so
the new key's `safety.caps` windows must hold it; with the real runner and recovery
over loopback HTTP to the emulator, on SQLite and PostgreSQL.

The row kept the claiming key's address: the recovered 5 USDC signed by B counted
against A, and B signed 5 more under a 7 USDC/day cap. The owner is now written with
the run's reservation, by the key that reserves and signs."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_caps_follow_the_keypair import (
    FIVE_USDC,
    SLOT,
    assert_capped,
    cap,
    owner_of,
    signer,
)


def test_a_run_recovered_under_a_new_keypair_counts_against_that_keypair(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    a, b = rig.wallet, Wallet.generate()
    plan = rig.plan("swap", schedule={"every": "1h", "grace": "2d"})
    before = rig.runner(wallet=None, wallets={"default": a})
    interrupted = before.ports.store.claim(
        plan, SLOT, now=datetime.now(UTC), trigger="schedule", claimed_by="old",
        owner=a.address,
    )  # A's daemon claimed the slot, then died: nothing ordered  # fmt: skip
    assert interrupted is not None

    after = rig.runner(wallet=None, wallets={"default": b})  # restarted with a new key
    (recovered,) = recover(after, startup=True)
    assert recovered.status is RunStatus.SUCCEEDED, recovered.error
    assert signer(rig, interrupted.id) == b.address
    issued = rig.issued()

    later = outcome_of(after.fire(rig.plan("swap"), SLOT)).run_id

    assert_capped(rig, later, "default", FIVE_USDC)  # B already put in 5 of its 7
    assert rig.issued() == issued
    assert owner_of(rig, interrupted.id) == b.address
