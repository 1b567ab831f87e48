"""The channel alerts go out on: Apprise, one URL a channel (``notify.urls``).

The URLs carry the channel's token or password, so only their scheme is ever shown
(`channel_of`). Apprise is imported on the first use (it loads a hundred plugins).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from jupcron.errors import ConfigError

if TYPE_CHECKING:
    from apprise import NotifyBase, OverflowMode


def channel_of(url: str) -> str:
    """What may be shown of a notification URL: its scheme (the rest holds secrets)."""
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://…" if sep and scheme.isascii() and scheme.isalnum() else "?"


class Sender(Protocol):
    def __call__(self, title: str, body: str, severe: bool) -> bool: ...


def apprise_sender(urls: Sequence[str]) -> Sender:
    """A `Sender` over Apprise; a URL it does not understand is a `ConfigError` that
    names its position and scheme only."""
    with warnings.catch_warnings():  # Apprise's plugins import imghdr (deprecated in 3.11)
        warnings.simplefilter("ignore", DeprecationWarning)
        import apprise

        # Apprise logs through stdlib logging, its debug lines with URL parts: errors only
        logger = logging.getLogger("apprise")
        logger.setLevel(logging.ERROR)
        client = apprise.Apprise()
        # silent while it reads the URLs: its "Unparseable URL <url>" error quotes a
        # mistyped URL whole, the token in it (ours names the position and scheme)
        logger.disabled = True
        try:
            for index, url in enumerate(urls):
                before = len(client)
                if not client.add(url):
                    raise ConfigError(
                        f"notify.urls[{index}] ({channel_of(url)}): not a notification URL "
                        "Apprise understands (see https://github.com/caronc/apprise/wiki)"
                    )
                if "overflow=" not in url.lower():  # the URL's own choice wins
                    split_long(list(client)[before:], apprise.OverflowMode.SPLIT)
        finally:
            logger.disabled = False

    def send(title: str, body: str, severe: bool) -> bool:
        kind = apprise.NotifyType.FAILURE if severe else apprise.NotifyType.INFO
        return bool(client.notify(title=title, body=body, notify_type=kind))

    return send


def split_long(channels: Sequence[NotifyBase], mode: OverflowMode) -> None:
    """A message longer than its channel takes (Telegram 4,096 characters, Discord
    2,000) goes as several (``mode``: Apprise's split). Apprise's default passes it on
    untouched and the service refuses it whole: a burst of 30 failures (up to ~9,000
    characters) would be the one message nobody sees."""
    for channel in channels:
        channel.overflow_mode = mode


def check_urls(urls: Sequence[str]) -> None:
    """Raise `ConfigError` if Apprise would refuse one of `urls` (config check, start)."""
    apprise_sender(urls)
