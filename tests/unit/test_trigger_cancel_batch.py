"""Trigger v1's batch cancel: the plan's request (1-5 distinct orders, so one
transaction a run) and the emulator's ``cancelOrders`` as the docs describe it
(every open order when none are named, 5 to a transaction, one ``requestId``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.txbuild import from_b64
from jupcron.plans.load import load_plans
from tests.fixtures.emulator import sign
from tests.fixtures.plans import write_plans

ORDERS = [
    "4DWzP4TdTsuwvYMaMWrRqzya4UTFKFoVjfUWNWh8zhzd",
    "BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV",
    "So11111111111111111111111111111111111111112",
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
    "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
]


def _problems(tmp_path: Path, request: dict[str, Any]) -> list[str]:
    plan = {"name": "stop", "kind": "trigger-cancel-batch", "schedule": {"every": "1d"},
            "request": request}  # fmt: skip
    path = write_plans(tmp_path / "p.yaml", {"plans": [plan]})
    return [str(p).removeprefix(str(path) + ":") for p in load_plans([path]).problems]


def test_one_to_five_orders_load(tmp_path: Path) -> None:
    assert _problems(tmp_path, {"orders": ORDERS[:5], "computeUnitPrice": "auto"}) == []


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ({"orders": ORDERS}, "request.orders"),  # six: two transactions
        ({"orders": []}, "request.orders"),
        ({"orders": ORDERS[:1] * 2}, "named twice"),
        ({}, "request.orders"),  # "cancel ALL" is the API's choice of orders: refused
        ({"orders": ORDERS[:1], "maker": ORDERS[1]}, "the daemon fills in 'maker'"),
    ],
)
def test_a_bad_batch_is_refused(tmp_path: Path, request_: dict[str, Any], expected: str) -> None:
    problems = _problems(tmp_path, request_)
    assert len(problems) == 1, problems
    assert expected in problems[0]


def _post(emu: Emulator, path: str, body: Any) -> tuple[int, Any]:
    answer = emu.handle("POST", path, {}, {}, json.dumps(body).encode())
    return answer.status, json.loads(answer.body)


def test_the_emulator_batches_every_open_order_five_to_a_transaction() -> None:
    emu, maker = Emulator(), Wallet.generate()
    seeded = [_post(emu, "/_emulator/trigger-orders", {"maker": maker.address})[1]["order"]
              for _ in range(7)]  # fmt: skip
    status, answer = _post(emu, "/trigger/v1/cancelOrders", {"maker": maker.address})
    assert status == 200
    txs = answer["transactions"]
    assert [len(from_b64(t).message.instructions) - 2 for t in txs] == [5, 2]  # after CU ixs
    for tx in txs:  # each posted with the one requestId
        status, done = _post(emu, "/trigger/v1/execute",
                             {"signedTransaction": sign(maker, tx), "requestId": answer["requestId"]})  # fmt: skip
        assert (status, done["status"]) == (200, "Success")
    assert {emu.ledger.trigger_orders[o].status for o in seeded} == {"Cancelled"}
    status, gone = _post(emu, "/trigger/v1/cancelOrders", {"maker": maker.address})
    assert (status, gone["error"]) == (400, "no matching orders found")
