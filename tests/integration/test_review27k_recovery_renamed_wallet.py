"""Per-wallet leadership (PostgreSQL) recovers a run of a wallet renamed in the config
(review 27k).

A run belongs to the keypair that signed it (`runs.owner`). After the config renames a
wallet (the same keypair, ``default`` -> ``main``), recovery asked the daemons'
leadership about the run's old NAME: no daemon leads ``default`` any more, so a run
left `submitted` (perhaps landed) or `signed` was recovered by no daemon at all, held
its amount against the caps and was never settled nor told; one left `pending` stayed
so for good. The runner settles a signed run with the key of the same address
(`Runner._signer_of`) and rejects an unsigned one; recovery now asks about that wallet,
the one whose leader ends the run. Real runs over loopback."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from jupcron import failpoints
from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.service.wallet_leading import WalletScope
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import dca_plan, v2_orders, v2_rig
from tests.integration.test_report_wallet_of_each_run import SLOT


@dataclass
class Leads:
    """The wallets this daemon leads, as `WalletLeads` shows them."""

    led: frozenset[str]


def test_a_submitted_run_of_a_renamed_wallet_is_recovered_by_its_keypairs_leader(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap", name="weekly"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SUBMITTED  # may have landed
    assert run.wallet == "default"
    # the config now names the same keypair `main`; this daemon leads it
    renamed = rig.runner(wallet=None, wallets={"main": rig.wallet})
    scope = WalletScope(Leads(frozenset({"main"})))  # type: ignore[arg-type]

    settled = recover(renamed, startup=True, only=scope.owns)

    assert [o.run_id for o in settled] == [outcome.run_id], rig.steps(outcome.run_id)
    assert rig.run(outcome.run_id).status is RunStatus.SUCCEEDED
    assert len(rig.landed()) == 1


def test_a_renamed_wallets_run_is_still_not_taken_by_a_daemon_leading_another(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap", name="weekly"), SLOT))
    renamed = rig.runner(wallet=None, wallets={"main": rig.wallet})
    scope = WalletScope(Leads(frozenset({"savings"})))  # type: ignore[arg-type]
    assert recover(renamed, startup=True, only=scope.owns) == []
    assert rig.run(outcome.run_id).status is RunStatus.SUBMITTED


def test_an_unsigned_run_of_a_renamed_wallet_is_ended_not_left_in_flight(
    make_rig: RigFactory, db_url: str
) -> None:
    """Nothing signed: it is not ordered under another name (`without_wallet` rejects
    it), but it is ended by its keypair's leader, instead of left pending for good."""
    rig = make_rig(loopback=True, db_url=db_url)
    failpoints.arm("after_claim")
    try:
        with pytest.raises(failpoints.SimulatedCrash):
            rig.runner().fire(rig.plan("swap", name="weekly"), SLOT)
    finally:
        failpoints.disarm()
    (run_id,) = rig.run_ids()
    assert rig.run(run_id).status is RunStatus.PENDING
    renamed = rig.runner(wallet=None, wallets={"main": rig.wallet})
    scope = WalletScope(Leads(frozenset({"main"})))  # type: ignore[arg-type]

    (ended,) = recover(renamed, startup=True, only=scope.owns)

    assert ended.run_id == run_id
    assert rig.run(run_id).status is RunStatus.REJECTED, rig.steps(run_id)
    assert rig.issued() == 0  # nothing ordered under the new name


def test_a_signed_run_is_posted_under_its_keypair_when_the_names_were_swapped(
    make_rig: RigFactory, db_url: str
) -> None:
    """The config swaps two names: the keypair that signed the run is now `main`, and
    `default` another keypair. The signed Trigger V2 deposit is posted with its own
    keypair's session (the API holds it under that wallet), not the session of the key
    now named `default`: before, the create was refused ("Deposit transaction not
    found") and the run `failed`, its deposit never posted; and it was recovered by
    `default`'s leader, not its keypair's."""
    _, rig = v2_rig(make_rig, db_url)
    failpoints.arm("after_sign")
    try:
        with pytest.raises(failpoints.SimulatedCrash):
            rig.runner().fire(dca_plan(rig), SLOT)
    finally:
        failpoints.disarm()
    (run_id,) = rig.run_ids()
    swapped = rig.runner(wallet=None, wallets={"default": Wallet.generate(), "main": rig.wallet})
    scope = WalletScope(Leads(frozenset({"main"})))  # type: ignore[arg-type]

    (settled,) = recover(swapped, startup=True, only=scope.owns)

    assert settled.status is RunStatus.SUCCEEDED, (settled, rig.steps(run_id))
    (order,) = v2_orders(rig)
    assert order.user == rig.wallet.address
