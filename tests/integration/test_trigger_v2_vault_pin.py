"""The wallet's Trigger V2 vault is pinned on first sight (`TriggerV2Api.vault`: "a
wallet has one vault"). Kept in memory only, a daemon restarted (or each `jupcron
fire`) forgot it, and an API that then named another vault got a deposit signed
into it. The vault is a Privy custodial account, not derived from
the wallet, so txguard cannot prove it ours; only the pin stands between a hostile or
mixed-up answer and our tokens paid to a stranger.
The pin is the vault the wallet's signed runs paid, read from the store once per
session: a restarted runner refuses another vault from its first run."""

from __future__ import annotations

from datetime import timedelta

from solders.pubkey import Pubkey

from jupcron.domain import RunStatus
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, dca_plan, v2_orders

OTHER_VAULT = str(Pubkey.from_string("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"))


def test_another_vault_is_refused_within_one_runner(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = dca_plan(rig)
    runner = rig.runner()
    first = outcome_of(runner.fire(plan, SLOT - timedelta(hours=2)))
    assert first.status is RunStatus.SUCCEEDED, first
    rig.emulator.state.v2.vaults[rig.wallet.address] = OTHER_VAULT  # the API changes its word
    landed = len(rig.landed())
    second = outcome_of(runner.fire(plan, SLOT))
    assert second.status is RunStatus.FAILED, second
    assert second.error is not None
    assert "a wallet has one vault" in second.error
    assert len(rig.landed()) == landed


def test_another_vault_is_refused_after_a_restart(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = dca_plan(rig)
    first = outcome_of(rig.runner().fire(plan, SLOT - timedelta(hours=2)))
    assert first.status is RunStatus.SUCCEEDED, first
    ours = rig.emulator.state.v2.vaults[rig.wallet.address]
    rig.emulator.state.v2.vaults[rig.wallet.address] = OTHER_VAULT
    landed = len(rig.landed())
    restarted = rig.runner()  # the same store, a new process's runner
    second = outcome_of(restarted.fire(plan, SLOT))
    paid = [o.vault for o in v2_orders(rig)]  # before the fix: [ours, OTHER_VAULT], both funded
    assert second.status is not RunStatus.SUCCEEDED, (second, ours, paid)
    assert len(rig.landed()) == landed
    assert paid == [ours]


def test_the_pin_is_the_vault_of_the_keypair_that_paid_it(
    make_rig: RigFactory, db_url: str
) -> None:
    """The store's pin is read by keypair (its wallet's name first): another keypair configured
    under the same name (a key rotated) starts with no pin, rather than being held to
    the vault of a key it is not."""
    rig = make_rig(loopback=True, db_url=db_url)
    plan = dca_plan(rig)
    first = outcome_of(rig.runner().fire(plan, SLOT - timedelta(hours=2)))
    assert first.status is RunStatus.SUCCEEDED, first
    ours = rig.emulator.state.v2.vaults[rig.wallet.address]
    store = SqlRunStore(rig.engine)
    assert store.trigger_v2_vault(plan.wallet, rig.wallet.address) == ours
    assert store.trigger_v2_vault(plan.wallet, OTHER_VAULT) is None  # another keypair
    # the same keypair under another name (a wallet renamed): the same wallet, one vault
    assert store.trigger_v2_vault("treasury", rig.wallet.address) == ours
