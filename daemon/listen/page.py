"""The status page as the daemon sees it: a port, so that neither side imports the
other. The composition root (`jupcron run`, daemon/cli/run.py) hands the daemon
(daemon/service) a `PageFactory`, made by the page (daemon/web); the daemon
checks it at start, feeds it every run and API attempt, starts it on
``web.listen`` with what only the running process knows (`LiveState`), and
follows the config with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.orm import Session

from jupcron.api.client import Attempt
from jupcron.config import Config
from jupcron.listen.metrics import Metrics
from jupcron.runner.outcome import RunOutcome


@dataclass(frozen=True)
class LiveState:
    """What only the daemon serving the page knows: which node it is (its row among
    the heartbeats), its pace and its wallet. Its role, dry run and kill switch are
    read from its heartbeat like every other daemon's (one source for the page and
    `jupcron status`); its API use and errors come from the page's activity."""

    node: str  # host:pid, as its heartbeat names it
    rate_limit: float  # requests/s we allow ourselves
    wallet: str  # the public key (several wallets: ``NAME ADDRESS, …``)
    # plans.dir against the store, as `jupcron status` has it (daemon/plans/apply.py)
    plan_files: dict[str, Any] | None = None
    # or the same, read when the page asks, on the session of the page's own read-only
    # engine (the daemon's writer engine is its runs'; daemon/service/status.py)
    plan_files_on: Callable[[Session], dict[str, Any] | None] | None = None


class Page(Protocol):
    """A running page: it follows a reload, and its token file, until stopped."""

    def apply(self, config: Config, trigger: str) -> None:
        """A reload: the page's settings of `config` in effect."""
        ...

    def follow(self, config: Config) -> None:
        """A loop turn: files of its own (the token) read again if they changed."""
        ...

    def stop(self) -> None: ...


class PageFactory(Protocol):
    """The page before it runs, and what it hears meanwhile."""

    def check(self, config: Config) -> None:
        """The page's settings checked before anything starts (a `ConfigError`)."""
        ...

    def run_finished(self, outcome: RunOutcome) -> None:
        """A run listener (daemon/runner/outcome.py)."""
        ...

    def attempt(self, attempt: Attempt) -> None:
        """An API-attempt observer."""
        ...

    def start(
        self,
        config: Config,
        *,
        metrics: Metrics,
        health: Callable[[], bool],
        live: Callable[[], LiveState],
    ) -> Page | None:
        """The page, `/metrics` and `/healthz` on ``web.listen``; ``None`` when it is off."""
        ...
