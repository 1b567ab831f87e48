"""The follower's thread: a poll at start, then every ``follow.interval`` seconds,
until stopped. Scheduled by the daemon while it is the leader.

After each poll, what the followers found that leaves money waiting (a held, overdue
or unaccounted order) is handed to ``notify`` (the service's alerts and webhook; the
follower never imports the service), each once (`jupcron.store.notices`). A crash
between the claim and the hand-over (an in-memory queue put) loses that one notice,
which stays in ``follow_events``, ``jupcron audit`` and the log's warning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import structlog
from sqlalchemy import Engine

from jupcron.api.client import SPARE_WAIT
from jupcron.follower.orders import ListingApi, OrderFollower
from jupcron.follower.tokens import MintRpc, TokenApi, refresh_tokens
from jupcron.scheduling.periodic import Periodic
from jupcron.store import follow
from jupcron.store.engine import begin
from jupcron.store.notices import NOTICE_BATCH, OrderNotice, claim_notices

if TYPE_CHECKING:  # the product's follower imports this package's PollResult
    from jupcron.products.trigger_v2.follower import HistoryApi

log = structlog.get_logger(__name__)


class FollowerApi(ListingApi, TokenApi, Protocol):
    """The API calls the follower makes (all on spare capacity)."""


def describe(notice: OrderNotice) -> str:
    """One line: plan, order, what is waiting, and how to get it back."""
    d = notice.detail
    order = notice.order or d.get("key") or "?"
    head = (
        f"plan {notice.plan or '?'} run {notice.run_id or '?'} {notice.source or '?'} order {order}"
    )
    mint = notice.input_mint or "its input mint"
    if notice.step == "order_held":  # amounts in token units where the mint is known
        return (
            f"{head} is held ({d.get('api_status') or '?'}): "
            f"{notice.amount(d.get('remaining'))} waits in the vault; "
            f"to withdraw: {d.get('to_withdraw') or '?'}"
        )
    if notice.step == "order_overdue":
        waiting = notice.amount(d.get("remaining") or d.get("deposited"))
        return (
            f"{head} is still active an hour past its expected end "
            f"{d.get('expected_end') or '?'}: up to {waiting} still in it; "
            "check its price bounds and the keeper, or cancel it to get it back"
        )
    return (
        f"{head} is in neither the active nor the history list since "
        f"{d.get('last_known') or 'its run'}: its deposit of {mint} is unaccounted "
        "for; check the wallet and the run's transaction (jupcron audit)"
    )


Notify = Callable[[Sequence[OrderNotice]], None]


class FollowerLoop:
    """Follows every wallet's orders. `wallet`: the one wallet's address (its session
    `trigger_v2`), or every wallet's address by name (their sessions by name): each
    wallet's runs' orders are read from that wallet's listings."""

    def __init__(
        self,
        engine: Engine,
        api: FollowerApi,
        wallet: str | Mapping[str, str],
        *,
        interval: float,
        clock: Callable[[], datetime],
        rpc: MintRpc | None = None,
        trigger_v2: HistoryApi | Mapping[str, HistoryApi | None] | None = None,
        notify: Notify | None = None,
    ) -> None:
        """`notify`: told the held, overdue and unaccounted orders found (once each)."""
        self.engine, self.api, self.rpc, self.clock = engine, api, rpc, clock
        self.notify = notify
        self.interval = interval
        from jupcron.products.trigger_v2.follower import TriggerV2Follower

        self.followers: list[OrderFollower] = []
        self.v2s: list[TriggerV2Follower] = []
        if isinstance(wallet, str):
            self.followers.append(OrderFollower(engine, api, wallet, clock))
            if trigger_v2 is not None and not isinstance(trigger_v2, Mapping):
                self.v2s.append(TriggerV2Follower(engine, trigger_v2, clock, SPARE_WAIT))
        else:
            sessions = trigger_v2 if isinstance(trigger_v2, Mapping) else {}
            for name, address in wallet.items():
                self.followers.append(OrderFollower(engine, api, address, clock, name))
                session = sessions.get(name)
                if session is not None:
                    v2 = TriggerV2Follower(engine, session, clock, SPARE_WAIT, name, address)
                    self.v2s.append(v2)
        self._thread = Periodic("follower", self.poll_once, lambda: self.interval)
        self.polls = 0

    def start(self) -> FollowerLoop:
        self._thread.start()
        log.info("follower_started", interval=self.interval)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._thread.stop(timeout)

    def poll_once(self) -> None:
        """Token facts, then each wallet's orders (v1, then V2): each step on its own,
        so one that fails (a token's facts the store refuses, one wallet's bad answer)
        does not keep the others' fills, refunds and alerts from being recorded."""
        steps: list[tuple[str, Callable[[], object]]] = [
            ("tokens", lambda: refresh_tokens(self.engine, self.api, self.rpc, self.clock))
        ]
        steps += [(f"orders:{f.name or 'default'}", f.poll) for f in self.followers]
        steps += [("trigger_v2", v2.poll) for v2 in self.v2s]
        steps.append(("prune", self._prune))
        for step, run in steps:
            try:
                run()
            except Exception:  # the follower must never take the daemon down
                log.exception("follower_failed", step=step)
        self._hand_over()
        self.polls += 1

    def _prune(self) -> None:
        """The failure rows past their keeping time (`follow.FAILURES_KEPT_FOR`): an
        outage of months writes a few at every poll."""
        with begin(self.engine) as conn:
            follow.prune_failures(conn, now=self.clock())

    def _hand_over(self) -> None:
        """What the polls (this one or a crashed process's) found, to ``notify``; a
        store that does not answer leaves it for the next poll."""
        if self.notify is None:
            return
        try:
            while notices := claim_notices(self.engine):
                self.notify(notices)
                if len(notices) < NOTICE_BATCH:
                    break
        except Exception:  # never the daemon down; the rows stay for the next poll
            log.exception("follower_notice_failed")
