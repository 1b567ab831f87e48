"""Repository functions for plans. Each takes a session and returns plain values.

`apply` syncs a set of validated plans into the store in the caller's
transaction: new plans are added, changed ones get a new version (every
version is kept in ``plan_versions``), and plans that are gone are disabled,
never deleted (runs point at them). Every apply that changes a plan bumps
``plans_revision`` in ``store_meta``; running daemons watch it to reload.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import StoreError
from jupcron.plans.schema import wallet_content
from jupcron.store.models import Plan, PlanVersion, StoreMeta
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)

REVISION_KEY = "plans_revision"


@dataclass(frozen=True)
class PlanInput:
    """One valid plan as the store keeps it (see `jupcron.plans.apply.to_input`)."""

    name: str
    kind: str
    schedule: dict[str, Any]
    request: dict[str, Any]
    settings: dict[str, Any]
    enabled: bool = True
    description: str | None = None
    source: str | None = None
    wallet: str = DEFAULT_WALLET

    def content(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "schedule": self.schedule,
            "request": self.request,
            "settings": self.settings,
            "enabled": self.enabled,
            "description": self.description,
            **wallet_content(self.wallet),
        }

    def content_hash(self) -> str:
        return _hash(self.content())


@dataclass(frozen=True)
class PlanDiff:
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    revision: int | None = None  # the store's plans revision after the apply
    versions: dict[str, int] = field(default_factory=dict, compare=False)
    # per changed plan: its fields that changed, as ``path: old → new`` lines
    changes: dict[str, list[str]] = field(default_factory=dict, compare=False)

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.disabled)

    def lines(self, fields: bool = False) -> list[str]:
        """``+ added``, ``~ changed (version N)``, ``- disabled``, in that order; with
        `fields`, each changed plan's fields below it (``    path: old → new``)."""
        out = [f"+ {name}" for name in self.added]
        for name in self.changed:
            out.append(f"~ {name} (version {self.versions.get(name, '?')})")
            if fields:
                out += [f"    {change}" for change in self.changes.get(name, [])]
        out += [f"- {name} (disabled)" for name in self.disabled]
        return out


def all_plans(session: Session) -> list[PlanRecord]:
    return _records(session, _SELECT_PLANS)


def enabled_plans(session: Session) -> list[PlanRecord]:
    return _records(session, _SELECT_PLANS.where(Plan.enabled.is_(True)))


def enabled_page(session: Session, offset: int, limit: int) -> list[PlanRecord]:
    """One page of the enabled plans, by name (the status page's 100 of 10,000)."""
    stmt = _SELECT_PLANS.where(Plan.enabled.is_(True)).offset(offset).limit(limit)
    return _records(session, stmt)


# Core rows, streamed: the daemon loads every plan at start and on each change, and
# 10,000 ORM objects (with their identity map) at once were a peak of their own
PLAN_COLUMNS = tuple(getattr(Plan, f.name) for f in fields(PlanRecord))
_SELECT_PLANS = select(*PLAN_COLUMNS).order_by(Plan.name)
_CHUNK = 500


def _records(session: Session, stmt: Select[Any]) -> list[PlanRecord]:
    """The plans `stmt` selects; one that cannot be read is left out, with an error."""
    out: list[PlanRecord] = []
    for row in session.execute(stmt.execution_options(yield_per=_CHUNK)):
        try:
            out.append(PlanRecord.from_mapping(row._mapping))
        except ValueError as exc:
            log.error("plan_unreadable", plan=row.name, error=str(exc))
    return out


def _record(row: Plan | None) -> PlanRecord | None:
    if row is None:
        return None
    try:
        return PlanRecord.from_row(row)
    except ValueError as exc:
        raise StoreError(str(exc)) from None


def count_enabled(session: Session) -> int:
    """How many plans are enabled (without loading them)."""
    query = select(func.count()).select_from(Plan).where(Plan.enabled.is_(True))
    return int(session.scalar(query) or 0)


def wallets_in_use(session: Session) -> set[str]:
    """The wallets (their names) the enabled plans name."""
    query = select(Plan.wallet).where(Plan.enabled.is_(True)).distinct()
    return set(session.scalars(query))


def plan_by_id(session: Session, plan_id: int) -> PlanRecord | None:
    return _record(session.get(Plan, plan_id))


def get_plan(session: Session, name: str) -> PlanRecord | None:
    return _record(session.scalars(select(Plan).where(Plan.name == name)).one_or_none())


def revision(session: Session) -> int:
    """The plans revision: changes whenever `apply` writes."""
    row = session.get(StoreMeta, REVISION_KEY)
    return int(row.value) if row is not None else 0


def versions(session: Session, name: str) -> list[tuple[int, dict[str, Any], bool]]:
    """Every stored version of a plan: (version, content, enabled), oldest first."""
    rows = session.execute(
        select(PlanVersion.version, PlanVersion.content, PlanVersion.enabled)
        .join(Plan, Plan.id == PlanVersion.plan_id)
        .where(Plan.name == name)
        .order_by(PlanVersion.version)
    )
    return [(v, dict(c), e) for v, c, e in rows]


def diff(
    session: Session, plans: Sequence[PlanInput], scanned: Collection[str] | None = None
) -> PlanDiff:
    """What `apply` would do, without writing."""
    return _sync(session, plans, None, scanned)


def apply(
    session: Session,
    plans: Sequence[PlanInput],
    now: datetime,
    scanned: Collection[str] | None = None,
) -> PlanDiff:
    """Sync `plans` into the store (in the caller's transaction); bump the revision
    when a plan was added, changed or disabled.

    A stored plan missing from `plans` is disabled when `scanned` is None (the
    input is the complete set), or when its source file was scanned or no
    longer exists (its file is gone). Other stored plans are left alone.
    """
    rev = _lock_revision(session, now)
    result = _sync(session, plans, now, scanned)
    if not result.empty:  # nothing to reschedule: running daemons need not reload
        rev.value = str(int(rev.value) + 1)
    session.flush()
    return PlanDiff(
        added=result.added,
        changed=result.changed,
        disabled=result.disabled,
        unchanged=result.unchanged,
        revision=int(rev.value),
        versions=result.versions,
        changes=result.changes,
    )


def _lock_revision(session: Session, now: datetime) -> StoreMeta:
    """Take the revision row FOR UPDATE: concurrent applies run one after the other."""
    row = session.get(StoreMeta, REVISION_KEY, with_for_update=True)
    if row is None:
        row = StoreMeta(key=REVISION_KEY, value="0")
        session.add(row)
        session.flush()
    return row


def _gone(source: str | None, scanned: Collection[str] | None) -> bool:
    if scanned is None or source is None:
        return True
    return source in scanned or not Path(source).exists()


def _sync(
    session: Session,
    plans: Sequence[PlanInput],
    now: datetime | None,
    scanned: Collection[str] | None,
) -> PlanDiff:
    """Compute the diff; with `now`, also write it."""
    stored = {p.name: p for p in session.scalars(select(Plan))}
    added: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    disabled: list[str] = []
    versions_after: dict[str, int] = {}
    changes: dict[str, list[str]] = {}
    new_rows: list[tuple[Plan, PlanInput]] = []  # their versions once they have ids
    for plan in plans:
        digest = plan.content_hash()
        row = stored.get(plan.name)
        if row is None:
            added.append(plan.name)
            versions_after[plan.name] = 1
            if now is not None:
                row = Plan(name=plan.name, version=1, created_at=now)
                _fill(row, plan, digest, now)
                session.add(row)
                new_rows.append((row, plan))
                if len(new_rows) >= FLUSH_BATCH:
                    _add_new_versions(session, new_rows, now)
        elif row.content_hash != digest:
            changed.append(plan.name)
            changes[plan.name] = field_changes(_content_of(row), plan.content())
            versions_after[plan.name] = row.version + 1
            if now is not None:
                row.version += 1
                _fill(row, plan, digest, now)
                _add_version(session, row, plan.content(), now)
        else:
            unchanged.append(plan.name)
            if now is not None and plan.source and row.source != plan.source:
                row.source = plan.source  # moved to another file: same plan, same version
    if now is not None:
        _add_new_versions(session, new_rows, now)
    wanted = {p.name for p in plans}
    for name, row in sorted(stored.items()):
        if name in wanted or not row.enabled or not _gone(row.source, scanned):
            continue
        disabled.append(name)
        versions_after[name] = row.version + 1
        if now is not None:
            row.version += 1
            row.enabled = False
            row.updated_at = now
            content = _content_of(row)
            row.content_hash = _hash(content)
            _add_version(session, row, content, now)
    if now is not None:
        session.flush()
    return PlanDiff(
        added=tuple(sorted(added)),
        changed=tuple(sorted(changed)),
        disabled=tuple(disabled),
        unchanged=tuple(sorted(unchanged)),
        versions=versions_after,
        changes=changes,
    )


# new plans inserted together, this many a flush: one round trip a plan was most of a
# large apply's store time; a bounded batch keeps the pending rows' memory bounded too
FLUSH_BATCH = 500


def _add_new_versions(
    session: Session, new_rows: list[tuple[Plan, PlanInput]], now: datetime
) -> None:
    """Flush the new plans (which gives them their ids), then add their first
    versions; `new_rows` is emptied."""
    if not new_rows:
        return
    session.flush()
    for row, plan in new_rows:
        _add_version(session, row, plan.content(), now)
    new_rows.clear()


def field_changes(old: Any, new: Any, path: str = "") -> list[str]:
    """What differs between two plan contents, one ``path: old → new`` line per field
    (nested mappings by dotted path; a list compared whole)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted({*old, *new}, key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in new:
                out.append(f"{where}: {_shown(old[key])} → (removed)")
            elif key not in old:
                out.append(f"{where}: (none) → {_shown(new[key])}")
            else:
                out += field_changes(old[key], new[key], where)
        return out
    return [] if old == new else [f"{path}: {_shown(old)} → {_shown(new)}"]


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:119] + "…"


def _fill(row: Plan, plan: PlanInput, digest: str, now: datetime) -> None:
    row.kind = plan.kind
    row.schedule = plan.schedule
    row.request = plan.request
    row.settings = plan.settings
    row.enabled = plan.enabled
    row.description = plan.description
    row.source = plan.source
    row.wallet = plan.wallet
    row.content_hash = digest
    row.updated_at = now


def _content_of(row: Plan) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "schedule": row.schedule,
        "request": row.request,
        "settings": row.settings,
        "enabled": row.enabled,
        "description": row.description,
        **wallet_content(row.wallet),
    }


def _hash(content: dict[str, Any]) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _add_version(session: Session, row: Plan, content: dict[str, Any], now: datetime) -> None:
    session.add(
        PlanVersion(
            plan_id=row.id,
            version=row.version,
            content={**content, "name": row.name, "source": row.source},
            content_hash=row.content_hash,
            enabled=row.enabled,
            created_at=now,
        )
    )
