"""The positions answer read against Jupiter's own portfolio spec
(tests/fixtures/openapi/portfolio/portfolio.yaml): every element type it defines
parses, a ``trade`` element's ``data.assets`` being an object ``{input, output}``
(either null), not a list; what the balance check reads stays the wallet's own
tokens only. Each element below is first checked against the spec's own schema, so
the shapes are Jupiter's, not our picture of them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from jupcron.api.portfolio import Portfolio
from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from tests.fixtures.openapi_spec import component, validator

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"


def token(mint: str, amount: float, value: float | None = 1.0) -> dict[str, Any]:
    return {"networkId": "solana", "type": "token", "value": value, "attributes": {},
            "data": {"address": mint, "amount": amount, "price": 1.0}}  # fmt: skip


def element(kind: str, platform: str, label: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"networkId": "solana", "platformId": platform, "type": kind, "label": label,
            "value": 10.0, "data": data}  # fmt: skip


WALLET = element("multiple", "wallet-tokens", "Wallet", {"assets": [token(USDC, 5)]})
LIMIT_ORDER = element("trade", "jupiter-exchange", "LimitOrder", {
    "assets": {"input": token(USDC, 40), "output": None},
    "inputAddress": USDC, "outputAddress": SOL, "initialInputAmount": 50,
    "withdrawnOutputAmount": 0, "inputPrice": 1, "outputPrice": 150, "filledPercentage": 0.2,
    "expectedOutputAmount": 0.33, "createdAt": 1_710_000_000_000,
})  # fmt: skip
DCA = element("trade", "jupiter-exchange", "DCA", {
    "assets": {"input": None, "output": token(SOL, 0.5)},
    "inputAddress": USDC, "outputAddress": SOL, "initialInputAmount": 100,
    "withdrawnOutputAmount": 0, "inputPrice": 1, "outputPrice": 150, "filledPercentage": 1,
    "recurring": {"cycles": 4, "interval": 86_400_000},
})  # fmt: skip
POOL = element("liquidity", "jupiter-exchange", "LiquidityPool", {"liquidities": [{
    "assets": [token(USDC, 7)], "assetsValue": 7, "rewardAssets": [], "rewardAssetsValue": 0,
    "value": 7, "yields": [],
}]})  # fmt: skip
PERPS = element("leverage", "jupiter-perps", "Leverage", {"value": 3, "cross": {
    "collateralAssets": [token(USDC, 9)], "collateralValue": 9, "positions": [], "value": 3,
}})  # fmt: skip
LEND = element("borrowlend", "jupiter-lend", "Lending", {
    "value": 8, "suppliedAssets": [token(USDC, 8)], "borrowedAssets": [], "rewardAssets": [],
    "suppliedValue": 8, "borrowedValue": 0, "rewardValue": 0, "suppliedYields": [[]],
    "borrowedYields": [], "healthRatio": None,
    "unsettled": {"assets": [{**token(USDC, 1), "type": "generic"}], "value": 1},
})  # fmt: skip
STAKED = element("multiple", "jupiter-governance", "Staked", {"assets": [token(JUP, 100)]})
EVERY_TYPE = [WALLET, LIMIT_ORDER, DCA, POOL, PERPS, LEND, STAKED]


def answer(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"date": 1_710_000_000_000, "owner": SOL, "fetcherReports": [],
            "elements": list(elements), "duration": 5,
            "tokenInfo": {"solana": {USDC: {"address": USDC, "name": "USD Coin",
                                            "symbol": "USDC", "decimals": 6}}}}  # fmt: skip


@pytest.mark.parametrize("spec_element", EVERY_TYPE[1:], ids=lambda e: f"{e['type']}-{e['label']}")
def test_every_element_type_of_the_spec_parses(spec_element: dict[str, Any]) -> None:
    """Before: a trade element (an open limit order or DCA) was refused, `data.assets`
    "Input should be a valid list"; the whole answer with it."""
    component("portfolio", "PortfolioElement").validate(spec_element)  # Jupiter's shape
    parsed = Portfolio.model_validate(answer(WALLET, spec_element))
    assert len(parsed.elements) == 2
    assert parsed.balance_of(USDC) == 5_000_000  # the wallet's own 5 USDC, nothing else


def test_a_trade_element_keeps_its_input_and_output_typed() -> None:
    parsed = Portfolio.model_validate(answer(LIMIT_ORDER, DCA))
    limit, dca = parsed.elements
    assert limit.data.trade_assets is not None
    assert dca.data.trade_assets is not None
    assert limit.data.trade_assets.input is not None
    assert limit.data.trade_assets.input.data is not None
    assert limit.data.trade_assets.input.data.address == USDC
    assert limit.data.trade_assets.output is None
    assert dca.data.trade_assets.input is None
    assert limit.data.extra["inputAddress"] == USDC  # the rest kept for display
    assert limit.data.assets is None  # no list of a wallet's tokens


def test_an_answer_with_every_element_type_reads_only_the_wallets_tokens() -> None:
    """USDC locked in a limit order, a pool, a perps collateral, a lending supply: none
    of it can pay for a swap; only the wallet-tokens element's 5 USDC count."""
    validator("portfolio", "/positions/{address}", "get", "200").validate(answer(*EVERY_TYPE))
    parsed = Portfolio.model_validate(answer(*EVERY_TYPE))
    assert parsed.balance_of(USDC) == 5_000_000
    assert parsed.exact_balance(USDC) == 5_000_000
    assert parsed.balance_of(SOL) == 0  # the DCA's bought SOL is not yet the wallet's


def test_a_garbled_trade_asset_is_refused() -> None:
    bad = {**LIMIT_ORDER, "data": {**LIMIT_ORDER["data"],
                                   "assets": {"input": {"data": {"address": 7}}, "output": None}}}  # fmt: skip
    with pytest.raises(ValidationError) as caught:
        Portfolio.model_validate(answer(bad))
    locs = [".".join(str(p) for p in e["loc"]) for e in caught.value.errors()]
    assert any("data.tradeAssets.input.data.address" in loc for loc in locs), locs


def test_an_element_type_the_spec_does_not_define_does_not_break_the_answer() -> None:
    """An element type added later, its ``assets`` in a shape of its own: kept (its
    assets unread), the wallet's balance still read."""
    future = element("perpetual", "jupiter-perps", "Leverage",
                     {"assets": {"long": token(USDC, 3)}, "size": "12"})  # fmt: skip
    parsed = Portfolio.model_validate(answer(WALLET, future))
    assert [e.type for e in parsed.elements] == ["multiple", "perpetual"]
    assert parsed.balance_of(USDC) == 5_000_000
    assert parsed.elements[1].data.extra["size"] == "12"


def test_a_wallet_element_with_assets_in_another_shape_is_still_refused() -> None:
    """What the balance check reads stays strict: the wallet's own element must list."""
    odd = {**WALLET, "data": {"assets": {"input": token(USDC, 5), "output": None}}}
    with pytest.raises(ValidationError):
        Portfolio.model_validate(answer(odd))


def test_null_values_and_numbers_as_text_read() -> None:
    """The spec's numbers may come as null where the source has no price (its
    UsdValue is ``number | null``), and as text from some encoders."""
    asset = {"networkId": "solana", "type": "token", "value": None, "attributes": {},
             "data": {"address": USDC, "amount": "2.5", "price": None}}  # fmt: skip
    nulls = element("multiple", "wallet-tokens", "Wallet", {"assets": [asset]})
    nulls["value"] = None
    nulls["netApy"] = None
    parsed = Portfolio.model_validate(answer(nulls))
    assert parsed.balance_of(USDC) == 2_500_000
    assert parsed.total_value == 0


def test_the_emulators_positions_with_open_orders_meet_the_spec() -> None:
    """Before: the emulator's order elements had no ``assets`` (which the spec
    requires) and ``expireAt: null`` (a number, or absent); no test had an order."""
    emu = Emulator(seed=5)
    maker = Wallet.generate().address
    seeded = emu.handle("POST", "/_emulator/trigger-orders", {}, {},
                        json.dumps({"maker": maker}).encode())  # fmt: skip
    assert seeded.status == 200
    got = emu.handle("GET", f"/portfolio/v1/positions/{maker}", {}, {}, b"")
    body = json.loads(got.body)
    validator("portfolio", "/positions/{address}", "get", "200").validate(body)
    trades = [e for e in body["elements"] if e["type"] == "trade"]
    assert len(trades) == 1
    assert trades[0]["data"]["assets"]["input"]["data"]["address"] == USDC
    parsed = Portfolio.model_validate(body)
    assert parsed.elements[-1].data.trade_assets is not None


def test_the_wallets_own_element_of_an_unknown_type_is_still_read_strictly() -> None:
    """Leniency is for what the balance check never reads: a wallet-tokens element
    of a new type with unreadable assets refuses the answer, not a balance of 0."""
    odd = {**WALLET, "type": "wallet2", "data": {"assets": {"usdc": token(USDC, 5)}}}
    with pytest.raises(ValidationError):
        Portfolio.model_validate(answer(odd))
    listed = {**WALLET, "type": "wallet2"}
    assert Portfolio.model_validate(answer(listed)).balance_of(USDC) == 5_000_000
