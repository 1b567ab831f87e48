"""`jupcron audit`, `jupcron report` and `jupcron plans list` only read: on a SQLite file they must read
beside the daemon's writers, as `jupcron status` and the page do, never take the write
lock. Opened as writers, every transaction of theirs began ``BEGIN IMMEDIATE``: while
the daemon held the lock (a `plans apply` of many plans holds it for tens of seconds)
the operator's command waited up to the 30 s busy timeout and then failed, and while
a report was being built over a large store the daemon's run steps waited behind it.

A real SQLite file under WAL; the write lock held by a real second connection, as the
daemon's writer holds it; the commands run in a thread so a wait shows as a timeout."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from jupcron.cli.main import cli
from jupcron.plans.apply import apply_paths
from jupcron.store.engine import make_engine, session_factory
from tests.fixtures.plans import PlanFiles, swap_plan

PROMPT = 5.0  # seconds: a reader under WAL answers at once; the busy wait is 30 s


def write_lock(url: str) -> sqlite3.Connection:
    """The daemon's writer, in the middle of its transaction (it holds the write lock)."""
    conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE plans SET description = description")
    return conn


def run_beside_a_writer(url: str, config: Path, *args: str) -> tuple[Result | None, bool]:
    """The command's result while another connection holds the write lock, and whether
    it answered within `PROMPT` seconds."""
    found: dict[str, Any] = {}

    def invoke() -> None:
        found["result"] = CliRunner().invoke(cli, ["--config", str(config), *args])

    writer = write_lock(url)
    thread = threading.Thread(target=invoke, daemon=True)
    try:
        thread.start()
        thread.join(PROMPT)
        prompt = not thread.is_alive()
    finally:
        writer.rollback()
        writer.close()
    thread.join(60)
    return found.get("result"), prompt


@pytest.fixture
def config(sqlite_url: str, plan_files: PlanFiles, tmp_path: Path) -> Path:
    folder = plan_files({"a.yaml": [swap_plan("a")]})
    engine = make_engine(sqlite_url)
    try:
        apply_paths(session_factory(engine), [folder], now=datetime.now(UTC))
    finally:
        engine.dispose()
    path = tmp_path / "jupcron.yaml"
    path.write_text(json.dumps({"database": {"url": sqlite_url}, "plans": {"dir": str(folder)}}))
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--format", "json"),
        ("report", "--format", "json"),
        ("plans", "list", "--format", "json"),
        ("status", "--format", "json"),
    ],
    ids=["audit", "report", "plans list", "status"],
)
def test_a_read_only_command_answers_while_the_daemon_holds_the_write_lock(
    sqlite_url: str, config: Path, args: tuple[str, ...]
) -> None:
    result, prompt = run_beside_a_writer(sqlite_url, config, *args)
    assert prompt, (
        f"jupcron {' '.join(args[:-2])} waited for the daemon's write lock (it only reads)"
    )
    assert result is not None
    assert result.exit_code == 0, result.output
    json.loads(result.output)
