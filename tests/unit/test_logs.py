"""jupcron.logs: JSON lines, one chain for stdlib loggers, bound context, no secrets."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from jupcron.config import load_config
from jupcron.config.apikey import api_key
from jupcron.logs import (
    MASK,
    bind_run,
    configure_logging,
    forget_value,
    is_secret_key,
    run_context,
    unbind_run,
    without_secrets,
)
from jupcron.logs.outage import Outage
from tests.support.logcapture import captured_logs

SECRET = "s3cr3t-VALUE-do-not-print"


@pytest.fixture
def out() -> Iterator[io.StringIO]:
    """Configure logging into a buffer; undo everything afterwards."""
    with captured_logs() as stream:
        yield stream


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_json_line_has_event_level_timestamp_and_logger(out: io.StringIO) -> None:
    structlog.get_logger("jupcron.runner").info("run_submitted", plan="dca-sol", amount=5)
    (record,) = lines(out)
    assert record["event"] == "run_submitted"
    assert record["level"] == "info"
    assert record["logger"] == "jupcron.runner"
    assert record["plan"] == "dca-sol"
    assert str(record["timestamp"]).endswith("Z")


@pytest.mark.parametrize(
    "field",
    [
        "api_key",
        "key",
        "secret",
        "password",
        "token",
        "auth_token",
        "signed_transaction",
        "signedTransaction",
        "keypair",
        "private_key",
        "authorization",
    ],
)
def test_secret_fields_are_masked_in_output(out: io.StringIO, field: str) -> None:
    structlog.get_logger("jupcron.api").info("api_call", **{field: SECRET})
    text = out.getvalue()
    assert SECRET not in text
    assert lines(out)[0][field] == MASK


def test_nested_secrets_and_url_passwords_are_masked(out: io.StringIO) -> None:
    log = structlog.get_logger("jupcron.api")
    log.info(
        "api_call",
        headers={"x-api-key": SECRET, "accept": "json"},
        request=[{"signed_transaction": SECRET}],
        url=f"postgresql://jup:{SECRET}@db/jupcron",
    )
    text = out.getvalue()
    assert SECRET not in text
    record = lines(out)[0]
    assert record["headers"] == {"x-api-key": MASK, "accept": "json"}
    assert record["url"] == "postgresql://jup:***@db/jupcron"


def test_bound_secret_in_context_is_masked(out: io.StringIO) -> None:
    bind_run(plan="p1", token=SECRET)
    structlog.get_logger("jupcron.runner").info("run_started")
    assert SECRET not in out.getvalue()


def test_public_fields_that_mention_key_are_kept(out: io.StringIO) -> None:
    structlog.get_logger("jupcron.runner").info(
        "run_claimed", idempotency_key="p1:2025", key_file="/etc/k", token_account="Abc"
    )
    record = lines(out)[0]
    assert record["idempotency_key"] == "p1:2025"
    assert record["key_file"] == "/etc/k"
    assert record["token_account"] == "Abc"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("keys", True),
        ("db_password", True),
        ("client_secret", True),
        ("plan", False),
        ("request_id", False),
        ("signature", False),
        ("public_key", False),
        ("keypair_path", False),
        ("monkey", False),
    ],
)
def test_is_secret_key_table(name: str, secret: bool) -> None:
    assert is_secret_key(name) is secret


def test_stdlib_loggers_go_through_the_same_chain(out: io.StringIO) -> None:
    bind_run(plan="dca-sol", run_id=42)
    logging.getLogger("sqlalchemy.pool").warning("pool is %s", "exhausted")
    logging.getLogger("httpx").info("dropped: below WARNING for foreign loggers")
    (record,) = lines(out)
    assert record["event"] == "pool is exhausted"
    assert record["logger"] == "sqlalchemy.pool"
    assert record["level"] == "warning"
    assert record["plan"] == "dca-sol"
    assert record["run_id"] == 42


def test_stdlib_extra_secret_is_masked(out: io.StringIO) -> None:
    logging.getLogger("apscheduler.scheduler").warning("job_failed", extra={"password": SECRET})
    assert SECRET not in out.getvalue()
    assert lines(out)[0]["password"] == MASK


def test_run_context_binds_and_restores(out: io.StringIO) -> None:
    log = structlog.get_logger("jupcron.runner")
    bind_run(plan="outer")
    with run_context(run_id=7, request_id="req-1"):
        log.info("run_submitted")
    log.info("run_done")
    unbind_run()
    log.info("idle")
    first, second, third = lines(out)
    assert (first["run_id"], first["request_id"], first["plan"]) == (7, "req-1", "outer")
    assert "run_id" not in second
    assert second["plan"] == "outer"
    assert "plan" not in third


def test_configure_twice_writes_each_line_once(out: io.StringIO) -> None:
    configure_logging("info", "json", out)
    structlog.get_logger("jupcron.x").info("once")
    assert len(lines(out)) == 1


def test_level_filters_our_debug_lines(out: io.StringIO) -> None:
    log = structlog.get_logger("jupcron.x")
    log.debug("noise")
    log.info("signal")
    assert [r["event"] for r in lines(out)] == ["signal"]


def test_our_lines_and_a_librarys_share_the_stream_in_order(out: io.StringIO) -> None:
    """Our lines skip the stdlib's record and formatter, but land in the same
    stream, in order, each whole, with the same fields as a library's."""
    ours = structlog.get_logger("jupcron.runner")
    ours.info("first", n=1)
    logging.getLogger("sqlalchemy.engine").warning("second")
    ours.warning("third", password=SECRET)
    records = lines(out)
    assert [r["event"] for r in records] == ["first", "second", "third"]
    assert [r["logger"] for r in records] == [
        "jupcron.runner",
        "sqlalchemy.engine",
        "jupcron.runner",
    ]
    assert records[2]["password"] == MASK
    assert set(records[0]) == {"event", "level", "logger", "timestamp", "n"}


def test_a_disabled_stdlib_logger_silences_our_lines_of_that_name(out: io.StringIO) -> None:
    """A logging config that disables existing loggers (alembic's fileConfig does)
    silences ours as it did when our lines went through the stdlib's loggers."""
    std = logging.getLogger("jupcron.quiet")
    std.disabled = True
    try:
        structlog.get_logger("jupcron.quiet").warning("muted")
        structlog.get_logger("jupcron.loud").warning("heard")
    finally:
        std.disabled = False
    assert [r["event"] for r in lines(out)] == ["heard"]


def test_a_registered_secret_value_is_masked_until_forgotten(out: io.StringIO) -> None:
    from jupcron.logs import forget_value, mask_value

    opaque = "opaque-session-value-123"
    log = structlog.get_logger("jupcron.x")
    mask_value(opaque)
    log.info("with", text=f"token {opaque} here")
    forget_value(opaque)
    log.info("after", text=f"token {opaque} here")
    first, second = lines(out)
    assert first["text"] == f"token {MASK} here"
    assert second["text"] == f"token {opaque} here"


def test_console_format_is_not_json(out: io.StringIO) -> None:
    stream = io.StringIO()
    configure_logging("info", "console", stream)
    structlog.get_logger("jupcron.x").info("run_submitted", api_key=SECRET)
    text = stream.getvalue()
    assert "run_submitted" in text
    assert SECRET not in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text.splitlines()[0])


def test_auto_format_uses_json_off_a_tty(out: io.StringIO) -> None:
    stream = io.StringIO()  # isatty() is False
    configure_logging("info", "auto", stream)
    structlog.get_logger("jupcron.x").info("hello")
    assert json.loads(stream.getvalue())["event"] == "hello"


def test_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("loud", "json", io.StringIO())


def test_an_outage_is_said_once_a_streak_and_its_end_once() -> None:
    outage = Outage(structlog.get_logger("jupcron.test"), "store_down", back="store_back")
    with structlog.testing.capture_logs() as logs:
        outage.ok()  # up and still up: nothing
        outage.failed(error="one")
        outage.failed(error="two")
        outage.ok()
        outage.ok()
        outage.failed(error="three")
    assert [(r["event"], r.get("error")) for r in logs] == [
        ("store_down", "one"), ("store_back", None), ("store_down", "three"),
    ]  # fmt: skip
    assert outage.down


def test_an_outage_without_a_back_event_says_only_the_failures() -> None:
    outage = Outage(structlog.get_logger("jupcron.test"), "beat_failed")
    with structlog.testing.capture_logs() as logs:
        outage.failed()
        outage.ok()
        outage.failed()
    assert [r["event"] for r in logs] == ["beat_failed", "beat_failed"]


def test_a_line_is_what_json_dumps_writes(out: io.StringIO) -> None:
    from datetime import UTC, datetime
    from decimal import Decimal

    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    structlog.get_logger("jupcron.x").info(
        "mixed", price=Decimal("0.1234567890123456789"), at=when, text="é ü \"q\"",
        nested={"a": [1, 2.5, None, True], "b": {"c": "d"}}, big=10**30,
    )  # fmt: skip
    line = out.getvalue().splitlines()[0]
    record = json.loads(line)
    assert json.dumps(record, default=str) == line  # separators, escapes, key order
    assert record["price"] == "0.1234567890123456789"
    assert record["at"] == str(when)
    assert record["big"] == 10**30


def test_a_level_set_later_holds_for_lines_of_a_name_already_used(out: io.StringIO) -> None:
    log = structlog.get_logger("jupcron.later")
    log.info("before")
    logging.getLogger("jupcron.later").setLevel(logging.WARNING)
    try:
        log.info("dropped")
        log.warning("kept")
    finally:
        logging.getLogger("jupcron.later").setLevel(logging.NOTSET)
    log.info("after")
    assert [r["event"] for r in lines(out)] == ["before", "kept", "after"]


def test_scalars_and_their_subclasses_are_written_as_given(out: io.StringIO) -> None:
    class Count(int):
        pass

    structlog.get_logger("jupcron.x").info(
        "scalars", n=3, f=0.5, yes=True, none=None, count=Count(7), auth_token=2
    )
    (record,) = lines(out)
    assert (record["n"], record["f"], record["yes"], record["none"]) == (3, 0.5, True, None)
    assert record["count"] == 7
    assert record["auth_token"] == MASK  # masked by its name, whatever its value


def test_capture_logs_sees_every_level_under_our_configuration(out: io.StringIO) -> None:
    """A line below its logger's level is dropped before it is made only when our chain
    (which starts by that check) is the one in use: ``capture_logs`` sees them all."""
    from structlog.testing import capture_logs

    log = structlog.get_logger("jupcron.x")
    with capture_logs() as captured:
        log.debug("quiet", n=1)
        log.info("loud")
    assert [(e["event"], e["log_level"]) for e in captured] == [
        ("quiet", "debug"),
        ("loud", "info"),
    ]
    log.debug("dropped")
    log.info("written")
    assert [r["event"] for r in lines(out)] == ["written"]


def test_an_api_key_once_read_is_masked_in_any_text(out: io.StringIO, tmp_path: Path) -> None:
    """The key is registered where it is read: a line that quotes it (an error text, a
    URL with it in the query, a library's message) shows '***', and so does a text
    bound for the store."""
    key = "jupKEY-read-from-its-file-0f3a"
    key_file = tmp_path / "api-key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    config = load_config(_config_file(tmp_path, f"api:\n  key_file: {key_file}\n"), env={})
    assert api_key(config, env={}) is not None
    log = structlog.get_logger("jupcron.test")
    log.error("order_failed", error=f"proxy said: GET /order x-api-key: {key}", note=[key])
    logging.getLogger("somelib").warning("refused %s", key)
    text = out.getvalue()
    assert key not in text
    assert text.count(MASK) >= 3
    assert without_secrets(f"echo {key}") == f"echo {MASK}"
    forget_value(key)


def _config_file(folder: Path, text: str) -> Path:
    path = folder / "config.yaml"
    path.write_text(text)
    path.chmod(0o600)
    return path
