"""`plans apply` against the store, a batch of plans at a time: memory stays flat in
the plan count (no dict of every stored plan, no list of every name in the diff).

`PlanSync.batch` compares plans (one file's, say) with their stored rows, read by
name, and with `now` writes the differences in the caller's transaction (Core
statements, many rows a statement); `finish` disables the stored plans that
are gone and returns the diff. A new plan's first slot after the write began
(`first_slots_after`; `now` unless told) is stored with it (``next_fire``, for the
scheduler, which reads the plans due next from the store instead of keeping one
object per plan), settled at version 1 (``fire_version``: no daemon rewrites it to
adopt it); a slot it had between `now` and the write is not run, and reported
(`Passed`); a changed or disabled plan's
is left to the scheduler, which first records the old version's unfired slots. A new
plan of the same content as one the apply disables (a rename) starts after the
latest slot the old name fired, too (`_after_renamed`): whatever the clocks say.

The diff names at most `SHOWN` plans of each kind (the first by name) and
counts all of them: `PlanDiff.lines` ends each kind with ``… and N more``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, select
from sqlalchemy.orm import Session

from jupcron.domain import DEFAULT_WALLET
from jupcron.plans.schema import wallet_content
from jupcron.scheduling.schedule import next_fire_times, parse_schedule
from jupcron.store import planlock
from jupcron.store.bulk import JsonText, insert_rows, json_text, update_rows
from jupcron.store.models import Plan, PlanVersion, Run
from jupcron.store.plansort import READ_CHUNK, among

PLANS = cast(Table, Plan.__table__)
RUNS = cast(Table, Run.__table__)
VERSIONS = cast(Table, PlanVersion.__table__)
SHOWN = 1000  # plans named per kind in a diff; the rest are counted
_CONTENT = ("kind", "schedule", "request", "settings", "enabled", "description")


class Names:
    """The first `limit` names by name (sorted), and how many there were."""

    def __init__(self, limit: int = SHOWN) -> None:
        self.limit = limit
        self.kept: list[str] = []
        self.count = 0

    def add(self, name: str) -> None:
        self.count += 1
        if len(self.kept) < self.limit:
            bisect.insort(self.kept, name)
        elif name < self.kept[-1]:
            bisect.insort(self.kept, name)
            self.kept.pop()

    def __contains__(self, name: str) -> bool:
        at = bisect.bisect_left(self.kept, name)
        return at < len(self.kept) and self.kept[at] == name


@dataclass
class Tally:
    added: Names = field(default_factory=Names)
    changed: Names = field(default_factory=Names)
    disabled: Names = field(default_factory=Names)
    unchanged: Names = field(default_factory=Names)
    versions: dict[str, int] = field(default_factory=dict)
    changes: dict[str, list[str]] = field(default_factory=dict)

    def note(self, kind: str, name: str, version: int | None = None,
             change: list[str] | None = None) -> bool:  # fmt: skip
        """Count `name`; keep its version (and `change`) while it is among those named.
        Whether it was kept."""
        names: Names = getattr(self, kind)
        names.add(name)
        if name in names and version is not None:
            self.versions[name] = version
            if change is not None:
                self.changes[name] = change
            return True
        return False

    def trimmed(self) -> None:
        """Forget versions and changes of names no longer kept (a later name came first)."""
        kept = {n for kind in (self.added, self.changed, self.disabled) for n in kind.kept}
        if len(self.versions) > 2 * len(kept):
            self.versions = {n: v for n, v in self.versions.items() if n in kept}
            self.changes = {n: c for n, c in self.changes.items() if n in kept}


class NextFires:
    """A plan's first slot after `now`, worked out once per distinct schedule."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self._known: dict[Any, datetime | None] = {}

    def __call__(self, schedule: dict[str, Any]) -> datetime | None:
        try:
            key: Any = tuple(sorted(schedule.items()))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._known:
            return self._known[key]
        fires = next_fire_times(parse_schedule(schedule), self.now, 1)
        found = fires[0] if fires else None
        if key is not None and len(self._known) < 100_000:
            self._known[key] = found
        return found


Content = Callable[[Any], dict[str, Any]]


@dataclass(frozen=True)
class Passed:
    """A new plan's fire time that came after the apply began and before its write: not
    run (a plan it renames fired it under its old name, enabled until the write).
    `first`: the plan's first slot after the write (None: it has none, and never runs)."""

    name: str
    source: str | None
    missed: datetime
    first: datetime | None
    stored_at: datetime


class PlanSync:
    """One apply (with `now`) or diff (without), in the caller's transaction."""

    def __init__(self, session: Session, now: datetime | None, hasher: Callable[..., str],
                 changes_of: Callable[[Any, Any], list[str]]) -> None:  # fmt: skip
        self.session, self.now = session, now
        self.hash, self.changes_of = hasher, changes_of
        self.tally = Tally()
        self.wanted: set[str] = set()
        self.moved = 0  # plans written to their new file (unchanged otherwise)
        self._next = NextFires(now) if now is not None else None
        self._began: NextFires | None = None  # the first slots after `now`, to compare
        self._passed: Callable[[Passed], None] | None = None

    def first_slots_after(
        self, when: datetime, passed: Callable[[Passed], None] | None = None
    ) -> None:
        """New plans' first slots from here on: their schedules' first after `when` (the
        write's instant, later than `now` when the apply took a while), not `now`.
        `passed` is told of each new plan whose first slot after `now` is earlier: a
        fire time it will not run (its only one, for an `at:` plan)."""
        if self.now is None:
            return
        self._next = NextFires(when)
        if passed is not None and when > self.now:
            self._began, self._passed = NextFires(self.now), passed

    # ---- plans from the files -----------------------------------------------------
    def batch(self, plans: Sequence[Any]) -> list[str]:
        """Compare (and with `now`, write) these `PlanInput`s; the names added or changed."""
        fresh: list[str] = []
        for start in range(0, len(plans), READ_CHUNK):
            fresh += self._chunk(plans[start : start + READ_CHUNK])
        self.tally.trimmed()
        return fresh

    def _chunk(self, plans: Sequence[Any]) -> list[str]:
        names = [p.name for p in plans]
        self.wanted.update(names)
        columns = (PLANS.c.id, PLANS.c.name, PLANS.c.version, PLANS.c.content_hash,
                   PLANS.c.source, PLANS.c.fire_version)  # fmt: skip
        stored = {r.name: r for r in self.session.execute(
            select(*columns).where(self._named(names)))}  # fmt: skip
        new: list[tuple[Any, str]] = []
        changed: list[tuple[Any, Any, str]] = []
        moved: list[dict[str, Any]] = []
        fresh: list[str] = []
        for plan in plans:
            digest = plan.content_hash()
            row = stored.get(plan.name)
            if row is None:
                new.append((plan, digest))
                fresh.append(plan.name)
                self.tally.note("added", plan.name, 1)
            elif row.content_hash != digest:
                fresh.append(plan.name)
                changed.append((row, plan, digest))
            else:
                self.tally.note("unchanged", plan.name)
                if self.now is not None and plan.source and row.source != plan.source:
                    self.moved += 1  # moved to another file: same plan, same version
                    moved.append({"id": row.id, "source": plan.source})
        if changed:
            self._change(changed)
        if moved:
            self._update(moved)
        if self.now is not None and new:
            self._insert(new)
        return fresh

    def _named(self, names: list[str]) -> ColumnElement[bool]:
        return among(self.session, PLANS.c.name, names)

    def note_unchanged(self, names: Iterable[str]) -> None:
        """Plans found unchanged before this sync began (`sort_out`), as `batch` notes
        them: wanted (not disabled by `finish`), and counted."""
        for name in names:
            self.wanted.add(name)
            self.tally.note("unchanged", name)

    def _contents(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        """The stored contents (as `PlanInput.content` makes them) of these plans, by id:
        one SELECT for a chunk, not one a plan."""
        out: dict[int, dict[str, Any]] = {}
        for row in self.session.execute(
            select(PLANS.c.id, *(PLANS.c[c] for c in _CONTENT), PLANS.c.wallet)
            .where(among(self.session, PLANS.c.id, ids))
        ):  # fmt: skip
            content = dict(row._mapping)
            plan_id = content.pop("id")
            wallet = content.pop("wallet")
            out[plan_id] = {**content, **wallet_content(wallet)}
        return out

    def _insert(self, new: list[tuple[Any, str]]) -> None:
        now = self.now
        assert now is not None
        assert self._next is not None
        rows = []
        contents = []
        for plan, digest in new:
            first = self._next(plan.schedule)
            if plan.enabled and self._passed is not None:
                self._check_passed(plan, first)
            row = {**plan.content(), "wallet": plan.wallet, "name": plan.name,
                   "source": plan.source,
                   "content_hash": digest, "version": 1, "created_at": now,
                   "updated_at": now, "next_fire": first if plan.enabled else None,
                   "fire_version": 1}  # fmt: skip
            # each JSON part encoded once: the row's columns, and within its version's
            # content (the same text `json.dumps` makes of that content)
            for key in _ENCODED:
                row[key] = JsonText(json_text(row[key]))
            rows.append(row)
            contents.append(_content_text(row))
        # rows in bulk, then their ids by name: an INSERT … RETURNING of many rows is
        # sent as one statement of every row's values, which psycopg parses in Python
        # (40 % of a 100,000-plan apply on PostgreSQL)
        insert_rows(self.session, PLANS, rows)
        ids = dict(self.session.execute(
            select(PLANS.c.name, PLANS.c.id).where(self._named([r["name"] for r in rows]))
        ).all())  # fmt: skip
        insert_rows(self.session, VERSIONS, [
            {"plan_id": ids[row["name"]], "version": 1, "content": content,
             "content_hash": row["content_hash"], "enabled": True, "created_at": now}
            for row, content in zip(rows, contents, strict=True)
        ])  # fmt: skip

    def _check_passed(self, plan: Any, first: datetime | None) -> None:
        """Tell `passed` if the new `plan` had a slot after `now` before `first` (its
        first after the write): none is stored for it, and it is never run."""
        assert self._began is not None
        assert self._next is not None
        assert self._passed is not None
        missed = self._began(plan.schedule)
        if missed is not None and (first is None or missed < first):
            self._passed(Passed(plan.name, plan.source, missed, first, self._next.now))

    def _change(self, changed: list[tuple[Any, Any, str]]) -> None:
        """Note (and with `now`, write) a chunk's changed plans: (stored row, `PlanInput`,
        its content hash) each. The old contents are read (one SELECT) only of the plans
        the diff keeps (`SHOWN`, whose changed fields it lists); the rows and new
        versions are written a chunk at a time (`_write`)."""
        now = self.now
        shown: list[tuple[Any, Any]] = []
        updates: list[dict[str, Any]] = []
        versions: list[dict[str, Any]] = []
        for row, plan, digest in changed:
            if self.tally.note("changed", plan.name, row.version + 1, []):
                shown.append((row, plan))  # its change filled in below
            if now is None:
                continue
            values = {**plan.content(), "wallet": plan.wallet, "source": plan.source,
                      "content_hash": digest, "version": row.version + 1,
                      "updated_at": now}  # fmt: skip
            updates.append({**values, **_settled_at(row), "id": row.id})
            versions.append(_version(row.id, row.version + 1, {**values, "name": plan.name},
                                     plan.enabled, now))  # fmt: skip
        if shown:
            olds = self._contents([row.id for row, _ in shown])
            for row, plan in shown:
                self.tally.changes[plan.name] = self.changes_of(olds[row.id], plan.content())
        if now is not None:
            self._write(updates, versions)

    def _write(self, updates: list[dict[str, Any]], versions: list[dict[str, Any]]) -> None:
        """Plan rows updated (`_update`), then their new versions inserted in bulk."""
        self._update(updates)
        insert_rows(self.session, VERSIONS, versions)

    def _update(self, updates: list[dict[str, Any]]) -> None:
        """Plan rows updated by id, each to its own values (`update_rows`: one
        statement, or one prepared UPDATE run by the driver, for a chunk), a group for
        each set of columns: a row settled by `_settled_at` sets ``fire_version``,
        the others leave it."""
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for values in updates:
            groups.setdefault(tuple(values), []).append(values)
        for rows in groups.values():
            update_rows(self.session, PLANS, "id", rows)

    # ---- plans that are gone ------------------------------------------------------
    def finish(self, gone: Callable[[str | None], bool]) -> Tally:
        """Disable the enabled stored plans not among the files' whose file `gone` says
        was scanned (or no longer exists); read a page at a time."""
        after = 0
        while True:
            page = list(self.session.execute(
                select(PLANS.c.id, PLANS.c.name, PLANS.c.source, PLANS.c.version,
                       PLANS.c.fire_version)
                .where(PLANS.c.enabled.is_(True), PLANS.c.id > after)
                .order_by(PLANS.c.id).limit(READ_CHUNK)))  # fmt: skip
            if not page:
                break
            after = page[-1].id
            going = [row for row in page if row.name not in self.wanted and gone(row.source)]
            for row in going:
                self.tally.note("disabled", row.name, row.version + 1)
            if self.now is not None and going:
                self._disable(going)
        self.tally.trimmed()
        return self.tally

    def _disable(self, rows: list[Any]) -> None:
        """Disable a page's gone plans: their contents read in one SELECT, each a new
        version (its content the old one, disabled), written a page at a time."""
        now = self.now
        assert now is not None
        olds = self._contents([row.id for row in rows])
        updates: list[dict[str, Any]] = []
        versions: list[dict[str, Any]] = []
        for row in rows:
            content = {**olds[row.id], "enabled": False}
            digest = self.hash(content)
            updates.append({"version": row.version + 1, "enabled": False, "updated_at": now,
                            "content_hash": digest, **_settled_at(row), "id": row.id})  # fmt: skip
            values = {**content, "name": row.name, "source": row.source, "content_hash": digest}
            versions.append(_version(row.id, row.version + 1, values, False, now))
        self._write(updates, versions)
        if self.tally.added.count:  # a rename adds a plan: nothing to look for otherwise
            self._after_renamed({row.id: self.hash(olds[row.id]) for row in rows})

    def _after_renamed(self, gone: dict[int, str]) -> None:
        """The plans this apply added with the same content as plans it disabled
        (`gone`: id -> content hash, as enabled): renames, most likely. Each starts
        after the latest slot its old name has a run for (read in this transaction),
        not only after the applying host's clock: one behind the daemon's would give
        the new plan a slot the old one already fired, and the unique (plan, slot) key
        does not stop that second order (another plan id). One read of the plans
        added (only when the apply adds and disables some), then the renames' runs."""
        renamed = self._added_alike(set(gone.values()))
        if not renamed:
            return
        floors: dict[str, datetime] = {}
        for plan_id, slot in _last_slots(self.session, [i for i, h in gone.items()
                                                        if h in renamed]).items():  # fmt: skip
            digest = gone[plan_id]
            floors[digest] = max(slot, floors.get(digest, slot))
        moved = []
        for plan_id, digest, schedule, first in _renamed_rows(renamed, floors):
            fires = next_fire_times(parse_schedule(schedule), floors[digest], 1)
            later = fires[0] if fires else None
            if first is not None and (later is None or later > first):
                moved.append({"id": plan_id, "next_fire": later})
        if moved:
            update_rows(self.session, PLANS, "id", moved)

    def _added_alike(self, hashes: set[str]) -> dict[str, list[tuple[int, Any, datetime | None]]]:
        """The enabled plans this apply added (version 1, created at `now`) whose content
        hash is one of `hashes`: by hash, each (id, schedule, stored first slot)."""
        if not hashes:
            return {}
        found: dict[str, list[tuple[int, Any, datetime | None]]] = {}
        rows = self.session.execute(
            select(PLANS.c.id, PLANS.c.content_hash, PLANS.c.schedule, PLANS.c.next_fire)
            .where(PLANS.c.created_at == self.now, PLANS.c.version == 1,
                   PLANS.c.enabled.is_(True),
                   among(self.session, PLANS.c.content_hash, sorted(hashes)))
        )  # fmt: skip
        for plan_id, digest, schedule, first in rows:
            found.setdefault(digest, []).append((plan_id, schedule, first))
        return found


def _renamed_rows(
    renamed: dict[str, list[tuple[int, Any, datetime | None]]], floors: dict[str, datetime]
) -> Iterable[tuple[int, str, Any, datetime | None]]:
    """(id, hash, schedule, stored first slot) of each added plan whose old name fired."""
    for digest, plans in renamed.items():
        if digest in floors:
            for plan_id, schedule, first in plans:
                yield plan_id, digest, schedule, first


def _last_slots(session: Session, plan_ids: list[int]) -> dict[int, datetime]:
    """These plans' latest scheduled (not manual) slots: a query a plan, each the
    newest row of the runs' (plan, slot) index that is not a manual fire, read under
    the plan's lock (`planlock.hold`: a claim not yet committed is waited for)."""
    out: dict[int, datetime] = {}
    for plan_id in plan_ids:
        planlock.hold(session, plan_id)  # a claim of the old name's in flight: counted
        slot = session.execute(
            select(RUNS.c.scheduled_for)
            .where(RUNS.c.plan_id == plan_id, RUNS.c.trigger != "manual")
            .order_by(RUNS.c.scheduled_for.desc()).limit(1)
        ).scalar()  # fmt: skip
        if slot is not None:
            out[plan_id] = slot
    return out


def _settled_at(row: Any) -> dict[str, Any]:
    """A plan an older apply wrote unadopted (``fire_version`` NULL) and no scheduler
    adopted yet, changed: as if settled at the version it had
    (its stored first slot is that version's), so the scheduler records that version's
    slots that never fired."""
    return {"fire_version": row.version} if row.fire_version is None else {}


def _version(plan_id: int, version: int, values: dict[str, Any], enabled: bool,
             now: datetime) -> dict[str, Any]:  # fmt: skip
    content = {k: values[k] for k in (*_CONTENT, "name", "source")}
    content.update(wallet_content(values.get("wallet", DEFAULT_WALLET)))
    return {
        "plan_id": plan_id,
        "version": version,
        "content": content,
        "content_hash": values["content_hash"],
        "enabled": enabled,
        "created_at": now,
    }


_ENCODED = ("schedule", "request", "settings")  # a plan row's JSON columns
_KEYS = {k: json_text(k) + ": " for k in (*_CONTENT, "name", "source", "wallet")}


def _content_text(row: dict[str, Any]) -> JsonText:
    """``json.dumps`` of a new plan's version content (`_version`'s, enabled), made of
    the row's JSON columns as they were encoded: a mapping's text is its keys' and
    values' texts, in order, joined by ", " and ": " (``json.dumps``' separators)."""
    content = {k: row[k] for k in (*_CONTENT, "name", "source")}
    content.update(wallet_content(row.get("wallet", DEFAULT_WALLET)))
    parts = [
        _KEYS[key] + (value if type(value) is JsonText else json_text(value))
        for key, value in content.items()
    ]
    return JsonText("{" + ", ".join(parts) + "}")
