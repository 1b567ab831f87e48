"""`jupcron portfolio ADDRESS`: positions grouped by platform, with USD values."""

from __future__ import annotations

import json
import sys
from decimal import Decimal

import click
from solders.pubkey import Pubkey

from jupcron.api.client import JupiterClient
from jupcron.api.portfolio import AssetData, Portfolio, PortfolioElement
from jupcron.cli import params
from jupcron.cli.main import Context, pass_ctx
from jupcron.config import api_key
from jupcron.logs import configure_logging
from jupcron.store import tokens
from jupcron.visible import visible

SHOWN_EXPONENT = 40  # beyond 10^±40, no u64 at any decimals: shown as the API sent it


def _usd(value: Decimal | None) -> str:
    """Dollars and cents; a value that rounds to 0.00 without a sign (`z`), never ``$-0.00``."""
    return "-" if value is None else f"${value:z,.2f}"


def _number(value: object) -> str:
    """A UI amount as the API sent it, in plain decimals: a JSON ``1e-09`` (one
    lamport) reads ``0.000000001``, never ``1E-9``."""
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        return str(value)
    if not amount.is_finite() or abs(amount.adjusted()) > SHOWN_EXPONENT:
        return str(value)  # no amount of any token: as sent, not a page of zeros
    return tokens.plain(amount)


def _asset_amount(asset: AssetData | None) -> str:
    """An asset's UI amount in plain decimals; ``?`` when the answer has none."""
    return "?" if asset is None or asset.amount is None else _number(asset.amount)


def _detail(portfolio: Portfolio, element: PortfolioElement) -> str:
    data = element.data.extra
    if element.type == "trade":
        pair = (
            f"{portfolio.symbol(str(data.get('inputAddress', '?')))}→"
            f"{portfolio.symbol(str(data.get('outputAddress', '?')))}"
        )
        amount = data.get("initialInputAmount")
        return f"{pair} {_number(amount)}" if amount is not None else pair
    assets = element.data.assets
    if assets is not None:
        parts = []
        for asset in assets[:6]:
            inner = asset.data
            address = None if inner is None else inner.address
            parts.append(f"{_asset_amount(inner)} {portfolio.symbol(str(address))}")
        return ", ".join(parts) + (" …" if len(assets) > 6 else "")
    return ""


def render_table(portfolio: Portfolio) -> str:
    lines = [f"owner {portfolio.owner or '(not in the answer)'}"]
    groups = portfolio.by_platform()
    if not groups:
        lines.append("no positions")
    for platform, elements in sorted(groups.items()):
        subtotal = sum((e.value or Decimal(0) for e in elements), Decimal(0))
        lines.append(f"{platform}  {_usd(subtotal)}")
        for e in elements:
            label = e.label or e.type or "?"
            lines.append(f"  {label:<12} {_usd(e.value):>16}  {_detail(portfolio, e)}".rstrip())
    failed = [r.id for r in portfolio.fetcher_reports if r.status == "failed"]
    if failed:
        lines.append(f"incomplete: fetchers failed: {', '.join(failed)}")
    lines.append(f"total  {_usd(portfolio.total_value)}")
    # symbols, labels and platform ids are the API's: shown as written, never obeyed
    return "\n".join(visible(line) for line in lines)


@click.command()
@click.argument("address", callback=params.pubkey)
@click.option(
    "--platforms", default="", help="Comma-separated platform ids, e.g. jupiter-exchange."
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@pass_ctx
def portfolio(ctx: Context, address: Pubkey, platforms: str, fmt: str) -> None:
    """Positions of ADDRESS on Jupiter platforms, grouped by platform."""
    wanted = [p.strip() for p in platforms.split(",") if p.strip()]
    config = ctx.config
    configure_logging(config.logging.level, config.logging.format, stream=sys.stderr)
    with JupiterClient.from_config(config, api_key(config)) as client:
        result = client.positions(str(address), wanted or None)
    if fmt == "json":
        click.echo(json.dumps(result.raw, indent=2, sort_keys=True))
    else:
        click.echo(render_table(result))
