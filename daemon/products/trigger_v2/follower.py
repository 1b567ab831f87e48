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
An order of ours in neither list for an hour (a cancel of an order that is not the
wallet's, a create whose deposit never made an order) is handled as v1's unaccounted
one (`jupcron.follower.unexplained`): looked for only at an hourly sweep, and told once
(``order_unaccounted``) when a sweep read both lists through without it.
An order's fills and refund go to one run: the create that opened it, else (an order
opened elsewhere, named only by cancels) a succeeded cancel before one that failed. A
create left in doubt, its answers lost, knows no order id: its order is the one whose
landed deposit carries the run's signature.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine, select

from jupcron.api.trigger_v2_models import Family, HistoryOrder, HistoryPage, OrderEvent
from jupcron.domain import PlanKind, RunStatus
from jupcron.errors import JupcronError
from jupcron.follower import unexplained
from jupcron.follower.orders import PollResult, poll_each
from jupcron.store import follow
from jupcron.store.engine import begin
from jupcron.store.models import Plan, PlanVersion, Run

log = structlog.get_logger(__name__)

MAX_PAGES = 50
LISTS = ("active", "past")  # the history's two lists (its ``state``), read in this order
SOURCE: dict[Family, str] = {"dca": "recurring", "price": "trigger"}  # the fills view's names
_CREATED = (RunStatus.SUCCEEDED, RunStatus.IN_DOUBT)
_CANCELS = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.IN_DOUBT, RunStatus.SUBMITTED)
_NEVER = datetime.min.replace(tzinfo=UTC)  # an event with no time: before any other


class HistoryApi(Protocol):
    def history(
        self, family: Family, state: str, offset: int = 0, observe: Any = None,
        spare: float | None = None,
    ) -> HistoryPage: ...  # fmt: skip


@dataclass(frozen=True)
class Ours:
    run_id: int
    family: Family
    # the key is the signature of the create's deposit, not an order id: a create left in
    # doubt (its answers lost) never learnt its order's, which the history shows by it
    by_deposit: bool = False


def targets(conn: Any, wallet: str | None = None, address: str | None = None) -> dict[str, Ours]:
    """Our V2 orders (of `wallet`'s runs, when given; with its keypair's `address`, the
    runs it signed under any name: `jupcron.store.follow.of_wallet`): order id -> the
    run they are put against. The create run that opened it, else (an order opened
    elsewhere, that only cancels name) a succeeded cancel, then the earliest: never a
    cancel that failed while another withdrew it (as v1's
    `jupcron.store.follow.targets`). A cancel's order and family are those of the plan
    version it was claimed under: an edited plan names what its later runs cancel. A
    create that never learnt its order's id (in doubt) is keyed by its signature, its
    deposit's (`Ours.by_deposit`), as v1's in-doubt recurring create is."""
    kinds = [str(k) for k in (PlanKind.TRIGGER_V2_DCA, PlanKind.TRIGGER_V2_ORDER,
                              PlanKind.TRIGGER_V2_CANCEL)]  # fmt: skip
    stmt = (
        select(Run.id, Run.order_account, Run.signature, Run.status, Plan.kind,
               Plan.request, PlanVersion.content)
        .join(Plan, Plan.id == Run.plan_id)
        .outerjoin(PlanVersion, follow.CLAIMED_VERSION)
        .where(Plan.kind.in_(kinds))
        .order_by(Run.id)
    )  # fmt: skip
    named: list[tuple[int, int, str, Family, bool]] = []  # (rank, run, key, family, by deposit)
    for row in conn.execute(follow.of_wallet(stmt, wallet, address)):
        claimed = follow.claimed_request(row.content, row.request)
        request = claimed if isinstance(claimed, dict) else {}
        if row.kind == str(PlanKind.TRIGGER_V2_CANCEL):
            if row.status not in [str(s) for s in _CANCELS]:
                continue
            order, family = row.order_account or request.get("order"), request.get("family")
            rank, by_deposit = (1 if row.status == str(RunStatus.SUCCEEDED) else 2), False
        elif row.status in [str(s) for s in _CREATED]:
            order = row.order_account or row.signature
            family = "dca" if row.kind == str(PlanKind.TRIGGER_V2_DCA) else "price"
            rank, by_deposit = 0, row.order_account is None
        else:
            continue
        if isinstance(order, str) and order and family in ("dca", "price"):
            named.append((rank, row.id, order, "dca" if family == "dca" else "price", by_deposit))
    found: dict[str, Ours] = {}
    for _, run_id, order, family, by_deposit in sorted(named):
        found.setdefault(order, Ours(run_id, family, by_deposit))
    return found


def _keys(order: HistoryOrder, ours: dict[str, Ours]) -> list[str]:
    """The keys of `ours` that `order` answers to: its id, then the signature of its
    landed deposit (an in-doubt create's: the run that made it, put first by `_read`)."""
    deposit = _deposit(order)
    keys = [order.id, *([deposit.tx_signature] if deposit and deposit.tx_signature else [])]
    return [key for key in keys if key in ours]


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


# a price order's raw state under the display state ``failed`` that filled, but whose
# output was never delivered from the vault (trigger/order-history.mdx, Raw States)
OUTPUT_STUCK = "withdraw_failed"


def _held(family: Family, order: HistoryOrder) -> dict[str, Any]:
    """What the owner is told of a held order: why, what waits in the vault (its
    ``input_mint``: the mint whose money waits), and how to get the funds back (a
    cancel, run again if one was left mid-way: it crafts a fresh withdrawal)."""
    detail = {
        "api_status": order.state if family == "dca" else order.order_state,
        "remaining": order.remaining_input_amount if family == "price" else _left(order),
        "input_mint": order.input_mint,
        "to_withdraw": f"a trigger-v2-cancel plan with order: {order.id}, family: {family} "
                       "(fire it again if one was left mid-way)",
    }  # fmt: skip
    if family == "price" and order.raw_state == OUTPUT_STUCK:
        # filled: what waits is the fill's output, not the (spent) input
        detail.update(raw_state=order.raw_state, remaining=_output_left(order),
                      input_mint=order.output_mint,
                      remaining_input=order.remaining_input_amount)  # fmt: skip
    return detail


def _output_left(order: HistoryOrder) -> str | None:
    """A price order's fill output not yet delivered: its output, less its landed
    withdrawals of the output mint."""
    if order.output_amount is None:
        return None
    sent = [int(e.amount) for e in order.events if e.type == "withdrawal" and _landed(e)
            and e.mint == order.output_mint and e.amount is not None]  # fmt: skip
    return str(max(int(order.output_amount) - sum(sent), 0))


def _left(order: HistoryOrder) -> str | None:
    """A DCA's input not yet used (its history's ``inputAmountRemaining`` is not read)."""
    if order.input_amount_initial is None:
        return None
    return str(int(order.input_amount_initial) - int(order.input_amount_used or 0))


def _landed(event: OrderEvent) -> bool:
    """Its transaction landed: state ``success``, or unsaid (as `HistoryOrder.event_with`
    reads it); ``pending`` and ``failed`` moved nothing."""
    return event.state in (None, "success")


def _deposit(order: HistoryOrder) -> OrderEvent | None:
    """The order's deposit, if it landed."""
    return next((e for e in order.events if e.type == "deposit" and _landed(e)), None)


def _refunds(order: HistoryOrder) -> list[OrderEvent]:
    """The order's landed withdrawals of its input, oldest first (the history lists its
    events newest first). Not one of another mint: a price order's fill output leaves
    the vault as a withdrawal too (raw states ``ready_withdraw_output``,
    ``withdrawing``), and is no refund. A DCA's withdrawal names no mint: its input's."""
    found = [e for e in order.events if e.type == "withdrawal" and _landed(e)
             and e.mint in (None, order.input_mint)]  # fmt: skip
    return sorted(found, key=lambda e: e.timestamp or _NEVER)


def _sum(values: list[str | None]) -> str | None:
    amounts = [int(v) for v in values if v is not None]
    return str(sum(amounts)) if amounts else None


class TriggerV2Follower:
    """One wallet's V2 orders: `api` is that wallet's session, `name` its configured name
    (``None``: every run's, a single-wallet daemon) and `address` its keypair's (the
    runs it signed under an earlier name are its too)."""

    def __init__(
        self,
        engine: Engine,
        api: HistoryApi,
        clock: Callable[[], datetime],
        spare: float,
        name: str | None = None,
        address: str | None = None,
    ) -> None:
        self.engine, self.api, self.clock, self.spare = engine, api, clock, spare
        self.name, self.address = name, address
        self._swept: dict[Family, datetime] = {}  # family -> its last lost-order sweep

    def poll(self) -> list[PollResult]:
        families: tuple[Family, ...] = ("dca", "price")
        return poll_each([(f"trigger_v2_{f}", partial(self._poll, f)) for f in families], log)

    def _poll(self, family: Family, result: PollResult) -> None:
        source = SOURCE[family]
        with begin(self.engine) as conn:
            mine = targets(conn, self.name, self.address)
            ours = {k: v for k, v in mine.items() if v.family == family}
            pending = set(ours) - follow.closed_orders(conn, source)
            if not pending:
                return  # nothing of ours is open: not a single request
            runs = follow.Targets({key: mine.run_id for key, mine in ours.items()}, {})
            known = follow.last_known(conn, source, pending, runs)
        now = self.clock()
        lost, wanted, sweep = unexplained.to_read(pending, known, now, self._swept.get(family))
        if not wanted:
            return  # only lost orders, swept not long ago: not a single request
        seen: set[str] = set()
        whole = self._read(family, ours, pending, wanted, seen, result)
        if not sweep or whole is None:
            return  # a page could not be read: the sweep is the next poll's
        self._swept[family] = now
        if whole:  # both lists read through, and still nowhere
            told = {key: (ours[key], {**unexplained.unaccounted_detail(key, known.get(key)),
                                      "lists": list(LISTS)})
                    for key in sorted(lost - seen)}  # fmt: skip
            self._tell(family, told)

    def _read(
        self,
        family: Family,
        ours: dict[str, Ours],
        pending: set[str],
        wanted: set[str],
        seen: set[str],
        result: PollResult,
    ) -> bool | None:
        """Read the active list, then the past one, each until `wanted` are all seen,
        taking each order of `pending` met on the way. True: read as far as needed;
        False: a list went on past `MAX_PAGES`, or a page had orders it could not read;
        None: a page could not be read at all."""
        whole = True
        for state in LISTS:
            offset = 0
            for _ in range(MAX_PAGES):
                result.requests += 1
                try:
                    page = self.api.history(family, state, offset, spare=self.spare)
                except JupcronError as exc:
                    self._error(family, "follow_page_failed",
                                {"list": state, "offset": offset, "error": str(exc)})  # fmt: skip
                    result.errors += 1
                    return None
                if page.problems:
                    self._error(family, "follow_answer_invalid",
                                {"list": state, "problems": page.problems[:20]})  # fmt: skip
                    result.errors += 1
                    whole = False
                for order in page.orders:
                    keys = _keys(order, ours)
                    if not keys:
                        result.foreign += 1
                    elif pending.intersection(keys):
                        seen.update(keys)  # its maker's last: the run it is put against
                        self._take(family, order, ours[keys[-1]].run_id, result)
                if wanted <= seen:
                    return whole
                offset += len(page.orders)
                if not page.orders or offset >= page.total:
                    break
            else:
                whole = False  # MAX_PAGES read and more announced
        return whole

    def _tell(self, family: Family, found: dict[str, tuple[Ours, dict[str, Any]]]) -> None:
        """One ``order_unaccounted`` event and warning per order of `found` (key -> whose,
        detail) that none named yet (a deposit's signature is no order id)."""
        if not found:
            return
        source, now = SOURCE[family], self.clock()
        with begin(self.engine) as conn:
            already = follow.told(conn, source, unexplained.UNACCOUNTED)
            for key, (mine, detail) in found.items():
                if key in already:
                    continue
                account = None if mine.by_deposit else key
                follow.add_event(conn, unexplained.UNACCOUNTED, detail, at=now, source=source,
                                 order_account=account, run_id=mine.run_id)  # fmt: skip
                log.warning(unexplained.UNACCOUNTED, source=f"trigger_v2_{family}", order=key,
                            run_id=mine.run_id, wallet=self.name,
                            last_known=detail.get("last_known"))  # fmt: skip

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
        deposit = _deposit(order)
        withdrawals = _refunds(order)
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
            follow.move_trades(conn, order.id, run_id)  # to the run the order is put against
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
