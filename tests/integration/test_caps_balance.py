"""The balance pre-flight never signs on a misread: an answer that gives a mint's
balance in UI units only, and no decimals for that mint (``tokenInfo``), says no
balance in base units at all. Read with a guessed 6 decimals, 1 token of a 5-decimal
mint looked like 1,000,000 base units, ten times what the wallet holds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from tests.fixtures.runner import SOL, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
FIVE_DECIMALS = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"  # BONK: 5 decimals


def positions_without_decimals(inner: httpx.BaseTransport) -> httpx.BaseTransport:
    class Answer(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if "/positions/" not in request.url.path:
                return inner.handle_request(request)
            asset = {"type": "token", "data": {"address": FIVE_DECIMALS, "amount": 1}}
            return httpx.Response(200, json={
                "elements": [{"type": "multiple", "platformId": "wallet-tokens",
                              "label": "Wallet", "data": {"assets": [asset]}}],
                "tokenInfo": {"solana": {}},
            })  # fmt: skip

    return Answer()


def test_a_balance_in_ui_units_without_decimals_is_no_balance(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, safety={"balance_check": True})
    assert rig.transport is not None
    api = JupiterClient(rig.url, api_key=None,
                        transport=positions_without_decimals(rig.transport),
                        rate_limit=1000, sleep=lambda s: None)  # fmt: skip
    request = {"inputMint": FIVE_DECIMALS, "outputMint": SOL, "amount": 500_000}  # 5 tokens
    try:
        outcome = outcome_of(rig.runner(api=api).fire(rig.plan("swap", request=request), SLOT))
    finally:
        api.close()
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error is not None
    assert outcome.error.startswith("balance check failed:")
    assert FIVE_DECIMALS in outcome.error
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 0
    assert rig.landed() == []
