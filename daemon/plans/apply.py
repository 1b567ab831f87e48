"""`plans apply`: read and check the files one at a time, compare them with the store
a file at a time, and write what changed in one transaction (nothing is written
unless every file is valid), begun once the files are read (`_Writes`).

The checks that ask the network (a mint's account, a recurring order's USD value:
`jupcron.plans.mints`, `jupcron.products.recurring.minimums`) are made with no
transaction open (`apply_checked`): a SQLite transaction holds the file's write lock
from its BEGIN, and a daemon on the same file could not claim nor advance a run
while a slow API answered an apply.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import StoreBusyError
from jupcron.plans.files import plan_files
from jupcron.plans.load import LoadedPlan, LoadResult, stream_plans
from jupcron.plans.sources import source_of
from jupcron.store import planfiles
from jupcron.store import plans as store_plans
from jupcron.store.engine import reader_of, session_factory, transaction
from jupcron.store.plans import PlanDiff, PlanInput
from jupcron.store.plansort import in_chunks, sort_out
from jupcron.store.plansync import Passed, PlanSync


def to_input(loaded: LoadedPlan) -> PlanInput:
    spec = loaded.spec
    return PlanInput(
        name=spec.name,
        kind=str(spec.kind),
        schedule=spec.schedule_dict(),
        request=spec.request_dict(),
        settings=spec.settings_dict(),
        enabled=spec.enabled,
        description=spec.description,
        source=loaded.source,
        wallet=spec.wallet,
    )


def apply_paths(
    factory: sessionmaker[Session],
    paths: Sequence[Path],
    *,
    now: datetime,
    dry_run: bool = False,
    complete: bool = False,
    loaded: LoadResult | None = None,
    fresh: Callable[[LoadedPlan], None] | None = None,
    check: Callable[[], None] | None = None,
    each: Callable[[LoadedPlan], None] | None = None,
    wallets: Collection[str] | None = None,
    workers: int = 0,
    folder: Path | None = None,
    monotonic: Callable[[], float] = time.monotonic,
    began: float | None = None,
    passed: Callable[[Passed], None] | None = None,
) -> tuple[PlanDiff, LoadResult]:
    """Validate `paths`; if all is well, apply (or with `dry_run`, only diff) them.

    The files are read one at a time and compared with the store a file at a time;
    what is written is written in one transaction: a problem anywhere (every
    problem is collected, as ``file:line:col: message``) raises `PlanError` and the
    store is left as it was. The files are read and compared before that
    transaction begins (`_Writes`: on SQLite it holds the write lock, which a
    daemon's claims of due runs wait for), unless more than `KEPT` plans are added
    or changed; a store whose plans changed meanwhile (another apply) raises
    `StoreBusyError` and nothing is applied.
    With `complete`, the files are the whole set: every other plan is disabled.
    Otherwise only plans whose file was scanned or is gone are. `loaded`: the
    result of `load_plans(paths)` if the caller already has it (the returned
    result's ``plans`` are empty otherwise: no list of every plan is kept).
    `each` is called with every valid plan, `fresh` with every added or changed one,
    and `check` (which may raise `PlanError`: nothing is applied) once every file is read.
    `wallets`: the config's wallet names, which every plan's wallet must be one of.
    `workers`: processes that read the files ahead while the store is written
    (`jupcron.plans.readers`; `plans apply --jobs`). `folder`: `paths` is this folder
    alone, applied `complete`: its files' marks are recorded (`jupcron.store.planfiles`,
    which `jupcron status` compares them with).
    `now`: when the apply began (`began`, a `monotonic` reading: this call's start),
    which dates what it writes; a new plan's first slot is its first after the write
    begins (`_WrittenAt`: `now` plus the time the files and the checks took);
    `passed` is told of each one that had a fire time between `now` and then, which
    it will not run (an `at:` plan's only one: it never runs; `plans apply` warns).
    """
    started = monotonic() if began is None else began
    result = loaded if loaded is not None else LoadResult()
    engine = factory.kw["bind"]
    reader = reader_of(engine)
    try:
        reading = factory if reader is engine else session_factory(reader)
        with ExitStack() as stack:
            written_at = _WrittenAt(now, started, monotonic)
            writes = _Writes(reading if dry_run else factory, reading,
                             None if dry_run else now, written_at, stack, passed)  # fmt: skip
            batches = (  # closed when the apply is left (its workers ended: an interrupt)
                [loaded.plans] if loaded is not None
                else stack.enter_context(closing(stream_plans(paths, result, wallets, workers)))
            )  # fmt: skip
            for batch in batches:
                if each is not None:
                    for plan in batch:
                        each(plan)
                if result.problems:  # nothing will be written: only the checks go on
                    continue
                for part in in_chunks(batch, BATCH):
                    writes.add(part, fresh)
            result.raise_for_problems()
            if check is not None:
                check()
            sync = writes.begun()
            scanned = None if complete else {source_of(f) for f in result.files}
            diff = store_plans.finish_sync(sync, scanned, None if dry_run else now)
            if dry_run:
                sync.session.rollback()
            elif folder is not None and complete and diff.revision is not None:
                planfiles.record(sync.session, folder, wallets, result.marks, diff.revision)
    finally:
        if reader is not engine:
            reader.dispose()
    return diff, result


@dataclass(frozen=True)
class _WrittenAt:
    """The instant an apply's write begins: `now` (when it began) plus the time since
    (`monotonic`). A new plan's first slot is its schedule's first after this instant,
    not after `now`: a slot that came due while the files were read or the network
    asked was fired by the store's plans as they were (a renamed plan by its old name,
    enabled until the write), and the new plan (another id: the unique (plan, slot)
    key does not hold it back) must not fire it again."""

    began_at: datetime
    began: float
    monotonic: Callable[[], float]

    def __call__(self) -> datetime:
        return self.began_at + timedelta(seconds=max(0.0, self.monotonic() - self.began))


KEPT = 10_000  # added, changed or moved plans kept aside until the files are all read


class _Moved(StoreBusyError):
    """The store's plans changed between the read of the files and their write."""


class _Writes:
    """One apply's writes, in one transaction begun as late as may be: the plans read
    are first sorted out with no lock (`jupcron.store.plansort.sort_out`), those to write kept
    aside, and the transaction begun once every file is read (or more than `KEPT` are
    kept: then the rest is written as it is read, and memory stays flat). It begins by
    checking the plans revision is the one the reading began at: the store holds
    then what the plans were sorted out against, or nothing is applied (`_Moved`)."""

    def __init__(self, target: sessionmaker[Session], reading: sessionmaker[Session],
                 now: datetime | None, written_at: _WrittenAt, stack: ExitStack,
                 passed: Callable[[Passed], None] | None = None) -> None:  # fmt: skip
        self.target, self.reading, self.now, self.stack = target, reading, now, stack
        self.written_at, self.passed = written_at, passed
        with transaction(reading) as session:
            self.revision = store_plans.revision(session)
        self.kept: list[PlanInput] = []
        self.unchanged: list[str] = []
        self.sync: PlanSync | None = None

    def add(self, plans: list[LoadedPlan], fresh: Callable[[LoadedPlan], None] | None) -> None:
        inputs = [to_input(p) for p in plans]
        if self.sync is not None:
            names = set(self.sync.batch(inputs))
        else:
            with transaction(self.reading) as session:
                found = sort_out(session, inputs)
            self.kept += found.written
            self.unchanged += found.unchanged
            names = found.fresh
        if fresh is not None:
            for plan in plans:
                if plan.spec.name in names:
                    fresh(plan)
        if self.sync is None and len(self.kept) > KEPT:
            self.begun()

    def begun(self) -> PlanSync:
        """The transaction (begun now if it is not yet), the plans kept aside written."""
        if self.sync is not None:
            return self.sync
        session = self.stack.enter_context(transaction(self.target))
        sync = store_plans.start_sync(session, self.now)  # (an apply: the revision locked)
        if self.now is not None:  # read with the lock held: not before the files were read
            sync.first_slots_after(self.written_at(), self.passed)
        if store_plans.revision(session) != self.revision:
            raise _Moved(
                "the plans in the store changed while the plan files were read (another "
                "'plans apply' at the same time?): nothing applied; apply again"
            )
        sync.note_unchanged(self.unchanged)
        for part in in_chunks(self.kept, BATCH):
            sync.batch(part)
        self.kept, self.unchanged, self.sync = [], [], sync
        return sync


BATCH = 2_000  # plans compared with the store at once (one plan file holds up to ~2,000)


@dataclass(frozen=True)
class NetworkChecks:
    """The checks of added or changed plans that ask the network. `wanted`: does this
    plan need asking? `run`: ask about these plans; raises `PlanError` to refuse them
    (then nothing is applied)."""

    wanted: Callable[[LoadedPlan], bool]
    run: Callable[[list[LoadedPlan]], None]


class _Unchecked(Exception):
    """Added or changed plans not yet asked about: the pass is rolled back."""


CHECK_ROUNDS = 3  # passes before an apply whose plans keep changing underneath gives up


def apply_checked(
    factory: sessionmaker[Session],
    paths: Sequence[Path],
    *,
    checks: NetworkChecks,
    restart: Callable[[], None] | None = None,
    fresh: Callable[[LoadedPlan], None] | None = None,
    check: Callable[[], None] | None = None,
    **options: Any,
) -> tuple[PlanDiff, LoadResult]:
    """`apply_paths`, the added or changed plans `checks` wants asked about first asked
    with no transaction open: a pass that finds such plans not yet asked rolls back,
    they are asked, and the files are applied again (one transaction, all or nothing).
    A plan counts as asked only in the content it was asked in. Nothing to ask (the
    usual apply): one pass. `restart` is called before each pass (`each` and `fresh`
    see the plans again). The time the passes and the checks take counts in when new
    plans' first slots start (`apply_paths`' `began`: this call's start)."""
    options.setdefault("began", options.get("monotonic", time.monotonic)())
    asked: dict[str, str] = {}  # name -> content hash, as asked about
    for _ in range(CHECK_ROUNDS):
        if restart is not None:
            restart()
        found = _Pass(checks, asked, fresh, check)
        try:
            return apply_paths(factory, paths, fresh=found.fresh, check=found.check, **options)
        except _Moved:
            continue  # another apply wrote between this one's read and write: read again
        except _Unchecked:
            pass  # rolled back: the lock is let go before the network is asked
        checks.run(found.pending)
        asked.update((plan.spec.name, _digest(plan)) for plan in found.pending)
    raise StoreBusyError(
        "the plans in the store kept changing while the plan checks asked the network "
        "(another 'plans apply' at the same time?): nothing applied; apply again"
    )


class _Pass:
    """One pass's hooks: the added or changed plans to ask about, not yet asked."""

    def __init__(self, checks: NetworkChecks, asked: dict[str, str],
                 fresh: Callable[[LoadedPlan], None] | None,
                 check: Callable[[], None] | None) -> None:  # fmt: skip
        self.checks, self.asked, self._fresh, self._check = checks, asked, fresh, check
        self.pending: list[LoadedPlan] = []

    def fresh(self, plan: LoadedPlan) -> None:
        if self._fresh is not None:
            self._fresh(plan)
        if self.checks.wanted(plan) and self.asked.get(plan.spec.name) != _digest(plan):
            self.pending.append(plan)

    def check(self) -> None:
        if self.pending:
            raise _Unchecked
        if self._check is not None:
            self._check()


def _digest(plan: LoadedPlan) -> str:
    return to_input(plan).content_hash()


@dataclass(frozen=True)
class FilesState:
    """Do the plan files (``plans.dir``) say what the store holds? (`jupcron status`)"""

    folder: str
    in_sync: bool
    diff: list[str] = field(default_factory=list)  # `plans apply`'s lines, were it run now
    problem: str | None = None  # the files could not be read whole (the first problem)

    def text(self) -> str:
        if self.problem is not None:
            return f"{self.folder}: cannot compare: {self.problem}"
        if self.in_sync:
            return f"{self.folder}: in sync with the store"
        return (
            f"{self.folder}: DIFFER from the store ({'; '.join(self.diff)}): the daemon runs "
            "the store's plans until 'jupcron plans apply'"
        )

    def as_json(self) -> dict[str, Any]:
        return {"folder": self.folder, "in_sync": self.in_sync, "diff": self.diff,
                "problem": self.problem}  # fmt: skip


def files_seen(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """The plan files under `folder` as (path, modified ns, size): what changes when a
    file does (cheap: no file is read)."""
    if not folder.is_dir():
        return ()
    files, _ = plan_files([folder])
    out = []
    for file in files:
        try:
            stat = file.stat()
        except OSError:
            continue
        out.append((str(file), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def files_vs_store(
    session: Session, folder: Path, wallets: Collection[str] | None = None
) -> FilesState:
    """Compare ``plans.dir`` with the store without writing (a read-only diff). The
    files are read only when they may say something else than at the last complete
    apply (`jupcron.store.planfiles.unchanged`)."""
    if not folder.is_dir():
        return FilesState(str(folder), False, problem="no such folder")
    files, missing = plan_files([folder])
    if not missing and planfiles.unchanged(
        session, folder, wallets, store_plans.revision(session), files
    ):
        return FilesState(str(folder), True)  # as the last complete apply read them
    loaded = LoadResult()
    sync = store_plans.start_sync(session, None)
    for batch in stream_plans([folder], loaded, wallets):
        if not loaded.problems:
            sync.batch([to_input(p) for p in batch])
    if loaded.problems:
        return FilesState(str(folder), False, problem=str(loaded.problems[0]))
    result = store_plans.finish_sync(sync, None, None)
    return FilesState(str(folder), result.empty, diff=result.lines()[:DIFF_SHOWN])


DIFF_SHOWN = 20  # lines of the diff `jupcron status` and the page show
