"""The chaos world: one daemon (`jupcron run` subprocess) against an in-process
emulator over loopback, its plans, and the disturbances we cause.

`World` knows which daemon exits were ours (SIGKILL from outside, or a
failpoint we armed) so any other exit counts as a crash; it restarts the
daemon after every death so the run goes on.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from jupcron import failpoints
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from tests.fixtures.daemon import USDC, DaemonEnv, swap_plan
from tests.support.pgcluster import PgCluster

SOL = "So11111111111111111111111111111111111111112"
IN_FLIGHT = ("pending", "requested", "signed", "submitted")
BLOCKHASH_TTL = 12.0


def recurring_plan(name: str, schedule: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "recurring",
        "schedule": schedule,
        "request": {
            "inputMint": USDC,
            "outputMint": SOL,
            "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 2, "interval": 86400}},
        },
    }


def cancel_plan(name: str, schedule: dict[str, Any], order: str) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "trigger-cancel",
        "schedule": schedule,
        "request": {"order": order, "computeUnitPrice": "auto"},
    }


@dataclass
class Tally:
    """What we did to the system (the figures we caused, not what it recorded)."""

    kills: int = 0
    failpoint_kills: int = 0
    pg_restarts: int = 0
    faults: int = 0  # faults that actually fired at the emulator
    applies: int = 0
    crashes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class World:
    def __init__(self, root: Path, db_url: str, seed: int, pg: PgCluster | None = None) -> None:
        self.rng = random.Random(seed)
        self.pg = pg
        # blockhashes live 12 s (not 90): an unanswerable execute becomes in_doubt within the run
        self.emulator = Emulator(seed=seed, blockhash_ttl=BLOCKHASH_TTL)
        self.server = EmulatorServer().start(self.emulator)
        self.env = DaemonEnv(root=root, db_url=db_url, emulator=self.emulator, server=self.server)
        self.env.write_config(
            runner={
                "recovery_interval": 1,
                "shutdown_timeout": 15,
                "blockhash_validity": BLOCKHASH_TTL,
            },
            logging={"level": "info", "format": "json"},
        )
        self.tally = Tally()
        self.proc: subprocess.Popen[str] | None = None
        self.armed: str | None = None  # failpoint the current daemon was started with
        self.armed_at = 0.0
        self.plans: list[dict[str, Any]] = []
        self.t0 = time.monotonic()

    # ---------------------------------------------------------------- plans
    def seed_trigger_order(self) -> str:
        answer = httpx.post(
            f"{self.server.url}/_emulator/trigger-orders",
            json={"maker": self.env.wallet.address},
            timeout=10,
        )
        answer.raise_for_status()
        return str(answer.json()["order"])

    def make_plans(self, chaos_seconds: float) -> None:
        """Many fast plans of all three kinds; one-shot cancels spread over the run."""
        plans: list[dict[str, Any]] = []
        for i, every in enumerate((2, 3, 3, 4)):
            misfire = "skip" if i % 2 else "run-once"
            plans.append(swap_plan(f"swap-{i}", {"every": f"{every}s", "grace": 20,
                                                 "misfire": misfire}))  # fmt: skip
        for i, every in enumerate((3, 5)):
            plans.append(recurring_plan(f"dca-{i}", {"every": f"{every}s", "grace": 20}))
        # one order cancelled every 6 s: the first cancel succeeds, the rest are declined
        plans.append(cancel_plan("cancel-repeat", {"every": "6s", "grace": 20},
                                 self.seed_trigger_order()))  # fmt: skip
        start = time.time()
        offset = 3.0
        i = 0
        while offset < chaos_seconds:
            moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + offset))
            plans.append(cancel_plan(f"cancel-{i}", {"at": moment, "grace": 30},
                                     self.seed_trigger_order()))  # fmt: skip
            offset += self.rng.uniform(3, 7)
            i += 1
        self.plans = plans
        self.env.write_plans(*plans)

    def apply(self) -> None:
        """`jupcron plans apply` (a subprocess), retried a little if the store is busy."""
        for _ in range(5):
            done = self.env.jupcron("plans", "apply", timeout=60)
            if done.returncode == 0:
                self.tally.applies += 1
                return
            last = done.stderr.strip().splitlines()[-1:] or ["?"]
            time.sleep(1)
        self.tally.problems.append(f"plans apply failed: {last[0]}")

    def change_plans(self) -> None:
        """Change a swap's amount and a recurring plan's grace (new versions, same slots)
        and add a new plan, then re-apply while the daemon runs."""
        swap = next(p for p in self.plans if p["kind"] == "swap")
        swap["request"]["amount"] = int(swap["request"]["amount"]) + 1000
        dca = next(p for p in self.plans if p["kind"] == "recurring")
        dca["schedule"]["grace"] = int(dca["schedule"]["grace"]) + 5
        n = sum(1 for p in self.plans if p["name"].startswith("late-"))
        self.plans.append(swap_plan(f"late-{n}", {"every": "3s", "grace": 20}, amount=2_000_000))
        self.env.write_plans(*self.plans)
        self.apply()

    # ---------------------------------------------------------------- daemon
    def say(self, what: str) -> None:
        print(f"[{time.monotonic() - self.t0:6.1f}s] {what}", flush=True)

    def start(self, failpoint: str | None = None) -> None:
        extra = {failpoints.ENV: failpoint} if failpoint else {}
        self.proc = self.env.start(extra)
        self.armed = failpoint
        self.armed_at = time.monotonic()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
            self.tally.kills += 1
            self.say("daemon SIGKILLed")

    def watch(self) -> None:
        """Notice a dead daemon: ours (failpoint) or a crash; restart it."""
        proc = self.proc
        if proc is None:
            return
        code = proc.poll()
        if code is None:
            if self.armed and time.monotonic() - self.armed_at > 20:
                self.say(f"failpoint {self.armed} not reached in 20 s: killing")
                self.kill()
                self.start()
            return
        if self.armed and code == -signal.SIGKILL:
            self.tally.kills += 1
            self.tally.failpoint_kills += 1
            self.say(f"daemon died at failpoint {self.armed}")
        else:
            tail = self.env.log_of(proc).strip().splitlines()[-3:]
            self.tally.crashes.append(f"exit {code}: {' | '.join(tail)}")
            self.say(f"CRASH: daemon exited {code}")
        self.start()

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is not None:
            self.watch()
            proc = self.proc
            assert proc is not None
        code = self.env.stop(proc, timeout=60)
        if code != 0:
            tail = self.env.log_of(proc).strip().splitlines()[-3:]
            self.tally.crashes.append(f"stop exit {code}: {' | '.join(tail)}")
        self.proc = None

    def in_flight(self) -> int:
        marks = ", ".join(f"'{s}'" for s in IN_FLIGHT)
        return len(self.env.rows(f"status IN ({marks})"))

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.env.close()
        self.server.stop()

    def dump_logs(self, lines: int = 20) -> None:
        for proc in self.env.procs:
            tail = self.env.log_of(proc).strip().splitlines()[-lines:]
            print(f"--- daemon pid {proc.pid} exit {proc.returncode}")
            for line in tail:
                print(_short(line))


def _short(line: str) -> str:
    try:
        data = json.loads(line)
    except ValueError:
        return line[:300]
    return " ".join(f"{k}={v}" for k, v in data.items())[:300]
