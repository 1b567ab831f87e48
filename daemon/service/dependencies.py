"""What the daemon depends on, asked at start and again while something is wrong.

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
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

import httpx
import structlog

from jupcron.config import Config
from jupcron.errors import FatalError
from jupcron.service.probe import Check, check_api, check_rpc

log = structlog.get_logger(__name__)

RECHECK = 60.0  # seconds between two looks at what is degraded


class Dependencies:
    def __init__(
        self,
        config: Callable[[], Config],
        address: str | Mapping[str, str],
        *,
        transport: httpx.BaseTransport | None = None,
        on_fatal: Callable[[FatalError], None],
        recheck: float = RECHECK,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config  # the config in effect now (a reload may change rpc.url)
        self._address = address
        self._transport = transport
        self._on_fatal = on_fatal
        self._recheck = recheck
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._degraded: dict[str, str] = {}  # check name -> what is wrong, and the fix
        self._last = monotonic()
        self._thread: threading.Thread | None = None

    def at_start(self) -> None:
        """The API key and the RPC node: a `FatalError` (with the fix) for a key the API
        refuses; anything else that does not work is noted as degraded."""
        names = ("api key", "rpc") if self._config().rpc.url else ("api key",)
        for check in self._checks(names):
            if check.fatal:
                raise FatalError(f"{check.detail} (fix: {check.fix})")
            self._note(check, start=True)
        self._last = self._monotonic()

    def degraded(self) -> list[str]:
        """What is degraded now, one ``name: what (fix: …)`` each."""
        with self._lock:
            return list(self._degraded.values())

    def text(self) -> str | None:
        return "; ".join(self.degraded()) or None

    def maybe_recheck(self) -> threading.Thread | None:
        """A loop turn: ask the degraded ones again if it is time (in the background);
        the thread that asks, if one started."""
        with self._lock:
            names = tuple(self._degraded)
        busy = self._thread is not None and self._thread.is_alive()
        if not names or busy or self._monotonic() - self._last < self._recheck:
            return None
        self._last = self._monotonic()
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
        with self._lock:
            was = self._degraded.pop(check.name, None)
            if check.verdict != "ok":
                fix = f" (fix: {check.fix})" if check.fix else ""
                self._degraded[check.name] = f"{check.name}: {check.detail}{fix}"
        if check.verdict == "ok":
            event = "dependency_recovered" if was is not None else "dependency_ok"
            log.info(event, dependency=check.name, detail=check.detail)
        elif start or was is None:
            log.warning("dependency_degraded", dependency=check.name, detail=check.detail,
                        fix=check.fix)  # fmt: skip
