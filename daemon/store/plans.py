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
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import Select, Text, cast, func, select
from sqlalchemy.orm import Session

from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import StoreError
from jupcron.plans.schema import wallet_content
from jupcron.plans.sources import Gone
from jupcron.store.models import Plan, PlanVersion, StoreMeta
from jupcron.store.plansync import PlanSync
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
    # how many of each kind, when more than the names above (a diff names at most
    # `jupcron.store.plansync.SHOWN` of each kind, the first by name)
    counts: dict[str, int] = field(default_factory=dict, compare=False)

    def count(self, kind: str) -> int:
        """How many plans were ``added``, ``changed``, ``disabled`` or ``unchanged``."""
        return self.counts.get(kind, len(getattr(self, kind)))

    @property
    def empty(self) -> bool:
        return not (self.count("added") or self.count("changed") or self.count("disabled"))

    def lines(self, fields: bool = False) -> list[str]:
        """``+ added``, ``~ changed (version N)``, ``- disabled``, in that order; with
        `fields`, each changed plan's fields below it (``    path: old → new``). A kind
        with more plans than it names ends with ``  … and N more added``."""
        out = [f"+ {name}" for name in self.added]
        out += self._more("added")
        for name in self.changed:
            out.append(f"~ {name} (version {self.versions.get(name, '?')})")
            if fields:
                out += [f"    {change}" for change in self.changes.get(name, [])]
        out += self._more("changed")
        out += [f"- {name} (disabled)" for name in self.disabled]
        out += self._more("disabled")
        return out

    def _more(self, kind: str) -> list[str]:
        more = self.count(kind) - len(getattr(self, kind))
        return [f"  … and {more:,} more {kind}"] if more > 0 else []


def all_plans(session: Session) -> list[PlanRecord]:
    return _records(session, _SELECT_PLANS)


def enabled_plans(session: Session) -> list[PlanRecord]:
    return _records(session, _SELECT_PLANS.where(Plan.enabled.is_(True)))


def enabled_alike(
    session: Session, leave_out: Collection[str] = (), *, wallet: str | None = None
) -> Iterator[tuple[PlanRecord, int]]:
    """The enabled plans grouped by content (kind, schedule, request, settings): the
    first by name of each group and how many plans it stands for, counted by the store
    (100,000 plans on 120 schedules: 120 rows to parse). `leave_out`: names (paused);
    `wallet`: that wallet's plans only (None: every plan)."""
    content = [Plan.kind, *(cast(c, Text) for c in (Plan.schedule, Plan.request, Plan.settings))]
    stmt = (
        select(func.min(Plan.name).label("name"), func.count().label("n"), *content)
        .where(Plan.enabled.is_(True))
        .group_by(*content)
    )
    if leave_out:
        stmt = stmt.where(Plan.name.not_in(list(leave_out)))
    if wallet is not None:
        stmt = stmt.where(Plan.wallet == wallet)
    counts = {row.name: int(row.n) for row in session.execute(stmt)}
    first = sorted(counts)
    for start in range(0, len(first), _CHUNK):
        names = first[start : start + _CHUNK]
        for record in _records(session, _SELECT_PLANS.where(Plan.name.in_(names))):
            yield record, counts[record.name]


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


def plans_in_pages(
    session: Session, offset: int = 0, limit: int | None = None, page: int = _CHUNK
) -> Iterator[list[PlanRecord]]:
    """Every plan by name (from `offset`, at most `limit`), a page at a time (keyset on
    the unique name after the first page: no OFFSET scan per page)."""
    left, after = limit, None
    while left is None or left > 0:
        size = page if left is None else min(page, left)
        if after is None:
            query = _SELECT_PLANS.offset(offset) if offset else _SELECT_PLANS
        else:
            query = _SELECT_PLANS.where(Plan.name > after)
        rows = list(session.execute(query.limit(size)))
        if not rows:
            return
        found = []
        for row in rows:
            try:
                found.append(PlanRecord.from_mapping(row._mapping))
            except ValueError as exc:
                log.error("plan_unreadable", plan=row.name, error=str(exc))
        yield found
        after = rows[-1].name
        left = None if left is None else left - len(rows)
        if len(rows) < size:
            return


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


@dataclass(frozen=True)
class StoredVersion:
    version: int
    content: dict[str, Any]
    enabled: bool
    created_at: datetime  # when `apply` wrote it (the previous version's end)


def diff(
    session: Session, plans: Sequence[PlanInput], scanned: Collection[str] | None = None
) -> PlanDiff:
    """What `apply` would do, without writing."""
    sync = start_sync(session, None)
    sync.batch(plans)
    return finish_sync(sync, scanned, None)


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
    sync = start_sync(session, now)
    sync.batch(plans)
    return finish_sync(sync, scanned, now)


def start_sync(session: Session, now: datetime | None) -> PlanSync:
    """An apply (with `now`: the revision row is locked first, so concurrent applies
    run one after the other) or a diff, fed a batch at a time (`PlanSync.batch`)."""
    if now is not None:
        _lock_revision(session, now)
    return PlanSync(session, now, _hash, field_changes)


def finish_sync(sync: PlanSync, scanned: Collection[str] | None, now: datetime | None) -> PlanDiff:
    """Disable what is gone (`jupcron.plans.sources.Gone`: a file it cannot tell of
    raises `PlanError`, the caller's transaction then rolled back); with `now`, bump
    the revision if anything changed."""
    gone = Gone(scanned)
    tally = sync.finish(gone)
    gone.raise_for_problems()  # a file it could not tell of: nothing is applied
    counts = {k: getattr(tally, k).count for k in ("added", "changed", "disabled", "unchanged")}
    result = PlanDiff(
        added=tuple(tally.added.kept),
        changed=tuple(tally.changed.kept),
        disabled=tuple(tally.disabled.kept),
        unchanged=tuple(tally.unchanged.kept),
        versions=dict(tally.versions),
        changes=dict(tally.changes),
        counts=counts,
    )
    if now is None:
        return result
    rev = _lock_revision(sync.session, now)
    # nothing to reschedule: running daemons need not reload; but a plan moved to
    # another file is a write another apply's unlocked read must learn of
    if not result.empty or sync.moved:
        rev.value = str(int(rev.value) + 1)
    sync.session.flush()
    return replace(result, revision=int(rev.value))


def _lock_revision(session: Session, now: datetime) -> StoreMeta:
    """Take the revision row FOR UPDATE: concurrent applies run one after the other."""
    row = session.get(StoreMeta, REVISION_KEY, with_for_update=True)
    if row is None:
        row = StoreMeta(key=REVISION_KEY, value="0")
        session.add(row)
        session.flush()
    return row


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


def _hash(content: dict[str, Any]) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
