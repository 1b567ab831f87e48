"""The scheduler's reload (part of `jupcron.scheduling.scheduler.Scheduler`): plans
`plans apply` added are found by id (apply stored them settled, at their first slot;
an older apply's unadopted ones are adopted as they are), plans
changed or disabled since they were settled are settled one by one (the old
version's slots that never fired recorded as skipped, the new one caught up from
its change), and at start the slots missed while no daemon ran are settled, all a
page at a time. The watch job (`_poll`, every ``poll_interval``) reloads when the
plans' revision changed, or when the last reload failed (the store was down)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

import structlog
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import JupcronError, StoreBusyError
from jupcron.scheduling import window as win
from jupcron.scheduling.catchup import MAX_SKIPPED
from jupcron.scheduling.schedule import next_fire_times
from jupcron.scheduling.slots import (
    Superseded,
    pending_of_previous,
    previous_version,
    record_superseded,
    record_unfired,
    superseded,
)
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.plans import PlanDiff, StoredVersion
from jupcron.store.plansync import Names
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)

SETTLE_PAGE = 500  # plans settled a transaction (changed ones, missed ones)


class Changes(NamedTuple):
    """A page of changed plans as a reload reads it: this daemon's ones, their versions
    from the settled one on ({id: versions}), the unreadable ones ({id: version}), the
    last id read (None: no plan left)."""

    plans: list[firing.Changed]
    history: dict[int, list[StoredVersion]]
    unreadable: dict[int, int]
    last: int | None


class Reloading:
    """What `Scheduler.reload` needs of the scheduler (it defines them)."""

    _factory: sessionmaker[Session]
    _reader: sessionmaker[Session]
    _runs: RunStore
    _clock: Callable[[], datetime]
    _include: Callable[[PlanRecord], bool] | None
    _led: set[int]
    _lock: threading.RLock
    _reloading: threading.Lock  # one reload at a time (it takes `_lock` a page at a time)
    _window: win.Window
    _dirty: dict[int, win.Pending]
    _inflight: dict[int, int]  # plans whose handed-over slot may lack a row
    _revision: int | None
    _seen: int | None  # the highest plan id the last reload saw (None: none yet)
    _reload_due: bool  # a reload failed (the store): the watch job tries again
    _last_poll_ok: float  # monotonic: when the store last answered (a poll, a reload's page)
    _monotonic: Callable[[], float]

    if TYPE_CHECKING:  # the scheduler's own, for the type checker

        def _flush(self) -> bool: ...

        def _settle(self, plan: PlanRecord, last: datetime | None) -> datetime | None: ...

        def _arm(self) -> None: ...

    @property
    def revision(self) -> int | None:
        return self._revision

    def _enabled(self) -> int | None:
        try:
            with transaction(self._reader) as session:
                return store_plans.count_enabled(session)
        except (JupcronError, SQLAlchemyError):
            return None  # the store went again: the count is only for the log

    def refresh(self) -> bool:
        """`reload()`, never raising for the store: if it fails, the watch job reloads
        at its next turn (every ``poll_interval``), revision changed or not."""
        try:
            self.reload()
        except (JupcronError, SQLAlchemyError) as exc:
            log.error("plans_reload_failed", error=str(exc))
            return False
        return True

    def _poll(self) -> None:
        try:
            with transaction(self._reader) as session:
                rev = store_plans.revision(session)
        except (JupcronError, SQLAlchemyError) as exc:  # store down: stay alive, report unhealthy
            log.warning("plans_poll_failed", error=str(exc))
            return
        self._answered()
        if rev != self._revision or self._reload_due:
            self.refresh()

    def reload(self) -> PlanDiff | None:
        """Adopt added plans, settle changed and disabled ones; returns what changed
        (None: nothing). The first load (at start) also settles the slots missed while
        no daemon ran; it is no change: `scheduler_started` reports the plan count.

        One reload at a time (`_reloading`); the scheduler's lock is held a page of
        changed plans at a time, not across the reload: a reload of 10,000 changed
        plans is seconds long, and the fires due meanwhile (the timer's, a changed
        plan's caught-up slot) go on between its pages. Each page settled counts as
        the store answering (`healthy()`): the watch job's polls wait for the reload,
        and a reload that moves is no stuck scheduler."""
        added, changed, disabled = Names(), Names(), Names()
        with self._reloading:
            with self._lock:
                first = self._revision is None
                self._reload_due = True  # until this one is through
                if not self._flush():
                    raise StoreBusyError("the store is unavailable: plans not reloaded")
                with transaction(self._factory) as session:
                    rev = store_plans.revision(session)
                    # by id first: an old apply's unadopted plan is the adoption's to count
                    since, more, seen = firing.added_since(session, self._seen)
                    names, count = firing.adopt(session)
            self._answered()
            for name in (*names, *since):
                if self._include is None:
                    added.add(name)
            added.count = count + more if self._include is None else 0
            after = 0
            while (page := self._changed_page(after)).last is not None:
                after = page.last
                with self._lock:
                    self._settle_changed(page, added, changed, disabled)
                self._answered()
            with self._lock:
                if first:
                    self._settle_missed()
                if self._include is not None:
                    self._hand_over(added, first)
                self._window.reset()
                self._revision, self._seen = rev, seen
                self._reload_due = False
            self._answered()
        self._arm()
        if not (added.count or changed.count or disabled.count):
            return None
        counts = {"added": added.count, "changed": changed.count, "disabled": disabled.count}
        diff = PlanDiff(tuple(added.kept), tuple(changed.kept), tuple(disabled.kept),
                        counts=counts)  # fmt: skip
        if not first:
            log.info("plans_reloaded", revision=rev, added=added.count,
                     changed=changed.count, disabled=disabled.count)  # fmt: skip
        return diff

    def _answered(self) -> None:
        """The store answered (a poll, a reload's step): the scheduler is alive."""
        self._last_poll_ok = self._monotonic()

    def _changed_page(self, after: int) -> Changes:
        """The next page of changed plans (this daemon's), with their versions from the
        settled one on: read without the scheduler's lock (fires go on meanwhile)."""
        with transaction(self._reader) as session:
            page = firing.changed_page(session, SETTLE_PAGE, after)
            mine = [c for c in page.plans if self._include is None or self._include(c[0])]
            history = firing.versions_from(session, {p.id: old for p, old, _ in mine if old})
        return Changes(mine, history, page.unreadable, page.last)

    def _hand_over(self, added: Names, first: bool) -> None:
        """Shards: plans handed to another daemon are dropped (nothing recorded: their
        new leader fires their slots from the stored next_fire); plans gained are
        settled like missed ones, and count as added. Leadership is per wallet: the
        predicate is asked once a wallet (of one plan of it), the ids read by wallet."""
        assert self._include is not None
        with transaction(self._reader) as session:
            wallets = {p.wallet for p in firing.wallets_settled(session) if self._include(p)}
            led = firing.ids_of(session, wallets)
        gained = sorted(led - self._led) if not first else []
        for start in range(0, len(gained), SETTLE_PAGE):
            with transaction(self._reader) as session:
                page = firing.plans_by_id(session, gained[start : start + SETTLE_PAGE])
                lasts = firing.last_slots(session, [p.id for p in page])
                stored = firing.stored_next(session, [p.id for p in page])
            for plan in page:
                added.add(plan.name)
                self._settle(plan, settle_after(lasts.get(plan.id), stored.get(plan.id)))
        for pid in self._led - led:  # their next slots are their new leader's to write
            self._window.drop(pid)
            self._dirty.pop(pid, None)
        self._led = led

    def _settle_changed(self, page: Changes, added: Names, changed: Names, disabled: Names) -> None:
        """Plans changed (or disabled) since they were settled: the old version's slots
        that never fired are recorded, the new one settled from its change (called with
        the lock held: their latest slots and stored next slots are read under it, as
        a fire between the page's read and now may have moved them)."""
        ids = [plan.id for plan, _, _ in page.plans]
        with transaction(self._reader) as session:
            lasts = firing.last_slots(session, ids)
            stored_now = firing.stored_next(session, ids)
        done: dict[int, tuple[datetime | None, int]] = {
            pid: (None, version) for pid, version in page.unreadable.items()
        }  # an unreadable plan: settled as having no slot
        for plan, old, _ in page.plans:
            stored = stored_now.get(plan.id)
            history = page.history.get(plan.id, [])
            live, dirty = self._window.drop(plan.id), self._dirty.pop(plan.id, None)
            # when the settled version was replaced, and the enabled versions in between
            replaced, between = plan.updated_at, list[Superseded]()
            if old == 0:  # settled before 0011: as a plan this daemon never knew
                was_on = True
                pending, schedule = pending_of_previous(self._factory, plan) if plan.version > 1 \
                    else (None, None)  # fmt: skip
            else:
                was_on, schedule = previous_version(history, old)
                if plan.version > old + 1:  # edited more than once since it was settled
                    replaced, between = superseded(plan, history, old)
                pending = live.slot if live else dirty.slot if dirty else stored
                schedule = live.plan.schedule if live else schedule
                # a slot handed out may still have no row (refused: the store down or the
                # wallet's lease lost; its retry is in memory only): the stored next slot,
                # never written past such a slot, is where the unfired ones start
                held_back = False
                if stored is not None and self._inflight.get(plan.id):
                    held_back = True
                    pending = stored if pending is None else min(pending, stored)
                # the first slot after the last run bounds a slot held in memory (live or
                # queued) from below, not the stored one: never written past a slot with no
                # row, it may be a refused one whose retry died with its daemon (`settle_after`)
                last = lasts.get(plan.id)
                after_last = next_fire_times(schedule, last, 1) if schedule and last else []
                in_memory = (live is not None or dirty is not None) and not held_back
                if in_memory and pending is not None and after_last and after_last[0] > pending:
                    pending = after_last[0]
            if plan.enabled:
                (changed if was_on and old else added).add(plan.name)
            elif was_on:
                disabled.add(plan.name)
            # the newest MAX_SKIPPED slots of the old versions together, the rest flagged
            now = self._clock()
            unfired = record_superseded(self._runs, plan, between, now=now)
            if was_on and pending is not None and schedule is not None:
                left = MAX_SKIPPED - unfired.slots
                unfired += record_unfired(self._runs, plan, schedule, pending, now=now,
                                          until=replaced, limit=left)  # fmt: skip
            if unfired.skipped or unfired.truncated:
                log.warning("run_missed", plan=plan.name, skipped=unfired.skipped,
                            truncated=unfired.truncated, reason="plan_changed")  # fmt: skip
            if plan.enabled:
                caught = self._settle(plan, lasts.get(plan.id))
                held = self._dirty.pop(plan.id, None)
                if caught is not None and held is not None:
                    # the caught-up slot is in flight: the store keeps it as the next slot
                    # (a stop before it has a row settles from it), and the one after it
                    # is written by `_flush` once it is settled
                    self._dirty[plan.id] = held
                    done[plan.id] = (caught, plan.version)
                else:
                    done[plan.id] = (held.slot, held.version) if held else (None, plan.version)
            else:
                done[plan.id] = (None, plan.version)
        with transaction(self._factory) as session:
            firing.set_next(session, done, settle=True)

    def _settle_missed(self) -> None:
        """At start: the plans whose next slot passed while no daemon ran. A plan whose
        settled next slot is one still waiting out its jitter (passed, not yet due) may
        be read again by a later page: it is settled once (`waiting`)."""
        now = self._clock()
        after: firing.Cursor | None = None
        waiting: set[int] = set()
        while True:
            with transaction(self._reader) as session:
                page = firing.missed_page(session, now, SETTLE_PAGE, after)
                mine = [p for p, _ in page if self._include is None or self._include(p)]
                lasts = firing.last_slots(session, [p.id for p in mine])
            if not page:
                return
            after = (page[-1][1], page[-1][0].id)
            stored = dict((p.id, slot) for p, slot in page)
            for plan in mine:
                if plan.id in waiting:
                    continue
                self._settle(plan, settle_after(lasts.get(plan.id), stored.get(plan.id)))
                queued = self._dirty.get(plan.id)
                if queued is not None and queued.slot is not None and queued.slot <= now:
                    waiting.add(plan.id)
            if not self._flush():
                raise StoreBusyError("the store is unavailable: missed slots not settled")


def settle_after(last: datetime | None, stored: datetime | None) -> datetime | None:
    """Where a plan's slots are settled from: after its latest recorded slot, or from
    its stored next slot when that is earlier. The stored next slot is written only
    once every slot before it has a row; a slot refused (the store down, the wallet's
    lease lost) holds it back, and a daemon killed before that slot's retry leaves it
    there with later slots recorded: settling only after `last` would lose it."""
    if stored is None:
        return last
    before = stored - timedelta(microseconds=1)
    return before if last is None else min(last, before)
