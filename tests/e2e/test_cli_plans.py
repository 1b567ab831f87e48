"""`jupcron plans validate / apply / list` as a subprocess."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import DaemonEnvFactory
from tests.fixtures.daemon import swap_plan as env_swap_plan
from tests.fixtures.plans import CONFIG_DIR, SOL, USDC, PlanFiles, swap_plan, write_plans
from tests.fixtures.runs import skip_run
from tests.unit.test_plans_corpus import CORPUS, EXPECTED

LINE = re.compile(r"^\S+?(:\d+:\d+)?: .+$")
NOW = "2025-01-01T00:00:00Z"


def config_for(tmp_path: Path, db_url: str, plans_dir: Path) -> dict[str, str]:
    path = tmp_path / "jupcron.yaml"
    path.write_text(
        json.dumps({"database": {"url": db_url}, "plans": {"dir": str(plans_dir)}}),
        encoding="utf-8",
    )
    return {"JUPCRON_CONFIG": str(path)}


def test_validate_the_example_plans() -> None:
    result = jupcron("plans", "validate", str(CONFIG_DIR))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok: 5 plans in 3 files"


def test_validate_reports_every_problem_of_the_corpus_at_once() -> None:
    result = jupcron("plans", "validate", str(CORPUS))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == sum(len(v) for v in EXPECTED.values())
    assert all(LINE.match(line) for line in lines), lines
    assert f"{CORPUS}/13-bad-mint.yaml:6:3: request.outputMint:" in result.stderr
    assert result.stdout == ""


def test_validate_hostile_files_one_line_each() -> None:
    for name in ("02-binary.yaml", "08-alias-bomb.yaml", "39-huge-number-of-digits.yaml"):
        result = jupcron("plans", "validate", str(CORPUS / name))
        assert result.returncode == 1
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr


def test_apply_dry_run_apply_list_on_both_backends(
    tmp_path: Path, db_url: str, plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("alpha"), swap_plan("beta", every="15m")]})
    env = config_for(tmp_path, db_url, folder)

    dry = jupcron("plans", "apply", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        "+ alpha",
        "+ beta",
        "dry run: 2 added, 0 changed, 0 disabled, 0 unchanged; nothing written",
        f"safety.dry_run: false in {tmp_path / 'jupcron.yaml'}: runs sign and send their orders",
    ]
    empty = jupcron("plans", "list", "--format", "json", env=env)
    assert json.loads(empty.stdout) == []

    applied = jupcron("plans", "apply", env=env)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[-2] == (
        "applied: 2 added, 0 changed, 0 disabled, 0 unchanged (plans revision 1)"
    )
    assert applied.stdout.splitlines()[-1].startswith("safety.dry_run: false in ")

    listed = jupcron("plans", "list", "--format", "json", "--now", NOW, env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["beta"]["next_utc"] == [
        "2025-01-01T00:15:00Z",
        "2025-01-01T00:30:00Z",
        "2025-01-01T00:45:00Z",
    ]
    assert rows["alpha"]["enabled"] is True
    assert rows["alpha"]["last_status"] is None

    table = jupcron("plans", "list", "--now", NOW, env=env)
    assert table.returncode == 0
    assert "2025-01-01 01:00:00+00:00 (01:00:00Z)" in table.stdout
    assert table.stdout.splitlines()[0].split()[:3] == ["name", "kind", "schedule"]


def test_apply_with_a_broken_file_changes_nothing_and_list_shows_last_status(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("alpha")]})
    env = config_for(tmp_path, sqlite_url, folder)
    assert jupcron("plans", "apply", env=env).returncode == 0

    write_plans(folder / "b.yaml", [swap_plan("beta")])
    write_plans(folder / "bad.yaml", "name: x\nkind: swap\n")
    failed = jupcron("plans", "apply", env=env)
    assert failed.returncode == 1
    assert f"{folder}/bad.yaml:1:1: schedule: missing required key" in failed.stderr
    assert failed.stdout == ""

    engine = make_engine(sqlite_url)
    try:
        factory = session_factory(engine)
        with transaction(factory) as s:
            assert [p.name for p in store_plans.all_plans(s)] == ["alpha"]
            assert store_plans.revision(s) == 1
            alpha = store_plans.get_plan(s, "alpha")
            assert alpha is not None
            slot = datetime(2025, 1, 1, tzinfo=UTC)
        skip_run(engine, alpha, slot, now=slot, error="missed")
    finally:
        engine.dispose()
    listed = jupcron("plans", "list", "--format", "csv", env=env)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.strip().splitlines()
    assert header.startswith("name,kind,version,schedule")
    assert row.startswith("alpha,swap,1,every 1h,UTC,yes,skipped,")


def test_a_plan_naming_a_mint_by_symbol_or_a_truncated_address_is_refused_unapplied(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    """A mint is matched exactly: `USDC`, or its address with a character lost in a
    copy, would be a plan that fails at every run (or buys a token nobody meant). Both
    are refused with the address meant, and `apply` stores nothing."""
    symbol = swap_plan("by-symbol")
    symbol["request"]["inputMint"] = "usdc"
    truncated = swap_plan("truncated")
    truncated["request"]["outputMint"] = USDC[:-1]
    truncated["request"]["inputMint"] = SOL
    folder = plan_files({"a.yaml": [symbol, truncated]})
    env = config_for(tmp_path, sqlite_url, folder)
    failed = jupcron("plans", "apply", env=env)
    assert failed.returncode == 1
    assert (
        "request.inputMint: 'usdc' is a symbol, not a mint address (did you mean USDC's "
        f"mint '{USDC}'?)"
    ) in failed.stderr
    assert (
        f"request.outputMint: '{USDC[:-1]}' is not USDC's mint but a mistyped or truncated "
        f"copy of it (did you mean '{USDC}'?)"
    ) in failed.stderr
    assert "Traceback" not in failed.stderr
    engine = make_engine(sqlite_url)
    try:
        with transaction(session_factory(engine)) as s:
            assert store_plans.all_plans(s) == []
    finally:
        engine.dispose()


def test_apply_without_config_is_one_line(tmp_path: Path) -> None:
    result = jupcron("plans", "apply", env={"JUPCRON_CONFIG": str(tmp_path / "nope.yaml")})
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_apply_warns_of_a_plan_that_can_never_run(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    past = swap_plan("too-late")
    past["schedule"] = {"at": "2024-06-01T00:00:00Z"}
    folder = plan_files({"a.yaml": [swap_plan("hourly"), past]})
    env = config_for(tmp_path, sqlite_url, folder)
    done = jupcron("plans", "apply", "--now", NOW, env=env)
    assert done.returncode == 0, done.stderr  # stored (the operator may mean it), but told
    assert done.stderr.strip() == (
        f"{folder}/a.yaml:16: warning: plan 'too-late' has no fire time after "
        "2025-01-01T00:00:00+00:00 (its at/end is past): it will never run"
    )
    assert "+ too-late" in done.stdout
    again = jupcron("plans", "apply", "--now", NOW, env=env)
    assert again.stderr == ""  # unchanged plans are not warned about again


def test_validate_warns_of_a_plan_that_can_never_run_as_apply_does(
    plan_files: PlanFiles,
) -> None:
    past = swap_plan("too-late")
    past["schedule"] = {"at": "2024-06-01T00:00:00Z"}
    folder = plan_files({"a.yaml": [swap_plan("hourly"), past]})
    done = jupcron("plans", "validate", "--now", NOW, str(folder))
    assert done.returncode == 0, done.stderr  # a warning, as in apply
    assert done.stderr.strip() == (
        f"{folder}/a.yaml:16: warning: plan 'too-late' has no fire time after "
        "2025-01-01T00:00:00+00:00 (its at/end is past): it will never run"
    )
    assert done.stdout.strip() == "ok: 2 plans in 1 file"
    # without --now: the wall clock, and 2024 is past for good
    assert "warning: plan 'too-late'" in jupcron("plans", "validate", str(folder)).stderr


def test_validate_prints_problems_in_file_order(tmp_path: Path) -> None:
    # the schedule's problem (line 10) is found before the request's (line 5):
    # printed by position, lines compared as numbers (5 before 10, not "10" before "5")
    first = tmp_path / "a.yaml"
    first.write_text(
        "name: mixed\nkind: swap\nrequest:\n  inputMint: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v\n"
        "  amount: -1\n  outputMint: So11111111111111111111111111111111111111112\n"
        "description: x\nenabled: true\nschedule:\n  every: soon\n"
    )
    second = tmp_path / "b.yaml"
    second.write_text("name: other\nkind: nope\n")
    done = jupcron("plans", "validate", str(first), str(second))
    assert done.returncode == 1
    places = [line.split(": ", 1)[0] for line in done.stderr.strip().splitlines()]
    assert places == [
        f"{first}:5:3", f"{first}:10:3", f"{second}:1:1", f"{second}:1:1", f"{second}:2:1",
    ], done.stderr  # fmt: skip


def test_apply_shows_the_fields_and_status_says_when_files_differ(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_plans(env_swap_plan("a", {"every": "1h"}))
    env.apply()
    status = json.loads(env.jupcron("status", "--format", "json").stdout)
    assert status["plan_files"]["in_sync"] is True
    env.write_plans(env_swap_plan("a", {"every": "2h"}, amount=2_000_000))
    shown = env.jupcron("status")
    assert "plan files" in shown.stdout
    assert "DIFFER from the store (~ a (version 2))" in shown.stdout
    assert "jupcron plans apply" in shown.stdout
    status = json.loads(env.jupcron("status", "--format", "json").stdout)
    assert (status["plan_files"]["in_sync"], status["plan_files"]["diff"]) == (
        False, ["~ a (version 2)"],
    )  # fmt: skip
    done = env.jupcron("plans", "apply")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("~ a (version 2)")
    assert "    request.amount: 1000000 → 2000000" in lines[at + 1 :]
    assert "    schedule.every: 3600 → 7200" in lines[at + 1 :]
    assert "in sync with the store" in env.jupcron("status").stdout


def test_apply_with_jobs_reads_files_on_workers_and_says_what_one_process_says(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    """`plans apply --jobs 3` (two worker processes read the files): the same output
    and exit status as `--jobs 1`, for a good set and for one with a bad file."""
    files = {f"f{n}.yaml": [swap_plan(f"p{n}-{i}", every=f"{i + 1}h") for i in range(20)]
             for n in range(6)}  # fmt: skip
    folder = plan_files(files)
    env = config_for(tmp_path, sqlite_url, folder)
    dry = [jupcron("plans", "apply", "--dry-run", "--jobs", jobs, env=env) for jobs in "13"]
    assert dry[0].returncode == dry[1].returncode == 0, dry[1].stderr
    assert dry[1].stdout == dry[0].stdout
    assert "dry run: 120 added" in dry[1].stdout

    write_plans(folder / "f3.yaml", [swap_plan("p3-0", every="nope")])
    bad = [jupcron("plans", "apply", "--jobs", jobs, env=env) for jobs in "13"]
    assert bad[0].returncode == bad[1].returncode == 1
    assert bad[1].stderr == bad[0].stderr
    assert f"{folder}/f3.yaml:" in bad[1].stderr

    refused = jupcron("plans", "apply", "--jobs", "0", env=env)
    assert refused.returncode == 2
    assert "--jobs" in refused.stderr
    assert "Traceback" not in refused.stderr
