"""Metrics registry contents and the listen address parser (no I/O)."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from jupcron.errors import ConfigError
from jupcron.listen.metrics import Metrics
from jupcron.listen.server import parse_listen


def value(metrics: Metrics, name: str, labels: dict[str, str] | None = None) -> float | None:
    return metrics.registry.get_sample_value(name, labels or {})


def test_record_run_moves_the_labelled_counter() -> None:
    metrics = Metrics()
    metrics.record_run("recurring_time", "confirmed")
    metrics.record_run("recurring_time", "confirmed")
    metrics.record_run("trigger", "rejected")
    assert (
        value(metrics, "jupcron_runs_total", {"kind": "recurring_time", "status": "confirmed"}) == 2
    )
    assert value(metrics, "jupcron_runs_total", {"kind": "trigger", "status": "rejected"}) == 1


def test_every_issue_metric_is_exported() -> None:
    metrics = Metrics()
    metrics.observe_fire_lag(1.5)
    metrics.observe_fire_lag(-3)  # a clock step back counts as no lag
    metrics.observe_api_call("recurring.create_order", 200, 0.3)
    metrics.record_retry("recurring.execute")
    metrics.add_rate_limit_wait(2.5)
    metrics.add_rate_limit_wait(0)
    metrics.record_misfire("trigger")
    metrics.set_in_doubt(3)
    metrics.set_leader(True)
    metrics.set_plans(12)
    assert value(metrics, "jupcron_fire_lag_seconds_count") == 2
    assert value(metrics, "jupcron_fire_lag_seconds_sum") == 1.5
    assert (
        value(
            metrics,
            "jupcron_api_latency_seconds_count",
            {"operation": "recurring.create_order", "status": "200"},
        )
        == 1
    )
    assert value(metrics, "jupcron_api_retries_total", {"operation": "recurring.execute"}) == 1
    assert value(metrics, "jupcron_rate_limit_wait_seconds_total") == 2.5
    assert value(metrics, "jupcron_misfires_total", {"kind": "trigger"}) == 1
    assert value(metrics, "jupcron_in_doubt_runs") == 3
    assert value(metrics, "jupcron_leader") == 1
    assert value(metrics, "jupcron_plans") == 12
    metrics.set_leader(False)
    assert value(metrics, "jupcron_leader") == 0


def test_two_registries_do_not_collide_and_global_is_untouched() -> None:
    first, second = Metrics(), Metrics()
    first.record_run("ultra", "confirmed")
    assert value(second, "jupcron_runs_total", {"kind": "ultra", "status": "confirmed"}) is None
    assert (
        REGISTRY.get_sample_value("jupcron_runs_total", {"kind": "ultra", "status": "confirmed"})
        is None
    )


def test_render_is_prometheus_text() -> None:
    metrics = Metrics()
    metrics.record_run("trigger", "failed")
    text = metrics.render().decode()
    assert "# TYPE jupcron_runs_total counter" in text
    assert 'jupcron_runs_total{kind="trigger",status="failed"} 1.0' in text


@pytest.mark.parametrize(
    ("listen", "expected"),
    [
        ("127.0.0.1:9464", ("127.0.0.1", 9464)),
        (":9464", ("127.0.0.1", 9464)),
        ("[::1]:0", ("::1", 0)),
        ("10.0.0.5:80", ("10.0.0.5", 80)),
        ("localhost:9000", ("localhost", 9000)),
    ],
)
def test_parse_listen(listen: str, expected: tuple[str, int]) -> None:
    assert parse_listen(listen) == expected


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("9464", "expected HOST:PORT"),
        ("127.0.0.1:http", "must be a number"),
        ("127.0.0.1:70000", "0-65535"),
        ("example.com:9464", "IP address or localhost"),
    ],
)
def test_parse_listen_errors_are_one_line(listen: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_listen(listen)
    assert "\n" not in str(info.value)
