"""Runs stored before 0013_run_owner are counted by their keypair once the store is
upgraded, not by the wallet name they were claimed under: with the real runner over
loopback HTTP to the emulator, on SQLite and PostgreSQL.

Before, a run from before the upgrade counted under its wallet's *name* only, so the
very rename that 0013 made harmless still restarted a cap's window for the runs of the
day of the upgrade: 5 USDC signed as `default` at 0012, `jupcron db upgrade`, the same
keypair renamed `main`, and 5 more USDC were signed under a 7 USDC/day cap. Such a
run's keypair is in its row all along: the key its signature in the transaction it
signed stands for, which the migration writes into `runs.owner`."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.store import migrate
from tests.fixtures.runner import SOL, USDC, RigFactory
from tests.integration.test_caps_follow_the_keypair import (
    _OLD_RUNS,
    BEFORE_OWNER,
    FIVE_USDC,
    assert_capped,
    cap,
    fire,
    owner_of,
)

# runs as revision 0012 has them, with the columns that tell a run's keypair
_OLD = sa.Table(
    "runs", sa.MetaData(), *(sa.Column(c.name, c.type, primary_key=c.primary_key)
                             for c in _OLD_RUNS.columns),
    sa.Column("signature", sa.String(100)), sa.Column("signed_tx", sa.Text),
)  # fmt: skip


def _as_before_the_upgrade(engine: sa.Engine, url: str) -> None:
    """The store taken back to 0012 (runs.owner dropped, every run kept), then upgraded
    to head again: its runs are rows from before 0013, as `db upgrade` finds them."""
    engine.dispose()
    migrate.downgrade(url, BEFORE_OWNER)
    migrate.upgrade(url)
    engine.dispose()


def test_an_upgraded_run_counts_by_its_signer_after_a_rename(
    make_rig: RigFactory, db_url: str
) -> None:
    """7 USDC/day: 5 signed under `default` before the upgrade, then the same keypair as
    `main` after it: skipped by the cap, nothing more ordered or signed."""
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    keypair = rig.wallet
    first = fire(rig, {"default": keypair}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED
    _as_before_the_upgrade(rig.engine, db_url)
    issued = rig.issued()

    second = fire(rig, {"main": keypair}, "main")

    assert_capped(rig, second, "main", FIVE_USDC)
    assert rig.issued() == issued
    assert [e.owner for e in rig.landed()] == [keypair.address]
    assert owner_of(rig, first) == keypair.address  # the key its signature is of


def test_an_upgraded_run_is_not_counted_against_a_new_keypair_of_its_name(
    make_rig: RigFactory, db_url: str
) -> None:
    """The other side of the same row: keypair A signed 5 USDC as `default` before the
    upgrade; after it, a new keypair B is `default`: A's spend is A's, B has its own
    budget (as for runs recorded after 0013)."""
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    a = rig.wallet
    first = fire(rig, {"default": a}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED
    _as_before_the_upgrade(rig.engine, db_url)

    b = Wallet.generate()
    by_b = fire(rig, {"default": b, "main": a}, "default")

    assert rig.run(by_b).status is RunStatus.SUCCEEDED, rig.run(by_b).error


def test_a_run_that_signed_nothing_keeps_no_owner(make_rig: RigFactory, db_url: str) -> None:
    """Only a signature of ours tells a run's keypair: a run only ordered (its unsigned
    transaction kept, nothing signed) and a run skipped by the cap stay NULL, counted
    under their name (the single signer of an unsigned transaction may be a stranger's
    key the guard refused)."""
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    ordered = fire(rig, {"default": rig.wallet}, "default")
    assert rig.run(ordered).status is RunStatus.SUCCEEDED
    bare = fire(rig, {"default": rig.wallet}, "default")
    assert rig.run(bare).status is RunStatus.SKIPPED
    with rig.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE runs SET unsigned_tx = signed_tx, signed_tx = NULL, signature = NULL "
                    "WHERE id = :id"),
            {"id": ordered},
        )  # fmt: skip
    _as_before_the_upgrade(rig.engine, db_url)

    assert owner_of(rig, ordered) is None
    assert owner_of(rig, bare) is None


def _two_signer_tx(payer: Keypair, ours: Keypair) -> tuple[str, str]:
    """A real transaction another party pays the fee of and signs first (as a gasless
    order is), our key the second signer: its base64 and our signature."""
    move = transfer(TransferParams(from_pubkey=ours.pubkey(), to_pubkey=payer.pubkey(), lamports=1))
    message = Message.new_with_blockhash([move], payer.pubkey(), Hash.default())
    tx = VersionedTransaction(message, [payer, ours])
    keys = [str(k) for k in tx.message.account_keys[:2]]
    assert keys == [str(payer.pubkey()), str(ours.pubkey())]
    return base64.b64encode(bytes(tx)).decode("ascii"), str(tx.signatures[1])


def test_a_run_another_party_paid_for_is_given_our_key_not_the_fee_payer(
    make_rig: RigFactory, db_url: str
) -> None:
    """A 0012 store with a signed run whose fee payer is not ours: after the upgrade its
    owner is the key its signature (runs.signature) is of; one without our signature
    among two signers stays NULL (the position of a key does not make it ours).

    (Taken down from head: `make_rig` copies a head template over the SQLite file of
    `empty_db_url`, so an `upgrade(empty_db_url, 0012)` before it is undone.)"""
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    plan = rig.plan("swap")
    rig.engine.dispose()
    migrate.downgrade(db_url, BEFORE_OWNER)
    with rig.engine.connect() as conn:
        assert "owner" not in {c["name"] for c in sa.inspect(conn).get_columns("runs")}
    payer, ours = Keypair(), Keypair()
    blob, signature = _two_signer_tx(payer, ours)
    now = datetime.now(UTC)
    row = {
        "plan_id": plan.id, "plan_version": plan.version, "status": "succeeded",
        "trigger": "schedule", "attempts": 1, "created_at": now, "updated_at": now,
        "finished_at": now, "wallet": "default", "input_mint": USDC,
        "in_amount": str(FIVE_USDC), "output_mint": SOL, "signed_tx": blob,
    }  # fmt: skip
    with rig.engine.begin() as conn:
        mine = conn.execute(
            _OLD.insert().returning(_OLD.c.id),
            {**row, "scheduled_for": now, "signature": signature},
        ).scalar_one()
        theirs = conn.execute(
            _OLD.insert().returning(_OLD.c.id),
            {**row, "scheduled_for": now + timedelta(hours=1), "signature": None},
        ).scalar_one()
    rig.engine.dispose()
    migrate.upgrade(db_url)

    assert owner_of(rig, mine) == str(ours.pubkey())
    assert owner_of(rig, theirs) is None  # no signature of ours: it cannot tell


def test_a_store_upgraded_to_0013_before_the_fill_is_filled_by_the_next_upgrade(
    make_rig: RigFactory, db_url: str
) -> None:
    """A store that `db upgrade` took to 0013_run_owner before 0014 existed: its runs
    from before have no owner; the next upgrade gives them the key of their signature."""
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    keypair = rig.wallet
    first = fire(rig, {"default": keypair}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED
    rig.engine.dispose()
    migrate.downgrade(db_url, "0013_run_owner")
    with rig.engine.begin() as conn:  # as 0013 left them
        conn.execute(sa.text("UPDATE runs SET owner = NULL"))
    rig.engine.dispose()
    migrate.upgrade(db_url)
    rig.engine.dispose()
    assert owner_of(rig, first) == keypair.address
    second = fire(rig, {"main": keypair}, "main")
    assert_capped(rig, second, "main", FIVE_USDC)
