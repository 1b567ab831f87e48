"""A wallet renamed in the config (the same keypair under a new name) keeps its
Trigger V2 vault pin. The pin was read by the wallet's configured *name*: after
``default`` -> ``main`` the first session found no signed run under ``main`` and took
whatever vault the API named (trust on first use again), so a hostile or mixed-up
answer got a deposit signed into a stranger's vault. A wallet has one vault, and it
belongs to the keypair: the pin follows the keypair (the ``owner`` of the signed
runs), whatever name it was configured under."""

from __future__ import annotations

from datetime import timedelta

from solders.pubkey import Pubkey

from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import DCA_REQUEST, SLOT, dca_plan, v2_orders

OTHER_VAULT = str(Pubkey.from_string("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"))


def test_a_renamed_wallet_refuses_another_vault_from_its_first_run(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    first = outcome_of(rig.runner().fire(dca_plan(rig), SLOT - timedelta(hours=2)))
    assert first.status is RunStatus.SUCCEEDED, first
    assert rig.run(first.run_id).wallet == "default"
    ours = rig.emulator.state.v2.vaults[rig.wallet.address]
    rig.emulator.state.v2.vaults[rig.wallet.address] = OTHER_VAULT  # the API changes its word
    landed = len(rig.landed())
    # the config now names the same keypair `main`: a new process, its plans moved over
    renamed = rig.runner(wallet=None, wallets={"main": rig.wallet})
    plan = rig.plan("trigger-v2-dca", dict(DCA_REQUEST), wallet="main")
    second = outcome_of(renamed.fire(plan, SLOT))
    paid = [o.vault for o in v2_orders(rig)]  # before the fix: [ours, OTHER_VAULT]
    assert second.status is not RunStatus.SUCCEEDED, (second, ours, paid)
    assert second.error is not None, second
    assert "a wallet has one vault" in second.error
    assert len(rig.landed()) == landed
    assert paid == [ours]


def test_the_store_pin_follows_the_keypair_not_the_name(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    first = outcome_of(rig.runner().fire(dca_plan(rig), SLOT - timedelta(hours=2)))
    assert first.status is RunStatus.SUCCEEDED, first
    ours = rig.emulator.state.v2.vaults[rig.wallet.address]
    store = SqlRunStore(rig.engine)
    assert store.trigger_v2_vault("main", rig.wallet.address) == ours  # renamed
    assert store.trigger_v2_vault("main", Wallet.generate().address) is None  # another key
    assert store.trigger_v2_vault("default", OTHER_VAULT) is None  # the old name, another key


def test_a_name_once_anothers_does_not_hide_the_keypairs_vault(
    make_rig: RigFactory, db_url: str
) -> None:
    """The new name's latest signed runs are another keypair's (the name was used by
    it before): the keypair's own vault, paid under its old name, is still its pin."""
    rig = make_rig(loopback=True, db_url=db_url)
    first = outcome_of(rig.runner().fire(dca_plan(rig), SLOT - timedelta(hours=3)))
    assert first.status is RunStatus.SUCCEEDED, first
    ours = rig.emulator.state.v2.vaults[rig.wallet.address]
    other = Wallet.generate()
    theirs_runner = rig.runner(wallet=None, wallets={"main": other})
    theirs_plan = rig.plan("trigger-v2-dca", dict(DCA_REQUEST), wallet="main")
    theirs = outcome_of(theirs_runner.fire(theirs_plan, SLOT - timedelta(hours=2)))
    assert theirs.status is RunStatus.SUCCEEDED, theirs
    their_vault = rig.emulator.state.v2.vaults[other.address]
    assert their_vault != ours
    store = SqlRunStore(rig.engine)
    assert store.trigger_v2_vault("main", other.address) == their_vault
    assert store.trigger_v2_vault("main", rig.wallet.address) == ours
    rig.emulator.state.v2.vaults[rig.wallet.address] = OTHER_VAULT  # the API changes its word
    renamed = rig.runner(wallet=None, wallets={"main": rig.wallet})
    plan = rig.plan("trigger-v2-dca", dict(DCA_REQUEST), wallet="main")
    second = outcome_of(renamed.fire(plan, SLOT))
    assert second.status is not RunStatus.SUCCEEDED, second
    assert OTHER_VAULT not in [o.vault for o in v2_orders(rig)]
