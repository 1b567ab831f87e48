"""A throwaway PostgreSQL cluster for tests, benchmarks and chaos runs.

``initdb`` + ``pg_ctl`` in a temporary folder, listening on 127.0.0.1 on a free
port, trust auth, fsync off (a test cluster needs no durability). Under root
the server runs as the ``postgres`` user, since PostgreSQL refuses root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

SUPERUSER = "jupcron"


def find_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if candidates:
        return candidates[-1]
    raise RuntimeError(f"{name} not found: run 'make postgres-tools' (installs postgresql)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgCluster:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="jupcron-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as_user: str | None = None
        if os.geteuid() == 0:
            self._as_user = "postgres"
            pw = pwd.getpwnam(self._as_user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self.root.chmod(0o700)

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = list(argv)
        if self._as_user:
            cmd = ["runuser", "-u", self._as_user, "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        self._run(
            find_bin("initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
            "--encoding=UTF8", "--no-sync",
        )  # fmt: skip
        conf = self.data / "postgresql.conf"
        with conf.open("a") as fh:
            fh.write(
                f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.root}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "max_connections = 200\n"
            )

    def start(self) -> None:
        self._run(
            find_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-w", "-t", "60", "start",
        )  # fmt: skip
        self.wait_ready()

    def stop(self, mode: str = "fast") -> None:
        self._run(find_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        self.stop("fast")
        self.start()

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.dsn("postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def dsn(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname={database}"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str, database: str = "postgres") -> None:
        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def create_database(self, name: str, template: str | None = None) -> str:
        tpl = f" TEMPLATE {template}" if template else ""
        self.execute(f'CREATE DATABASE "{name}"{tpl}')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
