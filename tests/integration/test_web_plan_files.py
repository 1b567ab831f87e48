"""Issue 28 item 6 on the page: it says when the plan files differ from the store,
with `jupcron status`'s own words (`files_vs_store` and `FilesState.text`, as the
daemon hands them to the page), on both backends, over loopback HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import Listener, start_listener
from jupcron.plans.apply import apply_paths, files_vs_store
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.plans import PlanFiles, swap_plan


@pytest.fixture
def page(
    db_url: str, plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> Iterator[tuple[str, Path]]:
    folder = plan_files({"a.yaml": [swap_plan("hourly")]})
    apply_paths(plans_factory, [folder], now=datetime.now(UTC))

    def live() -> LiveState:  # what Daemon.live_state hands the page
        with plans_factory() as session:
            files = files_vs_store(session, folder).as_json()
        return LiveState(node="host:1", rate_limit=1.0, wallet="W", plan_files=files)

    engine = open_reader(db_url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity())
    server: Listener = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield server.url, folder
    server.stop()
    engine.dispose()


def _badge_hidden(html: str) -> bool:
    start = html.index('id="badge-files"')
    return " hidden" in html[start : html.index(">", start)]


def test_the_page_says_when_plan_files_differ_from_the_store(
    page: tuple[str, Path], plan_files: PlanFiles
) -> None:
    url, folder = page
    html = httpx.get(url + "/", timeout=10).text
    assert "in sync with the store" in html
    assert _badge_hidden(html)
    status = httpx.get(url + "/api/status", timeout=10).json()
    assert status["plan_files"]["in_sync"] is True

    plan_files({"a.yaml": [swap_plan("hourly", every="2h")], "b.yaml": [swap_plan("extra")]})
    html = httpx.get(url + "/", timeout=10).text
    assert not _badge_hidden(html)
    status = httpx.get(url + "/api/status", timeout=10).json()
    words = status["text"]["plan_files"]
    assert words.startswith(f"{folder}: DIFFER from the store")
    assert "+ extra" in words
    assert "~ hourly" in words
    assert "until 'jupcron plans apply'" in words
    assert status["plan_files"]["in_sync"] is False

    plan_files({"a.yaml": "plans: [ {name: broken"})
    status = httpx.get(url + "/api/status", timeout=10).json()
    assert status["text"]["plan_files"].startswith(f"{folder}: cannot compare:")
