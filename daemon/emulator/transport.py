"""The emulator as an in-process httpx transport (no sockets), for tests."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from jupcron.emulator.core import Emulator


class EmulatorTransport(httpx.BaseTransport):
    """Hands each request to `Emulator.handle`. A slow answer longer than the
    request's read timeout raises `httpx.ReadTimeout` (after waiting that
    long, via `sleep`); a dropped answer raises `httpx.RemoteProtocolError`."""

    def __init__(self, emulator: Emulator, sleep: Callable[[float], None] = time.sleep) -> None:
        self.emulator = emulator
        self._sleep = sleep

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        query = dict(request.url.params.multi_items())
        answer = self.emulator.handle(
            request.method, request.url.path, query, dict(request.headers), body
        )
        if answer.delay > 0:
            timeout = (request.extensions.get("timeout") or {}).get("read")
            if timeout is not None and answer.delay > timeout:
                self._sleep(timeout)
                raise httpx.ReadTimeout("emulator answer too slow", request=request)
            self._sleep(answer.delay)
        if answer.drop:
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        return httpx.Response(
            answer.status, headers=answer.headers, content=answer.body, request=request
        )


def in_process_transport(
    emulator: Emulator, sleep: Callable[[float], None] = time.sleep
) -> httpx.BaseTransport:
    return EmulatorTransport(emulator, sleep)
