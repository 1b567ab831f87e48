"""Price protection, pure parts: limits -> least output, the Pyth account layout, the
reference and `protection_for` (a fake RPC: the `accounts` / `mint_decimals` seam)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from jupcron.config import Config
from jupcron.domain import PlanKind
from jupcron.emulator.oracle import price_update_bytes
from jupcron.errors import ApiTransportError
from jupcron.plans.load import quote_check
from jupcron.plans.rules import limit_checks
from jupcron.plans.schema import (
    REQUEST_MODELS,
    PlanSpec,
    stored_request,
    stored_settings,
)
from jupcron.price.limits import PriceLimits, UnknownDecimals, minimum_out
from jupcron.price.oracle import (
    ACCOUNT_LEN,
    DEFAULT_FEEDS,
    DISCRIMINATOR,
    RECEIVER_PROGRAM,
    Feed,
    decode_price_update,
    feed_account,
    judge,
)
from jupcron.price.protection import Protection, protection_for
from jupcron.price.reference import reference_out, vs_reference_bps
from jupcron.scheduling.schedule import parse_schedule
from jupcron.store.records import PlanRecord

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
WBTC = "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh"  # 8 decimals: read from the (fake) chain
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
T = int(NOW.timestamp())


def encode_price_update(
    feed_id: str, price: int, conf: int, exponent: int, publish_time: int, posted_slot: int = 0
) -> bytes:
    """The emulator's account bytes (its own packing of Pyth's layout; exponent -8)."""
    assert exponent == -8
    return price_update_bytes(feed_id, price, conf, publish_time, posted_slot)


def limits(**given: Any) -> PriceLimits:
    return PriceLimits.model_validate(given)


# (limits, input mint, output mint, in_amount, decimals in/out, least output)
CASES = [
    # buy SOL with USDC, at most 250 USDC per SOL: 50 USDC -> >= 0.2 SOL
    ({"max_price": 250, "quote": "USDC"}, USDC, SOL, 50_000_000, (6, 9), 200_000_000),
    # sell SOL for USDC, at least 180 USDC per SOL: 1 SOL -> >= 180 USDC
    ({"min_price": 180, "quote": "USDC"}, SOL, USDC, 10**9, (9, 6), 180_000_000),
    # the quote on the other side: buy USDC with SOL, at most 0.01 SOL per USDC
    ({"max_price": "0.01", "quote": SOL}, SOL, USDC, 10**9, (9, 6), 100_000_000),
    # sell USDC for SOL, at least 0.004 SOL per USDC: 50 USDC -> >= 0.2 SOL
    ({"min_price": "0.004", "quote": "sol"}, USDC, SOL, 50_000_000, (6, 9), 200_000_000),
    # 8 decimals: sell 0.5 WBTC for at least 60000 USDC each -> >= 30000 USDC
    ({"min_price": 60000, "quote": "USDC"}, WBTC, USDC, 50_000_000, (8, 6), 30_000_000_000),
    # 8 decimals: buy WBTC with 60 USDC at most 60000 USDC each -> >= 0.001 WBTC
    ({"max_price": 60000, "quote": USDC}, USDC, WBTC, 60_000_000, (6, 8), 100_000),
    # rounded up, never loosened: 1 base unit of USDC at <= 3 USDC/SOL -> 333.3 -> 334
    ({"max_price": 3, "quote": "USDC"}, USDC, SOL, 1, (6, 9), 334),
    # min_out alone needs no decimals
    ({"min_out": 5}, WBTC, USDC, 1, (None, None), 5),
    # both: the stricter wins
    ({"min_out": 250_000_000, "max_price": 250, "quote": "USDC"}, USDC, SOL, 50_000_000,
     (6, 9), 250_000_000),
    ({"min_out": 1, "max_price": 250, "quote": "USDC"}, USDC, SOL, 50_000_000, (6, 9),
     200_000_000),
    # USDT/USDC, 6/6
    ({"min_price": "0.999", "quote": "USDC"}, USDT, USDC, 1_000_000, (6, 6), 999_000),
]  # fmt: skip


@pytest.mark.parametrize(("given", "in_mint", "out_mint", "amount", "dec", "least"), CASES)
def test_minimum_out(
    given: dict[str, Any],
    in_mint: str,
    out_mint: str,
    amount: int,
    dec: tuple[int | None, int | None],
    least: int,
) -> None:
    assert minimum_out(limits(**given), in_mint, out_mint, amount, *dec) == least


def test_a_price_form_without_decimals_is_unknown_not_guessed() -> None:
    with pytest.raises(UnknownDecimals):
        minimum_out(limits(max_price=1, quote="USDC"), USDC, WBTC, 10, 6, None)


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"max_price": 1},  # no quote
        {"quote": "USDC", "min_out": 1},  # quote without a price
        {"max_price": 1, "min_price": 1, "quote": "USDC"},
        {"max_price": 0, "quote": "USDC"},
        {"max_price": 1, "quote": "BTC"},  # neither a known symbol nor an address
        {"min_out": 0},
    ],
)
def test_limits_refused_as_written(given: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        limits(**given)


def test_a_wrong_sided_price_is_refused_at_use_too() -> None:
    with pytest.raises(ValueError, match="protects nothing"):
        minimum_out(limits(min_price=250, quote="USDC"), USDC, SOL, 1, 6, 9)


# ---------------------------------------------------------------- the Pyth layout


def test_default_feed_accounts_are_the_push_oracles_shard_0_for_their_feed_ids() -> None:
    for feed in DEFAULT_FEEDS.values():
        assert feed.feed_id is not None
        assert feed_account(feed.feed_id, 0) == feed.account


def test_the_discriminator_is_anchors() -> None:
    assert list(DISCRIMINATOR) == [34, 241, 35, 99, 157, 126, 244, 205]


def test_encode_decode_round_trip() -> None:
    feed_id = DEFAULT_FEEDS[SOL].feed_id or ""
    data = encode_price_update(feed_id, 15_012_345_678, 1_234_567, -8, T, posted_slot=99)
    assert len(data) == ACCOUNT_LEN
    price = decode_price_update(data)
    assert (price.feed_id, price.price, price.conf, price.exponent) == (
        feed_id, 15_012_345_678, 1_234_567, -8,
    )  # fmt: skip
    assert price.publish_time == T
    assert price.posted_slot == 99
    assert price.full
    assert price.value == Decimal("150.12345678")


def test_a_partially_verified_update_decodes_with_its_signature_count() -> None:
    full = encode_price_update(DEFAULT_FEEDS[SOL].feed_id or "", 1, 0, -8, T)
    partial = full[:40] + b"\x00\x05" + full[41:-1]  # Partial {num_signatures: 5}: one byte more
    price = decode_price_update(partial)
    assert not price.full
    assert price.num_signatures == 5
    assert price.publish_time == T


@dataclass(frozen=True)
class State:
    owner: str
    data: bytes


SOL_FEED = DEFAULT_FEEDS[SOL]


def _sol_state(price: int = 150_00000000, at: int = T, feed_id: str | None = None) -> State:
    data = encode_price_update(feed_id or SOL_FEED.feed_id or "", price, 1000, -8, at)
    return State(RECEIVER_PROGRAM, data)


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        (None, "no such account"),
        (State("11111111111111111111111111111111", _sol_state().data), "not the Pyth receiver"),
        (State(RECEIVER_PROGRAM, b"\x00" * 134), "not a Pyth PriceUpdateV2"),
        (_sol_state(feed_id=DEFAULT_FEEDS[USDC].feed_id), "holds feed"),
        (_sol_state(at=T - 121), "stale"),
        (_sol_state(price=-5), "not positive"),
        (_sol_state(), None),
        (_sol_state(at=T - 119), None),
    ],
)
def test_judge(state: State | None, problem: str | None) -> None:
    reading = judge(SOL, SOL_FEED, state, now=T, max_age=120)
    if problem is None:
        assert reading.problem is None
        assert reading.usd == Decimal(150)
    else:
        assert reading.problem is not None
        assert problem in reading.problem
        assert reading.usd is None


def test_an_account_that_is_not_the_push_oracles_is_refused() -> None:
    own = Feed("7dbob1psH1iZBS7qPsm3Kwbf5DzSXK8Jyg31CTgTnxH5")  # JUP's account, SOL's data
    reading = judge(SOL, own, _sol_state(), now=T, max_age=120)
    assert reading.problem is not None
    assert "not the Pyth price feed program" in reading.problem


# ---------------------------------------------------------------- reference


def test_reference_out_and_vs_reference() -> None:
    out = reference_out(50_000_000, Decimal(1), Decimal(150), 6, 9)
    assert out == 333_333_333  # 50 USDC at 150 USDC/SOL, floor
    assert vs_reference_bps(out // 2, out) == Decimal("-5000.00")
    assert vs_reference_bps(out, out) == Decimal("0.00")


# ---------------------------------------------------------------- protection_for


class FakeRpc:
    def __init__(self, states: dict[str, State | None], decimals: dict[str, int] | None = None):
        self.states = states
        self.decimals = decimals or {}
        self.fail = False

    def accounts(self, addresses: Sequence[str]) -> list[State | None]:
        if self.fail:
            raise ApiTransportError("RPC unreachable: ConnectError")
        return [self.states.get(a) for a in addresses]

    def mint_decimals(self, mint: str) -> int | None:
        if self.fail:
            raise ApiTransportError("RPC unreachable: ConnectError")
        return self.decimals.get(mint)


def _feed_state(mint: str, usd: str, at: int = T) -> State:
    feed = DEFAULT_FEEDS[mint]
    price = int(Decimal(usd) * 10**8)
    return State(RECEIVER_PROGRAM, encode_price_update(feed.feed_id or "", price, 10, -8, at))


def market(sol: str = "150", usdc: str = "1", at: int = T) -> FakeRpc:
    return FakeRpc(
        {
            DEFAULT_FEEDS[SOL].account: _feed_state(SOL, sol, at),
            DEFAULT_FEEDS[USDC].account: _feed_state(USDC, usdc, at),
            DEFAULT_FEEDS[USDT].account: _feed_state(USDT, "1", at),
        },
        {WBTC: 8},
    )


def plan(kind: str, request: dict[str, Any], **settings: Any) -> PlanRecord:
    base = {"dry_run": False, "max_in_amount": None, "caps": {"per_day": None, "per_week": None}}
    return PlanRecord(
        id=1, name="p", kind=PlanKind(kind), version=1, schedule=parse_schedule({"every": "1h"}),
        request=stored_request(PlanKind(kind), request),
        settings=stored_settings({**base, **settings}),
        enabled=True, description=None, created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def swap(in_mint: str = USDC, out_mint: str = SOL, amount: int = 50_000_000, **settings: Any):
    request = {"inputMint": in_mint, "outputMint": out_mint, "amount": amount}
    return plan("swap", request, **settings)


def config(**price: Any) -> Config:
    return Config.model_validate({"price": price, "guard": {"max_price_deviation_bps": 300}})


BUY_LIMIT = {"limits": {"max_price": 250, "quote": "USDC"}}


def test_a_fair_swap_has_a_limit_and_a_reference() -> None:
    got = protection_for(swap(**BUY_LIMIT), 50_000_000, market(), config(), NOW)
    assert got == Protection(200_000_000, 333_333_333, 300, None, None, got.reference)
    assert got.reference is not None
    assert got.reference.price == Decimal("0.00666666666667")
    assert got.detail()["reference"]["reference_out"] == "333333333"


def test_without_rpc_the_limit_holds_and_there_is_no_reference() -> None:
    assert protection_for(swap(**BUY_LIMIT), 50_000_000, None, config(), NOW) == Protection(
        200_000_000, None, 300, None
    )


@pytest.mark.parametrize(("policy", "refused"), [("refuse", True), ("warn", False)])
def test_a_stale_reference_follows_the_policy(policy: str, refused: bool) -> None:
    rpc = market(at=T - 600)
    got = protection_for(swap(**BUY_LIMIT), 50_000_000, rpc, config(on_stale=policy), NOW)
    assert got.min_out == 200_000_000
    assert got.reference_out is None
    assert (got.problem is not None) is refused
    assert (got.warning is not None) is not refused
    assert "stale" in (got.problem or got.warning or "")


def test_an_unanswering_rpc_is_a_missing_reference() -> None:
    rpc = market()
    rpc.fail = True
    got = protection_for(swap(), 50_000_000, rpc, config(), NOW)
    assert got.reference_out is None
    assert got.problem is not None
    assert "RPC" in got.problem


def test_an_uncovered_pair_has_no_reference_and_no_problem() -> None:
    got = protection_for(swap(USDC, WBTC, 60_000_000, **BUY_LIMIT), 60_000_000, market(),
                         config(), NOW)  # fmt: skip
    assert got.reference_out is None
    assert got.problem is None
    assert got.min_out == minimum_out(limits(max_price=250, quote="USDC"), USDC, WBTC,
                                      60_000_000, 6, 8)  # fmt: skip


def test_a_feed_from_config_covers_a_mint() -> None:
    wbtc_feed = "9gNX5vguzarZZPjTnE1hWze3s6UsZ7dsU3UnAmKPnMHG"  # WBTC/USD, shard 0
    feed_id = "c9d8b075a5c69303365ae23633d4e085199bf5c520a3b90fed1322a0342ffc33"
    assert feed_account(feed_id) == wbtc_feed
    rpc = market()
    rpc.states[wbtc_feed] = State(
        RECEIVER_PROGRAM, encode_price_update(feed_id, 60_000 * 10**8, 10, -8, T)
    )
    plan_ = swap(USDC, WBTC, 60_000_000)
    got = protection_for(plan_, 60_000_000, rpc, config(feeds={WBTC: wbtc_feed}), NOW)
    assert got.reference_out == 100_000
    assert got.problem is None


def test_unknown_decimals_for_a_price_limit_refuse_to_sign() -> None:
    got = protection_for(swap(USDC, WBTC, 60_000_000, **BUY_LIMIT), 60_000_000, None, config(),
                         NOW)  # fmt: skip
    assert got.problem is not None
    assert "decimals" in got.problem


def test_a_cancel_has_no_protection() -> None:
    got = protection_for(plan("trigger-cancel", {"order": SOL}), 0, market(), config(), NOW)
    assert got == Protection(None, None, 300, None)


def test_recurring_is_for_the_whole_run() -> None:
    request = {"inputMint": USDC, "outputMint": SOL,
               "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 4,
                                   "interval": 86400, "maxPrice": 250}}}  # fmt: skip
    got = protection_for(plan("recurring", request, **BUY_LIMIT), 200_000_000, market(),
                         config(), NOW)  # fmt: skip
    assert got.min_out == 800_000_000
    assert got.reference_out == 1_333_333_333


# ---------------------------------------------------------------- stored plans


def _spec(**more: Any) -> PlanSpec:
    return PlanSpec.model_validate(
        {"name": "p", "kind": "swap", "schedule": {"every": "1h"},
         "request": {"inputMint": USDC, "outputMint": SOL, "amount": 1}, **more}
    )  # fmt: skip


def test_a_plan_without_limits_stores_no_limits_key() -> None:
    assert "limits" not in _spec().settings_dict()


def test_limits_are_stored_as_written_and_read_back() -> None:
    spec = _spec(limits={"max_price": "250.5", "quote": "USDC"})
    stored = spec.settings_dict()["limits"]
    assert stored == {"max_price": "250.5", "quote": "USDC"}
    assert stored_settings(spec.settings_dict()).limits == limits(max_price="250.5", quote="USDC")
    assert spec.content_hash() != _spec().content_hash()


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (
            {"inputMint": USDC, "outputMint": SOL, "inputAmount": 200_000_000,
             "orderCount": 2, "intervalSeconds": 86_400},
            "minPriceUsd/maxPriceUsd",
        ),
        ({"order": "9yXwWmT3rAEdGBVLbD4pgxQTcDx4mQ3BFx2XoeqF1tmZ"}, "swap, recurring"),
    ],
)  # fmt: skip
def test_limits_only_where_a_signed_transaction_guarantees_an_output(
    request_: dict[str, Any], words: str
) -> None:
    """A Trigger V2 order is priced by its own fields (its deposit guarantees nothing),
    a cancel trades nothing: `limits` there is an error that says so."""
    kind = PlanKind.TRIGGER_V2_DCA if "inputMint" in request_ else PlanKind.TRIGGER_CANCEL
    typed = REQUEST_MODELS[kind].model_validate(request_)
    limits = PriceLimits.model_validate({"min_out": 1})
    (finding,) = limit_checks(typed, limits)
    assert words in finding.message
    assert not finding.warning


@pytest.mark.parametrize(
    ("quote", "ok"),
    [("USDC", True), ("sol", True), (SOL, True), ("USDT", False), ("BONK", False)],
)
def test_price_quote_names_one_of_the_plans_mints(quote: str, ok: bool) -> None:
    """The report's `price_quote`: a mint of the pair (address or known symbol), else
    a plans validate error (the report would otherwise ignore it, silently)."""
    typed = REQUEST_MODELS[PlanKind.SWAP].model_validate(
        {"inputMint": USDC, "outputMint": SOL, "amount": 1_000_000}
    )
    found = quote_check(typed, quote)
    assert (found == []) is ok
    if not ok:
        assert "neither the plan's inputMint nor its outputMint" in found[0].message
