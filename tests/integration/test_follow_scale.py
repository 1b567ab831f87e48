"""Review 18j: what a poll costs with many followed recurring orders (all open),
on SQLite and PostgreSQL through the emulator. Printed, not asserted, for time:
``JUPCRON_FOLLOW_N=10000`` measures the brief's 10,000 (the default keeps it fast).
Asserted: the pages a poll reads are the active list's, and no more."""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from datetime import timedelta
from typing import Any

from solders.pubkey import Pubkey
from solders.signature import Signature
from sqlalchemy import event, insert

from jupcron.emulator.ledger import RecurringOrder
from jupcron.follower import OrderFollower
from jupcron.store.models import Run
from tests.fixtures.follow import DAY, SOL, FollowRigFactory, recurring_request
from tests.fixtures.runner import USDC
from tests.integration.test_follow_unaccounted import Counting

N = int(os.environ.get("JUPCRON_FOLLOW_N", "300"))


def test_a_poll_of_many_open_orders_reads_the_active_list_once(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    first = f.rig.run(f.fire(plan))
    now, wall = f.clock.now, f.clock.wall()
    rows: list[dict[str, Any]] = []
    for n in range(N):
        key, sig = str(Pubkey.new_unique()), str(Signature.new_unique())
        f.rig.emulator.ledger.recurring_orders[key] = RecurringOrder(
            order=key, user=f.rig.wallet.address, input_mint=USDC, output_mint=SOL,
            in_amount=240_000_007, number_of_orders=2, interval=DAY, created_at=wall - n,
            signature=sig, updated_at=wall - n,
        )  # fmt: skip
        rows.append({"plan_id": first.plan_id, "plan_version": 1, "status": "succeeded",
                     "scheduled_for": now - timedelta(seconds=n + 1), "signature": sig,
                     "order_account": key, "input_mint": USDC, "output_mint": SOL,
                     "created_at": now, "updated_at": now, "finished_at": now})  # fmt: skip
    with f.engine.begin() as conn:
        conn.execute(insert(Run), rows)
    statements: Counter[str] = Counter()

    def count(conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        statements[sql.split(None, 1)[0].upper()] += 1

    event.listen(f.engine, "before_cursor_execute", count)
    api = Counting(f.client())
    follower = OrderFollower(f.engine, api, f.rig.wallet.address, f.clock)
    for label in ("first poll", "next poll, nothing new"):
        api.pages.clear()
        statements.clear()
        f.clock.advance(60)
        started = time.perf_counter()
        follower.poll()
        took = time.perf_counter() - started
        print(f"\n{db_url.split(':')[0]} {N + 1} open orders, {label}: {took:.2f} s, "
              f"pages {dict(api.pages)}, statements {dict(statements)}")  # fmt: skip
        assert api.pages == {("recurring", "active"): math.ceil((N + 1) / 10)}
    event.remove(f.engine, "before_cursor_execute", count)
