"""Each plan's chart on the page, and the fills behind it (``/api/plans/NAME/fills``).

The picture is drawn by the one renderer `jupcron report --chart` uses
(`jupcron.report.chart`: matplotlib, SVG from the server): the page needs no
third-party script (nothing to vendor, nothing a CSP must allow) and shows the
same picture as the report. A picture is drawn once per plan and fill count
(`ChartCache`); drawing one costs tens of milliseconds.

The price is quote per base (USDC per SOL), as `jupcron report` gives it (base
units where a mint's decimals are unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any

from jupcron.report.build import PlanReport
from jupcron.report.chart import card_svg
from jupcron.web.render import render

WIDTH, HEIGHT = 640, 260  # the card's picture, pixels (`jupcron.report.chart.CARD`)
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
        price = report.quoted(fill.in_amount, fill.out_amount)
        if price is not None:
            with localcontext() as ctx:
                ctx.prec = PRICE_DIGITS
                price = +price
        points.append(Point(fill.filled_at, fill.source, fill.in_amount, fill.out_amount,
                            total, report.human_out(total), price))  # fmt: skip
    return points


def chart_svg(report: PlanReport) -> str:
    """The plan's picture for its card: the report's own renderer (matplotlib, SVG),
    or a note when it has nothing to draw yet."""
    drawn = card_svg(report)
    if drawn is not None:
        return drawn
    return render("nochart.svg", name=report.plan_name, width=WIDTH, height=HEIGHT)
