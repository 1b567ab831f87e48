"""The Portfolio API's positions answer (``positions/{address}``), typed: lenient on
unknown fields and on the shapes of element data jupcron does not read, strict on
the ones it does (an element's ``data.assets`` and ``tokenInfo``), so a garbled
answer is refused by the client as `ApiGarbageError`, never met later as a foreign
exception in the runner's balance check, the runway watch or ``jupcron portfolio``.

The spec (openapi-spec/portfolio/portfolio.yaml) marks every top-level field
optional; an asset's ``amount`` is in UI units; ``rawAmount`` (base units) is read
where an answer carries it. ``data.assets`` has two shapes there: a list (a
``multiple`` element's, the wallet's own tokens among them) and, on a ``trade``
element (an open limit order or DCA), an object ``{input, output}``, either null;
the second is typed apart (`ElementData.trade_assets`) so the list stays what the
balance check reads. An element type the spec does not define keeps its ``assets``
unread (they are in `Portfolio.raw`), never refusing the whole answer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, StrictStr, model_validator

from jupcron.api.models import Amount, ApiModel
from jupcron.mints import SOL_MINT

# what an unknown mint's decimals are taken to be (SOL's are 9)
DEFAULT_DECIMALS = 6
SOL_DECIMALS = 9


def _ui_amount(value: Any) -> Any:
    """A UI amount: a finite, non-negative number (or its text); ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError("an amount must be a number")
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError("an amount must be a number") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError("an amount must be a finite number, not negative")
    return amount


def _decimals(value: Any) -> Any:
    """A mint's decimals: a whole number from 0 to 255 (or its digits); ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError("decimals must be a whole number from 0 to 255")
    return value


UiAmount = Annotated[Decimal | None, BeforeValidator(_ui_amount)]
Decimals = Annotated[int | None, BeforeValidator(_decimals)]


class AssetData(ApiModel):
    address: StrictStr | None = None
    amount: UiAmount = None
    raw_amount: Amount | None = None  # base units, as digits


class Asset(ApiModel):
    data: AssetData | None = None


class TradeAssets(ApiModel):
    """A ``trade`` element's ``data.assets``: what the order still holds to sell
    (``input``) and what it bought and has not paid out (``output``), either null.
    Locked in the order: never the wallet's to spend."""

    input: Asset | None = None
    output: Asset | None = None


class ElementData(ApiModel):
    """An element's ``data``: its ``assets`` typed (the list form; a trade's object
    form as `trade_assets`); the rest (a trade's addresses and amounts, a pool's
    liquidities…) kept as sent, in `extra`, for display only."""

    model_config = ConfigDict(extra="allow")

    assets: list[Asset] | None = None
    trade_assets: TradeAssets | None = None

    @property
    def extra(self) -> dict[str, Any]:
        return self.model_extra or {}


class FetcherReport(ApiModel):
    id: str
    status: str
    duration: float | None = None
    error: str | None = None


WALLET_TOKENS = "wallet-tokens"  # the platform of a wallet's own token accounts


def _wallets_own(platform: Any, label: Any) -> bool:
    """Whether an element holds the wallet's own tokens (either unsaid counts): the
    only assets the balance check reads."""
    return platform in (None, WALLET_TOKENS) and label in (None, "Wallet")


# the spec's element types; ``multiple`` (and an element that says no type) lists
# its assets, ``trade`` gives them as {input, output}, the others have none in `data`
LISTED_TYPES = (None, "multiple")
TRADE = "trade"
OTHER_TYPES = ("liquidity", "leverage", "borrowlend")


def _assets_by_type(value: Any) -> Any:
    """Put an element's ``data.assets`` where its type says: a trade's object under
    ``tradeAssets``; an unknown type's, when not a list, out of the typed answer (it
    stays in `Portfolio.raw`) unless the element is the wallet's own. What stays is
    refused if not a list: a wallet's tokens in a shape we cannot read are no balance
    to trust."""
    if not isinstance(value, dict) or not isinstance(value.get("data"), dict):
        return value
    data = value["data"]
    kind = value.get("type")
    if "assets" not in data or kind in LISTED_TYPES:
        return value
    rest = {k: v for k, v in data.items() if k != "assets"}
    if kind == TRADE:
        return {**value, "data": {**rest, "tradeAssets": data["assets"]}}
    if kind in OTHER_TYPES or isinstance(data["assets"], list):
        return value
    if _wallets_own(value.get("platformId"), value.get("label")):
        return value
    return {**value, "data": rest}


class PortfolioElement(ApiModel):
    """One element of the positions answer. Its spec requires ``type`` and
    ``platformId``; jupcron needs neither to read a balance, so an element without
    them is kept (grouped under ``unknown``) rather than losing the whole answer."""

    _assets = model_validator(mode="before")(_assets_by_type)

    type: str | None = None
    platform_id: str | None = None
    label: str | None = None
    name: str | None = None
    network_id: str | None = None
    value: Decimal | None = None
    net_apy: Decimal | None = None
    data: ElementData = Field(default_factory=ElementData)


class TokenFacts(ApiModel):
    decimals: Decimals = None
    symbol: StrictStr | None = None


class TokenInfo(ApiModel):
    solana: dict[str, TokenFacts] | None = None


def _spendable(element: PortfolioElement) -> bool:
    return _wallets_own(element.platform_id, element.label)


class Portfolio(ApiModel):
    """``positions/{address}``; `raw` keeps the API's fields for JSON output."""

    owner: str | None = None
    date: int | None = None
    fetcher_reports: list[FetcherReport] = Field(default_factory=list)
    elements: list[PortfolioElement] = Field(default_factory=list)
    duration: float | None = None
    token_info: TokenInfo = Field(default_factory=TokenInfo)
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)

    def by_platform(self) -> dict[str, list[PortfolioElement]]:
        grouped: dict[str, list[PortfolioElement]] = defaultdict(list)
        for element in self.elements:
            grouped[element.platform_id or "unknown"].append(element)
        return dict(grouped)

    @property
    def total_value(self) -> Decimal:
        return sum((e.value or Decimal(0) for e in self.elements), Decimal(0))

    def balance_of(self, mint: str) -> int:
        """The wallet's spendable balance of `mint` in base units: the assets of its
        wallet-tokens elements labelled ``Wallet`` (either unsaid counts), by
        ``rawAmount`` where given, else the UI amount scaled by the mint's decimals (from
        ``tokenInfo``; 9 for SOL, else 6 when unknown). Other platforms' elements are
        positions, whatever their label: the spec's own example labels a native stake
        ``Wallet``, and staked SOL cannot pay for a swap."""
        total = Decimal(0)
        for data in self._held(mint):
            if data.raw_amount is not None:
                return int(data.raw_amount)
            total += data.amount or Decimal(0)
        return int(total * (Decimal(10) ** self.decimals_of(mint)))

    def _held(self, mint: str) -> Iterator[AssetData]:
        """The wallet's own assets of `mint` (its spendable elements')."""
        for element in self.elements:
            if _spendable(element):
                for asset in element.data.assets or []:
                    if asset.data is not None and asset.data.address == mint:
                        yield asset.data

    def guessed(self, mint: str) -> bool:
        """Whether `balance_of(mint)` would be a guess: an asset of it in UI units only,
        and no decimals for it in ``tokenInfo`` (6 would be taken)."""
        facts = self._facts(mint)
        if facts is not None and facts.decimals is not None:
            return False
        return any(data.raw_amount is None for data in self._held(mint))

    def balance_unknown(self, mint: str) -> str | None:
        """Why `balance_of(mint)` is no balance to trust, or None: a fetcher of the
        wallet's own tokens failed (the answer is a 200 all the same, without their
        element: 0 is not what the wallet holds), or it would be a guess (`guessed`)."""
        failed = [r.id for r in self.fetcher_reports
                  if r.status == "failed" and r.id.startswith(WALLET_TOKENS)]  # fmt: skip
        if failed:
            return f"the wallet's tokens were not read ({', '.join(failed)} failed)"
        if self.guessed(mint):
            return f"the answer gives no decimals for {mint}"
        return None

    def exact_balance(self, mint: str) -> int | None:
        """`balance_of(mint)`, or None when it is unknown (`balance_unknown`)."""
        return None if self.balance_unknown(mint) else self.balance_of(mint)

    def _facts(self, mint: str) -> TokenFacts | None:
        return (self.token_info.solana or {}).get(mint)

    def known_decimals(self, mint: str) -> int | None:
        """The mint's decimals as the answer gives them (``tokenInfo``); None if it does
        not (SOL's 9 are known whatever it says)."""
        facts = self._facts(mint)
        if facts is not None and facts.decimals is not None:
            return facts.decimals
        return SOL_DECIMALS if mint == SOL_MINT else None

    def decimals_of(self, mint: str) -> int:
        facts = self._facts(mint)
        if facts is None or facts.decimals is None:
            return SOL_DECIMALS if mint.startswith("So1111") else DEFAULT_DECIMALS
        return facts.decimals

    def symbol(self, mint: str) -> str:
        facts = self._facts(mint)
        if facts is not None and facts.symbol is not None:
            return facts.symbol
        return mint[:4] + "…" + mint[-4:] if len(mint) > 10 else mint
