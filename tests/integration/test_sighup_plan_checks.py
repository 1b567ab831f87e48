"""SIGHUP applies ``plans.dir`` with the checks `plans apply` makes over the network:
a mint that does not exist (asked of rpc.url) and a recurring order under Jupiter's
minimums (an API quote) are refused as `plans apply` refuses them: nothing changes,
`reload_failed` says why, every stored plan is kept. Where the checks cannot be
made (the API or the RPC node does not answer), the added or changed plans that
need them are not applied either, and the log says so.

The real reload path (`Reload.signal`) on a real SQLite file, the emulator over
loopback for the API and the RPC node."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from structlog.testing import capture_logs

from jupcron.config import Config
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.service import reload as reload_module
from jupcron.service.notify import Notifier
from jupcron.service.reload import Reload
from jupcron.store import migrate
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.daemon import SOL, USDC
from tests.fixtures.plans import sol_dca_plan
from tests.support.pgcluster import free_port

SOL_UNITS = 10**9  # the emulator prices SOL at 150 USD
PYUSD = "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"  # exists (Token-2022)
TYPO = PYUSD[:-1] + "p"  # no account at that address


def swap(name: str, input_mint: str = USDC, every: str = "1h") -> dict[str, Any]:
    return {"name": name, "kind": "swap", "schedule": {"every": every},
            "request": {"inputMint": input_mint, "outputMint": SOL, "amount": 5_000_000}}  # fmt: skip


class Setup:
    def __init__(self, tmp_path: Path, api_url: str) -> None:
        self.db = tmp_path / "jupcron.db"
        self.url = f"sqlite:///{self.db}"
        migrate.upgrade(self.url)
        self.folder = tmp_path / "plans"
        self.folder.mkdir()
        self.config = Config.model_validate({
            "database": {"url": self.url}, "plans": {"dir": str(self.folder)},
            "api": {"base_url": api_url, "rate_limit": 100},
            "rpc": {"url": f"{api_url}/rpc"},
        })  # fmt: skip
        self.engine = make_engine(self.url)
        self.factory = session_factory(self.engine)
        self.changed = 0
        self.reload = Reload(self.config, None, notifier=Notifier({}), status_text=lambda: "",
                             plans_changed=self._changed)  # fmt: skip
        runtime: Any = SimpleNamespace(store=SimpleNamespace(factory=self.factory),
                                       wallets={"default": None})  # fmt: skip
        self.reload.runtime = runtime

    def _changed(self) -> None:
        self.changed += 1

    def write(self, name: str, *plans: dict[str, Any]) -> None:
        (self.folder / name).write_text(json.dumps({"plans": list(plans)}))

    def stored(self) -> dict[str, tuple[int, bool]]:
        with transaction(self.factory) as session:
            return {p.name: (p.version, p.enabled) for p in store_plans.all_plans(session)}

    def sighup(self) -> tuple[bool, list[dict[str, Any]]]:
        with capture_logs() as logs:
            ok = self.reload.signal()
        return ok, logs


@pytest.fixture
def setup(tmp_path: Path, emulator_server: EmulatorServer) -> Iterator[Setup]:
    made = Setup(tmp_path, emulator_server.url)
    yield made
    made.engine.dispose()


def failed(logs: list[dict[str, Any]]) -> str:
    found = [e for e in logs if e["event"] == "reload_failed"]
    assert len(found) == 1, logs
    assert found[0]["what"] == "plans"
    return str(found[0]["error"])


def test_a_plan_set_plans_apply_refuses_is_refused_by_sighup(setup: Setup) -> None:
    setup.write("a.yaml", swap("hourly"))
    ok, _ = setup.sighup()
    assert ok
    assert setup.stored() == {"hourly": (1, True)}
    changed = setup.changed

    setup.write("a.yaml", swap("hourly", every="2h"), swap("typo", TYPO))
    setup.write("b.yaml", sol_dca_plan("small", SOL_UNITS // 2))  # 75 USD in total
    ok, logs = setup.sighup()
    assert not ok
    error = failed(logs)
    assert f"plan 'typo': request.inputMint {TYPO} does not exist" in error
    assert "plan 'small'" in error
    assert "at least 100 USD in total" in error
    assert setup.stored() == {"hourly": (1, True)}  # nothing changed, the edit neither
    assert setup.changed == changed  # the scheduler not told
    assert not any(e["event"] == "plans_applied" for e in logs)

    setup.write("a.yaml", swap("hourly", every="2h"))
    setup.write("b.yaml", sol_dca_plan("fine", 2 * SOL_UNITS))  # 300 USD
    ok, logs = setup.sighup()
    assert ok, logs
    assert setup.stored() == {"hourly": (2, True), "fine": (1, True)}


def test_checks_that_cannot_be_made_keep_the_plans_that_need_them_out(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens: neither API nor RPC answers
    setup = Setup(tmp_path, dead)
    try:
        setup.write("a.yaml", swap("hourly"))
        ok, _ = setup.sighup()  # well-known mints, no recurring: nothing to ask
        assert ok
        assert setup.stored() == {"hourly": (1, True)}

        setup.write("a.yaml", swap("hourly", every="2h"), swap("pyusd", PYUSD))
        setup.write("b.yaml", sol_dca_plan("dca", 2 * SOL_UNITS))
        ok, logs = setup.sighup()
        assert not ok
        error = failed(logs)
        assert "could not be made" in error, error
        assert f"plan 'pyusd': note: request.inputMint {PYUSD} was not checked" in error
        assert "plan 'dca'" in error
        assert setup.stored() == {"hourly": (1, True)}  # kept whole, as it was
    finally:
        setup.engine.dispose()


def test_a_slow_api_is_not_waited_for_past_the_bound(
    setup: Setup, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop thread (the watchdog's pings) waits at most the bound for an answer: a
    price that comes later is no price, and the plan that needed it stays out."""
    monkeypatch.setattr(reload_module, "LOOKUP_TIMEOUT_S", 0.5)
    emulator.faults.add("slow", count=1, operation="ultra_order", seconds=3)
    setup.write("b.yaml", sol_dca_plan("dca", 2 * SOL_UNITS))
    ok, logs = setup.sighup()
    assert not ok
    error = failed(logs)
    assert "could not be made" in error, error
    assert "plan 'dca'" in error
    assert setup.stored() == {}


def test_no_lookup_starts_past_the_reloads_budget(
    setup: Setup, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reload_module, "CHECKS_BUDGET_S", 0.0)
    setup.write("b.yaml", sol_dca_plan("dca", 2 * SOL_UNITS), swap("pyusd", PYUSD))
    ok, logs = setup.sighup()
    assert not ok
    assert "not asked: a reload's checks may take 0 s" in failed(logs)
    assert emulator.ledger.requests.get("ultra_order", 0) == 0
    assert emulator.ledger.requests.get("rpc", 0) == 0
    assert setup.stored() == {}
