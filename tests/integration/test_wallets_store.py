"""Wallets in the store (SQLite and PostgreSQL): a plan's wallet is stored and is part
of the diff, a run records its plan's wallet, the audit view shows it, and a store of
0008 (one wallet) upgrades with every row the default wallet's."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.plans.load import load_plans
from jupcron.store import migrate
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.plans import PlanFiles, swap_plan

T0 = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
WALLETS = ("default", "savings")
SLOT = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def test_a_plans_wallet_is_stored_and_moving_it_is_a_change(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"p.yaml": [swap_plan("a"), swap_plan("b", wallet="savings")]})
    diff, _ = apply_paths(plans_factory, [folder], now=T0, wallets=WALLETS)
    assert diff.added == ("a", "b")
    with transaction(plans_factory) as s:
        assert {p.name: p.wallet for p in store_plans.all_plans(s)} == {
            "a": "default",
            "b": "savings",
        }

    folder = plan_files({"p.yaml": [swap_plan("a", wallet="savings"), swap_plan("b")]})
    diff, _ = apply_paths(plans_factory, [folder], now=T0, wallets=WALLETS, dry_run=True)
    assert diff.changed == ("a", "b")
    assert diff.changes == {
        "a": ['wallet: (none) → "savings"'],
        "b": ['wallet: "savings" → (removed)'],
    }
    diff, _ = apply_paths(plans_factory, [folder], now=T0, wallets=WALLETS)
    assert diff.changed == ("a", "b")
    with transaction(plans_factory) as s:
        a = store_plans.get_plan(s, "a")
        assert a is not None
        assert (a.wallet, a.version) == ("savings", 2)
        versions = store_plans.versions(s, "a")
        assert versions[-1][1]["wallet"] == "savings"
        assert "wallet" not in versions[0][1]
    again, _ = apply_paths(plans_factory, [folder], now=T0, wallets=WALLETS)
    assert again.empty


def test_an_unknown_wallet_writes_nothing(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"p.yaml": [swap_plan("a"), swap_plan("b", wallet="trading")]})
    with pytest.raises(PlanError, match="wallet: unknown wallet 'trading'"):
        apply_paths(plans_factory, [folder], now=T0, wallets=WALLETS)
    with transaction(plans_factory) as s:
        assert store_plans.all_plans(s) == []
        assert store_plans.revision(s) == 0


def test_a_run_records_its_plans_wallet_and_the_audit_view_shows_it(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"p.yaml": [swap_plan("a"), swap_plan("b", wallet="savings")]})
    apply_paths(plans_factory, [folder], now=T0, wallets=WALLETS)
    engine = plans_factory.kw["bind"]
    store = SqlRunStore(engine, group_commit=False)
    with transaction(plans_factory) as s:
        plans = {p.name: p for p in store_plans.all_plans(s)}
    for plan in plans.values():
        record = store.claim(plan, SLOT, now=T0, trigger="schedule", claimed_by=None)
        assert record is not None
        assert record.wallet == plan.wallet
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT plan_name, wallet FROM audit ORDER BY plan_name"))
        assert [tuple(r) for r in rows] == [("a", "default"), ("b", "savings")]


def test_a_single_wallet_store_upgrades_to_the_default_wallet(
    empty_db_url: str, tmp_path: Path
) -> None:
    plan_file = tmp_path / "p.yaml"
    plan_file.write_text(json.dumps(swap_plan("old")), encoding="utf-8")
    (loaded,) = load_plans([plan_file]).plans
    spec = loaded.spec
    migrate.upgrade(empty_db_url, "0008_runways")
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:  # a plan and a run as 0008's daemon wrote them
            conn.execute(
                text(
                    "INSERT INTO plans (id, name, kind, schedule, request, settings, source, "
                    "content_hash, version, enabled, created_at, updated_at) VALUES (1, 'old', "
                    "'swap', :schedule, :request, :settings, :source, :hash, 1, :yes, :t, :t)"
                ),
                {
                    "schedule": json.dumps(spec.schedule_dict()),
                    "request": json.dumps(spec.request_dict()),
                    "settings": json.dumps(spec.settings_dict()),
                    "source": str(plan_file.resolve()),
                    "hash": spec.content_hash(),
                    "yes": True,
                    "t": T0,
                },
            )
            conn.execute(
                text(
                    "INSERT INTO runs (id, plan_id, plan_version, scheduled_for, status, "
                    "trigger, attempts, created_at, updated_at) VALUES (7, 1, 1, :slot, "
                    "'succeeded', 'schedule', 1, :t, :t)"
                ),
                {"slot": SLOT, "t": T0},
            )
        migrate.upgrade(empty_db_url)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT wallet FROM plans")).scalar_one() == "default"
            assert conn.execute(text("SELECT wallet FROM runs")).scalar_one() == "default"
            audit = conn.execute(text("SELECT run_id, plan_name, wallet FROM audit"))
            assert [tuple(r) for r in audit] == [(7, "old", "default")]
        factory = session_factory(engine)
        with transaction(factory) as s:
            (record,) = store_plans.all_plans(s)
            assert record.wallet == "default"
        # the same file applied again is no change: the default wallet keeps the hash
        diff, _ = apply_paths(factory, [plan_file], now=T0, wallets=("default",))
        assert diff.unchanged == ("old",)
        assert diff.empty
        migrate.downgrade(empty_db_url, "0008_runways")  # and back, with the rows
        with engine.connect() as conn:
            assert conn.execute(text("SELECT run_id FROM audit")).scalars().all() == [7]
    finally:
        engine.dispose()
