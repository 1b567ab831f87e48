"""`jupcron demo` as a subprocess: the whole story, the audit table at the end,
exit 0, and no process left behind."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from tests.e2e.cli import jupcron

KINDS = ("swap", "recurring", "trigger-cancel")


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


@pytest.fixture(scope="module")
def demo_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    root = tmp_path_factory.mktemp("demo") / "work"
    old = os.umask(0o022)  # inherited by the demo: a file it did not make private is 0644
    try:
        done = jupcron("demo", "--duration", "35", "--dir", str(root), timeout=90)
    finally:
        os.umask(old)
    return done, root


def test_demo_ends_with_succeeded_rejected_and_recovered_runs(
    demo_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, root = demo_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = table_rows(done.stdout)
    succeeded = {r["kind"] for r in rows if r["status"] == "succeeded"}
    assert succeeded == set(KINDS)
    assert [r["plan_name"] for r in rows if r["status"] == "rejected"] == ["demo-swap-hostile"]
    hostile = next(r for r in rows if r["plan_name"] == "demo-swap-hostile")
    assert hostile["signature"] == ""  # nothing signed
    assert "txguard refused" in hostile["error"]
    recovered = [r for r in rows if r["note"].startswith("recovered after crash")]
    assert [(r["plan_name"], r["status"]) for r in recovered] == [("demo-swap-crash", "succeeded")]
    # the SQL to query it, with the database path, then the report and its chart
    db = root / "jupcron.db"
    lines = done.stdout.rstrip().splitlines()
    sql = [line for line in lines if line.startswith(f"  sqlite3 {db} ")]
    assert "FROM audit" in sql[0]
    assert any("FROM fills" in line for line in sql)
    assert db.exists()
    assert lines[-1] == f"chart of the fills: {root / 'fills.png'}"


def test_demo_shows_each_run_moving_through_its_states(
    demo_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, _ = demo_run
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
    demo_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, root = demo_run
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
    lines = block.splitlines()[:-1]  # the last line names the chart
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
    demo_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, _ = demo_run
    rows = report_rows(done.stdout)
    assert rows["demo-weekly-dca"]["fills"] == "2"  # both rounds of the DCA, followed
    assert rows["demo-weekly-dca"]["spent"] == "100.000000 USDC"
    assert rows["demo-cancel-limit"]["fills"] == "1"  # the limit order's fill before the cancel
    assert rows["demo-cancel-limit"]["refunded"] == "3.000000 USDC"
    assert rows["demo-hourly-swap"]["spent"] == "1.000000 USDC"
    assert rows["demo-swap-hostile"]["fills"] == "0"


def test_the_demo_chart_is_a_picture_with_something_in_it(
    demo_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    from PIL import Image

    _, root = demo_run
    with Image.open(root / "fills.png") as image:
        image.load()  # decodes the whole file
        assert image.format == "PNG"
        assert image.width > 600
        assert image.height > 400
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None
    assert len(colors) > 50  # not blank: lines, text, markers
    spent_red = (0xC0, 0x39, 0x2B)
    assert any(rgb == spent_red for _, rgb in colors)  # the spend line was drawn


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "something").write_text("x")
    done = jupcron("demo", "--dir", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path}: not empty; give a new or empty folder for --dir"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["something"]
