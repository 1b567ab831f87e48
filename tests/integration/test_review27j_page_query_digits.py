"""A page query's number that is no number is the asker's mistake: ``400`` with what
is wrong, as ``?limit=ten`` gets. A superscript or other digit character that
``str.isdigit`` accepts and ``int`` refuses (``²``, ``①``) passed the check and
failed in ``int``: ``500 internal error`` and an error line in the daemon's log, for
a typo. Over loopback HTTP against the page's listener, SQLite."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.runner import RigFactory
from tests.support import stopping


@pytest.fixture
def page(make_rig: RigFactory, sqlite_url: str) -> Iterator[Listener]:
    make_rig(db_url=sqlite_url)  # a migrated store
    engine = open_reader(sqlite_url)
    app = WebApp(engine, metrics=Metrics(), activity=Activity(),
                 live=lambda: LiveState(node="host:1", rate_limit=1.0, wallet="W"))  # fmt: skip
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield server
    stopping.later(server.stop, engine.dispose)


@pytest.mark.parametrize("query", ["/api/plans?limit=%C2%B2", "/api/runs?limit=%E2%91%A0",
                                   "/api/plans?offset=%C2%B3", "/?offset=%C2%B9"])  # fmt: skip
def test_a_digit_character_that_is_no_number_is_a_bad_request(page: Listener, query: str) -> None:
    answer = httpx.get(page.url + query, timeout=10)
    assert answer.status_code == 400, (answer.status_code, answer.text)
    assert "whole number" in answer.json()["error"]
