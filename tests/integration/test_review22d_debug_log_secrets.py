"""Review 22d: ``logging.level: debug`` is ours, not every library's.

At debug, the libraries Apprise sends through (requests, urllib3) logged each
request line, path included: a notification URL's token (Discord's and Slack's
webhook tokens, Telegram's ``/bot<TOKEN>/``) sits in that path, so a debug log
held the channel's token in clear. Real Apprise, a real HTTP receiver on loopback.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from jupcron.service.apprise_channel import apprise_sender
from tests.fixtures.receivers import HttpReceiver
from tests.support.logcapture import captured_logs

PATH_TOKEN = "T0KEN-in-the-path-5e1f9a"


@pytest.fixture
def debug_out() -> Iterator[io.StringIO]:
    """Logging at debug into a buffer; everything undone afterwards."""
    with captured_logs("debug") as stream:
        yield stream


def test_at_debug_a_notification_urls_path_token_reaches_no_log_line(
    debug_out: io.StringIO, http_receiver: HttpReceiver
) -> None:
    port = http_receiver.server.server_address[1]
    send = apprise_sender([f"json://127.0.0.1:{port}/hooks/{PATH_TOKEN}"])
    assert send("jupcron: test", "a run failed", True) is True
    assert http_receiver.titles() == ["jupcron: test"]  # the message went out, token and all

    structlog.get_logger("jupcron.service.alerts").debug("alert_sent_probe")
    text = debug_out.getvalue()
    assert PATH_TOKEN not in text, text
    events = [json.loads(line)["event"] for line in text.splitlines() if line.strip()]
    assert "alert_sent_probe" in events  # our own debug lines still show


def test_at_debug_a_library_outside_the_known_list_stays_at_warning(
    debug_out: io.StringIO,
) -> None:
    """Any library, not only the listed ones: its debug and info lines stay out,
    its warnings still come through."""
    logging.getLogger("urllib3.connectionpool").debug("POST /bot123:SECRET/sendMessage")
    logging.getLogger("some.library").info("chatty")
    logging.getLogger("some.library").warning("worth a look")
    events = [json.loads(line)["event"] for line in debug_out.getvalue().splitlines()]
    assert events == ["worth a look"]
