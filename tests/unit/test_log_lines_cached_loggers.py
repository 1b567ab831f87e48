"""jupcron.logs with loggers cached on first use and our chain's lines made by `_line`:
a cached logger follows a reconfiguration (SIGHUP: new stream, new level), yields to
``capture_logs`` and to a configuration that is not ours (``reset_defaults``), and a
line says what structlog's own run of the chain says, field for field, in order."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import structlog
from structlog.testing import capture_logs

from jupcron import logs
from jupcron.logs import MASK, configure_logging, run_context, utc_timestamp

SECRET = "s3cr3t-VALUE-do-not-print"


@pytest.fixture(autouse=True)
def restore() -> Iterator[None]:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    yield
    structlog.contextvars.clear_contextvars()
    structlog.reset_defaults()
    root.handlers[:] = before[0]
    root.setLevel(before[1])
    for name in ("jupcron", *logs.FOREIGN_LOGGERS):
        logging.getLogger(name).setLevel(logging.NOTSET)


def records(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def cached(name: str) -> structlog.stdlib.BoundLogger:
    """A module's logger as jupcron makes them, used once so that structlog caches it."""
    log = structlog.get_logger(name)
    log.debug("first_use")  # below the level: dropped, but the logger is cached now
    return log  # type: ignore[no-any-return]


def test_a_cached_logger_follows_a_reconfiguration() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging("info", "json", first)
    log = cached("jupcron.cached.sighup")
    log.info("before_hup", n=1)
    configure_logging("warning", "json", second)  # what SIGHUP does
    log.info("dropped_now")  # the new level
    log.warning("after_hup", n=2)
    assert [r["event"] for r in records(first)] == ["before_hup"]
    assert [r["event"] for r in records(second)] == ["after_hup"]


def test_a_cached_logger_is_captured() -> None:
    stream = io.StringIO()
    configure_logging("info", "json", stream)
    log = cached("jupcron.cached.capture")
    with capture_logs() as captured:
        log.info("seen", api_key=SECRET)
    assert [c["event"] for c in captured] == ["seen"]
    assert stream.getvalue() == ""
    log.info("written")  # the chain is ours again
    assert [r["event"] for r in records(stream)] == ["written"]


def test_a_cached_logger_yields_to_a_configuration_not_ours() -> None:
    stream = io.StringIO()
    configure_logging("info", "json", stream)
    log = cached("jupcron.cached.reset")
    bound = log.bind(plan="p1")
    structlog.reset_defaults()
    with capture_logs() as captured:
        log.info("after_reset")
        bound.warning("bound_after_reset")
    assert [c["event"] for c in captured] == ["after_reset", "bound_after_reset"]
    assert captured[1]["plan"] == "p1"
    assert stream.getvalue() == ""
    again = io.StringIO()
    configure_logging("info", "json", again)
    log.info("configured_again")
    assert [r["event"] for r in records(again)] == ["configured_again"]


def chain_line(logger_name: str, method: str, fields: dict[str, object]) -> str:
    """The line structlog's generic run of our chain makes of `fields`."""
    line_logger = logs._line_logger(logger_name)
    event_dict: object = dict(fields)
    for step in logs._CHAIN:
        event_dict = step(line_logger, method, event_dict)  # type: ignore[arg-type]
    return str(event_dict)


def without_timestamp(line: str) -> list[tuple[str, object]]:
    return [(k, v) for k, v in json.loads(line).items() if k != "timestamp"]


def test_a_line_is_the_chains_line() -> None:
    stream = io.StringIO()
    configure_logging("info", "json", stream)
    name = "jupcron.cached.same"
    log = cached(name)
    fields = {"signature": "5" * 88, "slot": None, "signers": 1, "amount": 1.5,
              "url": "https://u:pw@h/x?api-key=k", "nested": {"token": SECRET, "ok": [1, "a"]},
              "signed_transaction": SECRET}  # fmt: skip
    with run_context(plan="dca", run_id=7):
        log.info("tx_signed", **fields)
        expected = chain_line(name, "info", {**fields, "event": "tx_signed"})
        log.warn("warned", n=1)
        warned = chain_line(name, "warn", {"n": 1, "event": "warned"})
    made = stream.getvalue().splitlines()
    assert without_timestamp(made[0]) == without_timestamp(expected)
    assert without_timestamp(made[1]) == without_timestamp(warned)
    assert list(json.loads(made[0]))[-3:] == ["level", "logger", "timestamp"]
    assert SECRET not in stream.getvalue()
    assert json.loads(made[0])["nested"] == {"token": MASK, "ok": [1, "a"]}
    assert json.loads(made[1])["level"] == "warning"


def test_a_line_with_an_exception_or_arguments_takes_the_chain() -> None:
    stream = io.StringIO()
    configure_logging("info", "json", stream)
    log = cached("jupcron.cached.exc")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed", token=SECRET)
    log.info("with %s", "args")
    failed, with_args = records(stream)
    assert failed["level"] == "error"
    assert "ValueError: boom" in str(failed["exception"])
    assert failed["token"] == MASK
    assert with_args["positional_args"] == ["args"]


def test_a_console_line_is_the_chains_line() -> None:
    stream = io.StringIO()
    configure_logging("info", "console", stream)
    name = "jupcron.cached.console"
    log = cached(name)
    log.info("run_submitted", plan="dca", api_key=SECRET)
    line = stream.getvalue().rstrip("\n")
    expected = chain_line(name, "info", {"plan": "dca", "api_key": SECRET,
                                         "event": "run_submitted"})  # fmt: skip
    assert line.split(" ", 2)[2] == expected.split(" ", 2)[2]  # after the time
    assert SECRET not in line


@pytest.mark.parametrize(
    "micros",
    [0, 1, 999_999, 1_000_000, 1_764_323_695_000_000, 1_764_323_695_123_456,
     1_764_323_695_999_999, 1_764_323_696_000_001],
)  # fmt: skip
def test_the_timestamp_is_the_timestampers(micros: int) -> None:
    ns = micros * 1000 + 999  # floored to the microsecond, as datetime.now() is
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    assert utc_timestamp(ns) == moment.isoformat().replace("+00:00", "Z")
    assert utc_timestamp(ns) == utc_timestamp(ns)  # the second's text, kept


def test_the_timestamp_is_now() -> None:
    before = datetime.now(UTC)
    stamp = utc_timestamp()
    after = datetime.now(UTC)
    assert stamp.endswith("Z")
    assert before <= datetime.fromisoformat(stamp) <= after


def test_a_chain_with_a_step_of_its_own_takes_structlogs_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`_line` makes lines as the chain it was written for does; a step added to the
    shared chain later must not be skipped by it."""

    def stamped(_logger: object, _method: str, event_dict: dict[str, object]) -> object:
        event_dict["host_role"] = "leader"
        return event_dict

    shared = logs._shared_processors
    monkeypatch.setattr(logs, "_shared_processors", lambda: [*shared(), stamped])
    stream = io.StringIO()
    configure_logging("info", "json", stream)
    cached("jupcron.cached.extra").info("with_a_step")
    assert records(stream)[-1]["host_role"] == "leader"
