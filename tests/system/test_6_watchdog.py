"""The watchdog: a daemon that stops pinging (the `after_sign=stall` failpoint freezes
the whole process right after a signed transaction is stored) is killed by systemd and
restarted; recovery then finishes the interrupted run with no second order."""

from __future__ import annotations

from tests.system.machine import Machine, wait_until
from tests.system.service import UNIT, Service

# only for this check: a short watchdog and restart delay, to keep the suite quick
DROPIN = "/etc/systemd/system/jupcron.service.d/50-systest-watchdog.conf"


def test_the_watchdog_kills_a_stalled_daemon_and_recovery_finishes_its_run(
    machine: Machine, service: Service
) -> None:
    machine.path(DROPIN).parent.mkdir(exist_ok=True)
    service.write_file(DROPIN, "[Service]\nWatchdogSec=5\nRestartSec=1\n")
    machine.systemctl("daemon-reload")
    machine.systemctl("set-environment", "JUPCRON_FAILPOINTS=after_sign=stall")
    try:
        machine.systemctl("restart", UNIT)
    finally:  # only the process started now has it: the restart after the kill has not
        machine.systemctl("unset-environment", "JUPCRON_FAILPOINTS")
    service.emulator.clear_faults()
    pid = service.wait_running()
    assert machine.show(UNIT, "WatchdogUSec")["WatchdogUSec"] == "5s"
    restarts = int(service.state()["NRestarts"])
    mark = service.cursor()
    service.write_plan("systest-stall", 1_000_801, in_seconds=2)
    service.reload_and_wait()
    signed = service.signed("systest-stall", mark)
    state = wait_until(
        "the daemon to stall",
        lambda: service.process_status(pid)["State"].startswith("T") and "T",
        30,
    )
    assert state == "T"
    assert service.emulator.issued(1_000_801)  # ordered and signed
    # never posted while stalled: the ledger is read first, then the process is seen still
    # stopped (on a loaded machine the watchdog may already have killed it and recovery
    # posted the run; the checks below then show that the new process posted it, once)
    landed_so_far = service.emulator.landed(1_000_801)
    if _stopped(service, pid):
        assert not landed_so_far
    new_pid = service.wait_running(not_pid=pid, timeout=120)
    assert service.systemd_says(mark, "Watchdog timeout")
    assert int(service.state()["NRestarts"]) == restarts + 1
    run = service.wait_final("systest-stall", mark)
    assert run["status"] == "succeeded", run
    assert (run["run_id"], run["signature"]) == (signed["run_id"], signed["signature"])
    assert run["_pid"] == str(new_pid)
    assert len(service.emulator.issued(1_000_801)) == 1  # no second order
    landed = service.emulator.landed(1_000_801)
    assert [e["signature"] for e in landed] == [signed["signature"]]
    assert len(service.final_runs("systest-stall", mark)) == 1


def _stopped(service: Service, pid: int) -> bool:
    """Whether `pid` is still the stopped (SIGSTOPped) daemon process."""
    done = service.machine.run("cat", f"/proc/{pid}/status", check=False)
    return done.returncode == 0 and any(
        line.startswith("State:") and line.split(":", 1)[1].strip().startswith("T")
        for line in done.stdout.splitlines()
    )
