"""A pause reaches every run that starts `PAUSE_TTL` after it, however long the
run store's read of the pauses took. The copy was dated by when its read *ended*: a
read whose snapshot was taken before the pause but that ended seconds later (a
loaded machine, a slow database) was served as fresh for `PAUSE_TTL` after that end,
so a run starting well past the promised half second was ordered under the pause
(seen once in a clean-clone CI run: `test_a_pause_reaches_every_daemon_of_a_postgresql_pair`).
Now the copy is dated by when its read began. A real store on SQLite and
PostgreSQL; the clock is the store's injected one, moved on while the read runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event

from jupcron.store import control
from jupcron.store.engine import begin, make_engine
from jupcron.store.port import ALL_PLANS, PAUSE_TTL
from jupcron.store.runstore import SqlRunStore

READ_TAKES = 3.0  # seconds the pauses' read takes on the store's clock


def test_a_pause_made_while_a_slow_read_ran_reaches_a_run_ttl_after_it(db_url: str) -> None:
    engine = make_engine(db_url)
    clock = {"now": 100.0}
    store = SqlRunStore(engine, group_commit=False, monotonic=lambda: clock["now"])

    def slow(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "FROM pauses" in statement:
            clock["now"] += READ_TAKES  # the read ends 3 s after its snapshot

    event.listen(engine, "after_cursor_execute", slow)
    try:
        assert store.pause_of("buy") is None  # read at 100.0, its snapshot: no pause
        # the operator pauses half a second after that snapshot, while the read ran
        with begin(engine) as conn:
            control.pause(conn, [ALL_PLANS], reason="incident", by="test",
                          now=datetime.now(UTC))  # fmt: skip
        paused_at = 100.5
        clock["now"] = paused_at + PAUSE_TTL + 0.1  # a run starts after the promise
        found = store.pause_of("buy")
        assert found is not None, "a run starting PAUSE_TTL after the pause did not see it"
        assert found.reason == "incident"
    finally:
        event.remove(engine, "after_cursor_execute", slow)
        engine.dispose()
