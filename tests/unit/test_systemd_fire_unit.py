"""jupcron-fire@.service runs `jupcron fire %i` with exactly the user, credentials,
directories and sandbox of jupcron.service (tests/system runs it under systemd)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.unit.test_systemd_unit import SERVICE, UNITS, needs_analyze, parse_unit

FIRE = UNITS / "jupcron-fire@.service"
# how each unit runs; everything else (who, secrets, sandbox) must be the same
LIFECYCLE = {"Type", "NotifyAccess", "ExecStart", "ExecReload", "TimeoutStartSec",
             "TimeoutStopSec", "KillMode", "WatchdogSec", "Restart", "RestartSec",
             "RestartPreventExitStatus"}  # fmt: skip


def test_fire_unit_fires_the_instance_once() -> None:
    service = parse_unit(FIRE)["Service"]
    assert service["Type"] == ["oneshot"]
    assert service["ExecStart"] == [
        "/opt/jupcron/venv/bin/jupcron --config /etc/jupcron/jupcron.yaml fire %i"
    ]
    assert "Restart" not in service
    assert "Install" not in parse_unit(FIRE)


def test_fire_unit_has_the_services_user_credentials_and_sandbox() -> None:
    main = {k: v for k, v in parse_unit(SERVICE)["Service"].items() if k not in LIFECYCLE}
    fire = {k: v for k, v in parse_unit(FIRE)["Service"].items() if k not in LIFECYCLE}
    assert fire == main
    assert main["User"] == ["jupcron"]  # a shared dynamic UID while both run


@needs_analyze
def test_fire_unit_verifies_cleanly(tmp_path: Path) -> None:
    instance = tmp_path / "jupcron-fire@weekly-sol-dca.service"
    shutil.copyfile(FIRE, instance)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(instance)], capture_output=True, text=True, timeout=60
    )
    problems = [
        line
        for line in done.stderr.splitlines()
        if line.strip() and "/opt/jupcron/venv/bin/jupcron is not executable" not in line
    ]
    assert problems == []
