"""Starting the status page's listener from the config (``web.*``), and following
its token.

Off unless ``web.listen`` is set. Loopback by default: ``:8080`` means
127.0.0.1:8080, and any other address is refused unless ``web.token_file`` is
set (a page that shows what a wallet does is nobody else's business). A token
on another address than loopback travels in clear unless a TLS proxy fronts
the page: said at start (`plain_http_warning`) unless ``web.secure_cookie: true``
declares that proxy.

The listen address is read at start only; the token file, the session settings
and ``web.refresh`` follow a reload (SIGHUP, or the config file changing), and
the token file is also watched by itself (`WebServer.follow`, once a loop turn):
a new token ends every session and the old token at once.

`StatusPage` is the page as `jupcron run` hands it to the daemon, which never imports
this package (the port: daemon/listen/page.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
from sqlalchemy import Engine

from jupcron.api.client import Attempt
from jupcron.config import Config
from jupcron.config.watch import ConfigWatch, content_digest
from jupcron.errors import ConfigError
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import Listener, parse_listen, start_listener
from jupcron.runner.outcome import RunOutcome
from jupcron.store.engine import open_reader
from jupcron.urls import is_loopback_host
from jupcron.web.access import Access
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from jupcron.web.auth import Token, load_token

log = structlog.get_logger(__name__)

KEY = "web.listen"


def check_web(config: Config, listen: str | None = None) -> Token | None:
    """The token (if any), after the checks that need no listener: a clear
    `ConfigError` before the daemon starts anything. `listen`: the address a running
    listener is bound to (a reload does not move it), else ``web.listen``."""
    web = config.web
    listen = listen or web.listen
    if listen is None:
        return None
    host, _ = parse_listen(listen, KEY)
    token = load_token(web.token_file) if web.token_file is not None else None
    if token is None and not is_loopback_host(host):
        raise ConfigError(
            f"{KEY} {listen!r} is not a loopback address: set web.token_file too, "
            "or listen on 127.0.0.1"
        )
    return token


def plain_http_warning(config: Config) -> str | None:
    """What to say when the token would cross the network in clear: a page on another
    address than loopback, with no TLS proxy declared (``web.secure_cookie: true``)."""
    web = config.web
    if web.listen is None or web.token_file is None or web.secure_cookie is True:
        return None
    host, _ = parse_listen(web.listen, KEY)
    if is_loopback_host(host):
        return None
    return (
        f"{KEY} {web.listen!r} serves the page over plain http on a network address: the "
        "token and the session cookie cross the network in clear (fix: put a TLS proxy in "
        "front and set web.secure_cookie: true, or listen on 127.0.0.1 and use ssh -L)"
    )


@dataclass
class WebServer:
    """The listener, the read-only engine it reads the store with, and its access."""

    listener: Listener
    engine: Engine
    app: WebApp
    listen: str
    token_watch: ConfigWatch | None = field(default=None)

    @property
    def url(self) -> str:
        return self.listener.url

    def stop(self) -> None:
        self.listener.stop()
        self.engine.dispose()

    def apply(self, config: Config, trigger: str) -> None:
        """A reload: the token file read again (another token ends every session; one
        that does not load locks the page), the session settings and the refresh."""
        web = config.web
        self.app.refresh = web.refresh
        path = web.token_file
        self.token_watch = ConfigWatch(path, content_digest(path)) if path else None
        try:
            token = check_web(config, self.listen)
        except ConfigError as exc:
            self.app.access.lock(str(exc))
            return
        self.app.access.configure(token, max_age=web.session_max_age,
                                  secure_cookie=web.secure_cookie)  # fmt: skip
        log.info("web_reloaded", trigger=trigger, token=token is not None)

    def follow(self, config: Config) -> None:
        """A loop turn: a token file whose content changed (and held still) is read."""
        if self.token_watch is not None and self.token_watch.due():
            self.apply(config, "token_file")


def start_web(
    config: Config,
    *,
    metrics: Metrics,
    health: Callable[[], bool],
    live: Callable[[], LiveState],
    activity: Activity,
) -> WebServer | None:
    """The page, `/metrics` and `/healthz` on ``web.listen``; ``None`` when it is off.
    The page reads through an engine of its own that cannot write (`open_reader`)."""
    web = config.web
    if web.listen is None:
        return None
    token = check_web(config)
    warning = plain_http_warning(config)
    if warning is not None:
        log.warning("web_plain_http", problem=warning)
    engine = open_reader(config.database.url)
    try:
        access = Access(token, max_age=web.session_max_age, secure_cookie=web.secure_cookie)
        app = WebApp(engine, metrics=metrics, live=live, activity=activity,
                     refresh=web.refresh, access=access)  # fmt: skip
        listener = start_listener(metrics, web.listen, health, app=app, key=KEY)
    except BaseException:
        engine.dispose()
        raise
    path = web.token_file
    watch = ConfigWatch(path, content_digest(path)) if path else None
    return WebServer(listener, engine, app, web.listen, watch)


class StatusPage:
    """The page as `jupcron run` hands it to the daemon (`jupcron.listen.page.PageFactory`):
    its activity hears every run and API attempt from the start."""

    def __init__(self, activity: Activity | None = None) -> None:
        self.activity = activity or Activity()

    def check(self, config: Config) -> None:
        check_web(config)

    def run_finished(self, outcome: RunOutcome) -> None:
        self.activity.run_finished(outcome)

    def attempt(self, attempt: Attempt) -> None:
        self.activity.attempt(attempt)

    def start(
        self,
        config: Config,
        *,
        metrics: Metrics,
        health: Callable[[], bool],
        live: Callable[[], LiveState],
    ) -> WebServer | None:
        return start_web(config, metrics=metrics, health=health, live=live, activity=self.activity)
