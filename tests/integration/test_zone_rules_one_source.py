"""Every jupcron process reads zone rules from the tzdata package only.

`ZoneInfo` searches the system's zoneinfo folders (``TZPATH``: /usr/share/zoneinfo…,
or ``PYTHONTZPATH``) before the tzdata package, a declared dependency. Two machines
(a leader and its standby, the operator's host running `plans apply` and the
daemon's, or one host before and after an OS tzdata upgrade) then read one zone
name with different rules, and work out different instants for one wall-clock
time: the stored slot and the daemon's next one differ, and a daily plan fires twice
(or not at all) that day. Here the "system" folder is a fake one in tmp_path, whose
``America/Vancouver`` has other rules (a copy of ``Etc/GMT+3``) or is unreadable,
named by ``PYTHONTZPATH``; the real `jupcron` runs in processes of its own (a
fresh interpreter: the variable is read at start), on a real SQLite file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zoneinfo
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path

import pytest
import tzdata  # type: ignore[import-untyped]  # (no stubs)

from jupcron.store import control
from jupcron.store.control import NodeBeat
from jupcron.store.engine import begin, make_engine
from jupcron.store.firing import PLANS
from tests.e2e.cli import jupcron
from tests.fixtures.plans import swap_plan, write_plans

ZONE = "America/Vancouver"
NOW = datetime.now(UTC)  # only to pick a day: every assertion compares instants


def package_zone(name: str) -> zoneinfo.ZoneInfo:
    """`name` as the tzdata package has it, read from its file (whatever TZPATH is)."""
    area, _, city = name.rpartition("/")
    package = "tzdata.zoneinfo" + (f".{area.replace('/', '.')}" if area else "")
    with resources.files(package).joinpath(city).open("rb") as file:
        return zoneinfo.ZoneInfo.from_file(file, key=name)


def fake_system(tmp_path: Path, content: bytes) -> Path:
    """A zoneinfo folder whose `ZONE` file is `content` (what PYTHONTZPATH names)."""
    folder = tmp_path / "system-zoneinfo"
    (folder / ZONE).parent.mkdir(parents=True, exist_ok=True)
    (folder / ZONE).write_bytes(content)
    return folder


def other_rules() -> bytes:
    """Valid zone rules that disagree with the package's Vancouver: UTC-03:00."""
    return resources.files("tzdata.zoneinfo.Etc").joinpath("GMT+3").read_bytes()


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m jupcron ARGS` in a fresh interpreter (PYTHONTZPATH is read at start)."""
    full = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "PYTHONTZPATH")}
    return subprocess.run(
        [sys.executable, "-m", "jupcron", *args], env={**full, **env},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def configured(tmp_path: Path, db_url: str, system: Path) -> dict[str, str]:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": db_url},
                                  "plans": {"dir": str(tmp_path / "plans")}}), encoding="utf-8")  # fmt: skip
    return {"JUPCRON_CONFIG": str(config), "PYTHONTZPATH": str(system)}


def daily(name: str) -> dict[str, object]:
    return swap_plan(name, schedule={"cron": "0 9 * * *", "timezone": ZONE})


def next_fires(db_url: str) -> dict[str, datetime]:
    engine = make_engine(db_url)
    try:
        with begin(engine) as conn:
            rows = conn.execute(PLANS.select()).mappings().all()
        return {r["name"]: r["next_fire"].replace(tzinfo=UTC) for r in rows}
    finally:
        engine.dispose()


def test_the_fake_system_folder_disagrees_with_the_package() -> None:
    """The premise of the tests below (else they could not fail): at 09:00 in
    Vancouver by the package, the fake's clock does not read 09:00."""
    real = datetime.combine(NOW.date(), datetime.min.time().replace(hour=9),
                            tzinfo=package_zone(ZONE))  # fmt: skip
    fake = zoneinfo.ZoneInfo.from_file(io.BytesIO(other_rules()), key=ZONE)
    assert real.astimezone(fake).hour != 9


def test_apply_stores_the_first_slot_as_the_tzdata_package_reads_the_zone(
    tmp_path: Path, sqlite_url: str
) -> None:
    """The daemon (any node, any OS tzdata) works the next slots out with the package's
    rules; so must `plans apply` for the first one, whatever the system folder says."""
    write_plans(tmp_path / "plans" / "daily.yaml", [daily("daily")])
    env = configured(tmp_path, sqlite_url, fake_system(tmp_path, other_rules()))
    result = run(["plans", "apply"], env)
    assert result.returncode == 0, result.stderr
    slot = next_fires(sqlite_url)["daily"]
    local = slot.astimezone(package_zone(ZONE))
    assert (local.hour, local.minute) == (9, 0), (
        f"stored {slot.isoformat()}: {local.isoformat()} in {ZONE} by tzdata "
        f"{tzdata.IANA_VERSION}; the system folder's rules were used"
    )
    assert slot - NOW < timedelta(days=2)


def test_validate_and_apply_with_jobs_read_zones_on_workers_from_the_package(
    tmp_path: Path, sqlite_url: str
) -> None:
    """`plans apply --jobs 2` reads the files on a spawned worker process (4 files
    or more). The system's Vancouver file is unreadable here: a process that looks
    there refuses the plans ("unknown timezone"); one that reads the package does
    not, on the worker as in the caller."""
    for n in range(4):
        write_plans(tmp_path / "plans" / f"p{n}.yaml", [daily(f"daily-{n}")])
    env = configured(tmp_path, sqlite_url, fake_system(tmp_path, b"not a TZif file\n"))
    validated = run(["plans", "validate", str(tmp_path / "plans")], env)
    assert validated.returncode == 0, validated.stderr
    applied = run(["plans", "apply", "--jobs", "2"], env)
    assert applied.returncode == 0, applied.stderr
    slots = next_fires(sqlite_url)
    assert sorted(slots) == [f"daily-{n}" for n in range(4)]
    assert {s.astimezone(package_zone(ZONE)).hour for s in slots.values()} == {9}


def test_every_process_that_imports_jupcron_reads_only_the_package(tmp_path: Path) -> None:
    """The daemon, the demo, the emulator and spawned workers are all processes that
    import `jupcron`: its import alone puts the package first, for every ZoneInfo."""
    system = fake_system(tmp_path, other_rules())
    probe = (
        "import jupcron, zoneinfo, datetime as d\n"
        "from jupcron.scheduling.schedule import parse_timezone\n"
        "t = d.datetime(2026, 7, 1, 12, tzinfo=d.UTC)\n"
        f"print(zoneinfo.TZPATH, int(t.astimezone(parse_timezone({ZONE!r})).utcoffset().total_seconds()))\n"
    )
    env = {**os.environ, "PYTHONTZPATH": str(system)}
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                            text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    expected = datetime(2026, 7, 1, 12, tzinfo=UTC).astimezone(package_zone(ZONE)).utcoffset()
    assert expected is not None
    assert result.stdout.split() == ["()", str(int(expected.total_seconds()))]


def test_the_heartbeat_says_which_tz_data_the_daemon_reads(sqlite_url: str) -> None:
    from jupcron.config import Config
    from jupcron.scheduling.zones import tzdata_of
    from jupcron.service.heartbeat import Heartbeat

    engine = make_engine(sqlite_url)
    try:
        started = datetime.now(UTC)
        heart = Heartbeat(engine, node="h:1", started_at=started, version="0.1.0",
                          interval=3600)  # fmt: skip
        heart.tick(leader=True, role_since=started, config=Config())
        with begin(engine) as conn:
            (node,) = control.nodes(conn)
    finally:
        engine.dispose()
    assert node.version.startswith("0.1.0")
    assert tzdata_of(node.version) == tzdata.IANA_VERSION


def leader_and_older_standby(sqlite_url: str) -> None:
    """Heartbeats of a running leader on this tzdata (a:1) and a standby on 2025b (b:2),
    dated a few minutes ahead: still live when a loaded machine runs `jupcron status`
    more than `STALE_AFTER` (10 s) after they were written (seen in `make test`)."""
    now = datetime.now(UTC) + timedelta(minutes=5)
    engine = make_engine(sqlite_url)
    try:
        for node, tz in (("a:1", tzdata.IANA_VERSION), ("b:2", "2025b")):
            beat = NodeBeat(node=node, role="leader" if node == "a:1" else "standby",
                            role_since=now, started_at=now, last_beat=now, dry_run=False,
                            kill_switch=None, version=f"0.1.0 tzdata {tz}")  # fmt: skip
            with begin(engine) as conn:
                control.beat(conn, beat)
    finally:
        engine.dispose()


def test_status_shows_the_tz_data_and_warns_when_running_nodes_differ(
    tmp_path: Path, sqlite_url: str
) -> None:
    """A standby whose tzdata is older than its leader's reads some zones otherwise:
    `jupcron status` says so, naming each node's version."""
    leader_and_older_standby(sqlite_url)
    env = configured(tmp_path, sqlite_url, fake_system(tmp_path, other_rules()))
    result = jupcron("status", env=env)  # (forked from a server: start-up once)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("tz data"))
    assert "DIFFER" in line
    assert "b:2 2025b" in line
    assert f"a:1 {tzdata.IANA_VERSION}" in line
    as_json = json.loads(jupcron("status", "--format", "json", env=env).stdout)
    assert as_json["tzdata"]["here"] == tzdata.IANA_VERSION
    assert as_json["tzdata"]["nodes"] == {"a:1": tzdata.IANA_VERSION, "b:2": "2025b"}
    assert as_json["tzdata"]["differ"] is True


@pytest.mark.parametrize("other", [None, "stale"])
def test_status_does_not_warn_when_every_node_reads_the_same_tz_data(
    tmp_path: Path, sqlite_url: str, other: str | None
) -> None:
    now = datetime.now(UTC)
    engine = make_engine(sqlite_url)
    try:
        with begin(engine) as conn:
            control.beat(conn, NodeBeat(node="a:1", role="leader", role_since=now,
                                        started_at=now, last_beat=now, dry_run=False,
                                        kill_switch=None,
                                        version=f"0.1.0 tzdata {tzdata.IANA_VERSION}"))  # fmt: skip
            if other is not None:  # a node gone quiet long ago, with other data: not live
                old = now - timedelta(hours=1)
                control.beat(conn, NodeBeat(node="b:2", role="standby", role_since=old,
                                            started_at=old, last_beat=old, dry_run=False,
                                            kill_switch=None, version="0.1.0 tzdata 2025b"))  # fmt: skip
    finally:
        engine.dispose()
    env = configured(tmp_path, sqlite_url, fake_system(tmp_path, other_rules()))
    result = jupcron("status", env=env)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("tz data"))
    assert tzdata.IANA_VERSION in line
    assert "DIFFER" not in line


def test_the_status_page_says_when_running_nodes_read_other_tz_data(sqlite_url: str) -> None:
    """`/api/status` carries what `jupcron status --format json` does, and the page's
    daemons line says DIFFER with each node's release."""
    import httpx

    from jupcron.listen.metrics import Metrics
    from jupcron.listen.page import LiveState
    from jupcron.listen.server import start_listener
    from jupcron.store.engine import open_reader
    from jupcron.web.activity import Activity
    from jupcron.web.app import WebApp

    leader_and_older_standby(sqlite_url)
    reader = open_reader(sqlite_url)
    live = lambda: LiveState(node="a:1", rate_limit=1.0, wallet="WALLET")  # noqa: E731
    app = WebApp(reader, metrics=Metrics(), live=live, activity=Activity())
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    try:
        status = httpx.get(server.url + "/api/status", timeout=10).json()
    finally:
        server.stop()
        reader.dispose()
    assert status["tzdata"] == {"here": tzdata.IANA_VERSION, "differ": True,
                                "nodes": {"a:1": tzdata.IANA_VERSION, "b:2": "2025b"}}  # fmt: skip
    assert "tz data DIFFER" in status["text"]["daemons"]
    assert "b:2 2025b" in status["text"]["daemons"]
