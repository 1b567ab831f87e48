"""A token whose Tokens V2 entry has a symbol or name longer than the store keeps (a
Token-2022 mint's metadata has no length limit): its facts are kept shortened, and
the follower's poll goes on to the orders.

Before: on PostgreSQL (``tokens.symbol`` is VARCHAR(32), ``name`` VARCHAR(64)) the
insert failed, the store error left `refresh_tokens`, and the follower's poll ended
there: no order of any wallet was followed, at every poll, for as long as a plan
used that mint (no fill, no refund, no held/overdue/unaccounted alert recorded)."""

from __future__ import annotations

import json

import httpx
import pytest

from jupcron.api.client import JupiterClient
from jupcron.follower import FollowerLoop
from tests.fixtures.follow import DAY, FollowRig, FollowRigFactory, recurring_request


def long_facts(f: FollowRig, field: str, size: int, *, digits: bool = False) -> JupiterClient:
    """The rig's API, but every token search entry's `field` is `size` characters
    (digits: a number's text)."""
    filler = "7" if digits else "W"
    assert f.rig.transport is not None
    inner: httpx.BaseTransport = f.rig.transport

    class Edited(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = inner.handle_request(request)
            if not request.url.path.endswith("/search"):
                return response
            data = [{**t, field: filler * size} for t in json.loads(response.read())]
            return httpx.Response(response.status_code, content=json.dumps(data).encode(),
                                  headers={"content-type": "application/json"})  # fmt: skip

    return JupiterClient(f.rig.url, api_key=None, transport=Edited(), rate_limit=1000,
                         sleep=lambda s: None)  # fmt: skip


@pytest.mark.parametrize(("field", "size"), [("symbol", 40), ("name", 200)])
def test_a_long_token_symbol_is_kept_short_and_the_orders_are_still_followed(
    make_follow_rig: FollowRigFactory, db_url: str, field: str, size: int
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    f.fire(plan)
    f.clock.advance(DAY // 2)  # its first round filled
    api = long_facts(f, field, size)
    try:
        FollowerLoop(f.engine, api, f.rig.wallet.address, interval=60, clock=f.clock).poll_once()
    finally:
        api.close()
    assert len(f.fills("dca")) == 1  # the order was followed
    stored = [r[field] for r in f.sql("SELECT symbol, name FROM tokens")]
    assert stored
    assert all(text.startswith("WWW") for text in stored)


def test_a_token_price_the_store_refuses_does_not_stop_the_orders_being_followed(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """A ``usdPrice`` of 50 digits (PostgreSQL's ``tokens.usd_price`` is VARCHAR(40)):
    the token step fails (logged), the orders are followed all the same."""
    f = make_follow_rig(db_url)
    f.fire(f.rig.plan("recurring", recurring_request(2), name="dca"))
    f.clock.advance(DAY // 2)
    api = long_facts(f, "usdPrice", 50, digits=True)
    try:
        FollowerLoop(f.engine, api, f.rig.wallet.address, interval=60, clock=f.clock).poll_once()
    finally:
        api.close()
    assert len(f.fills("dca")) == 1
