"""A `safety.caps` budget follows the keypair, not the wallet's configured name, with
the real runner over loopback HTTP to the emulator, on SQLite and PostgreSQL.

Renaming a wallet (`default` -> `main`, the same keypair) must not restart its
day/week windows: with a 7 USDC/day cap, a 5 USDC swap under `default` then one under
`main` is 10 USDC out of the same keypair in a day; the second must be skipped with the
cap's reason and nothing signed. Runs recorded before the keypair was (migration
0013_run_owner) still count under their name, and another keypair that takes the old
name has a budget of its own."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.store import migrate
from jupcron.store.types import UTCDateTime
from tests.fixtures.runner import SOL, USDC, Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
FIVE_USDC = 5_000_000  # what the rig's swap plan puts in
PER_DAY = 7_000_000
BEFORE_OWNER = "0012_plan_files"  # the revision before runs recorded their keypair


def cap(wallet: str | None = None) -> list[dict[str, object]]:
    entry: dict[str, object] = {"mint": USDC, "per_day": PER_DAY}
    if wallet is not None:
        entry["wallet"] = wallet
    return [entry]


def fire(rig: Rig, runner_wallets: dict[str, Wallet], wallet: str) -> int:
    """A 5 USDC swap of a plan of wallet `wallet`, by a runner holding `runner_wallets`
    (the config as it names the keypairs at that moment); the run's id."""
    runner = rig.runner(wallet=None, wallets=runner_wallets)
    plan = rig.plan("swap", wallet=wallet)
    return outcome_of(runner.fire(plan, SLOT)).run_id


def owner_of(rig: Rig, run_id: int) -> str | None:
    with rig.engine.connect() as conn:
        found = conn.execute(sa.text("SELECT owner FROM runs WHERE id = :id"), {"id": run_id})
        owner: str | None = found.scalar_one()
        return owner


def signer(rig: Rig, run_id: int) -> str:
    signed = rig.run(run_id).signed_tx
    assert signed is not None
    return str(VersionedTransaction.from_bytes(base64.b64decode(signed)).message.account_keys[0])


def assert_capped(rig: Rig, run_id: int, wallet: str, used: int) -> None:
    """Skipped by the config cap, before any order was asked for or anything signed."""
    run = rig.run(run_id)
    assert run.status is RunStatus.SKIPPED, (run.status, run.error)
    assert run.error == (
        f"cap on {USDC} per_day={PER_DAY} (wallet {wallet}) would be exceeded: "
        f"{used} already committed, this run adds {FIVE_USDC}"
    )
    assert run.request_id is None
    assert run.signed_tx is None
    assert run.signature is None


@pytest.mark.parametrize("named", [None, "main"], ids=["every-wallet", "wallet-main"])
def test_a_renamed_wallet_keeps_its_day_budget(
    make_rig: RigFactory, db_url: str, named: str | None
) -> None:
    """7 USDC/day: 5 under `default`, then the same keypair as `main`: skipped. A cap
    naming `main` selects the runs by that name but counts that keypair's spend, the 5
    it put in as `default` among it."""
    rig = make_rig(
        loopback=True, db_url=db_url, safety={"caps": cap(named)},
        wallets={"main": {"keypair": "/k/main.json"}},
    )  # fmt: skip
    keypair = rig.wallet
    first = fire(rig, {"default": keypair}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED
    issued = rig.issued()

    second = fire(rig, {"main": keypair}, "main")  # renamed: the same keypair

    assert_capped(rig, second, "main", FIVE_USDC)
    assert rig.issued() == issued  # no order asked for
    assert [e.owner for e in rig.landed()] == [keypair.address]  # one swap landed
    assert owner_of(rig, first) == owner_of(rig, second) == keypair.address


def test_another_keypair_under_the_old_name_has_its_own_budget(
    make_rig: RigFactory, db_url: str
) -> None:
    """`default` -> `main` for keypair A, and a new keypair B takes the name `default`:
    A's 5 USDC counts against A (now `main`), not against B."""
    rig = make_rig(loopback=True, db_url=db_url, safety={"caps": cap()})
    a, b = rig.wallet, Wallet.generate()
    first = fire(rig, {"default": a}, "default")
    assert rig.run(first).status is RunStatus.SUCCEEDED

    renamed = {"main": a, "default": b}
    by_b = fire(rig, renamed, "default")
    by_a = fire(rig, renamed, "main")

    assert rig.run(by_b).status is RunStatus.SUCCEEDED, rig.run(by_b).error
    assert signer(rig, by_b) == b.address
    assert_capped(rig, by_a, "main", FIVE_USDC)
    assert sorted(e.owner for e in rig.landed()) == sorted([a.address, b.address])


# runs as revision 0012 has them: no owner column yet
_OLD_RUNS = sa.Table(
    "runs", sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("plan_id", sa.Integer), sa.Column("plan_version", sa.Integer),
    sa.Column("scheduled_for", UTCDateTime()), sa.Column("status", sa.String(16)),
    sa.Column("trigger", sa.String(16)), sa.Column("attempts", sa.Integer),
    sa.Column("created_at", UTCDateTime()), sa.Column("updated_at", UTCDateTime()),
    sa.Column("finished_at", UTCDateTime()), sa.Column("wallet", sa.String(64)),
    sa.Column("input_mint", sa.String(64)), sa.Column("in_amount", sa.String(40)),
    sa.Column("output_mint", sa.String(64)),
)  # fmt: skip


def test_a_run_from_before_the_upgrade_still_counts_under_its_name(
    make_rig: RigFactory, empty_db_url: str
) -> None:
    """A store at 0012 with a 5 USDC run of `default` finished an hour ago, upgraded to
    head: the row has no owner, and still counts against the keypair named `default`
    now (a wallet's budget is not restarted by the upgrade)."""
    migrate.upgrade(empty_db_url, BEFORE_OWNER)
    rig = make_rig(loopback=True, db_url=empty_db_url, safety={"caps": cap()})
    plan = rig.plan("swap")
    now = datetime.now(UTC)
    with rig.engine.begin() as conn:
        old = conn.execute(
            _OLD_RUNS.insert().returning(_OLD_RUNS.c.id),
            {"plan_id": plan.id, "plan_version": plan.version,
             "scheduled_for": now - timedelta(hours=1), "status": "succeeded",
             "trigger": "schedule", "attempts": 1, "created_at": now - timedelta(hours=1),
             "updated_at": now - timedelta(hours=1), "finished_at": now - timedelta(hours=1),
             "wallet": "default", "input_mint": USDC, "in_amount": str(FIVE_USDC),
             "output_mint": SOL},
        ).scalar_one()  # fmt: skip
    rig.engine.dispose()
    migrate.upgrade(empty_db_url)
    assert owner_of(rig, old) is None

    run = fire(rig, {"default": rig.wallet}, "default")

    assert_capped(rig, run, "default", FIVE_USDC)
    assert rig.landed() == []
    assert owner_of(rig, run) == rig.wallet.address
