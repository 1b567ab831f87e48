"""The one chart renderer: matplotlib on its Agg canvas (no display, no network,
no global pyplot state), for `jupcron report --chart PATH` (PNG or SVG) and for
the status page's cards (SVG, served by the daemon: no script, nothing from a CDN).

Each plan with fills gets two panels:

    left   cumulative spend and value, both in the plan's quote token (one honest
           axis): the quote side's running total (spent USDC when buying SOL,
           received USDC when selling it) and the base side's running total valued
           at the market (each fill's own price; at the right edge the price now,
           where one is stored)
    right  each fill's price (quote per base, as traders read it) against the
           market: the average price, the oracle's reference at the fill where the
           run recorded one, and the price now

The amounts come from exact `Decimal` values; floats are only the pixels'
positions. SVG text stays text (``svg.fonttype: none``) so a browser can check
that no two labels overlap.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from jupcron.errors import ConfigError
from jupcron.private import replace_private
from jupcron.report.plan import PlanReport
from jupcron.visible import visible

FORMATS = {".png": "png", ".svg": "svg"}
COST, VALUE, PRICE, AVERAGE, MARKET = "#0969da", "#1a7f37", "#24292f", "#8250df", "#bc4c00"
ROW_HEIGHT = 3.3  # inches per plan in the report's picture
WIDTH = 11.0
CARD = (640 / 96, 260 / 96)  # inches of a card's picture: 640 x 260 CSS pixels (SVG is in pt)
PAD_ALONE = timedelta(hours=1)  # either side of a lone fill
# the date under a time axis says the zone (an x label beside it would collide)
OFFSETS = ["UTC", "%Y UTC", "%Y-%b UTC", "%Y-%m-%d UTC", "%Y-%m-%d UTC", "%Y-%m-%d %H:%M UTC"]
# text.parse_math off: symbols and plan names are drawn as written ("$WIF"; text between
# two "$" was read as TeX: letters lost to math italics, a "$\foo$" failed the chart)
STYLE: Any = {"svg.fonttype": "none", "font.family": "DejaVu Sans", "font.size": 8.5,
         "axes.titlesize": 9.5, "legend.fontsize": 7.5, "svg.hashsalt": "jupcron",
         "text.parse_math": False}  # fmt: skip


def chart_format(path: Path) -> str:
    """The image format for `path`; a clear error for anything else."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(f"{path}: the chart must be a .png or .svg file")
    return fmt


@dataclass(frozen=True)
class Series:
    times: list[datetime]
    cost: list[float]  # the quote side's running total (quote units)
    value: list[float]  # the base side's running total at the market (quote units)
    prices: list[float]  # each fill's price, quote per base
    references: list[tuple[datetime, float]]  # the oracle's price at a fill, where known
    quote: str
    base: str
    buying: bool  # the quote token is what the plan pays with


def series(report: PlanReport) -> Series | None:
    """The plan's fills as the chart draws them; None without fills or token facts."""
    quote, base = report.quote_token, report.base_token
    if not report.fills or quote is None or base is None:
        return None
    buying = report.quote == "in"
    times: list[datetime] = []
    cost: list[float] = []
    value: list[float] = []
    prices: list[float] = []
    references: list[tuple[datetime, float]] = []
    total_quote = total_base = Decimal(0)
    for fill in sorted(report.fills, key=lambda f: (f.filled_at, f.run_id)):
        spent, got = report.human_in(fill.in_amount), report.human_out(fill.out_amount)
        price = report.quoted(fill.in_amount, fill.out_amount)
        if spent is None or got is None or price is None:
            continue
        total_quote += spent if buying else got
        total_base += got if buying else spent
        times.append(fill.filled_at)
        cost.append(float(total_quote))
        value.append(float(total_base * price))
        prices.append(float(price))
        if fill.reference_out:
            reference = report.quoted(fill.in_amount, fill.reference_out)
            if reference is not None:
                references.append((fill.filled_at, float(reference)))
    if not times:
        return None
    # token symbols come from the API: a bidi control in one would reorder the labels
    labels = visible(quote.label), visible(base.label)
    return Series(times, cost, value, prices, references, *labels, buying)


def _span(times: list[datetime]) -> tuple[datetime, datetime]:
    low, high = min(times), max(times)
    pad = (high - low) * 0.06 if high > low else PAD_ALONE
    return low - pad, high + pad


def _time_axis(axes: Any) -> None:
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(minticks=2, maxticks=5)  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_locator(locator)
    formatter = ConciseDateFormatter(locator, offset_formats=OFFSETS)  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_formatter(formatter)


def _amounts(axes: Any, report: PlanReport, s: Series, now_price: float | None) -> None:
    left, right = _span(s.times)
    cost_label = f"{s.quote} spent" if s.buying else f"{s.quote} received"
    value_label = f"{s.base} bought, in {s.quote}" if s.buying else f"{s.base} sold, in {s.quote}"
    # from zero before the first fill, a step up at each fill, flat to the edge
    xs = [left, *s.times, right]
    axes.step(xs, [0.0, *s.cost, s.cost[-1]], where="post", color=COST, linewidth=2,
              label=cost_label)  # fmt: skip
    end_value = s.value[-1]
    if now_price is not None:
        base_total = s.value[-1] / s.prices[-1] if s.prices[-1] else 0.0
        end_value = base_total * now_price
        value_label += " at market"
    axes.step([left, *s.times], [0.0, *s.value], where="post", color=VALUE, linewidth=2,
              linestyle="--", label=value_label)  # fmt: skip
    axes.plot([s.times[-1], right], [s.value[-1], end_value], color=VALUE, linewidth=2,
              linestyle="--")  # fmt: skip
    axes.plot(s.times, s.cost, "o", color=COST, markersize=4)
    axes.set_xlim(left, right)
    axes.set_ylim(bottom=0, top=max(*s.cost, *s.value, end_value) * 1.25 or 1.0)
    axes.set_ylabel(s.quote)
    # the title names the pair by its symbols (the token API's), as the labels do
    axes.set_title(f"{visible(report.title)}: cumulative spend and value")
    axes.legend(loc="upper left", frameon=False)
    _time_axis(axes)
    axes.grid(alpha=0.3)


def _prices(axes: Any, report: PlanReport, s: Series, now_price: float | None) -> None:
    left, right = _span(s.times)
    axes.plot(s.times, s.prices, "o-", color=PRICE, markersize=4, linewidth=1, label="fill price")
    average = report.average_price()
    shown = list(s.prices)
    if average is not None:
        axes.axhline(float(average), color=AVERAGE, linestyle="--", linewidth=1,
                     label=f"average {float(average):.6g}")  # fmt: skip
        shown.append(float(average))
    if s.references:
        axes.plot([t for t, _ in s.references], [p for _, p in s.references], "x",
                  color=MARKET, markersize=6, label="Pyth at the fill")  # fmt: skip
        shown += [p for _, p in s.references]
    if now_price is not None:
        axes.axhline(now_price, color=MARKET, linestyle=":", linewidth=1.5,
                     label=f"now {now_price:.6g}")  # fmt: skip
        shown.append(now_price)
    low, high = min(shown), max(shown)
    pad = (high - low) * 0.35 or abs(high) * 0.02 or 1.0
    axes.set_ylim(low - pad, high + pad * 3)  # room above for the legend
    axes.set_xlim(left, right)
    axes.set_ylabel(f"{s.quote} per {s.base}")
    axes.set_title(f"price, {s.quote} per {s.base}")
    axes.legend(loc="upper left", frameon=False, ncols=1)
    _time_axis(axes)
    axes.grid(alpha=0.3)


# matplotlib's settings are the process's: a draw in one thread (the page serves
# charts from several) while another leaves its rc_context would lose them (an SVG
# with its text drawn as shapes); one draw at a time
_DRAWING = threading.RLock()


@contextmanager
def _styled() -> Iterator[None]:
    import matplotlib

    with _DRAWING, matplotlib.rc_context(STYLE):
        yield


def _draw(figure: Any, spec: Any, report: PlanReport, s: Series) -> None:
    current = report.current_price()
    now_price = None if current is None else float(current)
    inner = spec.subgridspec(1, 2, width_ratios=(3, 2))
    _amounts(figure.add_subplot(inner[0, 0]), report, s, now_price)
    _prices(figure.add_subplot(inner[0, 1]), report, s, now_price)


def _save(figure: Any, target: Any, fmt: str, dpi: int) -> None:
    with _styled():
        figure.savefig(
            target, format=fmt, dpi=dpi, metadata={"Date": None} if fmt == "svg" else None
        )


def _figure(size: tuple[float, float]) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with _styled():
        figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def write_chart(reports: list[PlanReport], path: Path) -> Path:
    """Every plan with fills, one row each, to `path` (.png or .svg): mode 0600 (what
    the money did is nobody else's business), written to a new file renamed over it."""
    import io

    fmt = chart_format(path)
    drawn = [(r, s) for r in reports if (s := series(r)) is not None]
    with _styled():
        figure = _figure((WIDTH, ROW_HEIGHT * max(len(drawn), 1) + 0.5))
        figure.suptitle("jupcron: what the money did, per plan", fontsize=12, fontweight="bold")
        if not drawn:
            axes = figure.add_subplot(1, 1, 1)
            axes.text(0.5, 0.5, "no fills in this period", ha="center", va="center", fontsize=14)
            axes.set_axis_off()
        else:
            grid = figure.add_gridspec(len(drawn), 1)
            for n, (report, s) in enumerate(drawn):
                _draw(figure, grid[n, 0], report, s)
        out = io.BytesIO()
        _save(figure, out, fmt, 110)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_private(path, out.getvalue())  # 0600, and a symlink at `path` is not followed
    return path


def card_svg(report: PlanReport) -> str | None:
    """One plan's picture for the page (SVG text); None when it has nothing to draw."""
    import io

    s = series(report)
    if s is None:
        return None
    with _styled():
        figure = _figure(CARD)
        _draw(figure, figure.add_gridspec(1, 1)[0, 0], report, s)
        out = io.StringIO()
        _save(figure, out, "svg", 100)
    return out.getvalue()
