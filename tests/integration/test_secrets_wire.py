"""Secrets on the wire and on disk, with real components: the RPC key reaches
the node (loopback HTTP to the emulator) and shows nowhere; a plain-http RPC
to another machine is refused before any request; a database password is used
by the real PostgreSQL connection and never shown; the SQLite database, its
-wal and -shm files and the lock file are created 0600 whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from structlog.testing import capture_logs

from jupcron.chain.rpc import SolanaRpc, rpc_from_config
from jupcron.config import Config
from jupcron.emulator.server import EmulatorServer
from jupcron.errors import ConfigError
from jupcron.service.leader import SqliteFileLeadership
from jupcron.store import migrate
from jupcron.store.engine import make_engine

RPC_KEY = "rpcKEY-4c1d9e"
UNKNOWN_SIGNATURE = "1" * 88


class Recording(httpx.BaseTransport):
    """The real HTTP transport, noting each request's URL (the seam, not a mock)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.urls: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual login umask, under which files would be created 0644."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_the_rpc_key_reaches_the_node_and_shows_nowhere(
    emulator_server: EmulatorServer,
) -> None:
    url = f"{emulator_server.url}/rpc?api-key={RPC_KEY}"
    config = Config.model_validate({"rpc": {"url": url}})
    assert RPC_KEY not in repr(config) + config.model_dump_json()
    recording = Recording()
    rpc = SolanaRpc(config.rpc.url or "", transport=recording)
    with capture_logs() as logs:
        status = rpc.signature_status(UNKNOWN_SIGNATURE)
    rpc.close()
    assert status.found is False  # the emulator's RPC answered
    assert recording.urls == [url]  # with the real key in the query
    assert RPC_KEY not in repr(rpc)
    assert RPC_KEY not in repr(logs)

    built = rpc_from_config(config.rpc)  # what the daemon and `settle` use
    assert built is not None
    assert built.signature_status(UNKNOWN_SIGNATURE).found is False
    assert repr(built) == f"SolanaRpc(url='{emulator_server.url}/***?api-key=***')"
    built.close()


def test_a_plain_http_rpc_to_another_machine_is_refused_before_any_request() -> None:
    recording = Recording()
    url = f"http://rpc.example.net/?api-key={RPC_KEY}"
    with pytest.raises(ConfigError) as refused:
        SolanaRpc(url, transport=recording)
    message = str(refused.value)
    assert message == (
        "rpc.url 'http://rpc.example.net/?api-key=***': plain http:// to rpc.example.net, "
        "which is not this machine, would send the URL's key and our transactions in clear: "
        "use https://, or set rpc.allow_insecure_http: true"
    )
    assert recording.urls == []
    allowed = SolanaRpc(url, transport=recording, allow_insecure_http=True)
    allowed.close()
    assert recording.urls == []  # built, nothing sent yet


def test_a_database_password_is_used_but_never_shown(pg_url: str) -> None:
    # the test cluster trusts loopback, so any password connects; what matters is
    # that the engine got the real one and every view of the config hides it
    with_password = pg_url.replace("://jupcron@", "://jupcron:pg-Secret-77@", 1)
    assert with_password != pg_url
    config = Config.model_validate({"database": {"url": with_password}})
    engine = make_engine(config.database.url)
    try:
        assert engine.url.password == "pg-Secret-77"
        with engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        engine.dispose()
    for shown in (repr(config), str(config.database), config.model_dump_json()):
        assert "pg-Secret-77" not in shown
        assert "jupcron:***@" in shown


def test_a_new_sqlite_database_its_wal_shm_and_lock_are_0600(
    tmp_path: Path, umask_022: None
) -> None:
    db = tmp_path / "jupcron.db"
    url = f"sqlite:///{db}"
    migrate.upgrade(url)
    engine = make_engine(url)
    lock = SqliteFileLeadership(db)
    try:
        with engine.begin() as conn:  # a write: the -wal and -shm files exist while it is open
            conn.execute(text("CREATE TABLE probe (x INTEGER)"))
            conn.execute(text("INSERT INTO probe VALUES (1)"))
        held = engine.connect()
        held.execute(text("SELECT count(*) FROM probe")).scalar_one()
        assert lock.acquire()
        files = {p.name: mode_of(p) for p in tmp_path.iterdir()}
        held.close()
    finally:
        lock.release()
        engine.dispose()
    assert files == {
        "jupcron.db": 0o600,
        "jupcron.db-wal": 0o600,
        "jupcron.db-shm": 0o600,
        "jupcron.db.lock": 0o600,
    }
    plain = tmp_path / "plain"  # what the umask alone gives a new file here
    plain.touch()
    assert mode_of(plain) == 0o644


def test_an_existing_database_file_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    db = tmp_path / "shared.db"
    db.touch(mode=0o640)
    db.chmod(0o640)  # the operator's choice is not changed behind their back
    engine = make_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    finally:
        engine.dispose()
    assert mode_of(db) == 0o640
