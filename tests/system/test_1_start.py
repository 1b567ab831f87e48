"""Installed as systemd/README.md says; `systemctl start` is active only after READY=1;
a plan added to /etc/jupcron/plans fires and its run succeeds."""

from __future__ import annotations

from pathlib import Path

from tests.system.conftest import README, ROOT, Install
from tests.system.machine import Machine, wait_until
from tests.system.service import UNIT, Service


def test_install_steps_of_the_readme_leave_an_enabled_running_service(
    machine: Machine, installed: Install, service: Service
) -> None:
    assert machine.systemctl("is-enabled", UNIT).stdout.strip() == "enabled"
    assert machine.systemctl("is-active", "jupcron-plans.path").stdout.strip() == "active"
    # the unit that runs is the shipped file, byte for byte
    shipped = (ROOT / "systemd" / "jupcron.service").read_text()
    assert machine.path("/etc/systemd/system/jupcron.service").read_text() == shipped
    assert machine.path("/opt/jupcron/systemd/README.md").read_text() == README.read_text()
    state = service.state()
    assert (state["ActiveState"], state["SubState"]) == ("active", "running")
    assert state["StatusText"] == "leader, 1 plans"  # the plan loaded at install (step 5)
    # the dynamic user owns the database the install's migration created
    uid, _ = service.runner_uid()
    assert uid >= 61184  # systemd's range for dynamic users
    database = machine.path("/var/lib/private/jupcron/jupcron.db")
    assert database.stat().st_uid == uid
    assert machine.path("/var/lib/jupcron").readlink() == Path("private/jupcron")


def test_start_is_active_only_after_ready(machine: Machine, service: Service) -> None:
    assert machine.show(UNIT, "Type", "NotifyAccess") == {"Type": "notify", "NotifyAccess": "main"}
    machine.systemctl("stop", UNIT)
    mark = service.cursor()
    machine.systemctl("start", "--no-block", UNIT)
    samples: list[dict[str, str]] = []

    def settled() -> bool:
        state = service.state()
        samples.append(state)
        return state["ActiveState"] in ("active", "failed")

    wait_until("jupcron.service to finish starting", settled, 90, every=0.02)
    starting = [s for s in samples if (s["ActiveState"], s["SubState"]) == ("activating", "start")]
    # the daemon's process ran for a while without the unit being active: systemd waited
    assert any(s["MainPID"] != "0" for s in starting), samples
    first_active = next(s for s in samples if s["ActiveState"] == "active")
    # STATUS= travels in the READY=1 datagram; before it the daemon sends no status
    assert first_active["StatusText"].startswith("leader, "), first_active
    assert all(s["StatusText"] == "" for s in starting), starting
    started = service.wait_event(mark, "daemon_started")
    assert started["plans"] == 1
    assert service.systemd_says(mark, "Started ")


def test_a_plan_added_to_etc_fires_and_its_run_succeeds(machine: Machine, service: Service) -> None:
    # jupcron-plans.path (enabled by the README) reloads the daemon when a plan file changes
    mark = service.cursor()
    service.write_plan("systest-first", 1_000_101, in_seconds=2)
    service.wait_event(mark, "plans_applied", lambda e: "+ systest-first" in e["diff"])
    assert machine.journal("-u", "jupcron-plans.service", after=mark), "the .path unit did not fire"
    run = service.wait_final("systest-first", mark)
    assert run["status"] == "succeeded", run
    # against the emulator, which demands the API key: it came from the credential
    assert len(service.emulator.landed(1_000_101)) == 1
    assert run["signature"] == service.emulator.landed(1_000_101)[0]["signature"]
