"""`jupcron.store.bulk.insert_rows` stores what the ORM's INSERT stores, byte for
byte (SQLite keeps datetimes as text: another text for the same instant would break
the order of the scheduler's keyset pages), on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import String, cast, insert, select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.store.bulk import insert_rows
from jupcron.store.engine import transaction
from jupcron.store.plansync import PLANS


def _row(name: str, when: datetime) -> dict[str, Any]:
    return {"name": name, "kind": "swap", "schedule": {"every": 3600, "timezone": "UTC"},
            "request": {"amount": 1, "inputMint": "x", "é": [1.5, None]},
            "settings": {"dry_run": False}, "enabled": True, "description": None,
            "wallet": "default", "source": "/p.yaml", "content_hash": "h" * 64, "version": 1,
            "created_at": when, "updated_at": when.astimezone(timezone(timedelta(hours=2))),
            "next_fire": when + timedelta(minutes=1), "fire_version": None}  # fmt: skip


def test_rows_in_bulk_are_stored_as_the_orm_stores_them(
    plans_factory: sessionmaker[Session],
) -> None:
    moments = [datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 0, 1, 5, tzinfo=UTC)]
    with transaction(plans_factory) as session:
        insert_rows(session, PLANS, [_row(f"bulk{n}", at) for n, at in enumerate(moments)])
        for n, at in enumerate(moments):
            session.execute(insert(PLANS), [_row(f"orm{n}", at)])
    columns = [c for c in PLANS.c if c.name not in ("id", "name")]
    with plans_factory() as session:
        stored = {
            row[0]: row[1:]
            for row in session.execute(
                select(PLANS.c.name, *(cast(c, String) for c in columns)).order_by(PLANS.c.id)
            )
        }
    assert stored["bulk0"] == stored["orm0"]
    assert stored["bulk1"] == stored["orm1"]
    assert stored["bulk0"] != stored["bulk1"]
