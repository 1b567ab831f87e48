"""`jupcron settle` and `jupcron audit` given values no run can have: a usage error
naming the option, never a database error that points at `database.url`. Before, a
run id past the store's integer said "unexpected OverflowError" (SQLite) or "the
database refused ... (check database.url)" (PostgreSQL), and an audit date whose
UTC instant falls outside the calendar said "database: OverflowError ... (check
database.url)"."""

from __future__ import annotations

import pytest

from tests.fixtures.daemon import DaemonEnvFactory, swap_plan


@pytest.mark.parametrize("run_id", ["2147483648", "99999999999999999999999"])
def test_settle_of_a_run_id_no_run_can_have_is_a_usage_error(
    daemon_env: DaemonEnvFactory, db_url: str, run_id: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    done = env.jupcron("settle", run_id, "--landed", "--reason", "x")
    assert done.returncode == 2, done.stderr
    assert "Invalid value for 'RUN_ID'" in done.stderr
    assert "database" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("option", "value"),
    [("--since", "0001-01-01T00:00:00+05:00"), ("--until", "9999-12-31T23:59:59-05:00")],
)
def test_audit_dates_outside_the_calendar_in_utc_are_a_usage_error(
    daemon_env: DaemonEnvFactory, option: str, value: str
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    done = env.jupcron("audit", option, value)
    assert done.returncode == 2, done.stderr
    assert f"Invalid value for '{option}'" in done.stderr
    assert "database" not in done.stderr
