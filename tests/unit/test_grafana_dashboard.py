"""The shipped Grafana dashboard (docs/grafana/jupcron-dashboard.json): an importable
dashboard, and every metric its PromQL asks for is one the daemon's /metrics serves
(scraped from a real listener, not a list kept here)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import start_listener

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs" / "grafana" / "jupcron-dashboard.json"
PROMETHEUS_OWN = {"up"}  # series Prometheus itself adds to every scrape
SUFFIXES = {"counter": ("_total", "_created"), "gauge": ("",),
            "histogram": ("_bucket", "_count", "_sum", "_created")}  # fmt: skip
PANEL_TYPES = {"row", "stat", "timeseries", "table", "gauge", "bargauge"}


def load() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def panels(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in data["panels"]:
        yield panel
        yield from panel.get("panels", [])


def expressions(data: dict[str, Any]) -> list[str]:
    out = [t["expr"] for p in panels(data) for t in p.get("targets", [])]
    out += [v["query"] for v in data["templating"]["list"] if v.get("type") == "query"]
    return out


def metric_names(expr: str) -> set[str]:
    """The series names a PromQL expression selects: identifiers outside label matchers,
    strings, ranges and by/without lists that are not functions or keywords."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    text = re.sub(r"\$\w+", "", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        rest = text[match.end() :].lstrip()
        word = match.group()
        if rest.startswith("(") or word in {"and", "or", "unless", "offset", "bool"}:
            continue
        if re.fullmatch(r"[0-9.e]+", word):
            continue
        names.add(word)
    # label_values(metric, label): its first argument is a metric
    names |= set(re.findall(r"label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)", expr))
    names -= {m.group(1) for m in re.finditer(r"label_values\([^,]*,\s*(\w+)\)", expr)}
    return names


@pytest.fixture(scope="module")
def exported() -> set[str]:
    """Every sample name the daemon's /metrics can serve, from a real scrape."""
    server = start_listener(Metrics(), "127.0.0.1:0")
    try:
        scrape = httpx.get(server.url + "/metrics", timeout=10).text
    finally:
        server.stop()
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", scrape, flags=re.MULTILINE):
        if kind == "counter":  # named with or without _total, as prometheus_client has it
            name = name.removesuffix("_total")
        names |= {name + suffix for suffix in SUFFIXES.get(kind, ("",))}
    names |= set(re.findall(r"^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]", scrape, flags=re.MULTILINE))
    assert "jupcron_runway_runs" in names  # the scrape is what it should be
    return names


def test_the_dashboard_is_an_importable_grafana_dashboard() -> None:
    data = load()
    assert data["title"]
    assert data["uid"]
    assert isinstance(data["schemaVersion"], int)
    (source,) = data["__inputs"]
    assert (source["type"], source["pluginId"]) == ("datasource", "prometheus")
    ids = [p["id"] for p in panels(data)]
    assert len(ids) == len(set(ids))
    for panel in panels(data):
        assert panel["type"] in PANEL_TYPES, panel
        grid = panel["gridPos"]
        assert all(isinstance(grid[k], int) for k in ("h", "w", "x", "y"))
        assert grid["x"] >= 0
        assert grid["x"] + grid["w"] <= 24
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${" + source["name"] + "}"
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs))


def test_the_dashboard_shows_what_operators_asked_for() -> None:
    used = set().union(*(metric_names(e) for e in expressions(load())))
    for wanted in ("jupcron_runs_total", "jupcron_in_doubt_runs", "jupcron_wallet_balance",
                   "jupcron_runway_runs", "jupcron_notifications_total", "jupcron_leader",
                   "jupcron_healthy"):  # fmt: skip
        assert wanted in used, wanted
    statuses = " ".join(expressions(load()))
    assert "failed|rejected|in_doubt" in statuses


def test_every_metric_the_dashboard_asks_for_is_exported(exported: set[str]) -> None:
    for expr in expressions(load()):
        names = metric_names(expr)
        assert names, expr  # each expression selects something
        unknown = names - exported - PROMETHEUS_OWN
        assert not unknown, f"{expr}: not on /metrics: {sorted(unknown)}"


def test_the_name_reader_finds_what_a_typo_would_break() -> None:
    expr = 'sum by (status) (increase(jupcron_runz_total{status=~"failed"}[1h])) / up'
    assert metric_names(expr) == {"jupcron_runz_total", "up"}
    assert metric_names("label_values(jupcron_healthy, job)") == {"jupcron_healthy"}
    assert metric_names(
        "histogram_quantile(0.95, sum by (le) (rate(jupcron_fire_lag_seconds_bucket[5m])))"
    ) == {"jupcron_fire_lag_seconds_bucket"}


def test_the_docs_link_the_dashboard() -> None:
    docs = (ROOT / "docs" / "operations.md").read_text()
    assert "grafana/jupcron-dashboard.json" in docs
