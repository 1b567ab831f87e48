"""`jupcron demo` as a subprocess: the whole story, the audit table at the end,
exit 0, and no process left behind."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupcron.demo.workspace import demo_plans
from tests.e2e.cli import jupcron
from tests.support.once import once

pytestmark = pytest.mark.timeout(300)  # the demo alone: up to its 180 s wait on a loaded machine

KINDS = ("swap", "recurring", "trigger-cancel")
# its output, its folder, and what its status page answered while it ran
DemoRun = tuple[subprocess.CompletedProcess[str], Path, dict[str, Any]]


def table_rows(out: str) -> list[dict[str, str]]:
    """The audit table printed after 'audit (one row per run):'."""
    lines = out.split("audit (one row per run):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    rows = []
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


def _watch_page(proc: subprocess.Popen[str], out: list[str], seen: dict[str, Any]) -> None:
    """Collect the demo's output; once it prints the page's address, ask the page."""
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line)
        found = re.match(r"status page (http://127\.0\.0\.1:\d+/) ", line)
        if found and "url" not in seen:
            seen["url"] = found[1]
            threading.Thread(target=_ask_page, args=(proc, found[1], seen), daemon=True).start()


def _ask_page(proc: subprocess.Popen[str], url: str, seen: dict[str, Any]) -> None:
    """Ask until the page answers, for as long as the demo runs: the address is printed
    before the plans are applied and the daemon started, which a loaded machine took
    more than 30 s to do (a clean-clone run whose demo took 50 s in all)."""
    while proc.poll() is None and "plans" not in seen:
        try:
            answer = httpx.get(url + "api/plans", timeout=5)
            if answer.status_code == 200 and answer.json()["total"] == len(demo_plans("-")):
                # both from one daemon's life: the demo kills and restarts it once
                page = httpx.get(url, timeout=5).status_code
                seen.update(plans=answer.json(), page=page)
        except httpx.HTTPError:
            pass  # the daemon is not up yet, or restarting after its planned crash
        time.sleep(0.5)


@pytest.fixture(scope="module")
def demo_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> DemoRun:
    """The demo's output, its folder, and what its status page answered while it ran
    (made once for the session: tests/support/once.py)."""
    return once(tmp_path_factory, "demo", lambda: run_demo(tmp_path_factory))


def run_demo(
    tmp_path_factory: pytest.TempPathFactory,
) -> DemoRun:
    root = tmp_path_factory.mktemp("demo") / "work"
    demo_seen: dict[str, Any] = {}
    # the demo ends once every run settled (~25 s); the rest is room for a loaded machine
    args = [sys.executable, "-m", "jupcron", "demo", "--duration", "120", "--dir", str(root)]
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "JUPITER_API_KEY")}
    old = os.umask(0o022)  # inherited by the demo: a file it did not make private is 0644
    try:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, stdin=subprocess.DEVNULL)  # fmt: skip
    finally:
        os.umask(old)
    out: list[str] = []
    reader = threading.Thread(target=_watch_page, args=(proc, out, demo_seen), daemon=True)
    reader.start()
    try:
        code = proc.wait(180)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(10)
    err = proc.stderr.read() if proc.stderr else ""
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    done = subprocess.CompletedProcess(args, code, "".join(out), err)
    return done, root, demo_seen


def test_demo_serves_the_status_page_while_it_runs(
    demo_run: DemoRun,
) -> None:
    done, _, demo_seen = demo_run
    assert f"status page {demo_seen['url']} (open it while the demo runs)" in done.stdout
    assert demo_seen.get("page") == 200, demo_seen
    names = sorted(p["name"] for p in demo_seen["plans"]["plans"])
    assert names == sorted(r["plan_name"] for r in table_rows(done.stdout))


def test_demo_ends_with_succeeded_rejected_and_recovered_runs(
    demo_run: DemoRun,
) -> None:
    done, root, _ = demo_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = table_rows(done.stdout)
    succeeded = {r["kind"] for r in rows if r["status"] == "succeeded"}
    assert succeeded == set(KINDS)
    assert [r["plan_name"] for r in rows if r["status"] == "rejected"] == ["demo-swap-hostile"]
    hostile = next(r for r in rows if r["plan_name"] == "demo-swap-hostile")
    assert hostile["signature"] == ""  # nothing signed
    assert "txguard refused" in hostile["error"]
    # the crash plan's run, and any other signed when it died (its plans due together on a
    # loaded machine), each re-posted and succeeded
    recovered = {r["plan_name"]: r["status"] for r in rows if r["note"].startswith("recovered")}
    assert recovered.get("demo-swap-crash") == "succeeded", recovered
    assert set(recovered.values()) == {"succeeded"}, recovered
    # the SQL to query it, with the database path, then the report and its chart
    db = root / "jupcron.db"
    lines = done.stdout.rstrip().splitlines()
    sql = [line for line in lines if line.startswith(f"  sqlite3 {db} ")]
    assert "FROM audit" in sql[0]
    assert any("FROM fills" in line for line in sql)
    assert db.exists()
    assert lines[-1] == f"chart of the fills: {root / 'fills.png'}"


def test_demo_shows_each_run_moving_through_its_states(
    demo_run: DemoRun,
) -> None:
    done, _, _ = demo_run
    crash = [line.split()[-1] for line in done.stdout.splitlines()
             if " demo-swap-crash " in line and " -> " in line]  # fmt: skip
    assert crash == ["pending", "requested", "signed", "submitted", "succeeded"]
    lines = done.stdout.splitlines()
    killed = next(i for i, line in enumerate(lines) if "SIGKILLed at failpoint after_sign" in line)
    signed = next(
        i for i, line in enumerate(lines) if "demo-swap-crash" in line and "-> signed" in line
    )
    submitted = next(
        i for i, line in enumerate(lines) if "demo-swap-crash" in line and "-> submitted" in line
    )
    assert signed < killed < submitted  # signed, then the crash, then the recovery posts it


def test_demo_leaves_no_process_and_only_private_files(
    demo_run: DemoRun,
) -> None:
    done, root, _ = demo_run
    assert done.returncode == 0
    assert processes_mentioning(str(root)) == []
    pids = [int(p) for p in re.findall(r"daemon pid (\d+)", done.stdout)]
    assert len(pids) == 2  # the one that was killed, the one that recovered
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists()
    modes = {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}
    for name in ("keypair.json", "jupcron.yaml", "plans/demo.yaml", "jupcron.db",
                 "daemon-1.log", "daemon-2.log", "jupcron.db.lock", "fills.png"):  # fmt: skip
        assert name in modes, sorted(modes)
    expected = {n: 0o700 if (root / n).is_dir() else 0o600 for n in modes}
    assert modes == expected
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def report_rows(out: str) -> dict[str, dict[str, str]]:
    """The report table printed at the end, by plan."""
    block = out.split("report (what the money did, per plan):\n", 1)[1]
    lines = block.split("\n\n", 1)[0].splitlines()  # the table, before the totals
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    rows = {}
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        row = dict(zip(names, cells, strict=True))
        rows[row["plan_name"]] = row
    return rows


def test_demo_ends_with_the_report_of_the_fills(
    demo_run: DemoRun,
) -> None:
    done, _, _ = demo_run
    rows = report_rows(done.stdout)
    assert rows["demo-weekly-dca"]["fills"] == "2"  # both rounds of the DCA, followed
    assert rows["demo-weekly-dca"]["spent"] == "100 USDC"
    assert rows["demo-weekly-dca"]["average_price"].endswith(" USDC per SOL")
    assert rows["demo-cancel-limit"]["fills"] == "1"  # the limit order's fill before the cancel
    assert rows["demo-cancel-limit"]["refunded"] == "3 USDC"
    assert rows["demo-hourly-swap"]["spent"] == "1 USDC"
    assert rows["demo-hourly-swap"]["value_now"].endswith(" USDC")  # at the price now
    assert "demo-swap-hostile" not in rows  # only the plans that moved money
    assert "network fees paid: " in done.stdout
    assert "value now: " in done.stdout


def test_the_demo_chart_is_a_picture_with_something_in_it(
    demo_run: DemoRun,
) -> None:
    from PIL import Image

    _, root, _ = demo_run
    with Image.open(root / "fills.png") as image:
        image.load()  # decodes the whole file
        assert image.format == "PNG"
        assert image.width > 600
        assert image.height > 400
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None
    assert len(colors) > 50  # not blank: lines, text, markers
    spent_blue = (0x09, 0x69, 0xDA)
    assert any(rgb == spent_blue for _, rgb in colors)  # the spend line was drawn


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "something").write_text("x")
    done = jupcron("demo", "--dir", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path}: not empty; give a new or empty folder for --dir"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["something"]
