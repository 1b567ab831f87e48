"""Two daemons on one store whose configs give one keypair two names (`main` in one,
`hot` in the other) share one `safety.caps` budget, even racing: their cap checks
count by the keypair and are serialized across processes (PostgreSQL's advisory
lock, SQLite's write lock), so of two runs that together exceed the cap, one passes.
Each daemon is a store of its own (its own engine and connections), as two
processes are; the real SQLite file and PostgreSQL fixture."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from jupcron.chain.wallet import Wallet
from jupcron.store.engine import make_engine
from jupcron.store.port import CapHit, CapWindow, Reservation
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import SOL, USDC, RigFactory

FIVE_USDC = 5_000_000
PER_DAY = 7_000_000
SLOT = datetime(2026, 12, 1, 8, tzinfo=UTC)


def test_two_daemons_two_names_one_keypair_one_budget(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(db_url=db_url)
    key = Wallet.generate().address
    now = datetime.now(UTC)
    stores = [SqlRunStore(make_engine(db_url)) for _ in range(2)]
    claimed = []
    for store, name in zip(stores, ("main", "hot"), strict=True):
        plan = rig.plan("swap", wallet=name)
        run = store.claim(plan, SLOT, now=now, trigger="schedule", claimed_by=name, owner=key)
        assert run is not None
        cap = CapWindow(f"cap (wallet {name})", now - timedelta(days=1), PER_DAY,
                        input_mint=USDC, wallet=name, owner=key)  # fmt: skip
        claimed.append((store, run.id, cap))
    start = threading.Barrier(2)
    hits: list[CapHit | None] = [None, None]

    def reserve(index: int) -> None:
        store, run_id, cap = claimed[index]
        start.wait()
        hits[index] = store.reserve(
            run_id, Reservation(USDC, FIVE_USDC, SOL), [cap], now=now, owner=key
        )

    threads = [threading.Thread(target=reserve, args=(i,)) for i in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        for store in stores:
            store.engine.dispose()

    passed = [hit is None for hit in hits]
    assert sorted(passed) == [False, True], hits
    (refused,) = [hit for hit in hits if hit is not None]
    assert refused.used == FIVE_USDC  # the other name's reservation, by the same key
