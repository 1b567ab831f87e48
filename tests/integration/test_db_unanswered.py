"""A PostgreSQL host that takes the connection and never answers (a dropped route,
a firewall, a hung server): a command says so within seconds and exits 1; it does
not hang for ever (review 17)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupcron.store.engine import PG_CONNECT_TIMEOUT_S
from tests.e2e.cli import jupcron


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose connections the kernel completes and nobody ever reads."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("command", [["status"], ["db", "upgrade"]])
def test_a_server_that_never_answers_is_an_error_not_a_hang(
    tmp_path: Path, silent_port: int, command: list[str]
) -> None:
    config = tmp_path / "jupcron.yaml"
    url = f"postgresql+psycopg://jupcron:pw@127.0.0.1:{silent_port}/jupcron"
    config.write_text(f'database:\n  url: "{url}"\n')
    started = time.monotonic()
    result = jupcron("--config", str(config), *command, timeout=PG_CONNECT_TIMEOUT_S + 20)
    assert time.monotonic() - started < PG_CONNECT_TIMEOUT_S + 15
    assert result.returncode == 1, result
    assert result.stderr.startswith("error: "), result.stderr
    assert "timeout" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
