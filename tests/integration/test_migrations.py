"""Migrations on both backends: empty -> head matches the models; head -> base works."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from jupcron.errors import StoreError
from jupcron.store import migrate
from jupcron.store.engine import make_engine
from jupcron.store.models import Base

AUDIT_CONTRACT = {
    "plan_name",
    "kind",
    "scheduled_for",
    "status",
    "request_id",
    "signature",
    "error",
}


def test_upgrade_from_empty_matches_models(empty_db_url: str) -> None:
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            drift = compare_metadata(ctx, Base.metadata)
            alembic_says = MigrationContext.configure(conn).get_current_revision()
        assert drift == []
        # our one-query check and the HEAD constant the daemon uses agree with Alembic
        assert migrate.current(engine) == alembic_says == migrate.head() == migrate.HEAD
    finally:
        engine.dispose()


def test_audit_view_has_the_contract_columns_and_reads_empty(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            result = conn.execute(text("SELECT * FROM audit"))
            assert result.fetchall() == []
            assert set(result.keys()) >= AUDIT_CONTRACT
    finally:
        engine.dispose()


def test_downgrade_to_base_removes_everything(db_url: str) -> None:
    migrate.downgrade(db_url, "base")
    engine = make_engine(db_url)
    try:
        insp = inspect(engine)
        assert set(insp.get_table_names()) <= {"alembic_version"}
        assert "audit" not in insp.get_view_names()
        assert migrate.current(engine) is None
    finally:
        engine.dispose()
    migrate.upgrade(db_url)  # and back up again


def test_require_head_refuses_an_unmigrated_database(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    try:
        with pytest.raises(StoreError, match="jupcron db upgrade"):
            migrate.require_head(engine)
    finally:
        engine.dispose()
