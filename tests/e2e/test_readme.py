"""The README is executable: its quickstart runs as written (against the
emulator instead of the real API), every `jupcron` command it mentions is run
by a test, and its SQL examples run against a real SQLite audit view."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from jupcron.cli.main import COMMANDS
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.store.engine import make_engine, session_factory, transaction
from jupcron.store.models import Plan, Run, RunEvent
from tests.support import clifork

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, flags=re.DOTALL)
FILLS_SECTION = README.split("## What the money did", 1)[1].split("\n## ", 1)[0]
API_KEY = "readme-test-key"


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCKS if kind == lang]


def sh_commands() -> list[str]:
    out = []
    for body in blocks("sh"):
        for line in body.splitlines():
            command = line.split(" # ", 1)[0].strip()
            if command:
                out.append(command)
    return out


def test_the_readme_opens_with_the_two_commands() -> None:
    first = sh_commands()[:2]
    assert first == ["make demo", "make test"]
    assert README.index("make demo") < README.index("## ")


def test_every_shell_command_is_jupcron_or_make() -> None:
    # make demo runs `jupcron demo` (tests/e2e/test_demo.py); make test runs this suite
    others = [c for c in sh_commands() if not c.startswith("jupcron ")]
    assert others == ["make demo", "make test"]


# subcommands the README mentions in prose, and the test files that run them
COVERED = {
    "demo": "tests/e2e/test_demo.py",
    "tx inspect": "tests/e2e/test_cli_tx.py",
    "portfolio": "tests/integration/test_emulator_server.py",
    "emulator": "tests/integration/test_emulator_server.py",
    "audit": "tests/e2e/test_cli_fire_audit.py",
    "settle": "tests/e2e/test_cli_settle.py",
    "report": "tests/e2e/test_cli_report.py",
}


def test_every_jupcron_command_in_the_readme_is_run_by_a_test() -> None:
    quickstart = {" ".join(shlex.split(c)[1:3]) for c in sh_commands() if c.startswith("jupcron")}
    mentioned = set(re.findall(r"`jupcron ((?:tx )?[a-z]+)", README))
    for name in sorted(mentioned):
        if any(q == name or q.startswith(name + " ") for q in quickstart):
            continue  # run below, as written
        assert name in COVERED, f"`jupcron {name}` is in the README but no test runs it"
        words = name.split()
        source = (ROOT / COVERED[name]).read_text()
        assert all(f'"{w}"' in source for w in words), (name, COVERED[name])


@pytest.fixture
def quickstart(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], Emulator]]:
    emulator = Emulator(seed=4, api_key=API_KEY)
    server = EmulatorServer().start(emulator)
    config = next(b for b in blocks("yaml") if "base_url" in b)
    config = config.replace("https://api.jup.ag", server.url)
    assert config != next(b for b in blocks("yaml") if "base_url" in b)
    (tmp_path / "jupcron.yaml").write_text(config)
    (tmp_path / "api-key").write_text(API_KEY + "\n")
    (tmp_path / "api-key").chmod(0o600)  # as the quickstart says
    (tmp_path / "plans").mkdir()
    plan = next(b for b in blocks("yaml") if "name: hourly-swap" in b)
    (tmp_path / "plans" / "hourly-swap.yaml").write_text(plan)
    drop = ("JUPCRON_CONFIG", "JUPITER_API_KEY", "JUPCRON_FAILPOINTS", "NOTIFY_SOCKET")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["JUPCRON_CONFIG"] = str(tmp_path / "jupcron.yaml")
    yield tmp_path, env, emulator
    server.stop()


def run_daemon(cwd: Path, env: dict[str, str], args: list[str]) -> None:
    log = cwd / "run.log"
    with log.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "jupcron", *args], cwd=cwd, env=env,
                                stdout=sink, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while "daemon_started" not in log.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.1)
        assert "daemon_started" in log.read_text()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_the_quickstart_runs_as_written(quickstart: tuple[Path, dict[str, str], Emulator]) -> None:
    cwd, env, emulator = quickstart
    ran = []
    for command in sh_commands():
        if not command.startswith("jupcron "):
            continue
        args = shlex.split(command)[1:]
        if args == ["run"]:
            run_daemon(cwd, env, args)
        else:
            done = clifork.run(args, env=env, cwd=cwd)  # the daemon above: a fresh interpreter
            assert done.returncode == 0, (command, done.stdout, done.stderr)
        ran.append(args[0])
    assert {"wallet", "db", "plans", "fire", "run", "audit"} <= set(ran)
    assert (cwd / "jupcron.db").exists()
    # fire --dry-run ordered, through Swap V2: the quickstart's config chooses no swap API
    assert emulator.ledger.requests.get("swap_order", 0) >= 1
    assert emulator.ledger.landed() == []  # dry run: nothing signed or sent


def test_the_sql_examples_run_on_a_real_audit_view(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    with transaction(session_factory(engine)) as session:
        plan = Plan(name="hourly-swap", kind="swap", schedule={}, request={}, settings={},
                    content_hash="x", version=1, enabled=True, created_at=now, updated_at=now)  # fmt: skip
        session.add(plan)
        session.flush()
        for hour, status in enumerate(("succeeded", "succeeded", "failed", "rejected")):
            session.add(Run(plan_id=plan.id, plan_version=1, status=status, trigger="schedule",
                            scheduled_for=now.replace(hour=hour), input_mint="USDC",
                            in_amount="1000000", error=None if status == "succeeded" else "boom",
                            attempts=1, created_at=now, updated_at=now))  # fmt: skip
        session.flush()
        session.add(RunEvent(run_id=1, at=now, step="claimed", detail={"status": "pending"}))
    # the audit view's examples (the fills examples run in tests/integration/test_readme_fills.py)
    sqls = [s for s in blocks("sql") if s not in FILLS_SECTION]
    assert len(sqls) >= 3
    results = []
    with engine.connect() as conn:
        for sql in sqls:
            results.append(conn.execute(text(sql)).all())
    engine.dispose()
    assert all(results), "every example returns rows"
    per_mint = next(r for r, sql in zip(results, sqls, strict=True) if "total_in" in sql)
    assert [(m, n, int(t)) for m, n, t in per_mint] == [("USDC", 2, 2_000_000)]


DOCS = sorted((ROOT / "docs").glob("*.md"))
TEST_SOURCES = [p.read_text() for p in sorted((ROOT / "tests").glob("[ie]*/test_*.py"))]


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_jupcron_command_in_the_docs_is_run_by_a_test(doc: Path) -> None:
    groups = {name for name in COMMANDS if name in ("db", "plans", "tx", "wallet")}
    found = re.findall(r"jupcron (?:--config \S+ )?([a-z]+)(?: ([a-z]+))?", doc.read_text())
    commands = [(first, second) for first, second in found if first in COMMANDS]
    missing = []
    for first, second in commands:  # others are prose ("jupcron will never …")
        words = [first, second] if first in groups and second else [first]
        if not any(all(f'"{w}"' in source for w in words) for source in TEST_SOURCES):
            missing.append(" ".join(words))
    assert missing == [], f"{doc.name}: no test runs these commands"
