"""A daemon loads its wallets' keys at start only. A SIGHUP after a wallet was added
under ``wallets:`` refuses a plan that names it (its runs would be rejected here), but
said "unknown wallet 'trading': the config has default (add it under wallets:)": the
wallet IS under wallets:, the config's list was the daemon's loaded keys, and the fix
given was the one already made. It must say a restart is needed.

The real reload path (`Reload.signal`) on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from structlog.testing import capture_logs

from jupcron.chain.wallet import write_keypair_file
from jupcron.config import Config
from jupcron.service.notify import Notifier
from jupcron.service.reload import Reload
from jupcron.store import migrate
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.daemon import SOL, USDC


def _swap(name: str, wallet: str) -> dict[str, Any]:
    return {"name": name, "kind": "swap", "schedule": {"every": "1h"}, "wallet": wallet,
            "request": {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000}}  # fmt: skip


def test_a_wallet_under_wallets_but_not_loaded_says_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jupcron.db'}"
    migrate.upgrade(url)
    folder = tmp_path / "plans"
    folder.mkdir()
    write_keypair_file(tmp_path / "default.json")
    write_keypair_file(tmp_path / "trading.json")
    config = Config.model_validate({
        "database": {"url": url}, "plans": {"dir": str(folder)},
        "api": {"base_url": "http://127.0.0.1:9"}, "guard": {"simulate": False},
        "wallet": {"keypair": str(tmp_path / "default.json")},
        "wallets": {"trading": {"keypair": str(tmp_path / "trading.json")}},
    })  # fmt: skip
    engine = make_engine(url)
    factory = session_factory(engine)
    try:
        reload = Reload(config, None, notifier=Notifier({}), status_text=lambda: "",
                        plans_changed=lambda: None)  # fmt: skip
        # started before `trading` was added: only the default wallet's key is loaded
        runtime: Any = SimpleNamespace(store=SimpleNamespace(factory=factory),
                                       wallets={"default": None})  # fmt: skip
        reload.runtime = runtime
        (folder / "a.yaml").write_text(json.dumps({"plans": [_swap("buy", "trading")]}))
        with capture_logs() as logs:
            ok = reload.signal()
        assert not ok
        found = [e for e in logs if e["event"] == "reload_failed"]
        assert len(found) == 1, logs
        error = str(found[0]["error"])
        assert "wallet 'trading'" in error, error
        assert "restart" in error, error
        assert "add it under wallets:" not in error, error
        with transaction(factory) as session:
            assert store_plans.all_plans(session) == []
        # a name under no wallets: at all keeps the message that says to add it
        (folder / "a.yaml").write_text(json.dumps({"plans": [_swap("buy", "savings")]}))
        with capture_logs() as logs:
            assert not reload.signal()
        error = str(next(e for e in logs if e["event"] == "reload_failed")["error"])
        assert "unknown wallet 'savings'" in error, error
        assert "add it under wallets:" in error, error
    finally:
        engine.dispose()
