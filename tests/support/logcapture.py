"""Our logging configured into a buffer for a test, and everything it set undone
after: the root logger's handlers and level, structlog's configuration, the bound
context and the levels `configure_logging` gave the named loggers."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from jupcron.logs import FOREIGN_LOGGERS, Format, configure_logging


@contextmanager
def captured_logs(level: str = "info", fmt: Format = "json") -> Iterator[io.StringIO]:
    stream = io.StringIO()
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    configure_logging(level, fmt, stream)
    try:
        yield stream
    finally:
        structlog.contextvars.clear_contextvars()
        structlog.reset_defaults()
        root.handlers[:] = before[0]
        root.setLevel(before[1])
        for name in ("jupcron", *FOREIGN_LOGGERS):
            logging.getLogger(name).setLevel(logging.NOTSET)
