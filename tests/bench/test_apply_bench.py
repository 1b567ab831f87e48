"""`jupcron plans apply` of N daily-cron plans, as an operator runs it (a
subprocess): wall time, its CPU and its peak memory. N is 10,000 unless
``JUPCRON_BENCH_APPLY_PLANS`` says otherwise (e.g. ``10000,100000``; 100,000
takes minutes); an apply that adds every plan, and one that changes every plan.
Figures only: `make bench`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.bench.conftest import Figures
from tests.bench.harness import JUPCRON, Bench, _env, daily_plans

SIZES = [int(n) for n in os.environ.get("JUPCRON_BENCH_APPLY_PLANS", "10000").split(",") if n]
PER_FILE = 2_000  # plan files are limited to 1 MB

# runs the command as its only child: its CPU (with its worker processes', which it
# waits for) and its peak memory: the largest sum of the resident memory of it and
# its workers (`plans apply` of many files reads them on one process per core),
# sampled every 20 ms from /proc
_MEASURED = """
import json, os, resource, subprocess, sys, time

def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out

def rss(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0

proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                        text=True)
peak = 0
while proc.poll() is None:
    peak = max(peak, sum(rss(p) for p in tree(proc.pid)))
    time.sleep(0.02)
err = proc.stderr.read()
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "err": err[-2000:],
                  "cpu": use.ru_utime + use.ru_stime, "peak_mb": peak / 2**20,
                  "peak_one_mb": use.ru_maxrss / 1024}))
"""


def _text(chunk: dict[str, Any], form: str) -> str:
    """JSON (what a program that writes plans writes; read by json's scanner), or
    YAML in block style, as a person writes it (read by libyaml)."""
    if form == "json":
        return json.dumps(chunk)
    return yaml.safe_dump(chunk, default_flow_style=False, sort_keys=False)


def _write(bench: Bench, plans: list[dict[str, Any]], form: str = "json") -> None:
    for n, start in enumerate(range(0, len(plans), PER_FILE)):
        chunk = {"plans": plans[start : start + PER_FILE]}
        (bench.plans / f"plans-{n:03d}.yaml").write_text(_text(chunk, form))


def _measured(bench: Bench, jobs: int) -> tuple[float, dict[str, Any]]:
    """`jupcron plans apply --jobs N` as a subprocess: its wall seconds, and its CPU and
    peak memory (`_MEASURED`'s)."""
    command = [*JUPCRON, "--config", str(bench.config), "plans", "apply", "--jobs", str(jobs)]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *command],
        capture_output=True, text=True, timeout=1700, env=_env(), check=True,
    )  # fmt: skip
    took = time.monotonic() - started
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["rc"] == 0, measured["err"]
    return took, measured


def _put(figures: Figures, backend: str, key: str, took: float, measured: dict[str, Any]) -> None:
    figures.put(backend, f"{key}_s", took)
    figures.put(backend, f"{key}_cpu_s", measured["cpu"])
    figures.put(backend, f"{key}_peak_mb", measured["peak_mb"])
    figures.put(backend, f"{key}_peak_one_process_mb", measured["peak_one_mb"])


@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("jobs", "form"), [(1, "json"), (2, "json"), (1, "yaml")])
@pytest.mark.parametrize("count", SIZES)
def test_plans_apply(
    backend_url: tuple[str, str], count: int, jobs: int, form: str, tmp_path: Path,
    figures: Figures,
) -> None:  # fmt: skip
    """The default (one process), ``--jobs 2`` (a worker process reads the files), and
    the default on files in YAML's block style."""
    backend, url = backend_url
    bench = Bench(tmp_path / "jc", url, "http://127.0.0.1:9")
    _write(bench, daily_plans(count), form)
    took, measured = _measured(bench, jobs)
    try:
        stored = bench.sql("SELECT count(*) AS n FROM plans")[0]["n"]
    finally:
        bench.stop()  # its engine: a connection left to the collector fails a later test
    assert stored == count
    key = (
        f"apply_{count}"
        + ("" if jobs == 1 else f"_jobs{jobs}")
        + ("" if form == "json" else f"_{form}")
    )
    _put(figures, backend, key, took, measured)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("count", SIZES)
def test_plans_apply_changed(
    backend_url: tuple[str, str], count: int, tmp_path: Path, figures: Figures
) -> None:
    """The operator edits one setting of every plan (each swap's amount) and applies
    again: every plan a new version (its row updated, a version row added), measured
    as `test_plans_apply`'s default; the first apply (of the plans as they were) is
    not measured."""
    backend, url = backend_url
    bench = Bench(tmp_path / "jc", url, "http://127.0.0.1:9")
    plans = daily_plans(count)
    _write(bench, plans)
    _measured(bench, 1)
    for plan in plans:
        plan["request"]["amount"] += 1
    _write(bench, plans)  # the same files, rewritten
    del plans
    took, measured = _measured(bench, 1)
    try:
        versions = bench.sql("SELECT version, count(*) AS n FROM plans GROUP BY version")
    finally:
        bench.stop()
    assert [(r["version"], r["n"]) for r in versions] == [(2, count)]
    _put(figures, backend, f"apply_{count}_changed", took, measured)
