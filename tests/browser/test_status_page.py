"""The status page in a real headless browser (Debian's chromium, driven by
Playwright) against a real daemon (`jupcron run` as a subprocess, its plans
applied with `jupcron plans apply`, the API emulator over loopback).

One daemon serves the module: its plans are a swap that fires a few seconds
after the start (and fills: the chart), an hourly swap, a weekly DCA and a plan
whose description is HTML. The page refreshes every second (web.refresh: 1).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.scheduling.schedule import next_fire_times, parse_schedule
from jupcron.web.text import moment
from tests.fixtures.browser import Watched
from tests.fixtures.daemon import DaemonEnv, at, swap_plan
from tests.fixtures.plans import recurring_plan
from tests.support.wait import wait_until

pytestmark = pytest.mark.slow

HOSTILE_DESCRIPTION = (
    '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    "<b>bold?</b> & \"quotes\" 'too'"
)
HOSTILE_ERROR = '<img src=y onerror="window.__pwned=3">route <i>failed</i>'
HOSTILE_REASON = '<img src=z onerror="window.__pwned=4"><script>window.__pwned=5</script>x & y'
TIMEOUT = 30_000  # ms, for the browser's waits


def web_url(env: DaemonEnv, proc: Any) -> str:
    """The page's address, from the daemon's ``web_listening`` log line."""
    found: dict[str, Any] = {}

    def listening() -> bool:
        for line in env.log_of(proc).splitlines():
            if '"web_listening"' in line:
                found.update(json.loads(line))
                return True
        assert proc.poll() is None, env.log_of(proc)
        return False

    assert wait_until(listening, 30), env.log_of(proc)
    return f"http://127.0.0.1:{found['port']}"


class Site:
    def __init__(self, env: DaemonEnv, url: str, plans: list[dict[str, Any]]) -> None:
        self.env, self.url, self.plans = env, url, plans

    def api(self, path: str) -> Any:
        answer = httpx.get(self.url + path, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()


def _settled(status: dict[str, Any], name: str) -> bool:
    plan = next(p for p in status["plans"] if p["name"] == name)
    return plan["last_status"] == "succeeded" and plan["next_fire"] is None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("web-daemon")
    # the second swap execute fails with an error text that is HTML
    emulator = Emulator(seed=5, faults=[{"kind": "failed", "operation": "execute_ultra",
                                         "skip": 1, "count": 1,
                                         "params": {"code": 6001, "error": HOSTILE_ERROR}}])  # fmt: skip
    server = EmulatorServer().start(emulator)
    env = DaemonEnv(root=root, db_url=f"sqlite:///{root / 'jupcron.db'}", emulator=emulator,
                    server=server)  # fmt: skip
    try:
        env.write_config(web={"listen": "127.0.0.1:0", "refresh": 1}, follow={"interval": 1})
        quiet = {"misfire": "skip"}  # nothing fires at the start but chart-swap
        # chart-swap's slot is before any a test adds, and the tests wait for it below:
        # its execute is the first and a test's swap the second, however fast the
        # daemon starts; it takes effect from `written`: a slow apply cannot skip it
        written = at(0)
        plans = [
            {**swap_plan("chart-swap", {"at": at(2)}), "description": "One swap, soon"},
            # its first slot 20 min on: none falls in the tests (on the hour, one did)
            {**swap_plan("alpha-hourly", {"every": "1h", "start": at(1200), **quiet}),
             "description": "Buy SOL with 1 USDC every hour"},
            {**swap_plan("hostile-description", {"cron": "0 9 * * MON", **quiet}),
             "description": HOSTILE_DESCRIPTION},
            recurring_plan("weekly-dca", schedule={"cron": "0 9 * * MON",
                                                   "timezone": "Europe/Berlin", **quiet}),
        ]  # fmt: skip
        env.write_plans(*plans)
        env.apply(now=written)
        proc = env.start()
        url = web_url(env, proc)
        # the tests begin once that swap has run and its plan has no slot left
        assert env.wait_until(lambda: _settled(env.status(), "chart-swap")), env.log_of(proc)
        yield Site(env, url, plans)
        assert env.stop(proc) == 0
    finally:
        env.close()
        server.stop()


def open_page(site: Site, watched: Watched) -> Any:
    page = watched.page
    page.goto(site.url + "/", wait_until="load")
    page.wait_for_selector("#plan-cards article.plan", timeout=TIMEOUT)
    return page


def card(page: Any, name: str) -> Any:
    return page.locator(f'article.plan[data-plan="{name}"]')


def refreshed(page: Any) -> None:
    """Wait for the page's own update (the 'updated' time changes)."""
    before = page.inner_text("#updated")
    page.wait_for_function(
        "before => document.getElementById('updated').textContent !== before",
        arg=before, timeout=TIMEOUT,
    )  # fmt: skip


def test_loads_with_no_console_error_and_no_request_off_loopback(
    site: Site, watched_page: Watched
) -> None:
    page = open_page(site, watched_page)
    answer = httpx.get(site.url + "/", timeout=10)
    refreshed(page)  # a full update turn: the page's script asked every JSON twin
    asked = {re.sub(r"\?.*", "", url.removeprefix(site.url)) for url in watched_page.requests}
    assert {"/", "/static/app.css", "/static/app.js", "/api/status", "/api/plans",
            "/api/runs"} <= asked  # fmt: skip
    assert watched_page.outside() == []
    assert watched_page.console_errors == []  # CSP violations would be here too
    assert watched_page.page_errors == []
    assert watched_page.failed == []
    assert "unsafe-inline" not in answer.headers["content-security-policy"]
    assert (
        page.evaluate("document.querySelectorAll('script:not([src]), style, [style]').length") == 0
    )
    # the daemon section: this daemon, by its heartbeat, leading
    row = page.locator("#node-rows tr")
    assert row.count() == 1
    assert row.get_attribute("data-this") == "yes"
    assert row.get_attribute("data-role") == "leader"
    assert row.locator("[data-k=this]").inner_text() == "this page's daemon"
    assert page.inner_text("#role") == "leader"
    assert page.locator("#facts [data-k=dry_run]").inner_text() == "off"
    assert page.locator("#facts [data-k=paused]").inner_text() == "none"


def test_shows_every_plan_of_the_running_daemon_with_its_next_fire(
    site: Site, watched_page: Watched
) -> None:
    page = open_page(site, watched_page)
    names = page.eval_on_selector_all(
        "#plan-cards article.plan", "els => els.map(e => e.dataset.plan)"
    )
    assert names == sorted(p["name"] for p in site.plans)
    now = datetime.now(UTC)
    for plan in site.plans:
        shown = card(page, plan["name"]).locator("[data-k=next]").inner_text()
        upcoming = next_fire_times(parse_schedule(plan["schedule"]), now, 1)
        if upcoming and upcoming[0] - now > timedelta(seconds=5):  # not about to change
            assert shown == moment(upcoming[0].strftime("%Y-%m-%dT%H:%M:%SZ")), plan["name"]
        elif not upcoming:
            assert shown == "no fire time left"
    hourly = card(page, "alpha-hourly")
    assert hourly.locator("[data-k=schedule]").inner_text() == "every 1h"
    assert re.fullmatch(r"\(in \d+ (s|min)\)", hourly.locator("[data-rel]").inner_text())
    dca = card(page, "weekly-dca").locator("[data-k=schedule]").inner_text()
    assert dca == "cron '0 9 * * MON' Europe/Berlin"


def test_updates_in_place_when_a_run_finishes(site: Site, watched_page: Watched) -> None:
    page = open_page(site, watched_page)
    page.evaluate("window.__probe = 41")  # gone if the page reloads
    written = at(0)  # the plans take effect from here: a slow apply under load cannot
    late = {**swap_plan("late-swap", {"at": at(4)}), "description": "added while watching"}
    site.env.write_plans(late, name="late.yaml")
    site.env.apply(now=written)  # make the slot a past one that never fires
    page.wait_for_selector('article.plan[data-plan="late-swap"]', timeout=TIMEOUT)
    pill = card(page, "late-swap").locator(".pill")
    page.wait_for_function(
        "() => { const p = document.querySelector('article.plan[data-plan=\"late-swap\"] .pill');"
        " return p && p.dataset.status === 'failed'; }", timeout=TIMEOUT,
    )  # fmt: skip
    assert pill.inner_text() == "failed"
    row = page.locator("#run-rows tr", has_text="late-swap")
    row.wait_for(timeout=TIMEOUT)
    error = row.locator("[data-k=error]")
    # the API's error text (HTML) is shown as text, and nothing in it ran
    assert HOSTILE_ERROR in error.inner_text()
    assert error.locator("img, i").count() == 0
    assert card(page, "late-swap").locator(".err").inner_text().endswith(HOSTILE_ERROR)
    assert page.evaluate("window.__probe") == 41
    assert page.evaluate("window.__pwned") is None
    assert watched_page.console_errors == []


def test_renders_the_chart_of_a_plan_with_fills(
    site: Site, watched_page: Watched, tmp_path: Path
) -> None:
    page = open_page(site, watched_page)
    chart = card(page, "chart-swap").locator("img.chart")
    chart.wait_for(state="visible", timeout=TIMEOUT)  # shown once the swap has filled
    page.wait_for_function(
        "() => { const i = document.querySelector('article.plan[data-plan=\"chart-swap\"] img.chart');"
        " return i && i.complete && i.naturalWidth > 0; }", timeout=TIMEOUT,
    )  # fmt: skip
    assert chart.evaluate("i => i.naturalWidth") == 640  # the report's renderer, card size
    fills = site.api("/api/plans/chart-swap/fills")["fills"]
    assert len(fills) == 1
    svg = httpx.get(site.url + chart.get_attribute("src"), timeout=10)
    assert svg.headers["content-type"] == "image/svg+xml"
    swap = card(page, "chart-swap")
    assert swap.locator("[data-k=fills]").inner_text() == "1"
    assert re.fullmatch(r"[0-9.]+ USDC", swap.locator("[data-k=spent]").inner_text())
    assert re.fullmatch(r"[0-9.]+ SOL", swap.locator("[data-k=received]").inner_text())
    assert re.fullmatch(r"[0-9.]+ USDC per SOL", swap.locator("[data-k=price]").inner_text())
    assert swap.locator("[data-k=network_fees]").inner_text().endswith(" SOL")
    assert card(page, "alpha-hourly").locator("img.chart").is_hidden()
    shots = Path(os.environ.get("JUPCRON_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "status-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    swap.screenshot(path=str(shots / "status-card.png"))
    assert card(page, "alpha-hourly").locator("[data-k=spent]").inner_text() == "-"
    assert watched_page.console_errors == []
    # the picture itself, as the browser lays its text out: axes labelled, no two
    # labels' boxes overlap
    page.goto(site.url + chart.get_attribute("src"))
    boxes = page.evaluate(
        "() => [...document.querySelectorAll('text')].filter(t => t.textContent.trim())"
        ".map(t => { const r = t.getBoundingClientRect();"
        " return {text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height}; })"
    )
    words = [b["text"] for b in boxes]
    for label in (
        "USDC",
        "USDC per SOL",
        "USDC spent",
        "fill price",
        "SOL bought, in USDC at market",
    ):
        assert label in words, words
    assert any(w.endswith(" UTC") for w in words), words  # the time axes' date and zone
    assert all(b["w"] > 0 and b["h"] > 0 for b in boxes)
    width = page.evaluate("() => document.documentElement.getBoundingClientRect().width")
    outside = [b["text"] for b in boxes if b["x"] < 0 or b["x"] + b["w"] > width + 1]
    assert outside == [], outside  # nothing cut off at the picture's edges
    overlaps = [
        (a["text"], b["text"])
        for i, a in enumerate(boxes) for b in boxes[i + 1:]
        if a["x"] < b["x"] + b["w"] - 1 and b["x"] < a["x"] + a["w"] - 1
        and a["y"] < b["y"] + b["h"] - 1 and b["y"] < a["y"] + a["h"] - 1
    ]  # fmt: skip
    assert overlaps == [], overlaps
    page.screenshot(path=str(shots / "status-chart.png"))
    print(f"screenshots: {shots}")


def test_renders_a_hostile_plan_description_as_text(site: Site, watched_page: Watched) -> None:
    page = open_page(site, watched_page)
    description = card(page, "hostile-description").locator(".desc")
    assert description.text_content() == HOSTILE_DESCRIPTION  # the server's render
    assert description.locator("*").count() == 0
    refreshed(page)
    refreshed(page)
    assert description.text_content() == HOSTILE_DESCRIPTION  # and after the script's update
    assert description.locator("*").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#plan-cards img:not(.chart)").count() == 0
    by_name = {p["name"]: p for p in site.api("/api/plans")["plans"]}
    assert by_name["hostile-description"]["description"] == HOSTILE_DESCRIPTION  # as it is
    assert watched_page.console_errors == []


def test_a_pause_from_the_cli_shows_within_a_refresh_as_text_and_goes_with_resume(
    site: Site, watched_page: Watched, tmp_path: Path
) -> None:
    """`jupcron pause` (a subprocess, as an operator types it) beside the running
    daemon: after the page's next full refresh, the pause is on the page (a reason
    with HTML in it as text); after `jupcron resume`, it is gone. No reload."""
    page = open_page(site, watched_page)
    page.evaluate("window.__probe = 7")
    dca = card(page, "weekly-dca").locator(".paused")
    assert dca.is_hidden()
    assert page.locator("#pauses").is_hidden()
    done = site.env.jupcron("pause", "weekly-dca", "--reason", HOSTILE_REASON, "--by", "ann")
    assert done.returncode == 0, done.stderr
    refreshed(page)  # a turn that may have begun before the pause ...
    refreshed(page)  # ... and one that began after it
    expected = f"paused: {HOSTILE_REASON} (by ann; jupcron resume weekly-dca)"
    assert dca.is_visible()
    assert dca.text_content() == expected
    assert dca.locator("*").count() == 0
    rows = page.locator("#pause-rows li")
    assert rows.count() == 1
    assert rows.get_attribute("data-scope") == "weekly-dca"
    assert rows.locator(".reason").text_content() == HOSTILE_REASON
    assert rows.locator(".reason *").count() == 0
    assert rows.locator("[data-k=by]").inner_text() == "ann"
    assert card(page, "alpha-hourly").locator(".paused").is_hidden()
    assert page.locator("#badge-paused").is_hidden()  # one plan, not all

    done = site.env.jupcron("pause", "--all", "--reason", "incident 12")
    assert done.returncode == 0, done.stderr
    refreshed(page)
    refreshed(page)
    assert page.locator("#badge-paused").is_visible()
    assert page.locator("#facts [data-k=paused]").inner_text() == (
        "ALL PLANS: incident 12; 1 plan by name"
    )
    hourly = card(page, "alpha-hourly").locator(".paused")
    assert hourly.inner_text().startswith("all plans paused: incident 12 (by ")
    assert dca.text_content() == expected  # its own pause counts first
    assert [rows.nth(i).get_attribute("data-scope") for i in range(rows.count())] == [
        "*", "weekly-dca"]  # fmt: skip
    page.screenshot(path=str(tmp_path / "status-page-paused.png"), full_page=True)

    for args in (("--all",), ("weekly-dca",)):
        done = site.env.jupcron("resume", *args)
        assert done.returncode == 0, done.stderr
    refreshed(page)
    refreshed(page)
    assert page.locator("#pauses").is_hidden()
    assert page.locator("#badge-paused").is_hidden()
    assert dca.is_hidden()
    assert hourly.is_hidden()
    assert page.locator("#facts [data-k=paused]").inner_text() == "none"
    assert page.evaluate("window.__probe") == 7  # updated in place
    assert page.evaluate("window.__pwned") is None
    assert watched_page.console_errors == []
