"""Our own log lines, made and written without the stdlib's record round trip: the
logger factory (`_line_logger`), the bound logger that caches itself and drops a
line below its level before making it (`_BoundLogger`), the straight road for a
line of our known chain (`_line`), and the timestamp made once a second
(`utc_timestamp`). `jupcron.logs.configure_logging` puts a configuration in place
with `use`."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from jupcron.logs.masking import mask_secrets

# structlog's configuration in force, read at each line (`_BoundLogger`): the public
# `structlog.get_config()` copies it into a new dict at each call. A private name: a
# structlog without it has loggers made anew for each line, as before (no cache)
_STRUCTLOG: Any
try:
    from structlog._config import _CONFIG as _STRUCTLOG
except ImportError:  # pragma: no cover - structlog's internals moved
    _STRUCTLOG = None


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


def use(
    handler: logging.StreamHandler[TextIO], chain: list[Processor], compiled: _Compiled | None
) -> None:
    """Our lines from now on: written to `handler`, made by `chain` (the same list
    object from one configuration to the next: cached loggers hold it), by `_line`
    where `compiled` says the chain is the one it was written for."""
    global _compiled
    _Output.handler = handler
    _CHAIN[:] = chain
    _compiled = compiled


# what ``json.dumps(line, default=str)`` writes, with one encoder for every line
# (`json.dumps` given an argument builds a new encoder at each call)
_JSON = json.JSONEncoder(default=str)


def _json_line(event_dict: Any, **_kw: Any) -> str:
    return _JSON.encode(event_dict)
