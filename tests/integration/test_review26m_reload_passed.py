"""A SIGHUP that applies ``plans.dir`` says, as `plans apply` does, of each new plan
whose fire time passed while the apply ran (its files read, its checks asked): one
``plan_fire_time_passed`` warning each, with the fire time not run and the plan's
first (none: an ``at:`` plan that will never run). Before, the daemon's reload
passed no `passed` to the apply: the plan was stored with no slot, and nothing said.

The real reload path (`Reload.signal`) on a real SQLite file; its clock and its
monotonic clock are the seams for when the apply began and how long it took."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from structlog.testing import capture_logs

from jupcron.config import Config
from jupcron.service.notify import Notifier
from jupcron.service.reload import Reload
from jupcron.store import migrate
from jupcron.store.engine import make_engine, session_factory
from tests.fixtures.plans import swap_plan

BEGAN = datetime(2030, 1, 1, 0, 0, 30, tzinfo=UTC)  # the reload's apply begins
TAKES = 45.0  # seconds from then to its write
AT = BEGAN + timedelta(seconds=20)  # passes while the apply runs


class Monotonic:
    """The apply's start read first, every later reading `took` seconds on."""

    def __init__(self, took: float) -> None:
        self.took, self.read = took, False

    def __call__(self) -> float:
        first, self.read = not self.read, True
        return 1_000.0 if first else 1_000.0 + self.took


def at_plan(name: str, at: datetime) -> dict[str, Any]:
    plan = swap_plan(name)
    plan["schedule"] = {"at": at.isoformat()}
    return plan


def sighup(tmp_path: Path, took: float) -> list[dict[str, Any]]:
    url = f"sqlite:///{tmp_path / 'jupcron.db'}"
    migrate.upgrade(url)
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "a.yaml").write_text(json.dumps({"plans": [
        at_plan("cancel-at", AT),  # its one instant passes during the apply
        swap_plan("minutely", every="1m"),  # 00:01 passes during the apply
        at_plan("tomorrow", BEGAN + timedelta(days=1)),
        swap_plan("hourly", every="1h"),  # no slot between the start and the write
    ]}))  # fmt: skip
    config = Config.model_validate({"database": {"url": url}, "plans": {"dir": str(folder)}})
    engine = make_engine(url)
    try:
        reload = Reload(config, None, notifier=Notifier({}), status_text=lambda: "",
                        plans_changed=lambda: None, clock=lambda: BEGAN,
                        monotonic=Monotonic(took))  # fmt: skip
        runtime: Any = SimpleNamespace(store=SimpleNamespace(factory=session_factory(engine)),
                                       wallets={"default": None})  # fmt: skip
        reload.runtime = runtime
        with capture_logs() as logs:
            assert reload.signal(), logs
    finally:
        engine.dispose()
    return logs


def test_a_new_plans_fire_time_that_passed_during_the_reload_is_said(tmp_path: Path) -> None:
    logs = sighup(tmp_path, TAKES)
    said = sorted(
        ((e["plan"], e["missed"], e["first"], e["stored_at"], e["log_level"])
         for e in logs if e["event"] == "plan_fire_time_passed"),
    )  # fmt: skip
    written = (BEGAN + timedelta(seconds=TAKES)).isoformat()
    assert said == [
        ("cancel-at", AT.isoformat(), None, written, "warning"),  # it will never run
        ("minutely", "2030-01-01T00:01:00+00:00", "2030-01-01T00:02:00+00:00", written,
         "warning"),
    ]  # fmt: skip
    source = str(tmp_path / "plans" / "a.yaml")
    assert {e["source"] for e in logs if e["event"] == "plan_fire_time_passed"} == {source}
    assert [e["event"] for e in logs].count("plans_applied") == 1


def test_a_quick_reload_says_nothing(tmp_path: Path) -> None:
    logs = sighup(tmp_path, 0.0)
    assert not [e for e in logs if e["event"] == "plan_fire_time_passed"]
    assert [e["event"] for e in logs].count("plans_applied") == 1
