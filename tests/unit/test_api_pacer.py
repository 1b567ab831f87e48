"""The pacer: keyless 0.5 req/s, configured rates, rate-limit headers, 429 blocks."""

from __future__ import annotations

import pytest

from jupcron.api.client import JupiterClient, backoff
from jupcron.api.pacer import HEADROOM, Pacer
from jupcron.emulator import Emulator
from jupcron.errors import NoSpareCapacityError
from tests.fixtures.emulator import ClientFactory, FakeTime, Recorder


def pacer(rate: float, t: FakeTime) -> Pacer:
    return Pacer(rate, sleep=t.sleep, clock=t.clock, wall=t.wall)


@pytest.mark.parametrize(("rate", "gap"), [(0.5, 2.0), (1.0, 1.0), (10.0, 0.1)])
def test_slots_are_spaced_by_the_rate(rate: float, gap: float) -> None:
    t = FakeTime()
    p = pacer(rate, t)
    waits = [p.acquire() for _ in range(4)]
    assert waits[0] == 0
    assert waits[1:] == pytest.approx([gap / HEADROOM] * 3)
    assert all(w > gap for w in waits[1:])  # always a little under the limit, never at it


def test_exhausted_window_blocks_until_reset() -> None:
    t = FakeTime()
    p = pacer(100, t)
    p.acquire()
    p.observe({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(t.now) + 12)})
    assert p.acquire() == pytest.approx(12)


def test_remaining_above_zero_does_not_block() -> None:
    t = FakeTime()
    p = pacer(100, t)
    p.acquire()
    p.observe({"x-ratelimit-remaining": "5", "x-ratelimit-reset": str(int(t.now) + 12)})
    assert p.acquire() == pytest.approx(0.01 / HEADROOM, abs=1e-6)


def test_absurd_reset_is_capped() -> None:
    t = FakeTime()
    p = pacer(100, t)
    p.observe({"x-ratelimit-remaining": "-3", "x-ratelimit-reset": str(int(t.now) + 10**9)})
    assert p.acquire() == pytest.approx(120)


def test_backoff_grows_and_is_capped() -> None:
    assert [backoff(n) for n in range(1, 7)] == [0.5, 1, 2, 4, 8, 8]


@pytest.mark.parametrize(("key", "configured", "gap"), [(None, None, 2.0), ("k", None, 1.0),
                                                        ("k", 4.0, 0.25)])  # fmt: skip
def test_client_rate_by_key_and_config(
    make_client: ClientFactory, key: str | None, configured: float | None, gap: float
) -> None:
    emu = Emulator(api_key=key)
    client = make_client(emu, api_key=key, rate_limit=configured)
    recorder = Recorder()
    for _ in range(3):
        client.positions("BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV", observe=recorder)
    assert [a.waited for a in recorder.attempts] == pytest.approx(
        [0, gap / HEADROOM, gap / HEADROOM], abs=1e-3
    )


def test_429_without_retry_after_waits_for_reset(
    make_client: ClientFactory, fake_time: FakeTime
) -> None:
    emu = Emulator(rate_limit=1, rate_window=30, clock=fake_time.wall)
    client = make_client(emu, rate_limit=100)
    other = make_client(emu, rate_limit=100)
    address = "BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV"
    for _ in range(30):
        other.positions(address)
    recorder = Recorder()
    client.positions(address, observe=recorder)
    assert recorder.statuses == [429, 200]
    assert recorder.attempts[1].waited >= 1


def test_legacy_host_warns() -> None:
    from structlog.testing import capture_logs

    with capture_logs() as logs:
        JupiterClient("https://lite-api.jup.ag", api_key=None).close()
    assert [e["event"] for e in logs] == ["api_legacy_host"]


# ---- spare capacity: fires first, the follower takes what is left -------------------


def test_a_spare_slot_is_only_taken_when_free_now() -> None:
    t = FakeTime()
    p = pacer(10, t)
    assert p.try_spare()  # nothing going on: the slot is free
    assert not p.try_spare()  # the next slot is not free yet
    t.sleep(p.interval)
    assert not p.try_spare()  # free for runs, but the background's share is used up
    t.sleep(p.spare_interval)
    assert p.try_spare()


def test_no_spare_slot_while_a_run_waits_for_one() -> None:
    t = FakeTime()
    seen: list[bool] = []
    p = Pacer(10, clock=t.clock, wall=t.wall, sleep=lambda s: seen.append(p.try_spare()))
    p.acquire()
    p.acquire()  # waits one interval; while it sleeps, the follower asks
    assert seen == [False]


def test_the_spare_share_limits_background_requests_to_their_part_of_the_rate() -> None:
    t = FakeTime()
    p = Pacer(10, sleep=t.sleep, clock=t.clock, wall=t.wall, spare_share=0.25)
    start = t.now
    taken = [p.acquire_spare(timeout=60) for _ in range(11)]
    assert all(w is not None for w in taken)
    elapsed = t.now - start
    assert elapsed == pytest.approx(10 * p.spare_interval, rel=0.1)  # 2.5 requests/s, not 10
    assert p.spare_interval == pytest.approx(4 * p.interval)


def test_a_run_after_a_spare_slot_waits_at_most_one_interval() -> None:
    t = FakeTime()
    p = pacer(2, t)
    assert p.try_spare()
    assert p.acquire() <= p.interval


def test_acquire_spare_gives_up_at_its_deadline() -> None:
    t = FakeTime()
    p = pacer(1, t)
    p.block_for(100)  # a 429 told everyone to wait
    assert p.acquire_spare(timeout=10) is None
    assert t.now - 1_800_000_000.0 <= 10 + p.interval


def test_a_follower_call_without_spare_capacity_is_a_retryable_error(
    make_client: ClientFactory, emulator: Emulator, fake_time: FakeTime
) -> None:
    client = make_client(emulator)
    client.pacer.block_for(120)
    with pytest.raises(NoSpareCapacityError):
        client.recurring_orders("So11111111111111111111111111111111111111112", "active", 1)
    assert emulator.ledger.requests.get("recurring_orders") is None  # nothing was sent
