"""The leader's runway watch: every ``runway.refresh`` seconds, the wallet's balance
(the portfolio API, as the pre-flight balance check reads it, on spare capacity)
against the upcoming runs of its plans (daemon/scheduling/runway.py), stored for `jupcron
status` and the page (daemon/store/runway.py), set on /metrics, and a runway that
falls under ``runway.alert_below`` said once (``low_balance``).

Debounce: ``low`` is stored with the row. An alert goes when a runway becomes low
(not low, or no row, before); it stays low, silently, until a read finds it
covered again (logged, ``runway_recovered``), and a later fall alerts again. The
state survives restarts and a change of leader (it is in the store). An unknown
balance (the API did not answer) changes nothing: no alert, no recovery, the row
says unknown and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Protocol

import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from jupcron.api.client import SPARE_WAIT
from jupcron.api.portfolio import Portfolio
from jupcron.config import Config
from jupcron.errors import JupcronError
from jupcron.listen.runway_metrics import RunwayGauges
from jupcron.scheduling.periodic import Periodic
from jupcron.scheduling.runway import needs_of, runways
from jupcron.service.alerts import AlertEvent
from jupcron.store import control, tokens
from jupcron.store import plans as store_plans
from jupcron.store import runway as store_runway
from jupcron.store.engine import begin
from jupcron.store.runway import RunwayState, moment

log = structlog.get_logger(__name__)


class BalanceApi(Protocol):
    def positions(
        self, address: str, platforms: None = None, observe: None = None,
        spare: float | None = None,
    ) -> Portfolio: ...  # fmt: skip


Alert = Callable[[AlertEvent, str], None]


class RunwayWatch:
    """``check`` once (tests, `jupcron`'s own use), or `start` a thread that checks
    every ``runway.refresh`` seconds of the config in effect until `stop`."""

    def __init__(
        self,
        engine: Engine,
        api: BalanceApi,
        wallet: str | Mapping[str, str],
        *,
        config: Callable[[], Config],
        gauges: RunwayGauges | None = None,
        alert: Alert | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        spare: float | None = SPARE_WAIT,
    ) -> None:
        self.engine, self.api = engine, api
        # (name, address) of every wallet watched; name None: the one wallet, all plans
        self.wallets: list[tuple[str | None, str]] = (
            [(None, wallet)] if isinstance(wallet, str) else list(wallet.items())
        )
        self.config, self.gauges, self.alert, self.clock = config, gauges, alert, clock
        self.spare = spare
        self._thread = Periodic("runway", self.check_safely, lambda: self.config().runway.refresh)
        self.checks = 0

    # ---- one check ---------------------------------------------------------------
    def check(self) -> list[RunwayState]:
        """For each wallet: read its balance, work the runways of its plans out, store
        them, alert a new low one."""
        config = self.config()
        if not config.runway.enabled:  # turned off by a reload: nothing shown, not stale
            with begin(self.engine) as conn:
                for _, address in self.wallets:
                    store_runway.save(conn, address, [])
            self._show([])
            return []
        states: list[RunwayState] = []
        for name, address in self.wallets:
            states += self._check_wallet(config, name, address)
        self._show(states)
        self.checks += 1
        return states

    def _check_wallet(self, config: Config, name: str | None, wallet: str) -> list[RunwayState]:
        """One wallet's runways (`name` None: the one wallet, every plan)."""
        settings = config.runway
        now = self.clock()
        with Session(self.engine) as session:
            conn = session.connection()
            found = control.pauses(conn)
            before = {s.runway.mint: s for s in store_runway.read(conn, wallet)}
            known = tokens.known(conn)
            every = any(p.all_plans for p in found)  # `pause --all`: nothing is spent
            alike = [] if every else store_plans.enabled_alike(  # grouped: no list of every plan
                session, [p.scope for p in found if not p.all_plans], wallet=name)  # fmt: skip
            needs = needs_of(alike, wallet, dry_run=config.safety.dry_run)
        portfolio, problem = None, None
        if needs:
            portfolio, problem = self._balance(wallet)
        found_runways = runways(
            wallet, lambda mint: None if portfolio is None else portfolio.exact_balance(mint),
            needs, now, timedelta(seconds=settings.horizon), problem=problem,
        )  # fmt: skip
        states = []
        for runway in found_runways:
            token = known.get(runway.mint)
            decimals = token.decimals if token is not None else (
                portfolio.known_decimals(runway.mint) if portfolio is not None else None
            )  # fmt: skip
            previous = before.get(runway.mint)
            was_low = previous.low if previous is not None else False
            judged = runway.low(settings.alert_below)
            low = was_low if judged is None else judged  # unknown: as it was
            states.append(RunwayState(
                runway, token.symbol if token is not None else None, decimals, low,
                settings.alert_below, settings.horizon, now,
            ))  # fmt: skip
        with begin(self.engine) as conn:
            store_runway.save(conn, wallet, states)
        for state in states:
            previous = before.get(state.runway.mint)
            self._judge(state, previous.low if previous is not None else False)
        return states

    def _balance(self, wallet: str) -> tuple[Portfolio | None, str | None]:
        try:
            return self.api.positions(wallet, spare=self.spare), None
        except JupcronError as exc:  # a refused key too: the runs say it; here it is unknown
            log.warning("runway_balance_unknown", error=str(exc))
            return None, f"balance unknown: {exc}"

    def _show(self, states: list[RunwayState]) -> None:
        if self.gauges is None:
            return
        for s in states:
            r = s.runway
            self.gauges.set(r.wallet, r.mint, s.symbol, balance=r.balance, decimals=s.decimals,
                            runs=r.runs, upcoming=r.upcoming, low=s.low)  # fmt: skip
        self.gauges.keep_only((s.runway.wallet, s.runway.mint) for s in states)

    def _judge(self, state: RunwayState, was_low: bool) -> None:
        r = state.runway
        if state.low and not was_low:
            text = alert_text(state)
            log.warning("runway_low", wallet=r.wallet, mint=r.mint, runs=r.runs,
                        threshold=state.threshold)  # fmt: skip
            if self.alert is not None:
                self.alert(AlertEvent.LOW_BALANCE, text)
        elif was_low and not state.low:
            log.info("runway_recovered", wallet=r.wallet, mint=r.mint, runs=r.runs)

    # ---- the thread --------------------------------------------------------------
    def start(self) -> RunwayWatch:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._thread.stop(timeout)

    def check_safely(self) -> None:
        try:
            self.check()
        except (JupcronError, SQLAlchemyError) as exc:
            log.warning("runway_check_failed", error=str(exc))
        except Exception:  # the watch must never take the daemon down
            log.exception("runway_check_failed")


def alert_text(state: RunwayState) -> str:
    """One line: whose balance, what it covers, when it runs short, which plans."""
    r = state.runway
    plans = ", ".join(r.plans)
    return (
        f"wallet {r.wallet}: {state.amount(r.balance)} covers {r.runs} of the next "
        f"{r.upcoming} run(s) (alert below {state.threshold}); the run at "
        f"{moment(r.short_at)} needs more (plans: {plans})"
    )
