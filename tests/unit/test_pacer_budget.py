"""The pacer with a shared budget: batches drawn and spent locally, empty draws
waited out (never a busy loop), stale tokens dropped, 429s passed to the budget.
The budget here is a plain token bucket on the fake clock (the real one, on
PostgreSQL, is tests/integration/test_rate_budget.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from jupcron.api.pacer import (
    DRAW_AHEAD,
    MAX_BLOCK,
    MIN_DRAW_WAIT,
    SPEND_WINDOW,
    TOKEN_TTL,
    Pacer,
)
from tests.fixtures.emulator import FakeTime


@dataclass(frozen=True)
class Given:
    tokens: int
    wait: float


class Bucket:
    """A token bucket on the fake clock: what the shared row does, in memory."""

    def __init__(self, t: FakeTime, rate: float, capacity: float, tokens: float = 0.0) -> None:
        self.t, self.rate, self.capacity = t, rate, capacity
        self.tokens, self.at = tokens, t.now
        self.blocked_until = 0.0
        self.draws: list[int] = []  # the want of each draw
        self.granted = 0
        self.blocks: list[float] = []

    def draw(self, want: int) -> Given:
        self.draws.append(want)
        now = self.t.now
        self.tokens = min(self.capacity, self.tokens + self.rate * (now - self.at))
        self.at = now
        if self.blocked_until > now:
            return Given(0, self.blocked_until - now)
        grant = min(want, int(self.tokens))
        self.tokens -= grant
        self.granted += grant
        if grant:
            return Given(grant, 0.0)
        return Given(0, (1 - self.tokens) / self.rate)

    def block(self, seconds: float) -> None:
        self.blocks.append(seconds)
        self.blocked_until = max(self.blocked_until, self.t.now + seconds)


def make(t: FakeTime, bucket: Bucket, rate: float = 1000.0) -> Pacer:
    return Pacer(rate, sleep=t.sleep, clock=t.clock, wall=t.wall, budget=bucket)


def test_an_empty_budget_is_waited_out_until_the_next_token() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=2.0, capacity=1, tokens=0)
    p = make(t, bucket)
    waited = p.acquire()
    assert waited == pytest.approx(0.5)  # one sleep, exactly to the next token
    assert len(bucket.draws) == 2  # the empty draw, then the granted one
    assert t.slept == [pytest.approx(0.5)]


@pytest.mark.parametrize(
    ("wait", "slept"),
    [(0.0, MIN_DRAW_WAIT), (0.001, MIN_DRAW_WAIT), (3.0, 3.0), (10**6, MAX_BLOCK)],
)
def test_waits_are_bounded_both_ways(wait: float, slept: float) -> None:
    t = FakeTime()

    class Once:
        calls = 0

        def draw(self, want: int) -> Given:
            self.calls += 1
            return Given(0, wait) if self.calls == 1 else Given(1, 0.0)

        def block(self, seconds: float) -> None:
            return None

    p = Pacer(1000.0, sleep=t.sleep, clock=t.clock, wall=t.wall, budget=Once())
    p.acquire()
    assert t.slept == [pytest.approx(slept)]


def test_the_long_run_rate_is_the_budget() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=4.0, capacity=2, tokens=2)
    p = make(t, bucket, rate=1000.0)  # the local pacer alone would allow 1000/s
    start = t.now
    n = 42
    for _ in range(n):
        p.acquire()
    elapsed = t.now - start
    assert n <= 2 + 4.0 * elapsed + 1e-9  # never more than capacity + rate x time
    assert bucket.granted == n
    # no busy loop: every empty draw was followed by a sleep to the next token
    assert len(bucket.draws) <= n + len(t.slept)


def test_a_batch_is_spent_locally_and_stale_tokens_dropped() -> None:
    t = FakeTime()

    class Three:
        draws = 0

        def draw(self, want: int) -> Given:
            self.draws += 1
            return Given(3, 0.0)

        def block(self, seconds: float) -> None:
            return None

    budget = Three()
    p = Pacer(1000.0, sleep=t.sleep, clock=t.clock, wall=t.wall, budget=budget)
    p.acquire()  # draws 3, spends 1
    p.acquire()  # spends a kept one
    assert budget.draws == 1
    t.now += TOKEN_TTL + 0.5
    p.acquire()  # the last kept one is too old: a new draw
    assert budget.draws == 2


def test_a_busy_process_draws_ahead_what_it_spends() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=10_000.0, capacity=6_000, tokens=6_000)
    p = make(t, bucket, rate=10_000.0)
    for _ in range(1_000):  # 400 requests a second for 2.5 s
        p.acquire()
        t.now += 0.0025
    assert bucket.granted >= 1_000
    # the first SPEND_WINDOW one token a draw, then ~40 (0.1 s at 400/s) a draw
    assert len(bucket.draws) < 400 * SPEND_WINDOW + 60
    assert max(bucket.draws) == pytest.approx(400 * DRAW_AHEAD, abs=2)


def test_drawing_ahead_is_bounded_by_the_keys_rate_and_tokens_age_out() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=10_000.0, capacity=6_000, tokens=6_000)
    p = make(t, bucket, rate=50.0)  # the key's rate: 50/s, spent flat out
    for _ in range(200):
        p.acquire()
    assert max(bucket.draws) <= 50 * DRAW_AHEAD
    t.now += TOKEN_TTL + 0.1  # idle: what was drawn ahead is no longer ours
    before = bucket.granted
    p.acquire()
    assert bucket.granted > before  # a fresh draw, not a stale token


def test_a_slow_process_draws_one_token_at_a_time() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=10.0, capacity=10, tokens=10)
    p = make(t, bucket, rate=10.0)
    for _ in range(30):  # 10 a second, the key's rate
        p.acquire()
    assert set(bucket.draws) == {1}


def test_a_429_blocks_the_whole_key() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=1.0, capacity=1, tokens=1)
    p = make(t, bucket)
    p.block_for(7.0)
    assert bucket.blocks == [7.0]
    p.block_for(10**6)
    assert bucket.blocks[-1] == MAX_BLOCK


def test_spare_work_takes_a_token_only_when_one_is_there() -> None:
    t = FakeTime()
    bucket = Bucket(t, rate=1.0, capacity=1, tokens=0)
    p = make(t, bucket)
    assert p.try_spare() is False  # none: no wait, no slot taken
    assert t.slept == []
    t.now += 1.0
    assert p.try_spare() is True
    assert bucket.granted == 1


def test_without_a_budget_nothing_changes() -> None:
    t = FakeTime()
    p = Pacer(1.0, sleep=t.sleep, clock=t.clock, wall=t.wall)
    assert p.budget is None
    assert p.acquire() == 0
    assert p.try_spare() is False
