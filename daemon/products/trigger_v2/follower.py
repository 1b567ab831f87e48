"""Following our Trigger V2 orders: their fills and their fate, from the
history (``GET /orders/history/dca`` and ``/orders/history``).

The same rules as the v1 follower (`jupcron.follower.orders`): only orders a
run of ours created (DCA, price order) or cancels; with none of ours open, no
request at all; every poll reads the whole truth again and a fill is stored
once (order, tx, action). Stored like v1's so the fills view, the audit and
``jupcron report`` show V2 the same way: a DCA round is a ``recurring`` fill,
a price order's fill a ``trigger`` one. A price order that expired or failed keeps
its deposit in the vault until a cancel withdraws it (the docs' order lifecycle:
"prompt user to withdraw funds"; one whose deposit failed, raw state
``deposit_failed``, holds nothing and is closed, as a DCA's is), so it is held: one
``order_held`` event (and a warning) says how to withdraw, and it stays followed until
the withdrawal closes it.
So is an order left mid-cancel (DCA ``withdrawing``, price ``pending_withdraw``) longer
than our own cancel takes: it fills no more, never trades again, and its funds wait in
the vault until a cancel, run again, withdraws them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine, select

from jupcron.api.trigger_v2_models import Family, HistoryOrder, HistoryPage, OrderEvent
from jupcron.domain import PlanKind, RunStatus
from jupcron.errors import JupcronError
from jupcron.follower.orders import PollResult, poll_each
from jupcron.store import follow
from jupcron.store.engine import begin
from jupcron.store.models import Plan, Run

log = structlog.get_logger(__name__)

MAX_PAGES = 50
SOURCE: dict[Family, str] = {"dca": "recurring", "price": "trigger"}  # the fills view's names
_CREATED = (RunStatus.SUCCEEDED, RunStatus.IN_DOUBT)
_CANCELS = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.IN_DOUBT, RunStatus.SUBMITTED)


class HistoryApi(Protocol):
    def history(
        self, family: Family, state: str, offset: int = 0, observe: Any = None,
        spare: float | None = None,
    ) -> HistoryPage: ...  # fmt: skip


@dataclass(frozen=True)
class Ours:
    run_id: int
    family: Family


def targets(conn: Any, wallet: str | None = None) -> dict[str, Ours]:
    """Our V2 orders (of `wallet`'s runs, when given): order id -> the run that created
    (or cancels) it."""
    kinds = [str(k) for k in (PlanKind.TRIGGER_V2_DCA, PlanKind.TRIGGER_V2_ORDER,
                              PlanKind.TRIGGER_V2_CANCEL)]  # fmt: skip
    stmt = (
        select(Run.id, Run.order_account, Run.status, Plan.kind, Plan.request)
        .join(Plan, Plan.id == Run.plan_id)
        .where(Plan.kind.in_(kinds))
        .order_by(Run.id)
    )
    if wallet is not None:
        stmt = stmt.where(Run.wallet == wallet)
    rows = conn.execute(stmt)
    found: dict[str, Ours] = {}
    for row in rows:
        request = row.request if isinstance(row.request, dict) else {}
        if row.kind == str(PlanKind.TRIGGER_V2_CANCEL):
            if row.status not in [str(s) for s in _CANCELS]:
                continue
            order, family = row.order_account or request.get("order"), request.get("family")
        elif row.status in [str(s) for s in _CREATED]:
            order = row.order_account
            family = "dca" if row.kind == str(PlanKind.TRIGGER_V2_DCA) else "price"
        else:
            continue
        if isinstance(order, str) and family in ("dca", "price"):
            found.setdefault(order, Ours(row.id, "dca" if family == "dca" else "price"))
    return found


# mid-cancel: the withdrawal crafted, not yet confirmed. The order fills no more and
# never goes back to trading; its deposit stays in the vault until a withdrawal lands,
# and cancel again crafts a fresh one (docs: trigger/lifecycle.mdx, dca-cancel.mdx)
MID_CANCEL: dict[Family, str] = {"dca": "withdrawing", "price": "pending_withdraw"}
# how long an order may be mid-cancel before it is held: our own cancel confirms within
# its withdrawal's blockhash (about a minute), so longer means that withdrawal is lost
MID_CANCEL_GRACE = timedelta(minutes=10)
# a price order's raw state under the display state ``failed`` whose deposit never
# landed: nothing in the vault (trigger/order-history.mdx, Raw States), like a DCA's
DEPOSIT_FAILED = "deposit_failed"


def _state(family: Family, order: HistoryOrder, now: datetime) -> str:
    shown = (order.state if family == "dca" else order.order_state) or ""
    if shown == MID_CANCEL[family]:
        since = order.updated_at or order.created_at
        return follow.HELD if since is None or now - since >= MID_CANCEL_GRACE else "open"
    if family == "dca":
        return {"completed": "completed", "cancelled": "cancelled",
                "deposit_failed": "cancelled"}.get(shown, "open")  # fmt: skip
    if order.raw_state == DEPOSIT_FAILED:  # shown "failed": nothing reached the vault
        return "cancelled"
    if shown in ("expired", "failed"):  # fill_failed, withdraw_failed: funds may wait
        return follow.HELD
    return {"filled": "completed", "cancelled": "cancelled"}.get(shown, "open")


def _held(family: Family, order: HistoryOrder) -> dict[str, Any]:
    """What the owner is told of a held order: why, and how to get the funds back (a
    cancel, run again if one was left mid-way: it crafts a fresh withdrawal)."""
    return {
        "api_status": order.state if family == "dca" else order.order_state,
        "remaining": order.remaining_input_amount if family == "price" else _left(order),
        "input_mint": order.input_mint,
        "to_withdraw": f"a trigger-v2-cancel plan with order: {order.id}, family: {family} "
                       "(fire it again if one was left mid-way)",
    }  # fmt: skip


def _left(order: HistoryOrder) -> str | None:
    """A DCA's input not yet used (its history's ``inputAmountRemaining`` is not read)."""
    if order.input_amount_initial is None:
        return None
    return str(int(order.input_amount_initial) - int(order.input_amount_used or 0))


def _landed(event: OrderEvent) -> bool:
    """Its transaction landed: state ``success``, or unsaid (as `HistoryOrder.event_with`
    reads it); ``pending`` and ``failed`` moved nothing."""
    return event.state in (None, "success")


def _sum(values: list[str | None]) -> str | None:
    amounts = [int(v) for v in values if v is not None]
    return str(sum(amounts)) if amounts else None


class TriggerV2Follower:
    """One wallet's V2 orders: `api` is that wallet's session, `name` its configured name
    (``None``: every run's, a single-wallet daemon)."""

    def __init__(
        self,
        engine: Engine,
        api: HistoryApi,
        clock: Callable[[], datetime],
        spare: float,
        name: str | None = None,
    ) -> None:
        self.engine, self.api, self.clock, self.spare = engine, api, clock, spare
        self.name = name

    def poll(self) -> list[PollResult]:
        families: tuple[Family, ...] = ("dca", "price")
        return poll_each([(f"trigger_v2_{f}", partial(self._poll, f)) for f in families], log)

    def _poll(self, family: Family, result: PollResult) -> None:
        with begin(self.engine) as conn:
            ours = {k: v for k, v in targets(conn, self.name).items() if v.family == family}
            closed = follow.closed_orders(conn, SOURCE[family])
        pending = set(ours) - closed
        if not pending:
            return  # nothing of ours is open: not a single request
        seen: set[str] = set()
        for state in ("active", "past"):
            offset = 0
            for _ in range(MAX_PAGES):
                result.requests += 1
                try:
                    page = self.api.history(family, state, offset, spare=self.spare)
                except JupcronError as exc:
                    self._error(family, "follow_page_failed",
                                {"list": state, "offset": offset, "error": str(exc)})  # fmt: skip
                    result.errors += 1
                    return
                if page.problems:
                    self._error(family, "follow_answer_invalid",
                                {"list": state, "problems": page.problems[:20]})  # fmt: skip
                    result.errors += 1
                for order in page.orders:
                    mine = ours.get(order.id)
                    if mine is None:
                        result.foreign += 1
                    elif order.id in pending:
                        seen.add(order.id)
                        self._take(family, order, mine.run_id, result)
                offset += len(page.orders)
                if not page.orders or offset >= page.total or pending <= seen:
                    break
            if pending <= seen:
                return

    def _take(self, family: Family, order: HistoryOrder, run_id: int, result: PollResult) -> None:
        source, now = SOURCE[family], self.clock()
        result.orders_seen += 1
        trades = []
        for e in order.events:
            if e.type != "fill" or e.state != "success" or not e.tx_signature:
                continue
            spent = e.input_amount if family == "dca" else e.amount
            if spent is None or e.output_amount is None or e.timestamp is None:
                continue
            trades.append(follow.TradeValues(
                source=source, run_id=run_id, order_account=order.id, tx_id=e.tx_signature,
                action="Fill", input_mint=order.input_mint, in_amount=spent,
                output_mint=e.output_mint or order.output_mint, out_amount=e.output_amount,
                confirmed_at=e.timestamp,
            ))  # fmt: skip
        state = _state(family, order, now)
        closed = state in follow.CLOSED_STATES
        # only landed transactions: a pending or failed deposit (or withdrawal) moved
        # nothing, and a followed order's open_tx / close_tx is read as proof of landing
        deposit = next((e for e in order.events if e.type == "deposit" and _landed(e)), None)
        withdrawals = [e for e in order.events if e.type == "withdrawal" and _landed(e)]
        refunded = _sum([(e.input_amount if family == "dca" else e.amount) for e in withdrawals])
        values = follow.OrderValues(
            order_account=order.id, source=source, run_id=run_id, state=state,
            api_status=order.state or order.raw_state or order.order_state,
            deposited=order.input_amount_initial or order.initial_input_amount,
            used=order.input_amount_used or order.input_used,
            received=order.output_amount_total or order.output_amount,
            refunded=refunded if closed else None,
            open_tx=deposit.tx_signature if deposit else None,
            close_tx=withdrawals[-1].tx_signature if withdrawals else None,
            opened_at=order.created_at,
            closed_at=(order.updated_at or now) if closed else None,
            input_mint=order.input_mint, output_mint=order.output_mint,
        )  # fmt: skip
        with begin(self.engine) as conn:
            result.new_trades += follow.store_trades(conn, trades, now=now)
            before = follow.save_order(conn, values, now=now)
            if closed and before not in follow.CLOSED_STATES:
                detail = {"state": state, "api_status": values.api_status,
                          "refunded": values.refunded}  # fmt: skip
                follow.add_event(conn, f"order_{state}", detail, at=now, source=source,
                                 order_account=order.id, run_id=run_id)  # fmt: skip
                result.closed.append(order.id)
            elif state == follow.HELD and before != follow.HELD:
                detail = _held(family, order)
                follow.add_event(conn, "order_held", detail, at=now, source=source,
                                 order_account=order.id, run_id=run_id)  # fmt: skip
                log.warning("order_held", order=order.id, run_id=run_id, **detail)

    def _error(self, family: Family, step: str, detail: dict[str, Any]) -> None:
        log.warning(step, source=f"trigger_v2_{family}", **detail)
        try:
            with begin(self.engine) as conn:
                follow.add_event(conn, step, detail, at=self.clock(), source=SOURCE[family])
        except JupcronError as exc:
            log.warning("follower_event_not_stored", step=step, error=str(exc))
