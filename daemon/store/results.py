"""Execute results as the API gave them, read back: every amount, the swap
events, the raw answer (written by the run store, `jupcron.store.runwrite`)."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, select

from jupcron.store.models import ExecuteResultRow, SwapEventRow
from jupcron.store.runs import Conn

RESULTS = cast(Table, ExecuteResultRow.__table__)
EVENTS = cast(Table, SwapEventRow.__table__)


def results_of(conn: Conn, run_id: int) -> list[dict[str, Any]]:
    """A run's stored results, each with its swap events (oldest first)."""
    rows = conn.execute(select(RESULTS).where(RESULTS.c.run_id == run_id).order_by(RESULTS.c.id))
    out = []
    for row in rows:
        item = dict(row._mapping)
        events = conn.execute(
            select(EVENTS).where(EVENTS.c.result_id == row.id).order_by(EVENTS.c.position)
        )
        item["swap_events"] = [dict(e._mapping) for e in events]
        out.append(item)
    return out
