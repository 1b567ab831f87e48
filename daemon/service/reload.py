"""The running daemon's config: the one in effect, re-read on SIGHUP (with the plans
folder) or when its file changed (`Reload`).

    SIGHUP ─► the config file loaded, then plans.dir applied (each kept as it was
              on an error), the scheduler told; the added or changed plans first
              checked over the network as `plans apply` checks them (`PlanChecks`).
              The plans part runs on a thread of its own (`Reload.request`): at
              100,000 plans it reads files for tens of seconds, and its checks may
              wait 10 s for the API, while the loop must go on pinging the watchdog
              (WatchdogSec=60) and writing the heartbeat. One reload at a time: a
              SIGHUP during one is one more reload once it is done (coalesced)
    each loop turn (about 1 s) ─► the file watched (daemon/config/watch.py): content
              other than the config in effect, held still ─► load it (as SIGHUP does):
              valid ─► in effect for every run that starts from now on,
              `config_reloaded` says what changed; invalid ─► the old config stays
              whole, `reload_failed` says why (once per bad content)

Credentials (`$CREDENTIALS_DIRECTORY`) are not watched: they are read at start.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from jupcron.app import Runtime
from jupcron.config import Config, load_config
from jupcron.config.changes import config_changes, restart_only
from jupcron.config.wallets import not_loaded, unknown_wallet
from jupcron.config.watch import ConfigWatch
from jupcron.errors import JupcronError, PlanError, Problem
from jupcron.listen.page import Page
from jupcron.plans.apply import NetworkChecks, apply_checked
from jupcron.plans.load import LoadedPlan
from jupcron.plans.mints import check_mints, mints_of
from jupcron.products.recurring.minimums import (
    Findings,
    Lookups,
    check_recurring,
    lookups_from,
    needs_network,
)
from jupcron.service.notify import Notifier
from jupcron.store.plansync import Passed

log = structlog.get_logger(__name__)

LOOKUP_TIMEOUT_S = 5.0  # an API call's connect and read bound, on a reload's checks
CHECKS_BUDGET_S = 10.0  # a reload's lookups in all: one not started by then is not made


class ReloadStopped(JupcronError):
    """The daemon is stopping: the reload under way gives up (nothing applied)."""


class PlanChecks:
    """`plans apply`'s network checks (mints that do not exist, recurring minimums) for
    a reload: each API call bounded (`LOOKUP_TIMEOUT_S`, one attempt), no lookup
    started past `CHECKS_BUDGET_S` nor once the daemon stops (`stopping`); and strict,
    since no operator reads a note: a check that could not be made refuses the plan
    set (`plans apply`, run by hand, notes it and applies)."""

    def __init__(self, config: Config, folder: Path,
                 clock: Callable[[], float] = time.monotonic,
                 stopping: Callable[[], bool] = lambda: False) -> None:  # fmt: skip
        self.config, self.folder, self.clock = config, folder, clock
        self.stopping = stopping
        self.has_rpc = bool(config.rpc.url)
        self.notes: list[Problem] = []  # of the checks made, for the log

    def wanted(self, plan: LoadedPlan) -> bool:
        """As `plans apply`: enabled plans, checked when added or changed."""
        return plan.spec.enabled and (
            needs_network(plan) or (self.has_rpc and bool(mints_of(plan)))
        )

    def run(self, plans: list[LoadedPlan]) -> None:
        unanswered: list[str] = []
        lookups = self._lookups(unanswered)
        try:
            findings = check_recurring([p for p in plans if needs_network(p)], lookups)
            missing = check_mints([p for p in plans if mints_of(p)], lookups)
        finally:
            lookups.close()
        found = Findings([*missing.problems, *findings.problems],
                         [*missing.notes, *findings.notes])  # fmt: skip
        if unanswered:
            why = Problem(str(self.folder), 0, 0, (
                f"the checks 'plans apply' makes could not be made ({unanswered[0]}): the "
                "added or changed plans that need them are not applied; SIGHUP again once "
                "the API and rpc.url answer, or run 'jupcron plans apply'"
            ))  # fmt: skip
            raise PlanError([why, *found.problems, *found.notes])
        if found.problems:
            raise PlanError(found.problems)
        self.notes += found.notes

    def _lookups(self, unanswered: list[str]) -> Lookups:
        api = self.config.api
        bounded = api.model_copy(update={
            "connect_timeout": min(api.connect_timeout, LOOKUP_TIMEOUT_S),
            "read_timeout": min(api.read_timeout, LOOKUP_TIMEOUT_S),
        })  # fmt: skip
        lookups = lookups_from(self.config.model_copy(update={"api": bounded}))
        deadline = self.clock() + CHECKS_BUDGET_S
        if lookups.usd is None:  # the API key cannot be read: that check cannot be made
            reason = lookups.no_usd

            def unpriced(_mint: str, _amount: int) -> Any:
                raise JupcronError(reason)

            lookups.usd = unpriced
        lookups.usd = self._bounded(lookups.usd, deadline, unanswered)
        if lookups.owner is not None:  # (no rpc.url: not asked, as by `plans apply`)
            lookups.owner = self._bounded(lookups.owner, deadline, unanswered)
        return lookups

    def _bounded(self, ask: Callable[..., Any], deadline: float,
                 unanswered: list[str]) -> Callable[..., Any]:  # fmt: skip
        def call(*args: Any) -> Any:
            try:
                if self.stopping():
                    raise ReloadStopped("not asked: the daemon is stopping")
                if self.clock() >= deadline:
                    raise JupcronError(
                        f"not asked: a reload's checks may take {CHECKS_BUDGET_S:g} s"
                    )
                return ask(*args)
            except JupcronError as exc:
                unanswered.append(str(exc))
                raise

        return call


def _restart_said(exc: JupcronError | OSError, config: Config, loaded: tuple[str, ...]) -> str:
    """The reload's error as said: a plan naming a wallet the config has but this daemon
    did not load (its keys are read at start) is checked against the loaded ones, whose
    message said to add it under wallets: (where it is already); say a restart instead."""
    text = str(exc)
    if isinstance(exc, PlanError):
        for name in config.wallet_names():
            if name not in loaded:
                text = text.replace(unknown_wallet(name, loaded), not_loaded(name, loaded))
    return text


class ConfigFile:
    """The daemon's config file: read on demand (SIGHUP) or when it changed."""

    def __init__(self, path: Path, env: Mapping[str, str], current: Config) -> None:
        self.path = path
        self.env = env
        self.watch = ConfigWatch(path, current.digest)

    def read(self, current: Config, trigger: str) -> Config | None:
        """The file's config, or ``None`` (logged) when it does not load: `current` stays."""
        try:
            return load_config(self.path, self.env)
        except JupcronError as exc:
            log.error("reload_failed", what="config", trigger=trigger, error=str(exc),
                      kept=current.digest, dry_run=current.safety.dry_run)  # fmt: skip
            return None

    def changed(self, current: Config) -> Config | None:
        """A loop turn: the file's new config if its content changed and loads."""
        if not self.watch.due():
            return None
        config = self.read(current, "file")
        if config is None:  # said once; tried again when it (or its modes, owners) change
            self.watch.refused, self.watch.refused_access = self.watch.seen, self.watch.access
        return config

    def in_effect(self, old: Config, new: Config, trigger: str) -> None:
        """`new` replaced `old`: say what changed, and what waits for a restart."""
        self.watch.current, self.watch.refused = new.digest, None
        self.watch.refused_access = None
        changes = config_changes(old, new)
        for key in restart_only(changes):
            log.warning("reload_needs_restart", section=key)
        if changes or new.digest != old.digest:
            log.info("config_reloaded", trigger=trigger, changed=changes, config=new.digest,
                     previous=old.digest, dry_run=new.safety.dry_run)  # fmt: skip


class Reload:
    """The config in effect for the daemon (replaced whole, never mutated) and how it
    changes: SIGHUP (`request` from the loop, `signal` all at once), or the config
    file's content changing (`follow`, once a loop turn). The parts a reload reaches
    are set once built (`runtime`, `page`).

    From the loop (`request`, then `poll` each turn) the config part runs on the loop
    (it is quick, and the config is the loop's), the plans part on a thread of its
    own: the apply, then the scheduler told (`plans_changed`: its reload of 10,000
    changed plans takes seconds, under the scheduler's lock); the loop says the end
    (`poll`: ``READY=1``), and meanwhile pings the watchdog and beats as ever. A
    SIGHUP that comes while one runs is one more reload after it: a file written
    meanwhile is read."""

    def __init__(
        self,
        config: Config,
        config_file: ConfigFile | None,
        *,
        notifier: Notifier,
        status_text: Callable[[], str],
        plans_changed: Callable[[], None],
        wake: Callable[[], None] = lambda: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.config_file = config_file
        self.notifier = notifier
        self.status_text = status_text  # the STATUS= line once the reload is done
        self.plans_changed = plans_changed  # the scheduler reads the plans again
        self.wake = wake  # the loop woken when the plans part is done
        self.clock, self.monotonic = clock, monotonic  # when an apply begins, how long it took
        self.runtime: Runtime | None = None
        self.page: Page | None = None
        self._worker: threading.Thread | None = None  # the plans part under way
        self._result: bool | BaseException | None = None  # what it came to
        self._again = False  # a SIGHUP came while it ran
        self._stop = threading.Event()  # the daemon stops: the reload gives up

    def signal(self) -> bool:
        """SIGHUP all at once, on the calling thread: re-read the config and the plans
        folder; keep the old on any error."""
        self.notifier.reloading()
        try:
            config = self._config()
            ok = config is not None and self._plans(config) and self._applied()
        finally:
            self.notifier.ready(self.status_text())
        return ok

    def request(self) -> None:
        """SIGHUP, from the loop: the config now, the plans on a thread (`poll` takes
        the result); during a reload, one more once it is done."""
        if self._worker is not None:
            if not self._again:
                log.info("reload_queued", reason="a reload is under way")
            self._again = True
            return
        self.notifier.reloading()
        started = False
        try:
            config = self._config()
            if config is not None:
                self._result = None
                self._worker = threading.Thread(target=self._work, args=(config,),
                                                name="reload", daemon=True)  # fmt: skip
                self._worker.start()
                started = True
        finally:
            if not started:  # the config refused (said): the reload is over
                self._worker = None
                self.notifier.ready(self.status_text())

    def poll(self) -> None:
        """A loop turn: a finished plans part's end said (``READY=1``), and the SIGHUP
        that came meanwhile served. A bug in it is raised here, on the loop, as it was
        when the reload ran there."""
        worker = self._worker
        if worker is None or worker.is_alive():
            return
        worker.join()
        self._worker, result = None, self._result
        self.notifier.ready(self.status_text())
        if isinstance(result, BaseException):
            raise result
        if self._again and not self._stop.is_set():
            self._again = False
            self.request()

    def stop(self, timeout: float) -> bool:
        """The daemon stops: a reload under way gives up at its next plan or check
        (nothing applied: its transaction rolls back); True once none runs, waiting up
        to `timeout` seconds."""
        self._stop.set()
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            if worker.is_alive():
                return False
        return True

    def _work(self, config: Config) -> None:
        try:
            # (a stopping daemon's scheduler is stopped: not told)
            self._result = self._plans(config) and (self._stop.is_set() or self._applied())
        except BaseException as exc:  # noqa: BLE001 - a bug: raised on the loop (`poll`)
            self._result = exc
        finally:
            if not self._stop.is_set():  # (a stopping loop joins it instead)
                self.wake()

    def _config(self) -> Config | None:
        """The config file read again and put in effect (``None``: it does not load,
        the old one stays, said)."""
        if self.config_file is None:
            return self.config
        read = self.config_file.read(self.config, "signal")
        return None if read is None else self._use(read, "signal")

    def _plans(self, config: Config) -> bool:
        """plans.dir applied as `plans apply` applies it, with its network checks;
        False (said) when refused: the stored plans stay as they were."""
        assert self.runtime is not None
        folder = config.plans.dir
        wallets = tuple(self.runtime.wallets)  # those loaded at start
        try:  # (a folder the service's user may no longer look into: EACCES, not a crash)
            if folder.is_dir():
                checks = PlanChecks(config, folder, stopping=self._stop.is_set)
                passed: list[Passed] = []  # new plans' fire times that passed (the last pass's)
                diff, _ = apply_checked(
                    self.runtime.store.factory, [folder], now=self.clock(),
                    checks=NetworkChecks(checks.wanted, checks.run), wallets=wallets,
                    each=self._each, restart=passed.clear, passed=passed.append,
                    monotonic=self.monotonic,
                )  # fmt: skip
                if checks.notes:
                    log.warning("plans_checked", notes=[str(n) for n in checks.notes])
                for found in passed:  # (as `plans apply` warns: that fire time is not run)
                    first = None if found.first is None else found.first.isoformat()
                    log.warning("plan_fire_time_passed", plan=found.name, source=found.source,
                                missed=found.missed.isoformat(), first=first,
                                stored_at=found.stored_at.isoformat())  # fmt: skip
                log.info("plans_applied", diff=diff.lines())
        except (JupcronError, OSError) as exc:
            said = log.warning if self._stop.is_set() else log.error  # a stop: no fault
            said("reload_failed", what="plans", error=_restart_said(exc, config, wallets))
            return False
        return True

    def _each(self, _plan: LoadedPlan) -> None:
        """Each plan read: a stop asked meanwhile ends the reload here."""
        if self._stop.is_set():
            raise ReloadStopped("the daemon is stopping: the reload gave up, nothing applied")

    def _applied(self) -> bool:
        self.plans_changed()
        log.info("reloaded")
        return True

    def follow(self) -> None:
        """A loop turn: a config file whose content changed is re-read, as on SIGHUP."""
        if self.config_file is not None:
            config = self.config_file.changed(self.config)
            if config is not None:
                self._use(config, "file")
        if self.page is not None:
            self.page.follow(self.config)  # the token file, watched by itself

    def _use(self, config: Config, trigger: str) -> Config:
        """`config` in effect for every run that starts from now on (a run under way
        finishes under the config it started with); one reference, replaced whole."""
        assert self.runtime is not None
        old = self.config
        self.runtime.runner.reconfigure(config)
        self.config = config
        if self.config_file is not None:
            self.config_file.in_effect(old, config, trigger)
        if self.page is not None:
            self.page.apply(config, trigger)  # the token read again: a new one ends sessions
        return config
