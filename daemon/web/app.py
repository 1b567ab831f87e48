"""The routes of the status page: one callable from `WebRequest` to `WebResponse`.

Read-only: GET (and HEAD) everywhere, plus ``POST /login`` and ``POST /logout``
that only start and end a session (daemon/web/access.py). With a token set,
everything but the static assets and the login asks for it (401 otherwise).
Without one, the page answers only requests addressed to ``localhost`` or an IP
literal, so a web site that points its own name at
127.0.0.1 (DNS rebinding) cannot read the page through the visitor's browser.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from jupcron.errors import JupcronError
from jupcron.listen.messages import WebRequest, WebResponse, host_is_local
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.report.plan import PlanReport
from jupcron.store.engine import session_factory
from jupcron.web import views
from jupcron.web.access import Access
from jupcron.web.activity import Activity
from jupcron.web.auth import Token
from jupcron.web.chart import HEIGHT, WIDTH, chart_svg
from jupcron.web.http import HTML, SVG, json_response, text_response
from jupcron.web.render import render

log = structlog.get_logger(__name__)

NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}
READ_METHODS = ("GET", "HEAD")
CHARTS_KEPT = 512  # pictures kept drawn (the oldest goes first)
# a chart is matplotlib's SVG: presentation by its own inline styles, never a script
CSP_HEADER = "Content-Security-Policy"
CHART_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
# an empty row for the page's <template> elements: the same markup, no values
BLANK: dict[str, Any] = {"text": {}, "chart": None, "next_fires": [], "last_status": None,
                         "status": "", "paused": None, "role": None, "running": False,
                         "this": False, "all": False, "plan": None, "low": False}  # fmt: skip


class BadRequest(Exception):
    """A query value that cannot be used; its text is the answer."""


def _number(request: WebRequest, name: str, default: int) -> int:
    value = request.query(name)
    if value is None or value == "":
        return default
    if not (value.isascii() and value.isdigit()) or len(value) > 9:  # "²" is a digit to isdigit
        raise BadRequest(f"{name} must be a whole number, not {value[:40]!r}")
    return int(value)


class WebApp:
    def __init__(
        self,
        engine: Engine,
        *,
        metrics: Metrics,
        live: Callable[[], LiveState],
        activity: Activity,
        refresh: float = 5.0,
        token: Token | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        access: Access | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.factory = session_factory(engine)
        self.metrics = metrics
        self.live = live
        self.activity = activity
        self.refresh = refresh
        self.access = access or Access(token, monotonic=monotonic)
        self.clock = clock
        self.reports = views.ReportCache()
        self._charts: dict[tuple[Any, ...], bytes] = {}
        self._charts_lock = threading.Lock()
        folder = resources.files("jupcron.web") / "static"
        self.static = {name: (folder / name).read_bytes() for name in STATIC}

    # ---- entry ---------------------------------------------------------------------

    def __call__(self, request: WebRequest) -> WebResponse:
        if self.access.open and not host_is_local(request.header("host")):
            return text_response(403, "this page answers only to localhost or an IP address\n")
        path = request.path
        if path == "/login" and request.method == "POST":
            return self.access.login(request)
        if path == "/logout" and request.method == "POST":
            return self.access.logout(request)
        if request.method not in READ_METHODS:
            return WebResponse(405, b"read-only\n", "text/plain; charset=utf-8",
                               (("Allow", "GET, HEAD"),))  # fmt: skip
        if path.startswith("/static/"):
            return self.asset(path.removeprefix("/static/"))
        refused = self.access.refused(request)
        if refused is not None:
            return refused
        try:
            return self.route(path, request)
        except BadRequest as exc:
            return json_response({"error": str(exc)}, 400)
        except (SQLAlchemyError, JupcronError) as exc:
            log.warning("web_store_unavailable", path=path, error=type(exc).__name__)
            return json_response({"error": "the store cannot be read right now"}, 503)

    def route(self, path: str, request: WebRequest) -> WebResponse:
        if path == "/metrics":
            return WebResponse(200, self.metrics.render(), "text/plain; version=0.0.4")
        with self.factory() as session:  # one snapshot per request
            if path == "/":
                return WebResponse(200, self.page(session, request).encode(), HTML)
            if path == "/api/status":
                return json_response(self.status(session))
            if path == "/api/plans":
                offset = _number(request, "offset", 0)
                limit = _number(request, "limit", views.PAGE_SIZE)
                now = self.clock()
                return json_response(views.plans_view(session, self.reports, now, offset, limit))
            if path == "/api/runs":
                limit = _number(request, "limit", views.RUNS_SHOWN)
                return json_response(views.runs_view(session, limit))
            found = re.fullmatch(r"/api/plans/([^/]+)/fills", path)
            if found and NAME.fullmatch(found[1]):
                fills = views.fills_view(session, self.reports, found[1])
                if fills is not None:
                    return json_response(fills)
            found = re.fullmatch(r"/charts/([^/]+)\.svg", path)
            if found and NAME.fullmatch(found[1]):
                row = views.chart_row(session, self.reports, found[1])
                if row is not None:  # its card's row: its current wallet's main pair
                    return WebResponse(200, self.chart(row), SVG, ((CSP_HEADER, CHART_CSP),))
        return json_response({"error": "not found"}, 404)

    # ---- views -----------------------------------------------------------------------

    def chart(self, report: PlanReport) -> bytes:
        """A plan's picture, drawn again only when its fills or the price now change."""
        key = (report.plan_name, report.wallet, report.input_mint, report.output_mint,
               len(report.fills), report.last_fill, report.current_price())  # fmt: skip
        with self._charts_lock:
            drawn = self._charts.get(key)
        if drawn is None:
            drawn = chart_svg(report).encode()
            with self._charts_lock:
                if len(self._charts) >= CHARTS_KEPT:
                    self._charts.pop(next(iter(self._charts)))
                self._charts[key] = drawn
        return drawn

    def status(self, session: Session) -> dict[str, Any]:
        return views.status_view(
            session, self.live(), self.activity.counts(), self.clock(), self.refresh
        )

    def page(self, session: Session, request: WebRequest) -> str:
        offset = _number(request, "offset", 0)
        plans = views.plans_view(session, self.reports, self.clock(), offset, views.PAGE_SIZE)
        runs = views.runs_view(session, views.RUNS_SHOWN)
        return render("page.html", status=self.status(session), plans=plans, runs=runs,
                      blank=BLANK, chart_width=WIDTH, chart_height=HEIGHT,
                      signed_in=self.access.signed_in(request))  # fmt: skip

    # ---- assets --------------------------------------------------------------------------

    def asset(self, name: str) -> WebResponse:
        if name not in STATIC:
            return text_response(404, "not found\n")
        return WebResponse(200, self.static[name], STATIC[name])
