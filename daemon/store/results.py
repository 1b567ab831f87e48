"""Execute results as the API gave them: every amount, the swap events, the raw
answer. One row per (run, signature): a re-post of the same signed
transaction answers again, and the newer answer replaces the older one."""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from sqlalchemy import Insert, Table, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from jupcron.store.models import ExecuteResultRow, SwapEventRow
from jupcron.store.port import ExecuteValues
from jupcron.store.runs import Conn, _dialect

RESULTS = cast(Table, ExecuteResultRow.__table__)
EVENTS = cast(Table, SwapEventRow.__table__)
_UPDATED = (
    "operation", "status", "code", "http_status", "slot", "error", "order_account",
    "total_input_amount", "total_output_amount", "input_amount_result",
    "output_amount_result", "answer", "recorded_at",
)  # fmt: skip


@cache
def _upsert(dialect: str) -> Insert:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(RESULTS)
    return stmt.on_conflict_do_update(
        index_elements=["run_id", "signature"],
        set_={name: stmt.excluded[name] for name in _UPDATED},
    ).returning(RESULTS.c.id)


def record_execute(conn: Conn, values: ExecuteValues) -> int:
    """Store (or replace) the result of `values.run_id` for its signature; its id."""
    row = {name: getattr(values, name) for name in ("run_id", "signature", *_UPDATED)}
    result_id = int(conn.execute(_upsert(_dialect(conn)), row).scalar_one())
    conn.execute(delete(EVENTS).where(EVENTS.c.result_id == result_id))
    if values.swap_events:
        conn.execute(
            EVENTS.insert(),
            [
                {
                    "result_id": result_id,
                    "position": n,
                    "amm": e.amm,
                    "input_mint": e.input_mint,
                    "input_amount": e.input_amount,
                    "output_mint": e.output_mint,
                    "output_amount": e.output_amount,
                }
                for n, e in enumerate(values.swap_events)
            ],
        )
    return result_id


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
