"""The benchmark table: one row per figure, one column per backend, the target beside it."""

from __future__ import annotations

import math
from typing import Any

# (key, label, unit, target text)
ROWS: list[tuple[str, str, str, str]] = [
    ("lone_lag_max_ms", "fire lag, lone plans (max of 3)", "ms", "≤ 50"),
    ("fire_lag_p50_ms", "fire lag p50 (1,000 due at once)", "ms", ""),
    ("fire_lag_p99_ms", "fire lag p99", "ms", "≤ 50 (while capacity allows)"),
    ("fire_lag_max_ms", "fire lag max", "ms", ""),
    ("first_lag_p99_ms", "fire lag max, first 8 of the 1,000", "ms", ""),
    ("all_final_s", "time until all 1,000 final", "s", ""),
    ("jupcron_runs_per_s", "throughput jupcron", "runs/s", ""),
    ("minimal_runs_per_s", "throughput minimal client", "runs/s", ""),
    ("throughput_ratio", "throughput jupcron ÷ minimal", "×", "≥ 0.5"),
    ("jupcron_cpu_ms_per_run", "CPU per run jupcron", "ms", ""),
    ("minimal_cpu_ms_per_run", "CPU per run minimal client", "ms", ""),
    ("cpu_ratio", "CPU per run jupcron ÷ minimal", "×", "≤ 2"),
    ("burst_recurring_s", "300 recurring due at once: all final (median)", "s", ""),
    ("burst_recurring_s_each", "300 recurring: each burst", "s", ""),
    ("burst_recurring_minimal_serial_s", "300 recurring, minimal client serially", "s", ""),
    ("burst_recurring_ratio", "300 recurring: burst ÷ minimal serial", "×", "≤ 1.5"),
    ("burst_recurring_first_request_late_min_s", "300 recurring: first request late, min", "s", ""),
    ("burst_recurring_first_request_late_p50_s", "300 recurring: first request late, p50", "s", ""),
    ("burst_recurring_first_request_late_p99_s", "300 recurring: first request late, p99", "s", ""),
    ("burst_recurring_cpu_ms_per_run", "300 recurring: CPU per run jupcron", "ms", ""),
    ("burst_recurring_minimal_cpu_ms_per_run", "300 recurring: CPU per run minimal", "ms", ""),
    ("burst_recurring_cpu_ratio", "300 recurring: CPU per run ÷ minimal", "×", "≤ 2"),
    ("burst_recurring_emulator_cpu_ms_per_run", "300 recurring: emulator CPU per run", "ms", ""),
    ("burst_recurring_postgres_cpu_ms_per_run", "300 recurring: PostgreSQL CPU per run", "ms", ""),
    ("burst_swap_s", "300 swap (Swap V2) due at once: all final (median)", "s", ""),
    ("burst_swap_s_each", "300 swap (Swap V2): each burst", "s", ""),
    ("burst_swap_minimal_serial_s", "300 swap (Swap V2), minimal client serially", "s", ""),
    ("burst_swap_ratio", "300 swap (Swap V2): burst ÷ minimal serial", "×", "≤ 1.5"),
    ("burst_swap_first_request_late_min_s", "300 swap (Swap V2): first request late, min", "s", ""),
    ("burst_swap_first_request_late_p50_s", "300 swap (Swap V2): first request late, p50", "s", ""),
    ("burst_swap_first_request_late_p99_s", "300 swap (Swap V2): first request late, p99", "s", ""),
    ("burst_swap_cpu_ms_per_run", "300 swap (Swap V2): CPU per run jupcron", "ms", ""),
    ("burst_swap_minimal_cpu_ms_per_run", "300 swap (Swap V2): CPU per run minimal", "ms", ""),
    ("burst_swap_cpu_ratio", "300 swap (Swap V2): CPU per run ÷ minimal", "×", "≤ 2"),
    ("burst_swap_emulator_cpu_ms_per_run", "300 swap (Swap V2): emulator CPU per run", "ms", ""),
    ("burst_swap_postgres_cpu_ms_per_run", "300 swap (Swap V2): PostgreSQL CPU per run", "ms", ""),
    ("rate_achieved_per_s", "rate limit 10/s, pace 10/s: achieved", "req/s", ""),
    ("rate_fidelity", "rate limit: achieved ÷ limit", "×", "≥ 0.95"),
    ("rate_429s", "rate limit: 429s received", "", "0"),
    ("rate_runs_final", "rate limit: runs final in the window", "", ""),
    ("rate_margin_achieved_per_s", "rate limit 10/s, pace 9.9/s: achieved", "req/s", ""),
    ("rate_margin_fidelity", "rate limit, pace 9.9/s: achieved ÷ limit", "×", "≥ 0.95"),
    ("rate_margin_429s", "rate limit, pace 9.9/s: 429s received", "", "0"),
    ("plans_apply_10k_s", "10,000 plans: plans apply", "s", ""),
    ("apply_10000_s", "plans apply, 10,000 plans: time", "s", ""),
    ("apply_10000_cpu_s", "plans apply, 10,000 plans: CPU", "s", ""),
    ("apply_10000_peak_mb", "plans apply, 10,000 plans: peak memory", "MB", ""),
    ("apply_100000_s", "plans apply, 100,000 plans: time", "s", "≤ 30"),
    ("apply_100000_cpu_s", "plans apply, 100,000 plans: CPU", "s", ""),
    ("apply_100000_peak_mb", "plans apply, 100,000 plans: peak memory", "MB", "≤ 200"),
    ("apply_10000_changed_s", "plans apply, 10,000 plans all changed: time", "s", ""),
    ("apply_10000_changed_peak_mb", "plans apply, 10,000 plans all changed: peak memory", "MB", ""),
    ("apply_100000_changed_s", "plans apply, 100,000 plans all changed: time", "s", "≤ 30"),
    (
        "apply_100000_changed_peak_mb",
        "plans apply, 100,000 plans all changed: peak memory",
        "MB",
        "≤ 200",
    ),
    ("apply_10000_yaml_s", "plans apply, 10,000 plans in block YAML: time", "s", ""),
    ("apply_10000_yaml_peak_mb", "plans apply, 10,000 plans in block YAML: peak memory", "MB", ""),
    ("apply_100000_yaml_s", "plans apply, 100,000 plans in block YAML: time", "s", ""),
    (
        "apply_100000_yaml_peak_mb",
        "plans apply, 100,000 plans in block YAML: peak memory",
        "MB",
        "",
    ),
    ("apply_10000_jobs2_s", "plans apply --jobs 2, 10,000 plans: time", "s", ""),
    ("apply_10000_jobs2_peak_mb", "plans apply --jobs 2, 10,000 plans: peak memory", "MB", ""),
    ("apply_100000_jobs2_s", "plans apply --jobs 2, 100,000 plans: time", "s", ""),
    ("apply_100000_jobs2_peak_mb", "plans apply --jobs 2, 100,000 plans: peak memory", "MB", ""),
    ("ready_s", "10,000 plans: start to READY=1", "s", "≤ 3"),
    ("rss_mb", "10,000 plans: RSS after start", "MB", "≤ 150"),
    ("idle_cpu_pct", "10,000 plans: CPU over 30 idle s", "% core", "≤ 1"),
    ("web_page_first_s", "10,000 plans: status page, first (cold)", "s", ""),
    ("web_page_s", "10,000 plans: status page (median of 5)", "s", "< 1"),
    ("web_api_plans_s", "10,000 plans: /api/plans (median of 5)", "s", "< 1"),
    ("web_api_status_s", "10,000 plans: /api/status (median of 5)", "s", ""),
    ("guard_cases", "txguard: genuine transactions judged", "", ""),
    ("guard_plan_median_us", "txguard: judge one for its plan (median)", "µs", ""),
    ("guard_plan_p99_us", "txguard: judge one for its plan (p99)", "µs", ""),
    ("guard_planless_median_us", "txguard: judge one without a plan (median)", "µs", ""),
    ("status_json_s", "10,000 plans, 100,000 runs: jupcron status --format json", "s", ""),
    ("status_table_s", "10,000 plans, 100,000 runs: jupcron status (table)", "s", ""),
    (
        "takeover_led_max_s",
        "3 daemons, 3 wallets: kill -9 to wallet led again (max)",
        "s",
        "within seconds",
    ),
    ("takeover_led_p50_s", "3 daemons, 3 wallets: kill -9 to wallet led again (p50)", "s", ""),
    (
        "takeover_run_max_s",
        "3 daemons, 3 wallets: kill -9 to its next run by another (max)",
        "s",
        "",
    ),
    ("takeover_duplicates", "3 daemons, 3 wallets, kills: slots with two orders", "", "0"),
]


NO_STORE = "no store"


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def _sized(label: str, results: dict[str, dict[str, Any]]) -> str:
    """A footprint row's label with the plan count it ran at (10,000 unless
    JUPCRON_BENCH_FOOTPRINT_PLANS says otherwise; ten runs a plan for status)."""
    plans = next((r["footprint_plans"] for r in results.values() if "footprint_plans" in r), None)
    if plans is None or plans == 10_000 or not label.startswith("10,000 plans"):
        return label
    return label.replace("100,000 runs", f"{plans * 10:,} runs").replace(
        "10,000 plans", f"{plans:,} plans", 1
    )


def render_table(data: dict[str, Any]) -> str:
    results: dict[str, dict[str, Any]] = data["results"]
    # "no store": figures that do not depend on the backend (txguard)
    backends = [b for b in ("sqlite", "postgresql", NO_STORE) if b in results]
    header = ["figure", "unit", *backends, "target"]
    body = [
        [_sized(label, results), unit, *(_cell(results[b].get(key)) for b in backends), target]
        for key, label, unit, target in ROWS
        if any(key in results[b] for b in backends)
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    machine = data["machine"]
    out = [f"jupcron bench, {data['when']}, {machine['cores']} cores, Python {machine['python']}"]
    out.append(line(header))
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out.extend(line(row) for row in body)
    return "\n".join(out)
