"""The API rate budget shared through PostgreSQL (jupcron.store.ratebudget): two
clients, each on its own engine (as two daemons), never take more than the
bucket gives; a 429 told to one holds the other off."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, text
from structlog.testing import capture_logs

from jupcron.api.client import JupiterClient
from jupcron.api.pacer import HEADROOM, Pacer
from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.store.engine import make_engine
from jupcron.store.ratebudget import SharedBudget, bucket_id, capacity_for, shared_budgets
from tests.fixtures.emulator import Recorder

pytestmark = pytest.mark.postgres

KEY = SecretStr("a-very-secret-api-key")


@pytest.fixture
def engines(pg_url: str) -> Iterator[tuple[Engine, Engine]]:
    first, second = make_engine(pg_url), make_engine(pg_url)
    yield first, second
    first.dispose()
    second.dispose()


def db_now(engine: Engine) -> float:
    with engine.connect() as conn:
        return float(conn.scalar(text("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8")))


def row(engine: Engine, bucket: str) -> dict[str, object]:
    with engine.connect() as conn:
        found = conn.execute(
            text("SELECT * FROM api_rate_buckets WHERE bucket = :b"), {"b": bucket}
        ).first()
    assert found is not None
    return dict(found._mapping)


def test_the_key_is_never_stored(engines: tuple[Engine, Engine]) -> None:
    bucket = bucket_id(KEY, "main")
    assert KEY.get_secret_value() not in bucket
    assert bucket != bucket_id(SecretStr("another"), "main")
    assert bucket != bucket_id(KEY, "execute_swap")
    SharedBudget(engines[0], bucket, rate=1.0, capacity=1.0).draw(1)
    stored = row(engines[0], bucket)
    assert KEY.get_secret_value() not in repr(stored)


def test_concurrent_draws_never_grant_a_token_twice(engines: tuple[Engine, Engine]) -> None:
    bucket = bucket_id(KEY, "main")
    # a bucket of 10 that refills only one token per 1000 s: every draw races for the 10
    budgets = [SharedBudget(e, bucket, rate=0.001, capacity=10.0) for e in engines]
    budgets[0].draw(0)  # creates the row (full) and takes one
    granted: list[int] = [1]
    lock = threading.Lock()

    def drain(budget: SharedBudget) -> None:
        while True:
            grant = budget.draw(3)
            if grant.tokens == 0:
                assert grant.wait > 0
                return
            with lock:
                granted.append(grant.tokens)

    threads = [threading.Thread(target=drain, args=(b,)) for b in budgets for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert sum(granted) == 10
    assert row(engines[0], bucket)["drawn"] == 10


def test_two_pacers_share_one_budget_and_never_exceed_it(
    engines: tuple[Engine, Engine],
) -> None:
    bucket = bucket_id(KEY, "main")
    rate, capacity = 20.0, 2.0
    pacers = [
        Pacer(1000.0, budget=SharedBudget(e, bucket, rate=rate, capacity=capacity)) for e in engines
    ]
    start = db_now(engines[0])
    spent: list[float] = []  # the database clock at each spend
    lock = threading.Lock()

    def send(pacer: Pacer, engine: Engine) -> None:
        for _ in range(15):
            pacer.acquire()
            at = db_now(engine)
            with lock:
                spent.append(at)

    threads = [threading.Thread(target=send, args=(p, e)) for p, e in zip(pacers, engines, strict=True)
               for _ in range(2)]  # fmt: skip
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert len(spent) == 60
    drawn = int(str(row(engines[0], bucket)["drawn"]))
    assert drawn >= 60
    # the invariant, on the database's clock: a bucket of `capacity`, `rate` per second
    spent.sort()
    for i, at in enumerate(spent):
        assert i + 1 <= capacity + rate * (at - start) + 1e-6, (i, at - start)
    assert drawn <= capacity + rate * (db_now(engines[0]) - start) + 1e-6


def test_a_block_holds_every_client_off(engines: tuple[Engine, Engine]) -> None:
    bucket = bucket_id(KEY, "main")
    first = SharedBudget(engines[0], bucket, rate=100.0, capacity=5.0)
    second = SharedBudget(engines[1], bucket, rate=100.0, capacity=5.0)
    assert first.draw(1).tokens == 1
    first.block(30.0)
    grant = second.draw(1)
    assert grant.tokens == 0
    assert 0 < grant.wait <= 30.0


def test_an_unreachable_database_falls_back_to_local_pacing() -> None:
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=2")
    try:
        budget = SharedBudget(engine, bucket_id(KEY, "main"), rate=1.0, capacity=1.0)
        with capture_logs() as logs:
            first, second = budget.draw(1), budget.draw(1)
        assert (first.tokens, second.tokens) == (1, 1)
        events = [e["event"] for e in logs]
        assert events.count("rate_budget_unavailable") == 1
    finally:
        engine.dispose()


@pytest.mark.parametrize(("rate", "window", "capacity"),
                         [(0.99, 60, 1), (9.9, 60, 5), (49.5, 60, 29), (3.96, 2, 1), (0.5, 1, 1)])  # fmt: skip
def test_a_bucket_saves_up_no_more_than_the_window_allows(
    rate: float, window: float, capacity: float
) -> None:
    assert capacity_for(rate, window) == capacity
    limit = rate / HEADROOM
    # a full bucket spent at once, then the refill: never more than the limit in a window
    assert math.floor(capacity + rate * window) <= round(limit * window)


def test_two_daemons_clients_on_one_key_get_no_429(engines: tuple[Engine, Engine]) -> None:
    """Two API clients (as two daemons, each configured with the key's limit) against an
    emulator enforcing it: with the shared budget, together they stay under it."""
    emu = Emulator(api_key="k", rate_limit=4, rate_window=2.0)
    key = SecretStr("k")
    with EmulatorServer().start(emu) as server:
        budgets = [shared_budgets(e, key, window=2.0) for e in engines]
        clients = [JupiterClient(server.url, api_key=key, rate_limit=4, budget_for=b)
                   for b in budgets]  # fmt: skip
        recorders = [Recorder(), Recorder()]
        wallet = Wallet.generate()

        def work(client: JupiterClient, recorder: Recorder) -> None:
            for _ in range(8):
                client.positions(wallet.address, observe=recorder)

        threads = [threading.Thread(target=work, args=pair)
                   for pair in zip(clients, recorders, strict=True)]  # fmt: skip
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        for client in clients:
            client.close()
    statuses = [s for r in recorders for s in r.statuses]
    assert len(statuses) == 16
    assert statuses == [200] * 16  # not one 429: the two shared one budget
