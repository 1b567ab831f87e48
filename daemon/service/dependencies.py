"""What the daemon depends on, asked at start, then now and then, more often while wrong.

at start ─► the wallet's keypair (read by `build_runtime`: unreadable, open to
            others or malformed ─► fatal, with the fix), then the API key and
            the RPC node (daemon/service/probe.py):
    a key the API refuses ─► fatal (FatalError, exit 1, the fix said)
    the API or the RPC node does not answer,
    or the wallet holds no SOL ─► degraded: the daemon runs (runs retry, a node
                                  comes back, a wallet gets funded), says so in
                                  the log, its STATUS= line, the start alert and
                                  its heartbeat (`jupcron status`, the page)
every `RECHECK` seconds while degraded ─► the degraded ones asked again (on a
    thread of their own: the loop never waits on the network); one that answers
    is cleared (`dependency_recovered`); a key now refused is fatal as at start
every `WATCH` seconds ─► all of them asked again, the healthy ones too: a node that
    dies on Tuesday is seen on Tuesday (the STATUS= line, `jupcron status`, the
    page), not by the weekly run on Monday; a key now refused is fatal
told (`tell`, an alert) ─► a fall still there at the next look (one failed look
    is a blip), once however long it lasts; the return of what was told (the
    start alert tells what is degraded at start; without ``daemon_start`` in
    `notify.events`, `tell` does, at start), once
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

import httpx
import structlog

from jupcron.config import Config
from jupcron.errors import FatalError
from jupcron.runner.core import node_name
from jupcron.service.probe import Check, check_api, check_rpc

log = structlog.get_logger(__name__)

RECHECK = 60.0  # seconds between two looks at what is degraded
WATCH = 600.0  # seconds between two looks at everything (a cheap read of each)


class Dependencies:
    def __init__(
        self,
        config: Callable[[], Config],
        address: str | Mapping[str, str],
        *,
        transport: httpx.BaseTransport | None = None,
        on_fatal: Callable[[FatalError], None],
        recheck: float = RECHECK,
        watch: float = WATCH,
        tell: Callable[[str], None] | None = None,
        start_alert: bool = True,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config  # the config in effect now (a reload may change rpc.url)
        self._address = address
        self._transport = transport
        self._on_fatal = on_fatal
        self._recheck = recheck
        self._watch = watch
        self._tell = tell  # an alert to the operator (one line)
        # whether the start alert says what is degraded at start (`notify.events` has
        # daemon_start); if not, `at_start` tells it, else its return would be the
        # first the operator hears of it
        self._start_alert = start_alert
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._degraded: dict[str, str] = {}  # check name -> what is wrong, and the fix
        self._told: set[str] = set()  # degraded names the operator was told of
        self._last = self._last_all = monotonic()
        self._thread: threading.Thread | None = None

    def at_start(self) -> None:
        """The API key and the RPC node: a `FatalError` (with the fix) for a key the API
        refuses; anything else that does not work is noted as degraded."""
        for check in self._checks(self._names()):
            if check.fatal:
                raise FatalError(f"{check.detail} (fix: {check.fix})")
            self._note(check, start=True)
        with self._lock:
            self._told = set(self._degraded)  # said by the start alert, or here
            untold = [] if self._start_alert else list(self._degraded.values())
        for said in untold:
            self._say(f"daemon on {node_name()}: {said} at start; runs that need it fail "
                      "until it answers")  # fmt: skip
        self._last = self._last_all = self._monotonic()

    def degraded(self) -> list[str]:
        """What is degraded now, one ``name: what (fix: …)`` each."""
        with self._lock:
            return list(self._degraded.values())

    def text(self) -> str | None:
        return "; ".join(self.degraded()) or None

    def maybe_recheck(self) -> threading.Thread | None:
        """A loop turn: ask all of them again every `watch` seconds, the degraded ones
        every `recheck` seconds (in the background); the thread that asks, if one
        started."""
        with self._lock:
            names = tuple(self._degraded)
        if self._thread is not None and self._thread.is_alive():
            return None
        now = self._monotonic()
        if now - self._last_all >= self._watch:
            names, self._last_all = self._names(), now
        elif not names or now - self._last < self._recheck:
            return None
        self._last = now
        self._thread = threading.Thread(
            target=self._again, args=(names,), name="dependencies", daemon=True
        )
        self._thread.start()
        return self._thread

    def _again(self, names: tuple[str, ...]) -> None:
        try:
            for check in self._checks(names):
                if check.fatal:
                    self._on_fatal(FatalError(f"{check.detail} (fix: {check.fix})"))
                    return
                self._note(check, start=False)
        except Exception:  # a failed look is tried again next time
            log.exception("dependency_recheck_failed")

    def _names(self) -> tuple[str, ...]:
        return ("api key", "rpc") if self._config().rpc.url else ("api key",)

    def _checks(self, names: tuple[str, ...]) -> list[Check]:
        config = self._config()
        found = []
        if "api key" in names:
            wallets = self._address
            first = wallets if isinstance(wallets, str) else next(iter(wallets.values()), None)
            found.append(check_api(config, first, self._transport))
        if "rpc" in names:
            found.append(check_rpc(config, self._address) if config.rpc.url else
                         Check("rpc", "ok", "rpc.url no longer set"))  # fmt: skip
        return found

    def _note(self, check: Check, *, start: bool) -> None:
        """What one look found: kept for the status, logged on a change, and told (not
        at start: the start alert says it) on a fall seen twice in a row, and on the
        return of what was told."""
        name, ok = check.name, check.verdict == "ok"
        fix = f" (fix: {check.fix})" if check.fix else ""
        said = f"{name}: {check.detail}{fix}"
        with self._lock:
            was = self._degraded.pop(name, None)
            if not ok:
                self._degraded[name] = said
            back = ok and name in self._told
            fell = not ok and not start and was is not None and name not in self._told
            if back:
                self._told.discard(name)
            if fell:
                self._told.add(name)
        if ok:
            event = "dependency_recovered" if was is not None else "dependency_ok"
            log.info(event, dependency=name, detail=check.detail)
        elif start or was is None:
            log.warning("dependency_degraded", dependency=name, detail=check.detail,
                        fix=check.fix)  # fmt: skip
        if fell:
            self._say(f"daemon on {node_name()}: {said}; runs that need it fail until it "
                      "answers")  # fmt: skip
        elif back:
            self._say(f"daemon on {node_name()}: {name} works again: {check.detail}")

    def _say(self, text: str) -> None:
        if self._tell is None:
            return
        try:
            self._tell(text)
        except Exception:  # a channel's trouble never stops the looks
            log.exception("dependency_alert_failed")
