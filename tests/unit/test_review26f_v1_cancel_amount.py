"""Trigger v1's cancels, single and batch, record the same amount: what the cancel
returns, the order's unfilled input.

Jupiter's docs (trigger/v1/cancel-order.mdx): ``cancelOrder`` "cancels an open trigger
order and returns any unfilled tokens to the maker"; ``cancelOrders`` does the same for
many. The real transactions (tests/fixtures/real/trigger-v1-cancel-orders-*.json) are
``cancel_order`` instructions with no amount: the program refunds what the order's
escrow still holds. The emulator's batch cancel recorded that (``left``); its single
cancel recorded the order's whole ``making_amount``, however much had filled."""

from __future__ import annotations

import json
from typing import Any

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.ledger import TriggerOrder
from tests.fixtures.emulator import sign

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
ORDER = "4DWzP4TdTsuwvYMaMWrRqzya4UTFKFoVjfUWNWh8zhzd"
MADE, LEFT = 50_000_000, 20_000_000  # 50 USDC offered, 30 of it filled


def _post(emu: Emulator, path: str, body: Any) -> tuple[int, Any]:
    answer = emu.handle("POST", path, {}, {}, json.dumps(body).encode())
    return answer.status, json.loads(answer.body)


def _emulator(maker: Wallet) -> Emulator:
    emu = Emulator(seed=5)
    emu.ledger.add_trigger_order(
        TriggerOrder(order=ORDER, maker=maker.address, input_mint=USDC, output_mint=SOL,
                     making_amount=MADE, taking_amount=250_000_000, remaining=LEFT)
    )  # fmt: skip
    return emu


def test_a_single_cancel_records_what_is_left_as_the_batch_does() -> None:
    maker = Wallet.generate()
    emu = _emulator(maker)
    _, single = _post(emu, "/trigger/v1/cancelOrder", {"maker": maker.address, "order": ORDER})
    _, batch = _post(emu, "/trigger/v1/cancelOrders", {"maker": maker.address,
                                                       "orders": [ORDER]})  # fmt: skip
    recorded = [emu.ledger.get_issued(a["requestId"]) for a in (single, batch)]
    assert [i.in_amount for i in recorded if i is not None] == [LEFT, LEFT]

    before = emu.ledger.balance(maker.address, USDC)
    status, done = _post(emu, "/trigger/v1/execute",
                         {"signedTransaction": sign(maker, single["transaction"]),
                          "requestId": single["requestId"]})  # fmt: skip
    assert (status, done["status"]) == (200, "Success")
    assert emu.ledger.balance(maker.address, USDC) - before == LEFT  # what it refunded
    execution = emu.ledger.execution(done["signature"])
    assert execution is not None
    assert execution.in_amount == LEFT
    assert emu.ledger.trigger_orders[ORDER].refunded == LEFT
