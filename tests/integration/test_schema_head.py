"""The schema `upgrade head` leaves on an empty database equals the one the models
describe (`create_all` on another empty database, plus the live views of
`jupcron.store.views`), on SQLite and PostgreSQL: tables, columns (type, nullability),
defaults, primary and foreign keys, indexes, unique and check constraints, the views and
their definitions. Since the migrations carry frozen SQL, a model or view changed
without a migration shows up here."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, inspect, text

from jupcron.store import migrate, views
from jupcron.store.engine import make_engine
from jupcron.store.models import Base
from tests.support.pgcluster import PgCluster

_names = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def models_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A second empty database on the backend of `empty_db_url`."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'models.db'}"
        return
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    name = f"models{next(_names)}"
    url = cluster.create_database(name)
    try:
        yield url
    finally:
        cluster.drop_database(name)


@pytest.fixture
def migrated_db_url(models_db_url: str, request: pytest.FixtureRequest) -> str:
    """An empty database on the same backend as `models_db_url`, for the migrations."""
    name = "sqlite_empty_url" if models_db_url.startswith("sqlite") else "pg_empty_url"
    return str(request.getfixturevalue(name))


def _sql(definition: str | None) -> str:
    """A view's text without its ``CREATE VIEW … AS`` and with spaces normalised."""
    body = re.sub(r"\s+", " ", definition or "").strip()
    return re.sub(r"^CREATE VIEW \w+ AS ", "", body, flags=re.IGNORECASE).rstrip(";").strip()


def schema_of(engine: Engine) -> dict[str, Any]:
    """The schema as the database reports it (the migration bookkeeping aside)."""
    insp = inspect(engine)
    tables: dict[str, Any] = {}
    for table in sorted(set(insp.get_table_names()) - {"alembic_version"}):
        tables[table] = {
            "columns": sorted(  # by name: a column added later comes last, and that is fine
                (
                    c["name"],
                    repr(c["type"]),
                    c["nullable"],
                    c.get("default"),
                    c.get("autoincrement") is True,
                )
                for c in insp.get_columns(table)
            ),
            "primary key": insp.get_pk_constraint(table)["constrained_columns"],
            "foreign keys": sorted(
                (
                    tuple(f["constrained_columns"]),
                    f["referred_table"],
                    tuple(f["referred_columns"]),
                    f["name"],
                )
                for f in insp.get_foreign_keys(table)
            ),
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in insp.get_indexes(table)
            ),
            "unique": sorted(
                (u["name"], tuple(u["column_names"])) for u in insp.get_unique_constraints(table)
            ),
            "checks": sorted((c["name"], c["sqltext"]) for c in insp.get_check_constraints(table)),
        }
    found_views = {
        view: {
            "columns": [c["name"] for c in insp.get_columns(view)],
            "sql": _sql(insp.get_view_definition(view)),
        }
        for view in sorted(insp.get_view_names())
    }
    return {"tables": tables, "views": found_views}


def _models_schema(url: str) -> dict[str, Any]:
    engine = make_engine(url)
    try:
        Base.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(text(views.FILLS_VIEW_SQL))
            conn.execute(text(views.AUDIT_VIEW_SQL))
        return schema_of(engine)
    finally:
        engine.dispose()


def _migrated_schema(url: str) -> dict[str, Any]:
    migrate.upgrade(url)
    engine = make_engine(url)
    try:
        return schema_of(engine)
    finally:
        engine.dispose()


def test_upgrade_head_gives_the_schema_of_the_models(
    models_db_url: str, migrated_db_url: str
) -> None:
    want = _models_schema(models_db_url)
    got = _migrated_schema(migrated_db_url)
    assert want["tables"], "the models created no table: nothing was compared"
    assert set(want["views"]) == {"audit", "fills"}
    assert sorted(got["tables"]) == sorted(want["tables"])
    for table in want["tables"]:
        assert got["tables"][table] == want["tables"][table], table
    assert got["views"] == want["views"]


def test_the_comparison_sees_a_drift(models_db_url: str, migrated_db_url: str) -> None:
    """Not vacuous: an index dropped, a table added and a view's text changed behind
    the migrations' back are each seen."""
    want = _models_schema(models_db_url)
    engine = make_engine(models_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("DROP INDEX ix_runs_status"))
            conn.execute(text("CREATE TABLE extra (id INTEGER PRIMARY KEY)"))
            conn.execute(text("DROP VIEW audit"))
            conn.execute(text(views.AUDIT_VIEW_SQL.replace("AS fills", "AS fills_count")))
        changed = schema_of(engine)
    finally:
        engine.dispose()
    assert changed["tables"]["runs"]["indexes"] != want["tables"]["runs"]["indexes"]
    assert "extra" in changed["tables"]
    assert changed["views"]["audit"] != want["views"]["audit"]
