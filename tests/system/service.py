"""jupcron.service inside the machine, as the checks see it: systemctl, journal events,
plan files in /etc/jupcron/plans, runs by plan."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.system.machine import Machine, events, wait_until

UNIT = "jupcron.service"
PLANS = "/etc/jupcron/plans"
FINAL = {"succeeded", "failed", "rejected", "skipped", "dry_run", "in_doubt"}
STATE = ("ActiveState", "SubState", "MainPID", "NRestarts", "Result", "StatusText")


def plan_yaml(name: str, amount: int, at: str) -> str:
    return (
        f"name: {name}\n"
        "kind: swap\n"
        f'schedule:\n  at: "{at}"\n'
        "request:\n"
        "  inputMint: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v\n"
        "  outputMint: So11111111111111111111111111111111111111112\n"
        f"  amount: {amount}\n"
    )


@dataclass
class Emulator:
    url: str
    process: subprocess.Popen[bytes]

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        response = httpx.request(method, f"{self.url}/_emulator/{path}", json=body, timeout=10)
        response.raise_for_status()
        return response.json()

    def fault(self, **fault: Any) -> None:
        self._call("POST", "faults", [fault])

    def fired(self) -> list[list[str]]:
        return list(self._call("GET", "faults")["fired"])

    def clear_faults(self) -> None:
        self._call("POST", "faults/clear")

    def ledger(self) -> dict[str, Any]:
        return dict(self._call("GET", "ledger"))

    def issued(self, amount: int) -> list[dict[str, Any]]:
        return [o for o in self.ledger()["issued"] if o["in_amount"] == amount]

    def landed(self, amount: int) -> list[dict[str, Any]]:
        return [e for e in self.ledger()["executions"] if e["in_amount"] == amount and e["landed"]]


class Service:
    def __init__(self, machine: Machine, emulator: Emulator) -> None:
        self.machine = machine
        self.emulator = emulator

    # ---- systemd's view ---------------------------------------------------------------

    def state(self, unit: str = UNIT) -> dict[str, str]:
        return self.machine.show(unit, *STATE)

    def main_pid(self) -> int:
        return int(self.state()["MainPID"])

    def wait_running(self, *, not_pid: int | None = None, timeout: float = 90) -> int:
        """The MainPID once the unit is active (running), and not `not_pid`."""

        def running() -> int | None:
            state = self.state()
            pid = int(state["MainPID"])
            if state["ActiveState"] == "active" and state["SubState"] == "running":
                return pid if pid and pid != not_pid else None
            return None

        return int(wait_until("jupcron.service active (running)", running, timeout))

    def process_status(self, pid: int) -> dict[str, str]:
        """/proc/PID/status of a process inside the machine."""
        text = self.machine.run("cat", f"/proc/{pid}/status").stdout
        return {k: v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())}

    # ---- the journal ----------------------------------------------------------------------

    def cursor(self) -> str:
        return self.machine.cursor()

    def events(self, after: str | None = None, unit: str = UNIT) -> list[dict[str, Any]]:
        return events(self.machine.journal("-u", unit, after=after))

    def wait_event(
        self,
        after: str | None,
        name: str,
        where: Callable[[dict[str, Any]], bool] = lambda e: True,
        timeout: float = 60,
    ) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for event in self.events(after):
                if event["event"] == name and where(event):
                    return event
            return None

        try:
            return dict(wait_until(f"a {name!r} log line", found, timeout, every=0.3))
        except Exception:
            tail = self.machine.run("journalctl", "-u", "jupcron*", "-n", "40", "--no-pager")
            pytest.fail(f"no {name!r} in the journal; its end:\n{tail.stdout}", pytrace=False)

    def systemd_says(self, after: str | None, text: str) -> list[str]:
        """systemd's own journal messages about the unit that contain `text`."""
        return [
            e["MESSAGE"]
            for e in self.machine.journal("-u", UNIT, after=after)
            if e.get("_PID") == "1" and text in str(e.get("MESSAGE"))
        ]

    # ---- plans and runs -----------------------------------------------------------------

    def write_plan(self, name: str, amount: int, in_seconds: float | None) -> str:
        """Write /etc/jupcron/plans/NAME.yaml: a swap of `amount` at now + `in_seconds`
        (None: far in the future). Returns the file's text."""
        if in_seconds is None:
            at = "2099-01-01T00:00:00Z"
        else:
            # the next whole second at or after now + in_seconds (`at:` takes whole
            # seconds; cutting the fraction made "in 2 s" as little as 1 s)
            due = math.ceil((datetime.now(UTC) + timedelta(seconds=in_seconds)).timestamp())
            at = datetime.fromtimestamp(due, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        text = plan_yaml(name, amount, at)
        self.write_file(f"{PLANS}/{name}.yaml", text)
        return text

    def write_file(self, inside: str, text: str, mode: int = 0o644) -> None:
        path: Path = self.machine.path(inside)
        path.write_text(text)
        path.chmod(mode)

    def remove_file(self, inside: str) -> None:
        self.machine.path(inside).unlink(missing_ok=True)

    def reload(self) -> None:
        self.machine.systemctl("reload", UNIT)

    def reload_and_wait(self) -> dict[str, Any]:
        """`systemctl reload`; the daemon's `reloaded` line for it."""
        mark = self.cursor()
        self.reload()
        return self.wait_event(mark, "reloaded")

    def final_runs(self, plan: str, after: str | None = None) -> list[dict[str, Any]]:
        """Its `run_finished` lines with a final status, oldest first."""
        return [
            e
            for e in self.events(after)
            if e["event"] == "run_finished" and e.get("plan") == plan and e["status"] in FINAL
        ]

    def wait_final(
        self, plan: str, after: str | None = None, timeout: float = 90
    ) -> dict[str, Any]:
        return self.wait_event(
            after,
            "run_finished",
            lambda e: e.get("plan") == plan and e["status"] in FINAL,
            timeout=timeout,
        )

    def signed(self, plan: str, after: str | None = None, timeout: float = 60) -> dict[str, Any]:
        """The plan's `tx_signed` line (run_id, signature): it is signed and stored."""
        return self.wait_event(after, "tx_signed", lambda e: e.get("plan") == plan, timeout)

    def wait_fault_fired(self, kind: str, timeout: float = 60) -> None:
        wait_until(
            f"the emulator's {kind!r} fault to fire",
            lambda: any(fired[1] == kind for fired in self.emulator.fired()),
            timeout,
        )

    def runner_uid(self) -> tuple[int, int]:
        status = self.process_status(self.main_pid())
        return int(status["Uid"].split()[0]), int(status["Gid"].split()[0])

    def in_service(self, script: str, *, as_root: bool = False) -> str:
        """Run a shell script inside the daemon's own namespaces (its mount namespace,
        PrivateUsers' user namespace…), as its user (or as root there): what the daemon
        itself could do. Prints of the script are returned."""
        pid = str(self.main_pid())
        who: list[str] = []
        if not as_root:
            uid, gid = self.runner_uid()
            who = ["-S", str(uid), "-G", str(gid)]
        done = self.machine.run("nsenter", "-t", pid, "-a", *who, "/bin/sh", "-c", script)
        return done.stdout
