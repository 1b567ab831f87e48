"""The emulator as a real HTTP server: a small ASGI app on uvicorn, in a thread.

A ``drop`` answer aborts the TCP connection without a byte of response, as a
crashed proxy would (uvicorn has no public hook for that, so the app reaches
the connection through the h11 cycle behind ``send``; if that ever changes
it falls back to raising, which uvicorn turns into a 500).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

import structlog
import uvicorn

from jupcron.emulator.core import Emulator

log = structlog.get_logger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class DroppedConnection(Exception):
    """The answer is to be dropped and the connection could not be aborted."""


def asgi_app(emulator: Emulator) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        query = dict(
            parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        )
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        answer = emulator.handle(scope["method"], scope["path"], query, headers, b"".join(chunks))
        if answer.delay > 0:
            await asyncio.sleep(answer.delay)
        if answer.drop:
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            if transport is None:
                raise DroppedConnection
            transport.abort()
            for _ in range(3):  # let connection_lost run, so uvicorn sends nothing
                await asyncio.sleep(0)
            return
        await send(
            {
                "type": "http.response.start",
                "status": answer.status,
                "headers": [
                    *((k.encode(), v.encode()) for k, v in answer.headers.items()),
                    (b"content-length", str(len(answer.body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": answer.body})

    return app


class EmulatorServer:
    """`start(emulator)` serves it on loopback in a background thread."""

    def __init__(self) -> None:
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.emulator: Emulator | None = None

    def start(
        self, emulator: Emulator, host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0
    ) -> EmulatorServer:
        config = uvicorn.Config(
            asgi_app(emulator),
            host=host,
            port=port,
            lifespan="off",
            access_log=False,
            log_level="warning",
            log_config=None,
            timeout_keep_alive=30,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="emulator-server", daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"the emulator could not listen on {host}:{port}")
            time.sleep(0.01)
        bound = server.servers[0].sockets[0].getsockname()
        self.url = f"http://{host}:{bound[1]}"
        self._server, self._thread, self.emulator = server, thread, emulator
        log.info("emulator_listening", url=self.url)
        return self

    def stop(self, grace: float = 1.0) -> None:
        """Stop listening; answers still held back (a `slow` fault) get `grace` seconds,
        then their connections are closed unanswered, as a server going down would."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=grace)
            self._server.force_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> EmulatorServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
