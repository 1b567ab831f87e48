"""Trigger V2 order states: the emulator serves only the pairs Jupiter documents, and
the daemon reads every documented pair as the docs mean it.

Jupiter maps each price order's ``rawState`` to its ``orderState``
(trigger/order-history.mdx, "Raw States") and each DCA's ``state`` to its
``displayState`` (trigger/dca-history.mdx, "Order states"); the tables are copied in
tests/fixtures/trigger_v2_states.json (jup-ag/docs, commit 1dda348d). The emulator
served price orders ``pending``/``pending`` (a deposit sent, never seen landing) and
``failed``/``failed`` (a deposit the API took as failed): raw states no table has. An
emulator that invents states lets the daemon be tested against an API that does not
exist, so every pair it can serve, driven through the lifecycle, is held to the tables.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupcron.api.trigger_v2_models import CancelCraft, Family, HistoryOrder, HistoryPage
from jupcron.emulator import Emulator
from jupcron.emulator.products.trigger_v2.api import DCA_DISPLAY, PRICE_DISPLAY
from jupcron.products.trigger_v2.follower import _state
from jupcron.products.trigger_v2.model import TriggerV2CancelRequest
from jupcron.products.trigger_v2.steps import _cancel
from jupcron.store import follow
from tests.unit.test_emulator_trigger_v2 import SOL, USDC, Clock, Session

TABLES = json.loads((Path(__file__).parents[1] / "fixtures" / "trigger_v2_states.json").read_text())
# (display, raw) for both families
PRICE_PAIRS = {(shown, raw) for shown, raw, _ in TABLES["price"]["pairs"]}
DCA_PAIRS = {(shown, raw) for raw, shown, _ in TABLES["dca"]["pairs"]}
PAST = {"filled", "completed", "cancelled", "expired", "failed"}  # the ``past`` list's


def test_the_fixture_is_the_docs_tables() -> None:
    assert TABLES["source"] == {"repo": "jup-ag/docs",
                                "commit": "1dda348d206ca25211ec225e250caaf7fbc195d5"}  # fmt: skip
    assert (len(PRICE_PAIRS), len(DCA_PAIRS)) == (19, 7)
    assert {("pending", "depositing"), ("failed", "deposit_failed")} <= PRICE_PAIRS
    assert {raw for _, raw in PRICE_PAIRS}.isdisjoint({"pending", "failed"})


def test_the_emulators_tables_are_jupiters() -> None:
    assert {(shown, raw) for raw, shown in PRICE_DISPLAY.items()} == PRICE_PAIRS
    assert {(shown, raw) for raw, shown in DCA_DISPLAY.items()} == DCA_PAIRS


# --- the emulator, driven through the lifecycle ---------------------------------------


class Driver(Session):
    def price(self, expires_in: float = 7 * 86400) -> dict[str, Any]:
        deposit = self.deposit(orderType="price", orderSubType="single")
        body = {"depositRequestId": deposit["requestId"],
                "depositSignedTx": self.signed(deposit["transaction"]),
                "userPubkey": self.wallet, "inputMint": USDC, "outputMint": SOL,
                "inputAmount": deposit["amount"], "orderType": "single",
                "triggerMint": SOL, "triggerCondition": "above", "triggerPriceUsd": 500.0,
                "expiresAt": int((self.emu.state.clock() + expires_in) * 1000)}  # fmt: skip
        return dict(self.call("POST", "/orders/price", body).json())

    def cancel(self, family: str, order: str) -> None:
        crafted = self.call("POST", f"/orders/{family}/cancel/{order}")
        assert crafted.status == 200, crafted.json()
        body = {"signedTransaction": self.signed(crafted.json()["transaction"]),
                "cancelRequestId": crafted.json()["requestId"]}  # fmt: skip
        done = self.call("POST", f"/orders/{family}/confirm-cancel/{order}", body)
        assert done.status == 200, done.json()

    def begin_cancel(self, family: str, order: str) -> None:
        assert self.call("POST", f"/orders/{family}/cancel/{order}").status == 200

    def served(self) -> dict[str, tuple[str, str]]:
        """Every order's (display, raw) state as the history serves it, each list and
        each DCA's own page agreeing, the ``active``/``past`` lists a partition."""
        pairs: dict[str, tuple[str, str]] = {}
        for family, path in (("price", "/orders/history"), ("dca", "/orders/history/dca")):
            every = self.call("GET", path, query={"limit": "100"}).json()["orders"]
            lists = {which: self.call("GET", path, query={"limit": "100", "state": which})
                     .json()["orders"] for which in ("active", "past")}  # fmt: skip
            assert sorted(o["id"] for o in every) == sorted(
                o["id"] for o in lists["active"] + lists["past"]
            )
            for item in every:
                if family == "price":
                    pair = (item["orderState"], item["rawState"])
                else:
                    pair = (item["displayState"], item["state"])
                    alone = self.call("GET", f"{path}/{item['id']}").json()
                    assert (alone["displayState"], alone["state"]) == pair
                past = any(o["id"] == item["id"] for o in lists["past"])
                assert past == (pair[0] in PAST), (family, pair)
                pairs[item["id"]] = pair
        return pairs


def test_every_state_pair_the_emulator_serves_is_documented() -> None:
    clock = Clock()
    me = Driver(Emulator(seed=5, clock=clock))
    me.login()
    me.vault()
    v2 = me.emu.state.v2
    made: dict[str, str] = {}  # scenario -> order id
    seen: dict[str, set[tuple[str, str]]] = {}  # scenario -> every pair it was served in

    def look() -> None:
        pairs = me.served()
        for scenario, order in made.items():
            seen.setdefault(scenario, set()).add(pairs[order])

    made["price open"] = me.price()["id"]
    v2.unconfirmed = 1
    made["price unconfirmed"] = me.price()["id"]
    v2.misreported = 1
    made["price misreported"] = me.price()["id"]
    v2.refused_landed = 1
    assert "error" in me.price()
    made["price refused"] = next(o.id for o in v2.orders.values() if o.id not in made.values())
    made["price expiring"] = me.price(expires_in=120)["id"]
    made["price to cancel"] = me.price()["id"]
    made["dca active"] = me.dca(me.deposit()).json()["id"]
    made["dca to cancel"] = me.dca(me.deposit()).json()["id"]
    v2.misreported = 1
    made["dca misreported"] = me.dca(me.deposit()).json()["id"]
    v2.refused_landed = 1
    assert "error" in me.dca(me.deposit()).json()
    made["dca refused"] = next(o.id for o in v2.orders.values() if o.id not in made.values())
    look()
    me.begin_cancel("price", made["price to cancel"])
    me.begin_cancel("dca", made["dca to cancel"])
    look()
    me.cancel("price", made["price to cancel"])
    me.cancel("dca", made["dca to cancel"])
    clock.now += 3601  # the expiring order's time, the active DCA's second (last) round
    look()
    me.cancel("price", made["price expiring"])
    look()

    assert seen == {
        "price open": {("open", "open")},
        "price unconfirmed": {("pending", "depositing")},
        "price misreported": {("pending", "depositing")},
        "price refused": {("failed", "deposit_failed")},
        "price expiring": {("open", "open"), ("expired", "expired"), ("cancelled", "cancelled")},
        "price to cancel": {("open", "open"), ("pending_withdraw", "ready_to_cancel"),
                            ("cancelled", "cancelled")},
        "dca active": {("active", "active"), ("completed", "completed")},
        "dca to cancel": {("active", "active"), ("pending_withdraw", "withdrawing"),
                          ("cancelled", "cancelled")},
        "dca misreported": {("pending", "depositing")},
        "dca refused": {("failed", "deposit_failed")},
    }  # fmt: skip
    for scenario, pairs in seen.items():
        documented = PRICE_PAIRS if scenario.startswith("price") else DCA_PAIRS
        assert pairs <= documented, (scenario, pairs - documented)


# --- the daemon, reading every documented pair ----------------------------------------

NOW = datetime(2026, 9, 1, 12, tzinfo=UTC)
VAULT = "66xK9AE6oFpGAyn9eCWE3LtYwUZKkeUxbfjFSNmFnkBo"
# what the follower makes of each raw state (an order mid-cancel: ``open`` while our own
# cancel may still confirm it); ``held``: its funds may wait in the vault
FOLLOWED: dict[Family, dict[str, str]] = {
    "price": {
        "pending_deposit": "open", "depositing": "open", "open": "open",
        "ready_execute": "open", "ready_expire": "open", "executing": "open",
        "execute_success": "open", "execute_failed": "open", "ready_withdraw_output": "open",
        "withdrawing": "open", "partial_fill_success": "open", "fill_success": "completed",
        "ready_to_cancel": "open", "cancelled": "cancelled", "oco_cancelled": "cancelled",
        "expired": follow.HELD, "deposit_failed": "cancelled",
        "withdraw_failed": follow.HELD, "fill_failed": follow.HELD,
    },
    "dca": {
        "depositing": "open", "active": "open", "executing": "open", "withdrawing": "open",
        "completed": "completed", "cancelled": "cancelled", "deposit_failed": "cancelled",
    },
}  # fmt: skip
# the raw states a cancel plan skips as nothing left in the vault to withdraw
NOTHING_TO_CANCEL: dict[Family, set[str]] = {
    "price": {"fill_success", "cancelled", "oco_cancelled", "deposit_failed"},
    "dca": {"completed", "cancelled", "deposit_failed"},
}


def _documented() -> list[tuple[Family, str, str]]:
    price = [("price", shown, raw) for shown, raw in sorted(PRICE_PAIRS)]
    dca = [("dca", shown, raw) for shown, raw in sorted(DCA_PAIRS)]
    return [*price, *dca]  # type: ignore[list-item]


def _item(family: Family, shown: str, raw: str, updated: datetime) -> HistoryOrder:
    data: dict[str, Any] = {"id": str(uuid.uuid4()), "inputMint": USDC, "outputMint": SOL,
                            "userPubkey": "me", "initialInputAmount": "20000000"}  # fmt: skip
    if family == "price":
        data.update(orderState=shown, rawState=raw, privyWalletPubkey=VAULT,
                    updatedAt=int(updated.timestamp() * 1000))  # fmt: skip
    else:
        data.update(displayState=shown, state=raw, vaultPubkey=VAULT,
                    updatedAt=updated.isoformat())  # fmt: skip
    return HistoryOrder.model_validate(data)


@pytest.mark.parametrize(("family", "shown", "raw"), _documented())
def test_the_follower_reads_every_documented_state(family: Family, shown: str, raw: str) -> None:
    assert set(FOLLOWED[family]) == {r for _, r in (PRICE_PAIRS if family == "price"
                                                    else DCA_PAIRS)}  # fmt: skip
    assert _state(family, _item(family, shown, raw, NOW), NOW) == FOLLOWED[family][raw]
    if shown == "pending_withdraw":  # mid-cancel long past our own cancel: held
        old = _item(family, shown, raw, NOW - timedelta(hours=1))
        assert _state(family, old, NOW) == follow.HELD


class FakeApi:
    """One order in the wallet's ``active`` list; a cancel crafts a withdrawal."""

    wallet = "me"

    def __init__(self, order: HistoryOrder) -> None:
        self.order, self.cancels = order, 0

    def history(self, family: Family, state: str, offset: int = 0, observe: Any = None,
                spare: float | None = None) -> HistoryPage:  # fmt: skip
        orders = [self.order] if state == "active" and offset == 0 else []
        return HistoryPage(orders=orders, total=len(orders))

    def cancel(self, family: Family, order: str, observe: Any = None) -> CancelCraft:
        self.cancels += 1
        return CancelCraft(id=order, transaction="AQ==", request_id="r-1")


@pytest.mark.parametrize(("family", "shown", "raw"), _documented())
def test_a_cancel_skips_only_what_holds_nothing(family: Family, shown: str, raw: str) -> None:
    order = _item(family, shown, raw, NOW)
    api = FakeApi(order)
    request = TriggerV2CancelRequest(order=order.id, family=family)
    ordered = _cancel(api, request, VAULT, None)  # type: ignore[arg-type]
    if raw in NOTHING_TO_CANCEL[family]:
        assert (ordered.skip_code, api.cancels) == ("order_gone", 0)
    else:
        assert (ordered.skip_code, ordered.request_id, api.cancels) == (None, "r-1", 1)
