"""Following our recurring and trigger orders: their trades and their fate.

One poll of a source (``recurring`` | ``trigger``):

    our orders not known closed?  none -> no request at all
    read every page of the active list      trades stored once, state "open"
                                            (well past its expected end: told once)
    some of ours not seen there?  read history pages until all are found
                                            trades stored once, completed /
                                            cancelled (+ what it gave back) / expired
    in neither list for long?     told once; the whole history is read for
                                  them at most every `SWEEP_EVERY`
                                  (`jupcron.follower.unexplained`)

Nothing is remembered between polls but the store (and, only to pace the
history sweeps, when the last one was), and every poll reads the whole truth
again, so a restart, a second daemon or an answer that could not be read
cannot lose a trade; the unique key (order, tx, action) keeps one. An
order is marked closed only from an answer whose every trade could be read.
A malformed answer, a bad page or an API error is a ``follow_events`` row and
a log line, never an exception out of `poll`. Requests take spare capacity
only (the pacer's `acquire_spare`): runs come first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol

import structlog
from sqlalchemy import Connection, Engine

from jupcron.api.orders import ListedOrder, OrderPage
from jupcron.errors import JupcronError
from jupcron.follower import unexplained
from jupcron.store import follow
from jupcron.store.engine import begin

log = structlog.get_logger(__name__)

SOURCES = ("recurring", "trigger")
MAX_PAGES = 1000  # a runaway totalPages is a bad answer, not a reason to loop
PAGE_SIZE = 10  # orders a listing page holds (the docs: "paginated for every 10 orders")
PROBLEMS_KEPT = 20


class ListingApi(Protocol):
    def recurring_orders(self, user: str, status: str, page: int) -> OrderPage: ...
    def trigger_orders(self, user: str, status: str, page: int) -> OrderPage: ...


@dataclass
class PollResult:
    """What one poll of one source did (also the structlog summary)."""

    source: str
    requests: int = 0
    orders_seen: int = 0
    new_trades: int = 0
    foreign: int = 0
    closed: list[str] = field(default_factory=list)
    errors: int = 0


def poll_each(
    polls: Sequence[tuple[str, Callable[[PollResult], None]]],
    logger: Any,
    **context: Any,
) -> list[PollResult]:
    """One poll of each source, in order (its name, and what fills in its result): a
    store error ends that poll only (counted, logged); each poll's summary is logged
    by `logger` with `context`."""
    results = []
    for source, poll in polls:
        result = PollResult(source)
        try:
            poll(result)
        except JupcronError as exc:  # the store went away mid-poll: next time
            result.errors += 1
            logger.warning("follower_poll_interrupted", source=source, error=str(exc))
        logger.info("follower_polled", **context, **result.__dict__)
        results.append(result)
    return results


def _closed_state(source: str, order: ListedOrder) -> str:
    if source == "recurring":
        return "cancelled" if order.user_closed else "completed"
    status = (order.status or "").lower()
    if "cancel" in status:
        return "cancelled"
    if "expire" in status:
        return "expired"
    return "completed"


def _sub(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return None
    return str(max(int(a) - int(b), 0))


def _refund(source: str, state: str, order: ListedOrder) -> str | None:
    """What the order gave back when it closed (input base units)."""
    if state == "open":
        return None
    if source == "trigger":
        return order.raw_remaining_making_amount if state != "completed" else "0"
    if order.raw_in_withdrawn and int(order.raw_in_withdrawn) > 0:
        return order.raw_in_withdrawn
    return _sub(order.raw_in_deposited, order.raw_in_used)


class OrderFollower:
    """One wallet's orders (`wallet`: its address, which the listings are asked for;
    `name`: its configured name, whose runs' orders are followed; ``None``: every run's,
    the one wallet of a single-wallet daemon)."""

    def __init__(
        self,
        engine: Engine,
        api: ListingApi,
        wallet: str,
        clock: Callable[[], datetime],
        name: str | None = None,
    ) -> None:
        self.engine, self.api, self.wallet, self.clock = engine, api, wallet, clock
        self.name = name
        self._swept: dict[str, datetime] = {}  # source -> its last whole-history sweep

    def poll(self) -> list[PollResult]:
        """Follow both sources once; never raises for the API's or the store's troubles."""
        polls = [(source, partial(self._poll, source)) for source in SOURCES]
        return poll_each(polls, log, wallet=self.name)

    # ---- one source -----------------------------------------------------------

    def _poll(self, source: str, result: PollResult) -> None:
        with begin(self.engine) as conn:
            ours = follow.targets(conn, source, self.name, self.wallet)
            closed = follow.closed_orders(conn, source)
        pending = (set(ours.by_order) | set(ours.by_open_tx)) - closed
        if not pending:
            return  # nothing of ours is open: not a single request
        seen: set[str] = set()
        late: dict[str, tuple[int, dict[str, Any]]] = {}
        listed = self._read(source, "active", ours, closed, seen, result, None, late)
        self._tell(source, unexplained.OVERDUE, late, ours)
        missing = pending - seen
        if not missing:
            return
        now = self.clock()
        with begin(self.engine) as conn:
            known = follow.last_known(conn, source, missing, ours)
        lost, wanted, sweep = unexplained.to_read(missing, known, now, self._swept.get(source))
        if not wanted:
            return  # only lost orders, swept not long ago: the active list was enough
        whole = self._read(source, "history", ours, closed, seen, result, wanted, late)
        if not (sweep and whole):
            return
        self._swept[source] = now
        if listed:  # both lists read to the end, and still nowhere
            told = {key: (ours.run_for(key, key), unexplained.unaccounted_detail(
                key, known.get(key))) for key in sorted(lost - seen)}  # fmt: skip
            self._tell(source, unexplained.UNACCOUNTED, told, ours)

    def _read(
        self,
        source: str,
        status: str,
        ours: follow.Targets,
        closed: set[str],
        seen: set[str],
        result: PollResult,
        until: set[str] | None,
        late: dict[str, tuple[int, dict[str, Any]]],
    ) -> bool:
        """Read every page of one list (history: stop once `until` are all seen). True
        when every page it needed was read; False when a page could not be.

        Pages are bounded: the active list (read whole) may announce `MAX_PAGES` more
        than our own open orders fill, else it is a bad answer; the history (newest
        first, read until found) may be as long as it likes, as it grows with every
        order the wallet ever closed, but no more than `MAX_PAGES` of it are read."""
        limit = MAX_PAGES
        if until is None:  # every open order of ours is in it
            limit += -(-(len(ours.by_order) + len(ours.by_open_tx)) // PAGE_SIZE)
        page_no, total = 1, 1
        while page_no <= total:
            if page_no > limit:
                self._error(source, "follow_too_many_pages", {"list": status, "read": limit,
                            "total_pages": total})  # fmt: skip
                result.errors += 1
                return False
            page = self._page(source, status, page_no, result)
            if page is None:
                return False
            runaway = until is None and page.total_pages > limit
            if page.page != page_no or runaway:
                self._error(source, "follow_bad_page", {"list": status, "asked": page_no,
                            "page": page.page, "total_pages": page.total_pages})  # fmt: skip
                result.errors += 1
                return False
            if page.problems:
                self._error(source, "follow_answer_invalid", {"list": status, "page": page_no,
                            "problems": page.problems[:PROBLEMS_KEPT]})  # fmt: skip
                result.errors += 1
            with begin(self.engine) as conn:  # one transaction a page, not one an order
                for order in page.orders:
                    self._take(conn, source, status, order, ours, closed, seen, result, late,
                               readable=order.order_key not in page.incomplete)  # fmt: skip
            if until is not None and until <= seen:
                return True
            total = page.total_pages
            page_no += 1
        return True

    def _page(self, source: str, status: str, page_no: int, result: PollResult) -> OrderPage | None:
        read = self.api.recurring_orders if source == "recurring" else self.api.trigger_orders
        result.requests += 1
        try:
            return read(self.wallet, status, page_no)
        except JupcronError as exc:
            detail = {
                "list": status,
                "page": page_no,
                "error": str(exc),
                "type": type(exc).__name__,
            }
            self._error(source, "follow_page_failed", detail)
            result.errors += 1
            return None

    def _take(
        self,
        conn: Connection,
        source: str,
        status: str,
        order: ListedOrder,
        ours: follow.Targets,
        closed: set[str],
        seen: set[str],
        result: PollResult,
        late: dict[str, tuple[int, dict[str, Any]]],
        *,
        readable: bool,
    ) -> None:
        key = order.order_key
        run_id = ours.run_for(key, order.open_tx)
        if run_id is None:
            result.foreign += 1
            return
        seen.add(key)
        if order.open_tx:
            seen.add(order.open_tx)
        if key in closed or (order.open_tx and order.open_tx in closed):
            return
        result.orders_seen += 1
        now = self.clock()
        trades = [t for t in order.trades if t.order_key == key]
        if len(trades) != len(order.trades):
            readable = False
            problem = "a trade of another order in this order's trades"
            invalid = {"order": key, "problems": [problem]}
            log.warning("follow_answer_invalid", source=source, **invalid)
            follow.add_event(conn, "follow_answer_invalid", invalid, at=now, source=source)
        state = "open" if status == "active" or not readable else _closed_state(source, order)
        if status == "active":
            end = unexplained.overdue(source, order, ours.spans.get(run_id), now)
            if end is not None:
                late[key] = (run_id, unexplained.overdue_detail(order, end))
        filled = _sub(order.raw_making_amount, order.raw_remaining_making_amount)
        values = follow.OrderValues(
            order_account=key, source=source, run_id=run_id, state=state,
            api_status=order.status or ("active" if status == "active" else "history"),
            deposited=order.raw_in_deposited or order.raw_making_amount,
            used=order.raw_in_used or filled,
            received=order.raw_out_received, refunded=_refund(source, state, order),
            open_tx=order.open_tx, close_tx=order.close_tx, opened_at=order.created_at,
            closed_at=(order.updated_at or now) if state != "open" else None,
            input_mint=order.input_mint, output_mint=order.output_mint,
        )  # fmt: skip
        rows = [
            follow.TradeValues(
                source=source,
                run_id=run_id,
                order_account=key,
                tx_id=t.tx_id,
                action=t.action,
                input_mint=t.input_mint,
                in_amount=t.raw_input_amount,
                output_mint=t.output_mint,
                out_amount=t.raw_output_amount,
                confirmed_at=t.confirmed_at,
                fee_mint=t.fee_mint,
                fee_amount=t.raw_fee_amount,
                keeper=t.keeper,
            )
            for t in trades
        ]
        # the order's fills go with it, to the run it is now put against (one named by
        # a cancel that did not close it, then by one that did: its refund is the latter's)
        follow.move_trades(conn, key, run_id)
        new = follow.store_trades(conn, rows, now=now)
        before = follow.save_order(conn, values, now=now)
        if state != "open" and before not in follow.CLOSED_STATES:
            detail: dict[str, Any] = {
                "state": state, "api_status": values.api_status,
                "refunded": values.refunded, "close_tx": order.close_tx,
            }  # fmt: skip
            follow.add_event(conn, f"order_{state}", detail, at=now, source=source,
                             order_account=key, run_id=run_id)  # fmt: skip
            result.closed.append(key)
            log.info("order_closed", source=source, order=key, run_id=run_id, **detail)
        result.new_trades += new

    def _tell(
        self,
        source: str,
        step: str,
        found: Mapping[str, tuple[int | None, dict[str, Any]]],
        ours: follow.Targets,
    ) -> None:
        """One event and one warning per order of `found` (key -> run, detail) that no
        `step` event named yet (an open transaction's key is no order account)."""
        if not found:
            return
        with begin(self.engine) as conn:
            already = follow.told(conn, source, step)
            for key, (run_id, detail) in found.items():
                if key in already:
                    continue
                account = None if key in ours.by_open_tx and key not in ours.by_order else key
                follow.add_event(conn, step, detail, at=self.clock(), source=source,
                                 order_account=account, run_id=run_id)  # fmt: skip
                log.warning(step, source=source, order=key, run_id=run_id, wallet=self.name,
                            **{k: v for k, v in detail.items() if k != "key"})  # fmt: skip

    def _error(self, source: str, step: str, detail: dict[str, Any]) -> None:
        log.warning(step, source=source, **detail)
        try:
            with begin(self.engine) as conn:
                follow.add_event(conn, step, detail, at=self.clock(), source=source)
        except JupcronError as exc:
            log.warning("follower_event_not_stored", step=step, error=str(exc))
