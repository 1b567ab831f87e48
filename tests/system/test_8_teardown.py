"""After the run: the machine's systemd and everything it started are gone, and so are
its cgroups and mounts."""

from __future__ import annotations

from tests.system.machine import Machine


def test_nothing_is_left_after_power_off(machine: Machine) -> None:
    state = machine.run("systemctl", "is-system-running", check=False).stdout.strip()
    assert state in ("running", "degraded")  # it was up until now
    machine.shutdown()
    assert machine.launcher.returncode is not None
    assert machine.leftovers() == []
