"""/metrics over loopback: ``jupcron_wallet_balance`` is documented in token units. A
mint whose decimals are not known cannot be put in token units, so its balance sample
is absent (never its base units under the token-units name); the runway, which counts
runs and needs no unit, is still shown, and the read still answered."""

from __future__ import annotations

import httpx

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import start_listener

WALLET = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
ODD = "Odd1111111111111111111111111111111111111111"  # a mint whose decimals are unknown


def samples(text: str, name: str, mint: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{") and mint in line]


def test_a_balance_in_base_units_is_never_given_as_token_units() -> None:
    metrics = Metrics()
    server = start_listener(metrics, "127.0.0.1:0", lambda: True)
    try:
        metrics.runway.set(WALLET, ODD, None, balance=12_345_678, decimals=None, runs=3,
                           upcoming=10, low=False)  # fmt: skip
        metrics.runway.set(WALLET, USDC, "USDC", balance=10_000_000, decimals=6, runs=2,
                           upcoming=10, low=True)  # fmt: skip
        scrape = httpx.get(server.url + "/metrics", timeout=5).text
    finally:
        server.stop()
    assert samples(scrape, "jupcron_wallet_balance", USDC) == [
        f'jupcron_wallet_balance{{mint="{USDC}",symbol="USDC",wallet="{WALLET}"}} 10.0'
    ]
    assert samples(scrape, "jupcron_wallet_balance", ODD) == [], (
        "12,345,678 base units of a mint of unknown decimals shown as token units"
    )
    assert samples(scrape, "jupcron_runway_runs", ODD)[0].endswith(" 3.0")
    assert samples(scrape, "jupcron_balance_known", ODD)[0].endswith(" 1.0")
    # its decimals learnt later: the balance in token units appears
    metrics.runway.set(WALLET, ODD, "ODD", balance=12_345_678, decimals=6, runs=3,
                       upcoming=10, low=False)  # fmt: skip
    (shown,) = samples(metrics.render().decode(), "jupcron_wallet_balance", ODD)
    assert shown.endswith(" 12.345678")
