"""`jupcron plans apply` of N daily-cron plans, as an operator runs it (a
subprocess): wall time, its CPU and its peak memory. N is 10,000 unless
``JUPCRON_BENCH_APPLY_PLANS`` says otherwise (e.g. ``10000,100000``; 100,000
takes minutes). Figures only: `make bench`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.conftest import Figures
from tests.bench.harness import JUPCRON, Bench, _env, daily_plans

SIZES = [int(n) for n in os.environ.get("JUPCRON_BENCH_APPLY_PLANS", "10000").split(",") if n]
PER_FILE = 2_000  # plan files are limited to 1 MB

# runs the command as its only child: its peak RSS and CPU are the command's own
_MEASURED = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'rc': done.returncode, 'err': done.stderr[-2000:],"
    " 'cpu': use.ru_utime + use.ru_stime, 'peak_mb': use.ru_maxrss / 1024}))\n"
)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("count", SIZES)
def test_plans_apply(
    backend_url: tuple[str, str], count: int, tmp_path: Path, figures: Figures
) -> None:
    backend, url = backend_url
    bench = Bench(tmp_path / "jc", url, "http://127.0.0.1:9")
    plans = daily_plans(count)
    for n, start in enumerate(range(0, count, PER_FILE)):
        chunk = {"plans": plans[start : start + PER_FILE]}
        (bench.plans / f"plans-{n:03d}.yaml").write_text(json.dumps(chunk))
    del plans
    command = [*JUPCRON, "--config", str(bench.config), "plans", "apply"]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *command],
        capture_output=True, text=True, timeout=1700, env=_env(), check=True,
    )  # fmt: skip
    took = time.monotonic() - started
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["rc"] == 0, measured["err"]
    stored = bench.sql("SELECT count(*) AS n FROM plans")[0]["n"]
    assert stored == count
    figures.put(backend, f"apply_{count}_s", took)
    figures.put(backend, f"apply_{count}_cpu_s", measured["cpu"])
    figures.put(backend, f"apply_{count}_peak_mb", measured["peak_mb"])
