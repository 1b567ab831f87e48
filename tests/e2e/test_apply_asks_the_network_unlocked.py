"""`jupcron plans apply` asks the network (a recurring plan's USD value, mints) with
no write transaction open: a daemon on the same SQLite file claims its due runs
while the apply waits for a slow API, instead of waiting behind the apply's lock
(and failing as busy). The apply itself stays all or nothing."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.store import migrate
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from jupcron.store.runstore import SqlRunStore
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import SOL, USDC
from tests.fixtures.plans import sol_dca_plan

SOL_UNITS = 10**9  # the emulator prices SOL at 150 USD
SLOW_S = 4.0  # the API's answer to the apply's price lookup is held back this long
BUSY_MS = 1_500  # how long the daemon-side write waits for a lock before it is busy


def swap(name: str) -> dict[str, Any]:
    return {"name": name, "kind": "swap", "schedule": {"every": "1h"},
            "request": {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000}}  # fmt: skip


def setup(tmp_path: Path, emulator_server: EmulatorServer) -> tuple[Path, Path, str]:
    db = tmp_path / "jupcron.db"
    url = f"sqlite:///{db}"
    migrate.upgrade(url)
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "a.yaml").write_text(json.dumps({"plans": [swap("hourly")]}))
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": url}, "plans": {"dir": str(folder)},
                                  "api": {"base_url": emulator_server.url}}))  # fmt: skip
    done = jupcron("--config", str(config), "plans", "apply")  # nothing to ask: no lookup
    assert done.returncode == 0, done.stderr
    return config, folder, url


def wait_for(emulator: Emulator, operation: str, apply: threading.Thread) -> None:
    """Until the apply's request reached the emulator (which holds its answer back)."""
    for _ in range(3_000):
        if emulator.ledger.requests.get(operation, 0) > 0:
            return
        assert apply.is_alive(), "the apply ended before it asked the API"
        time.sleep(0.01)
    raise AssertionError(f"the apply never asked the API ({operation})")


def test_a_daemon_claims_runs_while_an_apply_waits_for_a_slow_price(
    tmp_path: Path, emulator_server: EmulatorServer, emulator: Emulator
) -> None:
    config, folder, url = setup(tmp_path, emulator_server)
    # a new recurring plan of SOL: its USD value is asked of the API, which is slow
    (folder / "b.yaml").write_text(json.dumps({"plans": [sol_dca_plan("dca", 2 * SOL_UNITS)]}))
    emulator.faults.add("slow", count=1, operation="ultra_order", seconds=SLOW_S)
    engine = make_engine(url, busy_ms=BUSY_MS)  # the daemon's side of the same file
    with transaction(session_factory(engine)) as session:
        plan = store_plans.get_plan(session, "hourly")
    assert plan is not None
    done: list[subprocess.CompletedProcess[str]] = []
    apply = threading.Thread(
        target=lambda: done.append(jupcron("--config", str(config), "plans", "apply"))
    )
    apply.start()
    try:
        wait_for(emulator, "ultra_order", apply)
        now = datetime.now(UTC)
        slot = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
        store = SqlRunStore(engine, group_commit=False)
        run = store.claim(plan, slot, now=now, trigger="schedule", claimed_by=None)
        assert run is not None  # claimed while the apply still waited for its price
        assert apply.is_alive()  # (the API had not answered: the claim did not wait for it)
    finally:
        apply.join(timeout=60)
        engine.dispose()
    assert done, "the apply did not end"
    assert done[0].returncode == 0, done[0].stderr
    assert "1 added, 0 changed, 0 disabled, 1 unchanged" in done[0].stdout
    listed = jupcron("--config", str(config), "plans", "list", "--format", "json")
    assert sorted(row["name"] for row in json.loads(listed.stdout)) == ["dca", "hourly"]


def test_a_refused_plan_found_by_the_lookup_still_leaves_the_store_as_it_was(
    tmp_path: Path, emulator_server: EmulatorServer, emulator: Emulator
) -> None:
    config, folder, _ = setup(tmp_path, emulator_server)
    (folder / "a.yaml").write_text(json.dumps({"plans": [swap("hourly"), swap("second")]}))
    (folder / "b.yaml").write_text(json.dumps({"plans": [sol_dca_plan("small", SOL_UNITS // 2)]}))
    done = jupcron("--config", str(config), "plans", "apply")
    assert done.returncode == 1, done.stdout
    assert "plan 'small'" in done.stderr
    assert "at least 100 USD in total" in done.stderr
    listed = jupcron("--config", str(config), "plans", "list", "--format", "json")
    assert [row["name"] for row in json.loads(listed.stdout)] == ["hourly"]  # nothing added
    assert emulator.ledger.requests.get("ultra_order") == 1  # asked once
