"""The emulator's keeper looks only at the recurring orders with a round due, and
fills what a look at every order would fill: the same rounds, at the same times."""

from __future__ import annotations

import random

import pytest

from jupcron.emulator import keeper
from jupcron.emulator.common import State
from jupcron.emulator.faults import Faults
from jupcron.emulator.ledger import Ledger, RecurringOrder

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
T0 = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _state(clock: Clock) -> State:
    return State(ledger=Ledger(), faults=Faults(), rng=random.Random(7), clock=clock,
                 blockhash_ttl=90.0, request_ttl=120.0)  # fmt: skip


def _order(key: str, *, rounds: int, interval: int, created: float,
           start: float | None = None) -> RecurringOrder:  # fmt: skip
    return RecurringOrder(order=key, user="user", input_mint=USDC, output_mint=SOL,
                          in_amount=1_000_000 * rounds, number_of_orders=rounds,
                          interval=interval, created_at=created, signature="sig",
                          start_at=start)  # fmt: skip


def _every_due(state: State, now: float) -> set[tuple[str, int, float]]:
    """What a look at every order says is filled by `now`: (order, round, due time)."""
    out = set()
    for order in state.ledger.recurring_orders.values():
        start = order.start_at if order.start_at is not None else order.created_at
        for k in range(order.number_of_orders):
            due = start + k * order.interval / state.keeper_speed
            if due <= now:
                out.add((order.order, k, due))
    return out


def _filled(state: State) -> set[tuple[str, int, float]]:
    return {(f["order"], f["round"], f["at"]) for f in state.ledger.fills}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_keeper_fills_every_due_round_and_no_other(seed: int) -> None:
    rng = random.Random(seed)
    clock = Clock()
    state = _state(clock)
    placed = 0
    for _ in range(60):  # requests: orders placed now and then, the clock moving on
        for _ in range(rng.randrange(3)):
            created = clock.now - rng.choice([0, 5, 50])
            start = None if rng.random() < 0.7 else clock.now + rng.choice([0, 30, 400])
            state.ledger.add_recurring_order(_order(
                f"o{placed}", rounds=rng.randint(1, 4), interval=rng.choice([60, 90, 3600]),
                created=created, start=start,
            ))  # fmt: skip
            placed += 1
        clock.now += rng.choice([0, 1, 20, 61, 500])
        keeper.catch_up(state)
        assert _filled(state) == _every_due(state, clock.now)
    assert len(state.ledger.fills) > 20  # rounds of many orders were due on the way


def test_an_order_set_straight_into_the_ledger_is_filled() -> None:
    clock = Clock()
    state = _state(clock)
    state.ledger.recurring_orders["direct"] = _order("direct", rounds=2, interval=60,
                                                     created=T0)  # fmt: skip
    keeper.catch_up(state)
    clock.now += 60
    keeper.catch_up(state)
    assert _filled(state) == {("direct", 0, T0), ("direct", 1, T0 + 60)}
    assert state.ledger.recurring_orders["direct"].status == "completed"


def test_an_order_taken_out_is_not_filled_until_it_is_put_back() -> None:
    clock = Clock()
    state = _state(clock)
    state.ledger.add_recurring_order(_order("held", rounds=3, interval=60, created=T0))
    keeper.catch_up(state)  # round 0
    held = state.ledger.recurring_orders.pop("held")
    clock.now += 130
    keeper.catch_up(state)  # rounds 1 and 2 are due: the order is not there
    assert held.rounds == 1
    state.ledger.recurring_orders["held"] = held
    keeper.catch_up(state)
    assert held.rounds == 3
    assert _filled(state) == {("held", 0, T0), ("held", 1, T0 + 60), ("held", 2, T0 + 120)}


def test_a_cancelled_order_is_not_filled() -> None:
    clock = Clock()
    state = _state(clock)
    order = _order("gone", rounds=2, interval=60, created=T0)
    state.ledger.add_recurring_order(order)
    keeper.catch_up(state)
    keeper.cancel_recurring(state, order, "close")
    clock.now += 600
    keeper.catch_up(state)
    assert order.rounds == 1
    assert not state.ledger.recurring_orders.due  # nothing left to look at
