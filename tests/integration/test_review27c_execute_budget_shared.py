"""Swap V2's execute budget, shared by the daemons on one key (review 27c).

`/swap/v2/execute` has a rate bucket of its own at the API, per key, as the main one
is (docs/products.md). The main bucket's budget is shared through PostgreSQL (DESIGN
§6: "the API rate budget per key is shared through the database"), but the execute
pacer was each daemon's own: N daemons on one key executed at N times
`api.execute_rate_limit` together, and a burst of fires met 429s on execute, on
transactions already signed (each 429 a wait of the blockhash's short life), while
the one daemon told held off alone.

Two API clients (as two daemons, each configured with the key's execute limit),
against an emulator enforcing it: with the budget shared, together they stay under it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine

from jupcron.api.client import JupiterClient
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.errors import JupcronError
from jupcron.store.engine import make_engine
from jupcron.store.ratebudget import shared_budgets
from tests.fixtures.emulator import Recorder

pytestmark = pytest.mark.postgres

KEY = SecretStr("k")
EXECUTE_LIMIT = 4  # requests/s of the key's execute bucket (main: plenty)


@pytest.fixture
def engines(pg_url: str) -> Iterator[tuple[Engine, Engine]]:
    first, second = make_engine(pg_url), make_engine(pg_url)
    yield first, second
    first.dispose()
    second.dispose()


def test_two_daemons_executing_on_one_key_get_no_429(engines: tuple[Engine, Engine]) -> None:
    emu = Emulator(api_key="k", rate_limit=100, execute_rate_limit=EXECUTE_LIMIT, rate_window=2.0)
    with EmulatorServer().start(emu) as server:
        budgets = [shared_budgets(e, KEY, window=2.0) for e in engines]
        clients = [JupiterClient(server.url, api_key=KEY, rate_limit=100, max_attempts=1,
                                 execute_rate_limit=EXECUTE_LIMIT, budget_for=b)
                   for b in budgets]  # fmt: skip
        recorders = [Recorder(), Recorder()]

        def work(client: JupiterClient, recorder: Recorder) -> None:
            for n in range(8):
                # an order nobody took: the API's answer is an error, but no 429
                with contextlib.suppress(JupcronError):
                    client.execute_swap("AAAA", f"no-such-request-{n}", None, observe=recorder)

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
    assert 429 not in statuses, statuses  # the two shared one execute budget
