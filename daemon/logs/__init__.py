"""Logging for jupcron: structlog with one shared processor chain.

* JSON lines on stdout when the stream is not a TTY (journald picks them up),
  a console renderer on a TTY; ``fmt`` forces one or the other.
* Standard-library loggers (SQLAlchemy, httpx, APScheduler, alembic, uvicorn,
  and any other library's) go through the same chain (``ProcessorFormatter``), at
  WARNING whatever our level: a library's debug lines can carry URL paths and
  parameters (a notification channel's token) that no mask can tell apart.
* Run context (plan, run id, requestId, signature) is bound with contextvars
  (`bind_run` / `unbind_run` / `run_context`) and merged into every line.
* Secrets never reach the output: any key named like ``key``, ``secret``,
  ``password``, ``token``, ``signed_transaction``, ``keypair``… is replaced by
  ``'***'``, at any depth of dicts, and URL passwords and secret query values
  (``?api-key=…``) are masked; so are JSON Web Tokens and the values registered
  with `mask_value` (the Trigger V2 JWT), inside any text: a library's message
  and a rendered traceback (`mask_rendered`) included.
* An `Outage` (`jupcron.logs.outage`) says a dependency's failure once per streak,
  not at every try.
* `configure_logging` is idempotent: calling it twice replaces the handler.
  Loggers are cached on first use, and still follow a later configuration
  (`_BoundLogger`): a line costs no logger assembled for it.

Event names are fixed snake_case strings (``run_submitted``, ``tx_rejected``);
tests assert on them with ``structlog.testing.capture_logs``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TextIO

import structlog
from structlog.typing import Processor

from jupcron.logs.lines import (
    _CHAIN,
    _STRUCTLOG,
    _BoundLogger,
    _by_level,
    _Compiled,
    _json_line,
    _line_logger,
    use,
    utc_timestamp,
)
from jupcron.logs.masking import (
    MASK,
    forget_value,
    is_secret_key,
    mask_rendered,
    mask_secrets,
    mask_value,
    without_secrets,
)

__all__ = [
    "FOREIGN_LOGGERS",
    "MASK",
    "Format",
    "bind_run",
    "configure_logging",
    "forget_value",
    "is_secret_key",
    "mask_rendered",
    "mask_secrets",
    "mask_value",
    "run_context",
    "unbind_run",
    "utc_timestamp",
    "without_secrets",
]

Format = Literal["auto", "json", "console"]

# stdlib loggers of our dependencies, kept at WARNING unless we log at debug
FOREIGN_LOGGERS = ("sqlalchemy", "httpx", "httpcore", "apscheduler", "alembic", "uvicorn")

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}

_HANDLER_NAME = "jupcron"


def _shared_processors() -> list[Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),
        mask_secrets,
    ]


def _known(shared: list[Processor]) -> bool:
    """Whether `shared` is the chain `_line` makes lines as: the steps and their
    settings it was written for, and nothing else."""
    if len(shared) != 6:
        return False
    merge, level, name, stamper, extra, mask = shared
    return (
        merge is structlog.contextvars.merge_contextvars
        and level is structlog.stdlib.add_log_level
        and name is structlog.stdlib.add_logger_name
        and isinstance(stamper, structlog.processors.TimeStamper)
        and stamper.fmt == "iso" and stamper.utc and stamper.key == "timestamp"
        and type(extra) is structlog.stdlib.ExtraAdder
        and mask is mask_secrets
    )  # fmt: skip


class _LibraryFloor(logging.Filter):
    """The handler's floor for every library's record, the libraries not named in
    `FOREIGN_LOGGERS` too (the root logger follows our level, so they would pass at
    debug): the HTTP library Apprise sends through logs each request's path at debug,
    where a channel's token sits (Discord's, Slack's, Telegram's ``/bot<TOKEN>/``),
    in words no mask can tell from a harmless path. Our own lines never come here
    (`_LineLogger` writes them); a stdlib logger under ``jupcron`` keeps our level."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        return record.levelno >= self.level or name == "jupcron" or name.startswith("jupcron.")


def _wants_console(fmt: Format, stream: TextIO) -> bool:
    if fmt == "console":
        return True
    if fmt == "json":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def configure_logging(
    level: str = "info",
    fmt: Format = "auto",
    stream: TextIO | None = None,
    foreign_level: str = "warning",
) -> None:
    """Set up structlog and the stdlib root logger to write to ``stream``.

    ``level`` is ours (the ``jupcron`` loggers: debug/info/warning/error);
    ``foreign_level`` is the floor for every other logger, `FOREIGN_LOGGERS` and the
    libraries not named there alike (never below ``level``).
    Safe to call again (e.g. on SIGHUP): the old handler is replaced.
    """
    stream = sys.stdout if stream is None else stream
    try:
        numeric = _LEVELS[level.lower()]
    except KeyError:
        raise ValueError(f"unknown log level {level!r} (use one of {', '.join(_LEVELS)})") from None
    foreign = max(_LEVELS.get(foreign_level.lower(), logging.WARNING), numeric)

    shared = _shared_processors()
    renderer: Processor
    console = _wants_console(fmt, stream)
    if console:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    else:
        renderer = structlog.processors.JSONRenderer(serializer=_json_line)

    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            mask_rendered,
            renderer,
        ],
    )
    handler = logging.StreamHandler(stream)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter)
    handler.addFilter(_LibraryFloor(foreign))

    # our own lines: the level first (a debug line at info costs next to nothing), then
    # the same chain and renderer as a library's, written by `_LineLogger`; the chain's
    # list and the factory stay the same objects from one configuration to the next,
    # and the handler is found at each line, so loggers may be cached (`_BoundLogger`)
    chain: list[Processor] = [
        _by_level,
        *shared,
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
        mask_rendered,
        renderer,
    ]
    # `_line` makes a line as these steps do; another chain (a step added to
    # `_shared_processors`, say) takes structlog's loop over its steps
    use(handler, chain, _Compiled(chain, renderer, json=not console) if _known(shared) else None)
    structlog.configure(
        processors=_CHAIN,
        logger_factory=_line_logger,
        wrapper_class=_BoundLogger,
        cache_logger_on_first_use=_STRUCTLOG is not None,
    )

    root = logging.getLogger()
    for old in list(root.handlers):
        if old.get_name() == _HANDLER_NAME:
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(min(numeric, foreign))
    logging.getLogger("jupcron").setLevel(numeric)
    for name in FOREIGN_LOGGERS:
        logging.getLogger(name).setLevel(foreign)


def bind_run(**fields: Any) -> None:
    """Bind run context (``plan=``, ``run_id=``, ``request_id=``, ``signature=``) to every line."""
    structlog.contextvars.bind_contextvars(**fields)


def unbind_run(*names: str) -> None:
    """Remove bound fields; with no names, clear all bound context."""
    if names:
        structlog.contextvars.unbind_contextvars(*names)
    else:
        structlog.contextvars.clear_contextvars()


@contextmanager
def run_context(**fields: Any) -> Iterator[None]:
    """Bind ``fields`` for the ``with`` block, then restore what was there before."""
    with structlog.contextvars.bound_contextvars(**fields):
        yield
