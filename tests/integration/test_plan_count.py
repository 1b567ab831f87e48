"""count_enabled: the daemon's status line counts plans without loading them
(loading 10,000 plans every second cost 30% of a core when idle; tests/bench)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def plan(name: str, enabled: bool) -> dict[str, object]:
    return {
        "name": name,
        "kind": "swap",
        "enabled": enabled,
        "schedule": {"every": "1h"},
        "request": {"inputMint": USDC, "outputMint": SOL, "amount": 1_000_000},
    }


def test_count_enabled_matches_enabled_plans(db_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    folder.mkdir()
    plans = [plan(f"p{i}", enabled=i % 3 != 0) for i in range(7)]
    (folder / "plans.yaml").write_text(json.dumps({"plans": plans}))
    engine = make_engine(db_url)
    try:
        factory = session_factory(engine)
        with factory() as session:
            assert store_plans.count_enabled(session) == 0
        apply_paths(factory, [folder], now=datetime.now(UTC))
        with factory() as session:
            count = store_plans.count_enabled(session)
            assert count == len(store_plans.enabled_plans(session)) == 4
    finally:
        engine.dispose()
