"""`plans apply` writes its changed and disabled plans a chunk at a time (one SELECT of
the old contents, one prepared UPDATE run for many rows, the new versions inserted in
bulk): each plan's row, new version and diff lines are what the former one-plan-at-a-
time statements wrote, on both backends. Spelled out here from the rules themselves,
over more plans than a chunk (`READ_CHUNK`), so rows of several chunks and pages mix:
a changed plan's row takes its new content, hash, version + 1 and the apply's time; its
``next_fire`` is left to the scheduler, and ``fire_version`` is set to the version it
had only when an older apply left it unadopted (NULL); a disabled plan keeps its
content, disabled; each gets one version row, its JSON the text ``json.dumps`` made
(the ORM's, which the one-row INSERT used)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import String, bindparam, cast, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import DEFAULT_WALLET
from jupcron.plans.schema import wallet_content
from jupcron.store import plans as store_plans
from jupcron.store.bulk import update_rows
from jupcron.store.engine import transaction
from jupcron.store.plans import PlanInput, field_changes
from jupcron.store.plansync import PLANS, READ_CHUNK, SHOWN, VERSIONS

N = 2 * READ_CHUNK + 150  # three chunks of the files' plans, three pages of the gone
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(hours=5, microseconds=7)
_CONTENT = ("kind", "schedule", "request", "settings", "enabled", "description")


def _first(i: int) -> PlanInput:
    return PlanInput(
        name=f"p{i:05d}", kind="swap",
        schedule={"cron": f"{i % 60} {i % 24} * * *", "timezone": "UTC"},
        request={"inputMint": "USDC", "outputMint": "SOL", "amount": 1_000 + i},
        settings={"dry_run": False, "caps": {"per_day": None}},
        enabled=i % 11 != 0, description=None if i % 2 else f"plan {i}",
        source=f"/plans/f{i % 3}.yaml", wallet="hot" if i % 7 == 0 else DEFAULT_WALLET,
    )  # fmt: skip


def _second(i: int) -> PlanInput | None:
    """The plan in the second apply: gone (None), changed (amount, wallet, enabled or
    description), unchanged, or moved to another file."""
    plan = _first(i)
    match i % 6:
        case 0:
            return None
        case 1:
            return replace(plan, request={**plan.request, "amount": 7})
        case 2:
            return replace(plan, wallet=DEFAULT_WALLET if i % 7 == 0 else "cold")
        case 3:
            return replace(plan, enabled=not plan.enabled, description="é ✓")
        case 4:
            return replace(plan, source="/plans/moved.yaml")
    return plan


def _stored(session: Session) -> dict[str, dict[str, Any]]:
    """Every plan row by name: its columns as the database's text (the bytes kept)."""
    columns = [c for c in PLANS.c if c.name != "name"]
    rows = session.execute(select(PLANS.c.name, *(cast(c, String).label(c.name) for c in columns)))
    return {row.name: dict(row._mapping) for row in rows}


def _versions(session: Session) -> dict[tuple[str, int], dict[str, Any]]:
    columns = [c for c in VERSIONS.c if c.name not in ("id", "version")]
    rows = session.execute(
        select(PLANS.c.name, VERSIONS.c.version,
               *(cast(c, String).label(c.name) for c in columns))
        .join(PLANS, PLANS.c.id == VERSIONS.c.plan_id)
    )  # fmt: skip
    return {(row.name, row.version): dict(row._mapping) for row in rows}


def _content(plan: PlanInput) -> dict[str, Any]:
    """A version's content, as the former `_version` built it."""
    content = {k: getattr(plan, k) for k in _CONTENT}
    content.update(name=plan.name, source=plan.source)
    content.update(wallet_content(plan.wallet))
    return content


def test_a_bulk_change_writes_what_the_per_plan_statements_wrote(
    plans_factory: sessionmaker[Session],
) -> None:
    firsts = [_first(i) for i in range(N)]
    with transaction(plans_factory) as s:
        store_plans.apply(s, firsts, T0)
        # an older apply's plans, not yet adopted by a scheduler: settled when changed
        s.execute(text("UPDATE plans SET fire_version = NULL WHERE id % 4 = 0"))
        s.execute(text("UPDATE plans SET version = version + 2, fire_version = version "
                       "WHERE id % 5 = 0"))  # fmt: skip
        before, old_versions = _stored(s), _versions(s)
        revision = store_plans.revision(s)
    seconds = [p for i in range(N) if (p := _second(i)) is not None]
    with transaction(plans_factory) as s:
        dry = store_plans.diff(s, seconds)
    with transaction(plans_factory) as s:
        diff = store_plans.apply(s, seconds, T1)
        after, versions = _stored(s), _versions(s)
        assert store_plans.revision(s) == revision + 1
        # the apply's time as the ORM binds it to a datetime column, as the database's text
        now_text = s.execute(
            select(cast(bindparam("t", T1, type_=PLANS.c.updated_at.type), String))
        ).scalar_one()

    changed, disabled = [], []
    for i in range(N):
        old_plan, new_plan = firsts[i], _second(i)
        old, row = before[old_plan.name], after[old_plan.name]
        version = int(old["version"])
        settled = str(version) if old["fire_version"] is None else old["fire_version"]
        if new_plan is not None and new_plan.content_hash() != old_plan.content_hash():
            changed.append(new_plan.name)
            kept = {k: old[k] for k in ("name", "id", "created_at", "next_fire")}
            assert row == {
                **kept, "kind": "swap", "schedule": json.dumps(new_plan.schedule),
                "request": json.dumps(new_plan.request),
                "settings": json.dumps(new_plan.settings),
                "description": new_plan.description, "source": new_plan.source,
                "content_hash": new_plan.content_hash(), "version": str(version + 1),
                "enabled": row["enabled"], "updated_at": now_text,
                "wallet": new_plan.wallet, "fire_version": settled,
            }, new_plan.name  # fmt: skip
            flipped = new_plan.enabled != old_plan.enabled
            assert (row["enabled"] != old["enabled"]) == flipped, new_plan.name
            assert versions[(new_plan.name, version + 1)] == {
                "name": new_plan.name, "version": version + 1, "plan_id": old["id"],
                "content": json.dumps(_content(new_plan)),
                "content_hash": new_plan.content_hash(), "enabled": row["enabled"],
                "created_at": now_text,
            }, new_plan.name  # fmt: skip
        elif new_plan is None and old_plan.enabled:
            disabled.append(old_plan.name)
            gone = replace(old_plan, enabled=False)
            assert row == {**old, "version": str(version + 1), "enabled": row["enabled"],
                           "content_hash": gone.content_hash(), "updated_at": now_text,
                           "fire_version": settled}, old_plan.name  # fmt: skip
            assert row["enabled"] != old["enabled"]
            assert versions[(old_plan.name, version + 1)] == {
                "name": old_plan.name, "version": version + 1, "plan_id": old["id"],
                "content": json.dumps(_content(gone)),
                "content_hash": gone.content_hash(), "enabled": row["enabled"],
                "created_at": now_text,
            }, old_plan.name  # fmt: skip
        elif new_plan is not None and new_plan.source != old_plan.source:
            assert row == {**old, "source": new_plan.source}, old_plan.name  # moved
        else:
            assert row == old, old_plan.name
    assert len(changed) > READ_CHUNK
    assert len(disabled) > 1
    assert any(before[n]["fire_version"] is None for n in changed + disabled)
    assert any(before[n]["fire_version"] is not None for n in changed + disabled)
    # every older version kept as it was; one new version per changed or disabled plan
    assert {k: versions[k] for k in old_versions} == old_versions
    assert len(versions) == len(old_versions) + len(changed) + len(disabled)

    for result in (dry, diff):
        assert result.count("changed") == len(changed)
        assert result.count("disabled") == len(disabled)
        assert result.changed == tuple(sorted(changed)[: len(result.changed)])
        for name in result.changed:
            i = int(name[1:])
            second = _second(i)
            assert second is not None
            assert result.versions[name] == int(before[name]["version"]) + 1
            assert result.changes[name] == field_changes(_first(i).content(), second.content())
            assert result.changes[name]
        for name in result.disabled:
            assert result.versions[name] == int(before[name]["version"]) + 1


def test_rows_updated_in_bulk_are_stored_as_the_orm_updates_them(
    plans_factory: sessionmaker[Session],
) -> None:
    """`update_rows` (PostgreSQL: one UPDATE … FROM unnest; SQLite: the driver's
    executemany) against SQLAlchemy's UPDATE of the same values: the same text in
    every column (an instant in another zone, JSON with text beyond ASCII, NULLs)."""
    with transaction(plans_factory) as s:
        store_plans.apply(s, [_first(i) for i in range(4)], T0)
    with transaction(plans_factory) as s:
        ids = dict(s.execute(select(PLANS.c.name, PLANS.c.id)).all())
    zone = timezone(timedelta(hours=-3, minutes=-30))
    values: list[dict[str, Any]] = [
        {"request": {"amount": 5, "é": [1.5, None, "✓"]}, "description": None,
         "updated_at": T1.astimezone(zone), "next_fire": None, "fire_version": 4,
         "enabled": False, "content_hash": "c" * 64},
        {"request": {}, "description": "d \"q\" \\ ✓", "updated_at": T1,
         "next_fire": T1 + timedelta(microseconds=1), "fire_version": None,
         "enabled": True, "content_hash": "d" * 64},
    ]  # fmt: skip
    with transaction(plans_factory) as s:
        update_rows(s, PLANS, "id", [
            {**v, "id": ids[f"p{n:05d}"]} for n, v in enumerate(values)
        ])  # fmt: skip
        for n, v in enumerate(values):
            s.execute(update(PLANS).where(PLANS.c.id == ids[f"p{n + 2:05d}"]).values(**v))
    with transaction(plans_factory) as s:
        stored = _stored(s)
    for n in range(2):
        bulk, orm = stored[f"p{n:05d}"], stored[f"p{n + 2:05d}"]
        for key in ("request", "description", "updated_at", "next_fire", "fire_version",
                    "enabled", "content_hash"):  # fmt: skip
            assert bulk[key] == orm[key], key
    assert stored["p00000"]["updated_at"] == stored["p00001"]["updated_at"]


def test_more_changes_than_a_diff_names_each_named_with_its_fields(
    plans_factory: sessionmaker[Session],
) -> None:
    """Only the plans a diff names (the first `SHOWN` by name) have their old content
    read for the changed fields: given in reverse, the later chunks' plans push out
    the first chunk's; every named plan still lists its own fields, and every change
    is written."""
    count = SHOWN + READ_CHUNK // 2
    firsts = [_first(i) for i in range(count)]
    with transaction(plans_factory) as s:
        store_plans.apply(s, firsts, T0)
    seconds = [replace(p, request={**p.request, "amount": i}) for i, p in enumerate(firsts)]
    with transaction(plans_factory) as s:
        diff = store_plans.apply(s, seconds[::-1], T1)
        stored = _stored(s)
    assert diff.count("changed") == count
    assert diff.changed == tuple(p.name for p in firsts[:SHOWN])
    for name in diff.changed:
        i = int(name[1:])
        assert diff.changes[name] == [f"request.amount: {1_000 + i} → {i}"]
        assert f"    request.amount: {1_000 + i} → {i}" in diff.lines(fields=True)
    assert all(stored[p.name]["request"] == json.dumps(p.request) for p in seconds)
    assert all(stored[p.name]["version"] == "2" for p in seconds)
