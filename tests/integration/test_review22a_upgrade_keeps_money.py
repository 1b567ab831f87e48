"""`jupcron db upgrade` of a store holding money's history (review 22a): a store at each
older revision (0009..0013), with runs finished (a fill and its execute result) and in
flight (signed and not posted; posted and not answered), is upgraded by the command:
every row is kept, the `audit` and `fills` views give the same figures, and a daemon's
recovery then settles the in-flight runs by posting the SAME signed bytes (no fresh
order, no second fill).

The real runner over loopback HTTP to the emulator, the real signer and txguard, the
`jupcron` command in its own process, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.store import migrate
from tests.e2e.cli import jupcron
from tests.fixtures.runner import Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
TABLES = ("plans", "plan_versions", "runs", "run_events", "execute_results", "swap_events")


def _crash_at(rig: Rig, point: str, name: str) -> None:
    failpoints.arm(point)
    try:
        with pytest.raises(failpoints.SimulatedCrash):
            rig.runner().fire(rig.plan("swap", name=name), SLOT)
    finally:
        failpoints.disarm()


def _rows(engine: sa.Engine, sql: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(sql))]


def _counts(engine: sa.Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t: int(conn.execute(sa.select(sa.func.count()).select_from(sa.table(t)))
                       .scalar_one()) for t in TABLES}  # fmt: skip


def _views(engine: sa.Engine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    audit = _rows(engine, "SELECT * FROM audit ORDER BY run_id")
    fills = _rows(engine, "SELECT * FROM fills ORDER BY run_id, signature")
    return audit, fills


def _common(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`after` with only the columns `before` had (a later view may add one, last)."""
    keys = set(before[0]) if before else set()
    return [{k: v for k, v in row.items() if k in keys} for row in after]


@pytest.mark.parametrize(
    "revision",
    ["0009_wallets", "0010_shards", "0011_next_fire", "0012_plan_files", "0013_run_owner"],
)
def test_an_old_store_is_upgraded_with_every_figure_and_its_runs_in_flight_settle(
    make_rig: RigFactory, db_url: str, tmp_path: Path, revision: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    done = outcome_of(rig.runner().fire(rig.plan("swap", name="done"), SLOT)).run_id
    assert rig.run(done).status is RunStatus.SUCCEEDED
    _crash_at(rig, "after_sign", "signed")  # signed, never posted
    _crash_at(rig, "after_execute", "posted")  # posted and landed, the answer lost
    ids = [r["id"] for r in _rows(rig.engine, "SELECT id FROM runs ORDER BY id")]
    in_flight = {r: rig.run(r) for r in ids if r != done}
    assert {r.status for r in in_flight.values()} == {RunStatus.SIGNED, RunStatus.SUBMITTED}
    assert all(r.signed_tx for r in in_flight.values())
    rig.engine.dispose()
    migrate.downgrade(db_url, revision)

    counts, (audit, fills) = _counts(rig.engine), _views(rig.engine)
    assert len(audit) == 3
    assert fills
    rig.engine.dispose()
    config = tmp_path / "jupcron.yaml"
    config.write_text(f'database:\n  url: "{db_url}"\n')
    result = jupcron("--config", str(config), "db", "upgrade")
    assert result.returncode == 0, result.stderr
    assert f"is at revision {migrate.HEAD}" in result.stdout

    assert _counts(rig.engine) == counts
    audit_after, fills_after = _views(rig.engine)
    assert _common(audit, audit_after) == audit
    assert _common(fills, fills_after) == fills

    issued, landed = rig.issued(), len(rig.landed())
    settled = {o.run_id: o for o in recover(rig.runner(), startup=True)}
    assert set(settled) == set(in_flight)
    for run_id, before in in_flight.items():
        run = rig.run(run_id)
        assert run.status is RunStatus.SUCCEEDED, (run_id, run.error, rig.steps(run_id))
        assert run.signed_tx == before.signed_tx  # the same bytes, reposted
        assert run.request_id == before.request_id
    assert rig.issued() == issued  # never a fresh order
    assert len(rig.landed()) == landed + 1  # the signed one lands; the posted one is not again
