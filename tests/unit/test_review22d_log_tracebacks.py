"""Review 22d: the masks hold in a line's traceback and in a library's message.

The chain masked the fields, then rendered the traceback (``format_exc_info``
came after ``mask_secrets``), and skipped ``event``, which for a library's line
is its whole message: ``log.error("fire_failed", error=str(exc), exc_info=exc)``
showed the URL password masked in ``error`` and in clear in ``exception``, and a
library's ``https://user:password@…`` or ``?token=…`` went out as written.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from jupcron.logs import forget_value, mask_value
from tests.support.logcapture import captured_logs

PASSWORD = "pw-IN-the-url-3e9d"
RPC_KEY = "rpc-KEY-in-query-71ac"
REGISTERED = "registered-secret-value-0b5f2c"
TEXT = (
    f"cannot use postgresql+psycopg://jc:{PASSWORD}@db/x nor https://rpc.example/?api-key={RPC_KEY}"
)


@pytest.fixture(params=["json", "console"])
def out(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    with captured_logs("info", request.param) as stream:
        yield stream


def _raise(text: str) -> None:
    raise RuntimeError(text)


def test_a_traceback_on_our_line_is_masked_as_its_fields_are(out: io.StringIO) -> None:
    log = structlog.get_logger("jupcron.scheduling.outage")
    try:
        _raise(TEXT)
    except RuntimeError as exc:
        log.error("fire_failed", error=str(exc), exc_info=exc)
    try:
        _raise(TEXT)
    except RuntimeError:
        log.exception("scheduler_turn_failed")
    text = out.getvalue()
    assert "Traceback" in text
    assert "RuntimeError" in text
    assert "fire_failed" in text
    assert "scheduler_turn_failed" in text
    assert PASSWORD not in text, text
    assert RPC_KEY not in text, text


def test_a_registered_secret_in_a_traceback_is_masked(out: io.StringIO) -> None:
    mask_value(REGISTERED)
    try:
        try:
            _raise(f"the answer echoed {REGISTERED}")
        except RuntimeError:
            structlog.get_logger("jupcron.follower.loop").exception("follower_failed")
    finally:
        forget_value(REGISTERED)
    text = out.getvalue()
    assert "follower_failed" in text
    assert REGISTERED not in text, text


def test_a_librarys_message_and_traceback_are_masked(out: io.StringIO) -> None:
    library = logging.getLogger("apscheduler.executors.default")
    library.warning("posting to %s failed", f"https://hook:{PASSWORD}@hooks.example/x")
    try:
        _raise(TEXT)
    except RuntimeError:
        library.exception("Job raised an exception")
    text = out.getvalue()
    assert "posting to https://hook:" in text
    assert "hooks.example" in text
    assert "Job raised an exception" in text
    assert "Traceback" in text
    assert PASSWORD not in text, text
    assert RPC_KEY not in text, text


def test_our_event_names_are_kept_as_written(out: io.StringIO) -> None:
    structlog.get_logger("jupcron.x").info("run_submitted", plan="p")
    if out.getvalue().startswith("{"):
        assert json.loads(out.getvalue())["event"] == "run_submitted"
    else:
        assert "run_submitted" in out.getvalue()


def test_a_url_whose_user_holds_an_at_is_masked_in_any_text(out: io.StringIO) -> None:
    """SQLAlchemy reads ``jc@tenant`` as the user and what follows ':' as the password
    (Azure's ``user@server`` names): the log's mask reads it the same way."""
    url = f"postgresql+psycopg://jc@tenant:{PASSWORD}@db.example/x"
    structlog.get_logger("jupcron.store").warning("store_unavailable", error=f"at {url}: down")
    text = out.getvalue()
    assert "store_unavailable" in text
    assert PASSWORD not in text, text
