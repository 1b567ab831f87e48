"""`jupcron portfolio ADDRESS` checks that ADDRESS is a public key before it asks the
API. Before, any alphanumeric word passed (``notanaddress`` is all base58 letters but
decodes to 9 bytes, not 32): it was sent to Jupiter, and with the API unreachable the
operator waited through four attempts for a connection error that said nothing of the
typo."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.e2e.cli import jupcron
from tests.fixtures.receivers import send_json


class Counting(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Counting.hits.append(self.path)
        send_json(self, b'{"owner": null, "elements": [], "tokenInfo": {}}')

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    "address",
    ["notanaddress", "So1111111111111111111111111111111111111111", "0OIl" * 11, "a/../b"],
)
def test_an_address_that_is_not_a_public_key_is_refused_before_the_api_is_asked(
    tmp_path: Path, address: str
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Counting.hits = []
    config = tmp_path / "jupcron.yaml"
    config.write_text(
        f"api:\n  base_url: http://127.0.0.1:{server.server_address[1]}\n"
        f"database:\n  url: sqlite:///{tmp_path / 'j.db'}\n"
    )
    try:
        done = jupcron("--config", str(config), "portfolio", address, timeout=30)
        good = jupcron(
            "--config", str(config), "portfolio", "So11111111111111111111111111111111111111112"
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: Invalid value for 'ADDRESS': {address!r} is not a base58 public key"
    )
    assert done.stdout == ""
    # the one request the server saw is the good address's, after the refusal
    assert good.returncode == 0, good.stderr
    assert len(Counting.hits) == 1
    assert "So11111111111111111111111111111111111111112" in Counting.hits[0]
