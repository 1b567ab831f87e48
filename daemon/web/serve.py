"""Starting the status page's listener from the config (``web.*``).

Off unless ``web.listen`` is set. Loopback by default: ``:8080`` means
127.0.0.1:8080, and any other address is refused unless ``web.token_file`` is
set (a page that shows what a wallet does is nobody else's business).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

from jupcron.config import Config
from jupcron.errors import ConfigError
from jupcron.service.metrics import Metrics, MetricsServer, parse_listen, serve_metrics
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from jupcron.web.auth import Token, load_token
from jupcron.web.views import LiveState

KEY = "web.listen"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_web(config: Config) -> Token | None:
    """The token (if any), after the checks that need no listener: a clear
    `ConfigError` before the daemon starts anything."""
    web = config.web
    if web.listen is None:
        return None
    host, _ = parse_listen(web.listen, KEY)
    token = load_token(web.token_file) if web.token_file is not None else None
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"{KEY} {web.listen!r} is not a loopback address: set web.token_file too, "
            "or listen on 127.0.0.1"
        )
    return token


@dataclass
class WebServer:
    """The listener and the read-only engine it reads the store with."""

    listener: MetricsServer
    engine: Engine

    @property
    def url(self) -> str:
        return self.listener.url

    def stop(self) -> None:
        self.listener.stop()
        self.engine.dispose()


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
    if config.web.listen is None:
        return None
    token = check_web(config)
    engine = open_reader(config.database.url)
    try:
        app = WebApp(engine, metrics=metrics, live=live, activity=activity,
                     refresh=config.web.refresh, token=token)  # fmt: skip
        listener = serve_metrics(metrics, config.web.listen, health, app=app, key=KEY)
    except BaseException:
        engine.dispose()
        raise
    return WebServer(listener, engine)
