"""Processes for the benchmarks: the emulator and the daemon, each its own OS
process on loopback, plus what we read about them from ``/proc``.

Nothing here asserts on timing; it only measures.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, text

from jupcron.chain.wallet import write_keypair_file
from jupcron.demo.proc import terminate
from jupcron.store import migrate
from jupcron.store.engine import make_engine

JUPCRON = [sys.executable, "-m", "jupcron"]
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
FINAL = ("succeeded", "failed", "rejected", "skipped", "dry_run", "in_doubt")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    drop = ("JUPCRON_CONFIG", "NOTIFY_SOCKET", "JUPCRON_FAILPOINTS", "JUPITER_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra or {})
    return env


# ---------------------------------------------------------------- /proc


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (seconds)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def postgres_cpu_seconds() -> float:
    """utime + stime of every running process named ``postgres`` (the test cluster's
    server and backends; a backend that exits meanwhile takes its share with it)."""
    total = 0.0
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "postgres":
                total += cpu_seconds(int(comm.parent.name))
        except (OSError, ValueError):  # gone meanwhile
            continue
    return total


def rss_mb(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * PAGE / 1e6


def percentiles(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"p50": float("nan"), "p99": float("nan"), "max": float("nan")}

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {"p50": statistics.median(ordered), "p99": pick(0.99), "max": ordered[-1]}


# ---------------------------------------------------------------- emulator


class EmulatorProcess:
    """`jupcron emulator --listen 127.0.0.1:0 [...]` as a child process."""

    def __init__(self, *args: str, log: Path) -> None:
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [*JUPCRON, "emulator", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE, stderr=self._log, text=True, env=_env(),
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.close()
            raise RuntimeError(f"the emulator did not start (see {log})")
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def ledger(self) -> dict[str, Any]:
        return dict(self.http.get("/_emulator/ledger").json())

    def reset(self) -> None:
        self.http.post("/_emulator/reset").raise_for_status()

    def fund(self, owner: str, mint: str, amount: int) -> None:
        """Set `owner`'s balance of `mint` to `amount` (raw units)."""
        balance = {"owner": owner, "mint": mint, "amount": amount}
        self.http.post("/_emulator/balances", json=balance).raise_for_status()

    def close(self) -> None:
        terminate(self.proc, 15)
        if hasattr(self, "http"):
            self.http.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


# ---------------------------------------------------------------- plans


def swap_plan(name: str, schedule: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "swap",
        "schedule": schedule,
        "request": {"inputMint": USDC, "outputMint": SOL, "amount": 1_000_000},
    }


def recurring_plan(name: str, schedule: dict[str, Any]) -> dict[str, Any]:
    """A Recurring (DCA) order: 200 USDC → SOL in two slices a day apart (the
    minimal client's ``--kind recurring`` sends the same createOrder body)."""
    return {
        "name": name,
        "kind": "recurring",
        "schedule": schedule,
        "request": {
            "inputMint": USDC,
            "outputMint": SOL,
            "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 2, "interval": 86_400}},
        },
    }


PLAN_KINDS = {"swap": swap_plan, "recurring": recurring_plan}


def one_shot_plans(
    count: int, due: datetime, prefix: str = "due", kind: str = "swap"
) -> list[dict[str, Any]]:
    make = PLAN_KINDS[kind]
    return [make(f"{prefix}-{i:05d}", {"at": due.isoformat()}) for i in range(count)]


def daily_plans(count: int, days: str = "*") -> list[dict[str, Any]]:
    """Swaps at every minute and hour of the day, spread; `days`: their day-of-month
    field (``29`` with February: due on none of the bench's days)."""
    month = "2" if days != "*" else "*"
    return [
        swap_plan(f"daily-{i:05d}",
                  {"cron": f"{i % 60} {i % 24} {days} {month} *", "timezone": "UTC"})
        for i in range(count)
    ]  # fmt: skip


# ---------------------------------------------------------------- daemon


@dataclass
class Bench:
    """A config, keypair, plans folder and migrated database in ``root``."""

    root: Path
    db_url: str
    api_url: str
    config_extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    proc: subprocess.Popen[str] | None = None
    # the bench's own reads, on one engine while the daemon runs: an engine a poll
    # opened a PostgreSQL session (a backend process, and SQLAlchemy's first queries)
    # every 0.2 s, on the two cores being measured
    _engine: Engine | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.plans = self.root / "plans"
        self.plans.mkdir(parents=True)
        self.keypair = self.root / "keypair.json"
        self.wallet = write_keypair_file(self.keypair)
        self.config = self.root / "jupcron.yaml"
        data: dict[str, Any] = {
            # both buckets out of the way (Swap V2's execute has its own, keyless 20/s):
            # the figures are jupcron's, not a pacer's
            "api": {
                "base_url": self.api_url,
                "rate_limit": 10_000,
                "execute_rate_limit": 10_000,
                "read_timeout": 30,
            },
            "wallet": {"keypair": str(self.keypair)},
            "database": {"url": self.db_url},
            "plans": {"dir": str(self.plans)},
            "logging": {"level": "info", "format": "json"},
        }
        for section, values in self.config_extra.items():
            data.setdefault(section, {}).update(values)
        self.config.write_text(json.dumps(data, indent=2))
        migrate.upgrade(self.db_url)

    def jupcron(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*JUPCRON, "--config", str(self.config), *args],
            capture_output=True, text=True, timeout=timeout, env=_env(), check=False,
        )  # fmt: skip

    def apply(self, plans: list[dict[str, Any]]) -> float:
        """Write the plans (2,000 a file: files are limited to 1 MB), then
        `jupcron plans apply`; the seconds it took."""
        for old in self.plans.glob("*.yaml"):
            old.unlink()
        for n, start in enumerate(range(0, len(plans), 2_000)):
            chunk = plans[start : start + 2_000]
            (self.plans / f"plans-{n:02d}.yaml").write_text(json.dumps({"plans": chunk}))
        started = time.monotonic()
        done = self.jupcron("plans", "apply", timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"plans apply failed: {done.stderr[-2000:]}")
        return time.monotonic() - started

    def start(self, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """`jupcron run`; with ``JUPCRON_BENCH_CPROFILE=DIR`` under cProfile (every
        thread, CPU time) into ``DIR/<test>.prof`` when it stops."""
        self._log = (self.root / "daemon.log").open("w")
        command = JUPCRON
        folder = os.environ.get("JUPCRON_BENCH_CPROFILE")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            out = Path(folder) / f"{self.root.parent.name}.prof"
            command = [sys.executable, "-m", "tests.bench.cprofile_run", str(out), *JUPCRON[1:]]
        self.proc = subprocess.Popen(
            [*command, "--config", str(self.config), "run"],
            stdout=self._log, stderr=subprocess.STDOUT, text=True, env=_env(env),
        )  # fmt: skip
        return self.proc

    def stop(self, timeout: float = 30) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        proc = self.proc
        if proc is None:
            return
        terminate(proc, timeout)
        self._log.close()
        self.proc = None

    def sql(self, query: str) -> list[dict[str, Any]]:
        if self._engine is None:
            self._engine = make_engine(self.db_url)
        with self._engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(text(query))]

    def count_final(self) -> int:
        statuses = ", ".join(f"'{s}'" for s in FINAL)
        rows = self.sql(f"SELECT count(*) AS n FROM runs WHERE status IN ({statuses})")  # noqa: S608
        return int(rows[0]["n"])


def start_profiler(pid: int, tmp: Path, name: str) -> subprocess.Popen[bytes] | None:
    """With ``JUPCRON_BENCH_PROFILE=DIR``: sample ``pid`` with py-spy (from PATH)
    into ``DIR/<name>.txt`` (collapsed stacks, all threads) until stopped. With
    ``JUPCRON_BENCH_ATTACH=COMMAND`` instead: COMMAND, its ``{pid}`` and ``{out}``
    (``<name>`` in ``JUPCRON_BENCH_ATTACH_DIR``, default /tmp) filled in, runs over
    the same window and is stopped with SIGINT (a tracer that counts: perf, strace)."""
    attach = os.environ.get("JUPCRON_BENCH_ATTACH")
    if attach:
        out = Path(os.environ.get("JUPCRON_BENCH_ATTACH_DIR", "/tmp")) / name
        out.parent.mkdir(parents=True, exist_ok=True)
        command = [part.format(pid=pid, out=out) for part in attach.split()]
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = os.environ.get("JUPCRON_BENCH_PROFILE")
    pyspy = shutil.which("py-spy")
    if not folder or pyspy is None:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    out = Path(folder) / f"{name}.txt"
    return subprocess.Popen(
        [pyspy, "record", "--pid", str(pid), "--format", "raw", "--rate", os.environ.get("JUPCRON_BENCH_PYSPY_RATE", "200"), *os.environ.get("JUPCRON_BENCH_PYSPY_ARGS", "").split(),
         "--output", str(out), "--nonblocking"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def stop_profiler(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def as_utc(value: Any) -> datetime:
    """A timestamp from either backend (SQLite gives text or naive datetimes)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


RUNS_PER_PLAN = 10


def add_runs(url: str, per_plan: int = RUNS_PER_PLAN) -> None:
    """Ten finished runs a plan, written straight into the store (the runner's own
    speed is test_bench's subject, not this one's)."""
    engine = make_engine(url)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        with engine.begin() as conn:
            ids = [i for (i,) in conn.execute(text("SELECT id FROM plans"))]
            rows = [
                {"p": pid, "s": start + timedelta(days=n), "st": "succeeded" if n % 3 else "failed",
                 "t": start}
                for pid in ids for n in range(per_plan)
            ]  # fmt: skip
            conn.execute(
                text(
                    "INSERT INTO runs (plan_id, plan_version, scheduled_for, status, trigger, "
                    "attempts, created_at, updated_at) VALUES (:p, 1, :s, :st, 'schedule', 1, "
                    ":t, :t)"
                ),
                rows,
            )
    finally:
        engine.dispose()
