"""Ctrl-C (SIGINT to the terminal's process group) and SIGTERM (a wrapper: `timeout`,
a systemd stop, `kill PID`) in the middle of `jupcron plans apply`, the CLI as the
operator runs it (the installed console script, a fresh interpreter, its own session)
against a real SQLite store.

The moment is the apply's write: 20,000 new plans are more than `KEPT`, so its one
transaction begins while the worker processes still read the files (the store's write
lock, which this test sees taken, is the marker), and the store must stay as it was
(the transaction rolled back), the command say one line and end 130 (SIGINT) or 143
(SIGTERM), and no worker process of `-j` outlive it or print a traceback of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from jupcron.chain.wallet import write_keypair_file
from jupcron.plans.apply import KEPT
from jupcron.store.engine import make_engine
from tests.fixtures.daemon import swap_plan
from tests.support.wait import wait_until

JUPCRON = Path(sys.executable).with_name("jupcron")  # the console script an operator runs
FILES, PER_FILE = 20, 1_000  # 20,000 plans: more than KEPT, so the write begins mid-read

pytestmark = pytest.mark.slow  # each reads 20,000 plans (~5-10 s on two cores)


def _setup(tmp_path: Path, sqlite_url: str) -> Path:
    """A config on `sqlite_url` and a plans folder of FILES files of new plans."""
    assert FILES * PER_FILE > KEPT
    plans = tmp_path / "plans"
    plans.mkdir()
    for f in range(FILES):
        batch = [swap_plan(f"p{f:02d}-{i:04d}", {"every": "1d"}) for i in range(PER_FILE)]
        (plans / f"f{f:02d}.yaml").write_text(json.dumps({"plans": batch}))
    keypair = tmp_path / "keypair.json"
    write_keypair_file(keypair)
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({
        "api": {"base_url": "http://127.0.0.1:9"},  # --offline: never asked
        "wallet": {"keypair": str(keypair)},
        "database": {"url": sqlite_url},
        "plans": {"dir": str(plans)},
    }))  # fmt: skip
    return config


def _start(tmp_path: Path, config: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "NOTIFY_SOCKET")}
    with (tmp_path / "out.txt").open("wb") as out, (tmp_path / "err.txt").open("wb") as err:
        return subprocess.Popen(
            [str(JUPCRON), "--config", str(config), "plans", "apply", "--offline", *args],
            stdout=out, stderr=err, env=env,
            start_new_session=True,  # a process group of its own, as a shell's job
        )  # fmt: skip


def _sqlite_writing(url: str) -> Callable[[], bool]:
    """Does another connection hold the SQLite store's write lock?"""
    db = Path(url.removeprefix("sqlite:///"))

    def look() -> bool:
        conn = sqlite3.connect(db, timeout=0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            return False
        except sqlite3.OperationalError:
            return True
        finally:
            conn.close()

    return look


def _pg_writing(engine: Engine) -> Callable[[], bool]:
    """Has another session of the PostgreSQL store a transaction that wrote (or locked
    a row: the apply's first step is the plans revision's row, FOR UPDATE)?"""

    def look() -> bool:
        with engine.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
                )
            ).scalar_one()
        return bool(found)

    return look


class _Writing:
    """The apply's write transaction is under way: seen writing `RUNS` looks in a row
    (the short transactions before it, the schema check's, are not), and with `-j` its
    workers started (they are, before the files are read)."""

    RUNS = 10

    def __init__(
        self, writing: Callable[[], bool], proc: subprocess.Popen[bytes], processes: int
    ) -> None:
        self.writing, self.proc, self.processes, self.seen = writing, proc, processes, 0

    def __call__(self) -> bool:
        if self.proc.poll() is not None:
            return True
        if len(_children(self.proc.pid)) < self.processes or not self.writing():
            self.seen = 0
            return False
        self.seen += 1
        return self.seen >= self.RUNS


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for its parent to read its status)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _interrupt_mid_write(
    tmp_path: Path, url: str, sig: signal.Signals, *, group: bool, jobs: int
) -> tuple[int, str, list[int]]:
    """`plans apply` (`jobs`) on the store at `url`, sent `sig` (to its process group,
    or to it alone) once its write transaction is under way: its exit status, stderr
    and the processes it had started."""
    config = _setup(tmp_path, url)
    engine = make_engine(url)
    writing = _sqlite_writing(url) if url.startswith("sqlite") else _pg_writing(engine)
    proc = _start(tmp_path, config, "-j", str(jobs))
    try:
        # with -j N: N-1 workers and multiprocessing's resource tracker
        assert wait_until(_Writing(writing, proc, jobs if jobs > 1 else 0), 120, 0.02)
        assert proc.poll() is None, (tmp_path / "err.txt").read_text()
        started = _children(proc.pid)
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        code = proc.wait(60)
    finally:
        engine.dispose()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return code, (tmp_path / "err.txt").read_text(), started


def _store_untouched(url: str) -> None:
    """The store as before the apply: no plan, no version, no revision."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM plans")).scalar_one() == 0
            assert conn.execute(text("SELECT count(*) FROM plan_versions")).scalar_one() == 0
            revision = conn.execute(
                text("SELECT value FROM store_meta WHERE key = 'plans_revision'")
            ).all()
            assert [tuple(r) for r in revision] in ([], [("0",)])
    finally:
        engine.dispose()


def _left(pids: list[int]) -> list[int]:
    """Of `pids`, those still running once they had a while to end (then killed: a
    failing test leaves nothing behind either)."""
    wait_until(lambda: not any(_alive(p) for p in pids), 20, 0.1)
    left = [p for p in pids if _alive(p)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def test_ctrl_c_mid_write_of_a_parallel_apply(tmp_path: Path, sqlite_url: str) -> None:
    code, said, started = _interrupt_mid_write(
        tmp_path, sqlite_url, signal.SIGINT, group=True, jobs=3
    )

    assert code == 130, said
    assert said == "interrupted\n"  # one line: no worker's traceback, no "Process SpawnProcess"
    assert len(started) >= 2  # the workers were there (and the resource tracker)
    assert _left(started) == []
    _store_untouched(sqlite_url)


@pytest.mark.chaos  # make chaos (CPU: 20,000 plans); SIGTERM: tests/e2e/test_fire_interrupted.py
def test_sigterm_to_a_parallel_apply_leaves_no_worker_behind(
    tmp_path: Path, sqlite_url: str
) -> None:
    """A wrapper's SIGTERM reaches the command alone: its workers (~100 MB each) were
    left blocked on their queue forever, reparented to init."""
    code, said, started = _interrupt_mid_write(
        tmp_path, sqlite_url, signal.SIGTERM, group=False, jobs=3
    )

    assert len(started) >= 2
    assert _left(started) == []
    assert code == 143, said
    assert said == "terminated\n"
    _store_untouched(sqlite_url)


@pytest.mark.chaos  # make chaos (CPU: 20,000 plans); SIGTERM: tests/e2e/test_fire_interrupted.py
def test_sigterm_mid_write_of_an_apply_says_one_line(tmp_path: Path, sqlite_url: str) -> None:
    code, said, _ = _interrupt_mid_write(tmp_path, sqlite_url, signal.SIGTERM, group=True, jobs=1)

    assert code == 143, said
    assert said == "terminated\n"
    _store_untouched(sqlite_url)


def test_a_killed_parallel_apply_leaves_no_worker_behind(tmp_path: Path, sqlite_url: str) -> None:
    """SIGKILL (the OOM killer, a systemd stop's last word): nothing runs in the command,
    so its workers must see for themselves that it is gone."""
    code, _, started = _interrupt_mid_write(
        tmp_path, sqlite_url, signal.SIGKILL, group=False, jobs=3
    )

    assert code == -signal.SIGKILL
    assert len(started) >= 2
    assert _left(started) == []
    _store_untouched(sqlite_url)  # the write lock's transaction never committed


@pytest.mark.postgres
@pytest.mark.chaos  # the SQLite twin runs in make test; this one in make chaos (CPU)
def test_ctrl_c_mid_write_of_a_parallel_apply_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    """The apply's COPY streams into its one transaction: interrupted, it is rolled back."""
    code, said, started = _interrupt_mid_write(tmp_path, pg_url, signal.SIGINT, group=True, jobs=3)

    assert code == 130, said
    assert said == "interrupted\n"
    assert _left(started) == []
    _store_untouched(pg_url)


@pytest.mark.postgres
@pytest.mark.chaos  # the SQLite twin runs in make test; this one in make chaos (CPU)
def test_sigterm_mid_write_of_an_apply_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    code, said, _ = _interrupt_mid_write(tmp_path, pg_url, signal.SIGTERM, group=True, jobs=1)

    assert code == 143, said
    assert said == "terminated\n"
    _store_untouched(pg_url)


@pytest.mark.chaos  # make chaos: each reads 20,000 plans, and make test is near its 10 min
@pytest.mark.parametrize("soon", [True, False], ids=["soon-after", "once-it-says-so"])
def test_a_second_ctrl_c_while_an_apply_stops_says_nothing_more(
    tmp_path: Path, sqlite_url: str, soon: bool
) -> None:
    """The impatient operator presses Ctrl-C again: while the apply waited for its
    workers to finish the files under way, or once ``interrupted`` shows. The second
    interrupt printed the pool's traceback ("Exception ignored in: <generator object
    read_all …>", or "… in: <module 'threading'>" from Python's exit)."""
    config = _setup(tmp_path, sqlite_url)
    proc = _start(tmp_path, config, "-j", "3")
    said = tmp_path / "err.txt"
    try:
        assert wait_until(_Writing(_sqlite_writing(sqlite_url), proc, 3), 120, 0.02)
        assert proc.poll() is None, said.read_text()
        started = _children(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        if soon:  # (no marker inside the pool's shutdown: a press a moment later)
            time.sleep(0.02)
        else:
            assert wait_until(lambda: "interrupted" in said.read_text(), 60, 0.01)
        with contextlib.suppress(ProcessLookupError):  # (it may have ended already)
            os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)

    assert code == 130, said.read_text()
    assert said.read_text() == "interrupted\n"
    assert _left(started) == []
    _store_untouched(sqlite_url)
