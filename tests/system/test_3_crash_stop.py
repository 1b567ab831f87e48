"""kill -9 of the main process: Restart= brings it back and the run in flight is settled
once. `systemctl stop`: a clean exit within the stop timeout, the run in flight finished
or left for recovery."""

from __future__ import annotations

from tests.system.machine import Machine
from tests.system.service import UNIT, Service


def test_kill_9_restarts_and_the_run_in_flight_is_settled_once(
    machine: Machine, service: Service
) -> None:
    service.emulator.clear_faults()
    # the execute of this run is answered 3 s late: the daemon dies while it waits
    service.emulator.fault(kind="slow", operation="execute_*", seconds=3, count=1)
    restarts = int(service.state()["NRestarts"])
    mark = service.cursor()
    service.write_plan("systest-kill", 1_000_401, in_seconds=2)
    service.reload_and_wait()
    signed = service.signed("systest-kill", mark)
    service.wait_fault_fired("slow")  # the signed transaction is posted, no answer yet
    pid = service.main_pid()
    machine.run("kill", "-9", str(pid))
    new_pid = service.wait_running(not_pid=pid)  # after RestartSec=10, as shipped
    assert int(service.state()["NRestarts"]) == restarts + 1
    assert service.systemd_says(mark, "status=9/KILL")
    run = service.wait_final("systest-kill", mark)
    assert run["status"] == "succeeded", run
    assert run["run_id"] == signed["run_id"]
    assert run["signature"] == signed["signature"]  # the same transaction, not a new one
    assert run["_pid"] == str(new_pid)
    recovering = [e for e in service.events(mark) if e["event"] == "run_recovering"]
    assert [e["run_id"] for e in recovering] == [signed["run_id"]]
    # settled once: one order, one landed execution, one final line
    assert len(service.emulator.issued(1_000_401)) == 1
    assert len(service.emulator.landed(1_000_401)) == 1
    assert len(service.final_runs("systest-kill", mark)) == 1


def test_stop_is_clean_and_the_run_in_flight_is_finished_or_resumed(
    machine: Machine, service: Service
) -> None:
    service.emulator.clear_faults()
    service.emulator.fault(kind="slow", operation="execute_*", seconds=3, count=1)
    mark = service.cursor()
    service.write_plan("systest-stop", 1_000_501, in_seconds=2)
    service.reload_and_wait()
    signed = service.signed("systest-stop", mark)
    service.wait_fault_fired("slow")
    pid = service.main_pid()
    machine.systemctl("stop", UNIT)
    # within TimeoutStopSec (systemd would record Result=timeout and SIGKILL otherwise)
    state = machine.show(UNIT, "ActiveState", "Result", "ExecMainCode", "ExecMainStatus")
    assert state == {"ActiveState": "inactive", "Result": "success",
                     "ExecMainCode": "1", "ExecMainStatus": "0"}  # fmt: skip
    names = [e["event"] for e in service.events(mark) if e["_pid"] == str(pid)]
    assert names.index("stop_requested") < names.index("daemon_stopped") == len(names) - 1
    finished_before_stop = service.final_runs("systest-stop", mark)
    if not finished_before_stop:
        assert "runs_left_in_flight" in names
    machine.systemctl("start", UNIT)
    run = service.wait_final("systest-stop", mark)
    assert run["status"] == "succeeded", run
    assert run["run_id"] == signed["run_id"]
    assert len(service.emulator.issued(1_000_501)) == 1
    assert len(service.emulator.landed(1_000_501)) == 1
    assert len(service.final_runs("systest-stop", mark)) == 1
