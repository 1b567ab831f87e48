"""`jupcron demo`: the whole product, start to finish, on a throwaway setup.

    workspace (keypair 0600, SQLite migrated, config, plans, emulator on loopback)
    -> `jupcron plans apply`                       (a subprocess, like an operator;
                                                    again, the plans later, on a machine
                                                    so slow a plan came due before it)
    -> `jupcron run` with JUPCRON_FAILPOINTS=after_sign (dies right after signing)
    -> `jupcron run` again                          (recovers the signed run)
    -> live progress until every demo run is final, --duration passes, or Ctrl-C
    -> wait (within --duration) for the daemon's order follower to record the fills
    -> SIGTERM the daemon, print the audit table and the SQL to query it
    -> end with `jupcron report` (what the money did) and its chart (a PNG)

The daemon is the real thing in its own process; the demo only watches the
store and manages processes. Every process it starts is stopped before it
returns.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from sqlalchemy import text

from jupcron.demo.proc import terminate
from jupcron.demo.shell import jupcron_command, quoted
from jupcron.demo.watch import Reporter, Watcher
from jupcron.demo.workspace import CRASH_PLAN, FAILPOINT, LEAD, Workspace, restart
from jupcron.private import PRIVATE_FILE, open_private
from jupcron.report.build import build
from jupcron.report.chart import write_chart
from jupcron.report.listing import render
from jupcron.store.engine import make_engine

APPLY_TRIES = 3  # applies, each with the plans due twice as far ahead as the last
DONE = {"succeeded", "failed", "rejected", "skipped", "dry_run", "in_doubt"}
STOP_TIMEOUT = 30.0
TABLE_COLUMNS = ("run_id", "plan_name", "kind", "scheduled_for", "status", "request_id",
                 "signature", "error", "note")  # fmt: skip


# printed at the end, for the operator to paste
QUERIES = (
    "SELECT plan_name, kind, status, signature, error FROM audit ORDER BY run_id;",
    "SELECT run_id, at, step FROM run_events ORDER BY id;",
    "SELECT plan_name, source, in_amount, out_amount, filled_at FROM fills ORDER BY filled_at;",
)
FOLLOWED = 2  # orders the follower must see closed: the DCA (completed), the limit (cancelled)
REPORT_COLUMNS = ("plan_name", "runs", "spent", "received", "average_price", "fills",
                  "refunded", "network_fees", "value_now", "unrealised_pnl")  # fmt: skip


@dataclass
class DemoResult:
    ok: bool
    reason: str  # settled | time_up | interrupted | daemon_failed
    rows: list[dict[str, object]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _env(failpoints: str | None) -> dict[str, str]:
    drop = ("JUPCRON_CONFIG", "NOTIFY_SOCKET", "JUPCRON_FAILPOINTS", "JUPITER_API_KEY",
            "WATCHDOG_USEC", "WATCHDOG_PID", "CREDENTIALS_DIRECTORY")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop}
    if failpoints:
        env["JUPCRON_FAILPOINTS"] = failpoints
    return env


class Demo:
    def __init__(self, ws: Workspace, reporter: Reporter, out: TextIO) -> None:
        self.ws = ws
        self.reporter = reporter
        self.out = out
        self.engine = make_engine(ws.db_url)
        self.watcher = Watcher(self.engine)
        self.daemons: list[subprocess.Popen[bytes]] = []
        self.crashed_runs: set[int] = set()
        self.restarted = False
        self.failed_daemon: str | None = None

    def jupcron(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "jupcron", "--config", str(self.ws.config), *args]

    # ---- processes ----------------------------------------------------------------

    def apply_plans(self, tries: int = APPLY_TRIES) -> None:
        """`jupcron plans apply`; on a machine so slow that a plan's moment passed before
        the apply stored it (it would never run), the story is started again later."""
        lead = LEAD
        for attempt in range(1, tries + 1):
            self.reporter.note(f"$ jupcron --config {self.ws.config} plans apply")
            done = subprocess.run(self.jupcron("plans", "apply"), capture_output=True,
                                  text=True, env=_env(None), timeout=60, check=False)  # fmt: skip
            for line in (done.stdout + done.stderr).splitlines():
                self.reporter.note(f"   {line}")
            if done.returncode != 0:
                raise RuntimeError(f"plans apply failed: {done.stderr.strip()}")
            late = self.never_firing()
            if not late:
                return
            if attempt == tries:
                break
            lead *= 2
            self.engine.dispose()  # its file is replaced: a new engine for the new one
            restart(self.ws, lead)
            self.engine = make_engine(self.ws.db_url)
            self.watcher = Watcher(self.engine)
            self.reporter.note(f"this machine took too long: {', '.join(late)} came due "
                               f"before the apply stored it; the plans again, {lead:g} s "
                               "ahead")  # fmt: skip
        raise RuntimeError(f"plans apply: {', '.join(late)} still came due before it was stored")

    def never_firing(self) -> list[str]:
        """Plans stored with no slot to fire (their `at:` passed before the apply)."""
        sql = text("SELECT name FROM plans WHERE next_fire IS NULL ORDER BY name")
        with self.engine.connect() as conn:
            return [str(r[0]) for r in conn.execute(sql)]

    def start_daemon(self, failpoints: str | None = None) -> subprocess.Popen[bytes]:
        number = len(self.daemons) + 1
        log = self.ws.root / f"daemon-{number}.log"
        with os.fdopen(open_private(log), "wb") as sink:  # 0600; the child keeps its own copy
            proc = subprocess.Popen(self.jupcron("run"), stdout=sink, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=_env(failpoints))  # fmt: skip
        self.daemons.append(proc)
        armed = f" with JUPCRON_FAILPOINTS={failpoints}" if failpoints else ""
        self.reporter.note(f"$ jupcron run{armed}   (daemon pid {proc.pid}, log {log})")
        return proc

    def stop_daemons(self) -> list[int | None]:
        codes: list[int | None] = []
        for proc in self.daemons:
            codes.append(terminate(proc, STOP_TIMEOUT))
        return codes

    # ---- the story ----------------------------------------------------------------

    def in_flight(self) -> set[int]:
        sql = text("SELECT run_id FROM audit WHERE status IN ('signed', 'submitted')")
        with self.engine.connect() as conn:
            return {int(r[0]) for r in conn.execute(sql)}

    def check_daemon(self) -> bool:
        """Restart the daemon after the planned crash; False if it died otherwise."""
        proc = self.daemons[-1]
        code = proc.poll()
        if code is None:
            return True
        if code == -signal.SIGKILL and not self.restarted:
            self.restarted = True
            self.crashed_runs = self.in_flight()
            self.reporter.note(
                f"the daemon was SIGKILLed at failpoint {FAILPOINT} (signed run(s) "
                f"{sorted(self.crashed_runs)} stored, not yet posted); restarting it"
            )
            self.start_daemon()
            return True
        self.failed_daemon = f"the daemon exited unexpectedly (status {code}); see its log"
        return False

    def settled(self) -> bool:
        with self.engine.connect() as conn:
            rows = conn.execute(text("SELECT plan_name, status FROM audit")).all()
        done = {name for name, status in rows if status in DONE}
        return all(p.name in done for p in self.ws.plans)

    def followed(self) -> bool:
        """The order follower has seen the DCA complete and the limit order cancelled."""
        sql = text("SELECT count(*) FROM followed_orders WHERE state <> 'open'")
        with self.engine.connect() as conn:
            return int(conn.execute(sql).scalar_one()) >= FOLLOWED

    def watch(self, deadline: float, sleep: Callable[[float], None] = time.sleep) -> str:
        noted = False
        while True:
            self.reporter.steps(self.watcher.poll())
            if not self.check_daemon():
                return "daemon_failed"
            if self.settled():
                self.reporter.steps(self.watcher.poll())
                if self.followed():
                    return "settled"
                if not noted:
                    self.reporter.note("every run is final; waiting for the order follower "
                                       "to record the DCA's fills and the refund")  # fmt: skip
                    noted = True
            if time.monotonic() >= deadline:
                return "time_up"
            sleep(0.25)

    def rows(self) -> list[dict[str, object]]:
        sql = text("SELECT * FROM audit ORDER BY run_id")
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(sql)]
        for row in rows:
            row["note"] = ""
            if row["run_id"] in self.crashed_runs and row["status"] in DONE:
                row["note"] = "recovered after crash (same signed tx re-posted)"
            for key in ("request_id", "signature"):
                value = row.get(key)
                if isinstance(value, str) and len(value) > 16:
                    row[key] = value[:8] + "…" + value[-6:]
            error = row.get("error")
            if isinstance(error, str) and len(error) > 60:
                row["error"] = error[:59] + "…"
        return rows

    def problems(self, rows: list[dict[str, object]]) -> list[str]:
        """Runs that settled differently from the story (unsettled ones are not problems)."""
        by_plan = {str(r["plan_name"]): r for r in rows}
        out = []
        for plan in self.ws.plans:
            row = by_plan.get(plan.name)
            if row is not None and row["status"] in DONE and row["status"] != plan.expect:
                out.append(f"{plan.name}: expected {plan.expect}, got {row['status']}")
        crash = by_plan.get(CRASH_PLAN)
        if crash is not None and crash["status"] in DONE and not crash["note"]:
            out.append(f"{CRASH_PLAN}: settled without the planned crash and recovery")
        return out

    def close(self) -> None:
        self.engine.dispose()


def print_summary(ws: Workspace, result: DemoResult, out: TextIO) -> None:
    db = quoted(ws.db_path)
    cli = f"{jupcron_command()} --config {quoted(ws.config)}"  # runs as printed (shell.py)
    print("", file=out)
    print("audit (one row per run):", file=out)
    print(render(result.rows, TABLE_COLUMNS, "table"), file=out)
    print("", file=out)
    print(f"Everything is kept in {ws.root} (delete it when done). Query it yourself:", file=out)
    for query in QUERIES:
        print(f'  sqlite3 {db} "{query}"', file=out)
    print(f"  {cli} audit --format json", file=out)
    print(f"  {cli} report --format json", file=out)
    for problem in result.problems:
        print(f"problem: {problem}", file=out)
    print_report(ws, out)


def print_report(ws: Workspace, out: TextIO) -> None:
    """`jupcron report` on the demo's store, and its chart."""
    from jupcron.report.rows import table_row, total_lines, totals

    engine = make_engine(ws.db_url)
    try:
        with engine.connect() as conn:
            reports, known = build(conn)
    finally:
        engine.dispose()
    print("", file=out)
    print("report (what the money did, per plan):", file=out)
    shown = [r for r in reports if r.fills or r.refunded]  # plans that moved money
    print(render([table_row(r, known) for r in shown], REPORT_COLUMNS, "table"), file=out)
    print("", file=out)
    print(total_lines(totals(reports, known)), file=out)
    chart = write_chart(reports, ws.chart)
    chart.chmod(PRIVATE_FILE)  # like every file of the demo (its folder is 0700 meanwhile)
    print(f"chart of the fills: {chart}", file=out)


def drive(ws: Workspace, reporter: Reporter, out: TextIO, duration: float) -> DemoResult:
    """Run the story; always stops every process it started."""
    demo = Demo(ws, reporter, out)
    deadline = time.monotonic() + duration
    reason = "interrupted"
    try:
        try:
            demo.apply_plans()
            demo.start_daemon(FAILPOINT)
            reporter.note(f"{len(ws.plans)} plans due from {ws.start:%H:%M:%S} UTC, "
                          f"{ws.last_offset:.0f} s apart at most; Ctrl-C stops early")  # fmt: skip
            reason = demo.watch(deadline)
        except KeyboardInterrupt:
            reason = "interrupted"
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the cleanup finish
        try:
            codes = demo.stop_daemons()
            reporter.steps(demo.watcher.poll())
        finally:
            signal.signal(signal.SIGINT, previous)
        reporter.close()
        rows = demo.rows()
        problems = demo.problems(rows)
        if demo.failed_daemon:
            problems.append(demo.failed_daemon)
        if codes and codes[-1] not in (0, None) and reason != "daemon_failed":
            problems.append(f"the daemon stopped with status {codes[-1]}")
        if reason == "time_up" and demo.settled():
            problems.append("the order follower did not record the fills in time")
        if reason == "time_up":
            left = [p.name for p in ws.plans if not any(
                r["plan_name"] == p.name and r["status"] in DONE for r in rows)]  # fmt: skip
            reporter.note(f"time is up (--duration {duration:g}); not settled: {', '.join(left)}")
        return DemoResult(not problems, reason, rows, problems)
    finally:
        for proc in demo.daemons:  # belt and braces: nothing outlives the demo
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        demo.close()
