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

import json
import logging
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from jupcron.logs.masking import (
    MASK as MASK,
)
from jupcron.logs.masking import (
    forget_value as forget_value,
)
from jupcron.logs.masking import (
    is_secret_key as is_secret_key,
)
from jupcron.logs.masking import (
    mask_rendered,
    mask_secrets,
)
from jupcron.logs.masking import (
    mask_value as mask_value,
)
from jupcron.logs.masking import (
    without_secrets as without_secrets,
)

# structlog's configuration in force, read at each line (`_BoundLogger`): the public
# `structlog.get_config()` copies it into a new dict at each call. A private name: a
# structlog without it has loggers made anew for each line, as before (no cache)
_STRUCTLOG: Any
try:
    from structlog._config import _CONFIG as _STRUCTLOG
except ImportError:  # pragma: no cover - structlog's internals moved
    _STRUCTLOG = None

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


class _Output:
    """Where our own lines go: the handler of the latest `configure_logging` (a
    SIGHUP makes a new one). Looked up at each line, so that a logger made, or
    cached, before a reconfiguration writes where the new configuration says."""

    handler: logging.StreamHandler[TextIO] | None = None


class _LineLogger:
    """What our structlog loggers write to: the line structlog's chain rendered,
    straight into the handler's stream under the handler's lock (so it never
    interleaves with a library's line). The stdlib's record, handler and formatter
    round trip for our own lines was most of the cost of logging, a few percent of
    each run's CPU. The level still comes from the stdlib logger of that name
    (``filter_by_level``), as set by `configure_logging`. One per name for the
    process's life (`_line_logger`): it keeps no state of a line, nor a handler."""

    __slots__ = ("_std", "args", "name")

    def __init__(self, name: str, args: tuple[Any, ...]) -> None:
        self.name = name
        self.args = args  # what `structlog.get_logger` was given: to make it anew
        self._std = logging.getLogger(name)  # one object per name, for the process's life

    def enabled(self, level: int) -> bool:
        """As the stdlib logger of this name would decide (its level, and whether
        a logging config disabled it, both as they are now)."""
        std = self._std
        return not std.disabled and std.isEnabledFor(level)

    def write(self, line: str) -> None:
        handler = _Output.handler
        if handler is None:  # pragma: no cover - made only once a handler is in place
            return
        handler.acquire()
        try:
            stream = handler.stream
            stream.write(line + handler.terminator)
            if stream and hasattr(stream, "flush"):  # `handler.flush()`, its lock already held
                stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: the line is lost, as stdlib's
            pass
        finally:
            handler.release()

    debug = info = warning = warn = error = exception = critical = fatal = msg = write


def _by_level(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: drop a line below its logger's level (first in the chain)."""
    if not logger.enabled(_METHOD_LEVELS.get(method_name, logging.INFO)):
        raise structlog.DropEvent
    return event_dict


_METHOD_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "exception": logging.ERROR,
    "critical": logging.CRITICAL,
    "fatal": logging.CRITICAL,
    "msg": logging.INFO,
}
# the ``level`` field `structlog.stdlib.add_log_level` writes for a method
_LEVEL_FIELD = {"warn": "warning", "exception": "error"}

# the chain `configure_logging` gives structlog: one list for the process's life,
# changed in place by each configuration (as ``capture_logs`` changes it), so that a
# logger cached with it follows a reconfiguration
_CHAIN: list[Processor] = []


@dataclass(frozen=True)
class _Compiled:
    """The chain `configure_logging` put in place (``chain``, as it was then) and what
    its steps come to for a line with no ``_record``, ``stack_info`` or ``exc_info``
    (which make its later steps do more; such a line takes the chain): the context merged,
    ``level``, ``logger``, the timestamp, masking and the renderer (``json``: the JSON
    renderer of `_json_line`, called directly). `_BoundLogger` takes this road only
    while the chain in force is still exactly ``chain``."""

    chain: list[Processor]
    renderer: Processor
    json: bool


_compiled: _Compiled | None = None


class _BoundLogger(structlog.stdlib.BoundLogger):
    """structlog's stdlib-like logger, which drops a line below its logger's level
    before making it: what `_by_level`, our chain's first step, would decide (a chain
    that does not start with it, as in ``capture_logs``, sees every line).

    Loggers are cached on first use (`configure_logging`): a line then costs no
    logger to be assembled. A cached logger stays right because what it holds stays
    ours: `_CHAIN`, changed in place, and a `_LineLogger` that finds the handler at
    each line. When structlog is configured otherwise since (``reset_defaults``, a
    test's own ``configure``), it makes the line as a logger made now would.

    A line of our chain as `configure_logging` made it is made by `_line`: the same
    steps, without structlog's generic loop over them."""

    _logger: Any  # a `_LineLogger` under our configuration

    def _proxy_to_logger(
        self, method_name: str, event: str | None = None, *event_args: str, **event_kw: Any
    ) -> Any:
        processors, logger = self._processors, self._logger
        if type(logger) is not _LineLogger:
            return super()._proxy_to_logger(method_name, event, *event_args, **event_kw)
        config = _STRUCTLOG
        if config is None:  # (no cache then: made under the configuration in force)
            return super()._proxy_to_logger(method_name, event, *event_args, **event_kw)
        if (
            processors is not config.default_processors
            or config.logger_factory is not _line_logger
            or config.default_wrapper_class is not type(self)
        ):  # cached under a configuration no longer in force
            return _anew(logger, self._context, method_name, event, event_args, event_kw)
        if (
            isinstance(processors, list)
            and processors
            and processors[0] is _by_level
            and not logger.enabled(_METHOD_LEVELS.get(method_name, logging.INFO))
        ):
            return None  # as structlog answers a dropped line
        compiled = _compiled
        if compiled is None or processors != compiled.chain:  # e.g. ``capture_logs``'s
            return super()._proxy_to_logger(method_name, event, *event_args, **event_kw)
        # `_process_event`'s event dict, as stdlib's BoundLogger hands it on
        if event_args:
            event_kw["positional_args"] = event_args
        event_dict: Any = self._context.copy()
        event_dict.update(**event_kw)
        if event is not None:
            event_dict["event"] = event
        logger.write(_line(compiled, logger, method_name, event_dict))
        return None


def _line(compiled: _Compiled, logger: _LineLogger, method_name: str, event_dict: Any) -> str:
    """What ``compiled.chain`` makes of a line that its level lets through: the same
    fields, in the same order, with the same values."""
    event_dict = structlog.contextvars.merge_contextvars(logger, method_name, event_dict)
    if "_record" in event_dict or "stack_info" in event_dict or "exc_info" in event_dict:
        # the chain's steps, one by one
        for step in compiled.chain[2:]:  # after `_by_level` and `merge_contextvars`
            event_dict = step(logger, method_name, event_dict)
        return str(event_dict)
    event_dict["level"] = _LEVEL_FIELD.get(method_name, method_name)
    event_dict["logger"] = logger.name
    event_dict["timestamp"] = utc_timestamp()
    event_dict = mask_secrets(logger, method_name, event_dict)
    if compiled.json:
        return _JSON.encode(event_dict)
    return str(compiled.renderer(logger, method_name, event_dict))


def _anew(
    logger: _LineLogger,
    context: Mapping[str, Any],
    method_name: str,
    event: str | None,
    event_args: tuple[Any, ...],
    event_kw: dict[str, Any],
) -> Any:
    """The line of a logger cached under a configuration no longer in force, made by
    the logger of its name that structlog's configuration makes now."""
    fresh = structlog.get_logger(*logger.args).bind(**context)
    return getattr(fresh, method_name)(event, *event_args, **event_kw)


# the second a timestamp was last made for, and its text up to the seconds
_STAMP_SECOND: tuple[int, str] = (-1, "")


def utc_timestamp(now_ns: int | None = None) -> str:
    """Now (or `now_ns`, nanoseconds since the epoch), as ``TimeStamper(fmt="iso",
    utc=True)`` writes it (``datetime.now(UTC).isoformat()``, ``Z`` for ``+00:00``,
    the microseconds left out when they are 0), the text of the second made once a
    second: a third of TimeStamper's cost, on each of a run's lines."""
    global _STAMP_SECOND
    ns = time.time_ns() if now_ns is None else now_ns
    second, micro = divmod(ns // 1000, 1_000_000)  # floored to the microsecond, as now() does
    stamp = _STAMP_SECOND
    if stamp[0] != second:
        text = datetime.fromtimestamp(second, UTC).isoformat().removesuffix("+00:00")
        stamp = _STAMP_SECOND = (second, text)
    return f"{stamp[1]}.{micro:06d}Z" if micro else stamp[1] + "Z"


_made: dict[tuple[Any, ...], _LineLogger] = {}  # a line logger keeps no state of a line
_made_lock = threading.Lock()


def _line_logger(*args: Any) -> _LineLogger:
    """structlog's logger factory: the `_LineLogger` of these arguments (the name)."""
    found = _made.get(args)
    if found is None:
        name = str(args[0]) if args and args[0] else "root"
        with _made_lock:
            found = _made.setdefault(args, _LineLogger(name, args))
    return found


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


# what ``json.dumps(line, default=str)`` writes, with one encoder for every line
# (`json.dumps` given an argument builds a new encoder at each call)
_JSON = json.JSONEncoder(default=str)


def _json_line(event_dict: Any, **_kw: Any) -> str:
    return _JSON.encode(event_dict)


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
    global _compiled
    chain: list[Processor] = [
        _by_level,
        *shared,
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
        mask_rendered,
        renderer,
    ]
    _Output.handler = handler
    _CHAIN[:] = chain
    # `_line` makes a line as these steps do; another chain (a step added to
    # `_shared_processors`, say) takes structlog's loop over its steps
    _compiled = _Compiled(chain, renderer, json=not console) if _known(shared) else None
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
