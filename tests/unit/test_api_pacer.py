"""The pacer: keyless 0.5 req/s, configured rates, rate-limit headers, 429 blocks."""

from __future__ import annotations

import pytest

from daemon.api.client import JupiterClient, backoff
from daemon.api.pacer import HEADROOM, Pacer
from daemon.emulator import Emulator
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
