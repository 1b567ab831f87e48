"""`jupcron report --chart PATH`: a picture of each plan's fills over time.

One row per plan with fills: cumulative spend and receipts (token units; base
units where the decimals are unknown) on two scales, and the price of each
fill (output per input). PNG or SVG by the file's extension. matplotlib on its
Agg canvas: no display, no network, no global pyplot state. The amounts come
from exact `Decimal` values; floats are only the pixels' positions.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from daemon.errors import ConfigError
from daemon.report.build import PlanReport

FORMATS = {".png": "png", ".svg": "svg"}
SPENT, RECEIVED, PRICE = "#c0392b", "#27ae60", "#2c3e50"
PAD_ALONE = 1 / 24  # days either side of a lone fill
ROW_HEIGHT = 3.2
WIDTH = 11.0


def chart_format(path: Path) -> str:
    """The image format for `path`; a clear error for anything else."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(f"{path}: the chart must be a .png or .svg file")
    return fmt


def _series(report: PlanReport) -> tuple[list[float], list[float], list[float], list[float]]:
    from matplotlib.dates import date2num

    times: list[float] = []
    spent: list[float] = []
    got: list[float] = []
    prices: list[float] = []
    total_in = total_out = 0
    for fill in report.fills:
        total_in += fill.in_amount
        total_out += fill.out_amount
        human_in = report.human_in(total_in)
        human_out = report.human_out(total_out)
        times.append(float(date2num(fill.filled_at)))  # type: ignore[no-untyped-call]
        spent.append(float(human_in if human_in is not None else Decimal(total_in)))
        got.append(float(human_out if human_out is not None else Decimal(total_out)))
        one_in, one_out = report.human_in(fill.in_amount), report.human_out(fill.out_amount)
        if one_in and one_out is not None:
            prices.append(float(one_out / one_in))
        else:
            prices.append(fill.out_amount / fill.in_amount if fill.in_amount else 0.0)
    return times, spent, got, prices


def _span(times: list[float]) -> tuple[float, float]:
    low, high = min(times), max(times)
    pad = (high - low) * 0.05 or PAD_ALONE
    return low - pad, high + pad


def _time_axis(axes: Any, span: tuple[float, float]) -> None:
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(maxticks=6)  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    axes.set_xlim(*span)
    axes.tick_params(axis="x", labelsize=8)


def write_chart(reports: list[PlanReport], path: Path) -> Path:
    fmt = chart_format(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    shown = [r for r in reports if r.fills]
    rows = max(len(shown), 1)
    figure = Figure(figsize=(WIDTH, ROW_HEIGHT * rows + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle("jupcron: fills per plan", fontsize=13, fontweight="bold")
    if not shown:
        ax = figure.add_subplot(1, 1, 1)
        ax.text(0.5, 0.5, "no fills in this period", ha="center", va="center", fontsize=14)
        ax.set_axis_off()
    grid = figure.add_gridspec(rows, 2, width_ratios=(3, 2)) if shown else None
    for n, report in enumerate(shown):
        assert grid is not None
        times, spent, got, prices = _series(report)
        unit_in = report.input_token.label if report.input_token else "base units"
        unit_out = report.output_token.label if report.output_token else "base units"
        span = _span(times)
        left = figure.add_subplot(grid[n, 0])
        # from zero just before the first fill, a step up at each fill, flat to the end
        steps_t = [span[0], *times, span[1]]
        left.step(steps_t, [0.0, *spent, spent[-1]], where="post", color=SPENT, linewidth=2,
                  marker="o", markevery=list(range(1, len(times) + 1)))  # fmt: skip
        left.set_ylabel(f"spent, {unit_in}", color=SPENT)
        left.set_ylim(bottom=0)
        left.set_title(f"{report.plan_name}: cumulative spend and receipts", fontsize=10)
        right = left.twinx()
        marks = list(range(1, len(times) + 1))
        right.step(steps_t, [0.0, *got, got[-1]], where="post", color=RECEIVED, linewidth=2,
                   linestyle="--", marker="s", markevery=marks)  # fmt: skip
        right.set_ylabel(f"received, {unit_out}", color=RECEIVED)
        right.set_ylim(bottom=0)
        price = figure.add_subplot(grid[n, 1])
        price.plot(times, prices, marker="o", color=PRICE)
        price.set_title(f"fill price ({unit_out} per {unit_in})", fontsize=10)
        for axes in (left, price):
            _time_axis(axes, span)
        left.grid(alpha=0.3)
        price.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format=fmt, dpi=110)
    return path
