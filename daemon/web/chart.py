"""Each plan's chart, drawn on the server as SVG: cumulative receipts (a step
line) and the price of each fill (dots joined by a line), over time.

Why SVG from the server and not a chart library in the browser: the page then
needs no third-party script at all (no build step, nothing to vendor or keep
up to date, nothing a CSP must allow), the picture is the same with or without
script, and drawing one costs microseconds, so a page of many plans stays
cheap. The template holds the markup (escaped by Jinja2 like the page); this
module only turns exact amounts into pixel positions (floats only there).

The price is output per input in token units, as `jupcron report` gives it
(base units where a mint's decimals are unknown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any

from daemon.report.build import PlanReport
from daemon.web.render import render

WIDTH, HEIGHT = 360, 150
LEFT, RIGHT, TOP, BOTTOM = 10, 10, 22, 24  # margins inside the picture
PRICE_DIGITS = 8


@dataclass(frozen=True)
class Point:
    at: datetime
    source: str
    in_amount: int
    out_amount: int
    received_total: int
    received_total_ui: Decimal | None
    price: Decimal | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "filled_at": self.at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "source": self.source,
            "in_amount": str(self.in_amount),
            "out_amount": str(self.out_amount),
            "received_total": str(self.received_total),
            "received_total_ui": _text(self.received_total_ui),
            "price": _text(self.price),
        }


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def series(report: PlanReport) -> list[Point]:
    """Every fill of the plan, oldest first, with the running total received."""
    points = []
    total = 0
    for fill in sorted(report.fills, key=lambda f: (f.filled_at, f.run_id)):
        total += fill.out_amount
        one_in, one_out = report.human_in(fill.in_amount), report.human_out(fill.out_amount)
        if one_in is None or one_out is None:
            one_in, one_out = Decimal(fill.in_amount), Decimal(fill.out_amount)
        price = None
        if one_in:
            with localcontext() as ctx:
                ctx.prec = PRICE_DIGITS
                price = one_out / one_in
        points.append(Point(fill.filled_at, fill.source, fill.in_amount, fill.out_amount,
                            total, report.human_out(total), price))  # fmt: skip
    return points


def _scale(low: float, high: float, start: float, end: float) -> Callable[[float], float]:
    """A linear map [low, high] -> [start, end]; a single value maps to the middle."""
    if high <= low:
        middle = (start + end) / 2
        return lambda value: middle
    return lambda value: start + (value - low) * (end - start) / (high - low)


@dataclass(frozen=True)
class Geometry:
    received: str  # polyline points of the cumulative receipts
    price_line: str
    price_dots: list[tuple[float, float]]
    first: str  # labels
    last: str
    received_label: str
    price_label: str


def geometry(report: PlanReport, points: list[Point]) -> Geometry:
    times = [p.at.timestamp() for p in points]
    totals = [float(p.received_total_ui or p.received_total) for p in points]
    prices = [float(p.price) for p in points if p.price is not None]
    x = _scale(min(times), max(times), LEFT, WIDTH - RIGHT)
    y_total = _scale(0.0, max(totals), HEIGHT - BOTTOM, TOP)
    y_price = _scale(min(prices, default=0.0), max(prices, default=0.0), HEIGHT - BOTTOM - 8,
                     TOP + 8)  # fmt: skip
    before = float(HEIGHT - BOTTOM)
    steps: list[tuple[float, float]] = [(x(times[0]), before)]
    for moment, total in zip(times, totals, strict=True):
        steps += [(x(moment), before), (x(moment), y_total(total))]
        before = y_total(total)
    steps.append((WIDTH - RIGHT, before))
    dots = [(x(t), y_price(float(p.price))) for t, p in zip(times, points, strict=True)
            if p.price is not None]  # fmt: skip
    out_label = report.output_token.label if report.output_token else "base units"
    in_label = report.input_token.label if report.input_token else "base unit"
    last = points[-1]
    total_text = _text(last.received_total_ui) or str(last.received_total)
    price_text = _text(last.price) or "-"
    return Geometry(
        received=_points(steps),
        price_line=_points(dots),
        price_dots=[(round(a, 1), round(b, 1)) for a, b in dots],
        first=points[0].at.strftime("%Y-%m-%d %H:%M"),
        last=last.at.strftime("%Y-%m-%d %H:%M"),
        received_label=f"received {total_text} {out_label}",
        price_label=f"last price {price_text} {out_label}/{in_label}",
    )


def _points(pairs: list[tuple[float, float]]) -> str:
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in pairs)


def chart_svg(report: PlanReport) -> str:
    """The chart of one plan (a note instead when it has no fill yet)."""
    points = series(report)
    shape = geometry(report, points) if points else None
    return render("chart.svg", name=report.plan_name, shape=shape, fills=len(points),
                  width=WIDTH, height=HEIGHT, left=LEFT, right=RIGHT, top=TOP,
                  bottom=BOTTOM)  # fmt: skip
