"""A plan's ``timezone`` must name the same zone on every machine.

`ZoneInfo` finds a key in the system's zoneinfo folder before the tz database list,
so it also takes names that are not places but files of *this* machine:
``localtime`` (a link to its /etc/localtime), ``posixrules``, the ``posix/`` and
``right/`` copies. ``plans apply`` took them, and stored the plan's first slot as
the applying machine reads the name; the daemon (another host, or a standby, or the
same host after ``timedatectl set-timezone``) reads it as its own zone. A daily
``0 9 * * *`` applied from a Berlin host and run by a UTC daemon fired at 07:00Z
(the stored slot), then again at 09:00Z the same day: two orders where the plan
says one. The fix refuses such names at validate/apply, with the reason; nothing is
stored. So are the fixed-offset abbreviations EST/MST/HST (UTC-05:00 all year for
someone who meant New York). Real SQLite store, real files, real tz data.
"""

from __future__ import annotations

import contextlib
import shutil
import zoneinfo
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.scheduling import schedule as schedule_module
from jupcron.scheduling.schedule import next_fire_times, parse_schedule
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import swap_plan, write_plans

T0 = datetime(2026, 6, 1, 5, 0, tzinfo=UTC)  # a Monday in summer (Berlin: UTC+2)


def daily(zone: str) -> dict[str, object]:
    return swap_plan("daily", schedule={"cron": "0 9 * * *", "timezone": zone})


def stored(factory: sessionmaker[Session]) -> list[str]:
    with transaction(factory) as session:
        return [p.name for p in store_plans.all_plans(session)]


def _zone_file(name: str) -> Path:
    area, _, city = name.rpartition("/")
    package = "tzdata.zoneinfo" + (f".{area.replace('/', '.')}" if area else "")
    return Path(str(resources.files(package).joinpath(city)))


@pytest.fixture
def host(tmp_path: Path) -> Iterator[object]:
    """`host(zone)`: from now on this process is a machine whose /etc/localtime is
    `zone` (a zoneinfo folder of its own, first on the search path); undone after."""
    saved = zoneinfo.TZPATH

    def become(zone: str) -> None:
        folder = tmp_path / f"zoneinfo-{zone.replace('/', '_')}"
        folder.mkdir(exist_ok=True)
        shutil.copyfile(_zone_file(zone), folder / "localtime")
        zoneinfo.reset_tzpath(to=[str(folder)])
        zoneinfo.ZoneInfo.clear_cache()
        schedule_module._parse_shared.cache_clear()  # parsed schedules hold their zone

    try:
        yield become
    finally:
        zoneinfo.reset_tzpath(to=saved)
        zoneinfo.ZoneInfo.clear_cache()
        schedule_module._parse_shared.cache_clear()


def test_a_slot_stored_by_the_applying_host_is_a_slot_of_the_daemon_host(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, host: object
) -> None:
    """The invariant the unique (plan, slot) key needs: every machine works out the
    same slots. With ``localtime`` the Berlin host stored 07:00Z, which a UTC daemon
    fires, and then its own 09:00Z the same day."""
    assert callable(host)
    write_plans(tmp_path / "plans" / "daily.yaml", [daily("localtime")])
    host("Europe/Berlin")  # the operator's machine runs `plans apply`
    with contextlib.suppress(PlanError):  # refused: nothing stored, nothing to disagree on
        apply_paths(sqlite_factory, [tmp_path / "plans"], now=T0)
    with transaction(sqlite_factory) as session:
        schedules = [p.schedule.to_dict() for p in store_plans.all_plans(session)]
    applied = {next_fire_times(parse_schedule(s), T0, 1)[0] for s in schedules}  # stored
    host("UTC")  # the daemon's machine
    daemon = {t for s in schedules for t in next_fire_times(parse_schedule(s), T0, 2)}
    assert applied <= daemon, (
        f"applied as {sorted(applied)}, the daemon fires {sorted(daemon)}: "
        "two orders on one day where the plan says one"
    )


@pytest.mark.parametrize(
    "zone", ["localtime", "posixrules", "posix/Europe/Berlin", "right/Europe/Berlin"]
)
def test_a_zone_name_that_is_a_file_of_this_machine_is_refused_and_nothing_stored(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, zone: str
) -> None:
    if not (Path("/usr/share/zoneinfo") / zone).exists():
        pytest.skip(f"this machine has no /usr/share/zoneinfo/{zone}")
    write_plans(tmp_path / "plans" / "daily.yaml", [daily(zone)])
    with pytest.raises(PlanError) as raised:
        apply_paths(sqlite_factory, [tmp_path / "plans"], now=T0)
    assert f"'{zone}'" in str(raised.value)
    assert "daily.yaml:" in str(raised.value)  # where, as `file:line:col: message`
    assert stored(sqlite_factory) == []


@pytest.mark.parametrize(
    ("zone", "meant"), [("EST", "-05:00"), ("MST", "-07:00"), ("HST", "-10:00")]
)
def test_a_fixed_offset_abbreviation_is_refused_with_what_it_means(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, zone: str, meant: str
) -> None:
    write_plans(tmp_path / "plans" / "daily.yaml", [daily(zone)])
    with pytest.raises(PlanError) as raised:
        apply_paths(sqlite_factory, [tmp_path / "plans"], now=T0)
    assert f"'{zone}'" in str(raised.value)
    assert meant in str(raised.value)
    assert stored(sqlite_factory) == []


@pytest.mark.parametrize(
    "zone", ["Europe/Berlin", "America/New_York", "UTC", "Etc/UTC", "Asia/Kolkata", "CET"]
)
def test_a_place_of_the_tz_database_is_applied(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, zone: str
) -> None:
    write_plans(tmp_path / "plans" / "daily.yaml", [daily(zone)])
    apply_paths(sqlite_factory, [tmp_path / "plans"], now=T0)
    assert stored(sqlite_factory) == ["daily"]
    with transaction(sqlite_factory) as session:
        plan = store_plans.get_plan(session, "daily")
    assert plan is not None
    local = next_fire_times(plan.schedule, T0, 1)[0].astimezone(zoneinfo.ZoneInfo(zone))
    assert (local.hour, local.minute) == (9, 0)
    assert local - T0 < timedelta(days=1)


@pytest.mark.parametrize(
    ("zone", "meant"), [("Etc/GMT+5", "UTC-05:00"), ("Etc/GMT-5", "UTC+05:00")]
)
def test_an_etc_gmt_offset_whose_sign_reads_backwards_is_refused_with_what_it_means(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, zone: str, meant: str
) -> None:
    """``Etc/GMT+5`` is five hours *behind* UTC (POSIX's sign): someone in Karachi
    (UTC+05:00) who wrote it would have a 09:00 plan fire at 14:00Z, ten hours late."""
    write_plans(tmp_path / "plans" / "daily.yaml", [daily(zone)])
    with pytest.raises(PlanError) as raised:
        apply_paths(sqlite_factory, [tmp_path / "plans"], now=T0)
    assert f"'{zone}' is {meant} all year" in str(raised.value)
    assert "daily.yaml:" in str(raised.value)
    assert stored(sqlite_factory) == []


@pytest.mark.parametrize("zone", ["Etc/GMT", "Etc/GMT+0", "Etc/GMT-0", "Etc/GMT0"])
def test_an_etc_gmt_name_of_utc_itself_is_applied(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, zone: str
) -> None:
    write_plans(tmp_path / "plans" / "daily.yaml", [daily(zone)])
    apply_paths(sqlite_factory, [tmp_path / "plans"], now=T0)
    assert stored(sqlite_factory) == ["daily"]
