"""A daemon whose clock is off (a VM resumed minutes behind, a host minutes ahead)
reads ``x-ratelimit-reset`` (unix seconds, the API's clock) against its own clock.

Behind by 5 minutes, the window's reset seemed 5 minutes away: the pacer held off for
`MAX_BLOCK` (120 s) and wrote that hold-off into the key's shared budget, so every
daemon on the key (their clocks right) sent nothing for two minutes, when the API's
window frees up within seconds. Ahead, the reset seemed past: nothing held off, and the
next request met a 429. The answer's own ``Date`` (the API's clock too) says how far
the reset is, whatever our clock reads.

Real components: the emulator over loopback (its sliding window and its headers), the
key's shared budget on the PostgreSQL fixture, a second daemon's budget on its own engine.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine

from jupcron.api.client import JupiterClient
from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.store.engine import make_engine
from jupcron.store.ratebudget import shared_budgets
from tests.fixtures.emulator import Recorder

pytestmark = pytest.mark.postgres

WINDOW = 10.0  # the emulator's sliding window: 6 requests per 10 s
LIMIT = 0.6
# the longest a reset can honestly be away: the window, and the header's whole second
HONEST = WINDOW + 2.0


class Decided(Exception):
    """The pacer has said how long it waits: the test stops it there."""


@pytest.fixture
def engines(pg_url: str) -> Iterator[tuple[Engine, Engine]]:
    first, second = make_engine(pg_url), make_engine(pg_url)
    yield first, second
    first.dispose()
    second.dispose()


@pytest.mark.parametrize("skew", [-300.0, -30.0, 0.0, 30.0, 300.0])
def test_the_window_is_waited_out_for_as_long_as_the_api_says_whatever_our_clock(
    engines: tuple[Engine, Engine], skew: float
) -> None:
    key = SecretStr(f"k-{secrets.token_hex(6)}")  # a bucket row of this test's own
    emu = Emulator(api_key=key.get_secret_value(), rate_limit=LIMIT, rate_window=WINDOW)
    slept: list[float] = []
    armed = False

    def sleep(seconds: float) -> None:  # decisions recorded, never slept
        slept.append(seconds)
        if armed:
            raise Decided

    with EmulatorServer().start(emu) as server:
        skewed = JupiterClient(
            server.url, api_key=key, rate_limit=50, sleep=sleep,
            wall=lambda: time.time() + skew,
            budget_for=shared_budgets(engines[0], key, window=WINDOW),
        )  # fmt: skip
        recorder = Recorder()
        wallet = Wallet.generate()
        with skewed:
            for _ in range(6):  # the window's whole capacity: the sixth answer says 0 left
                skewed.positions(wallet.address, observe=recorder)
            assert recorder.statuses == [200] * 6
            # another daemon on the key, its clock right, asks the shared budget for a token
            other = shared_budgets(engines[1], key, window=WINDOW)
            assert other is not None
            grant = other("main", 50 * 0.99).draw(1)
            # the skewed daemon's next request: its first wait is its own hold-off
            armed = True
            with pytest.raises(Decided):
                skewed.pacer.acquire()
            waited = slept[-1]
    # the window frees up within its length (the API's clock): neither daemon waits
    # longer, and neither sends before it (that is a 429)
    assert 0 < waited <= HONEST
    assert grant.tokens == 0
    assert 0 < grant.wait <= HONEST


def test_a_429_without_retry_after_is_waited_out_on_the_apis_clock() -> None:
    emu = Emulator(rate_limit=LIMIT, rate_window=WINDOW)
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        raise Decided

    wallet = Wallet.generate()
    with EmulatorServer().start(emu) as server:
        with JupiterClient(server.url, api_key=None, rate_limit=50, sleep=lambda s: None) as x:
            for _ in range(6):  # another application on the account uses up the window
                x.positions(wallet.address)
        recorder = Recorder()
        skewed = JupiterClient(server.url, api_key=None, rate_limit=50, sleep=sleep,
                               wall=lambda: time.time() - 300)  # fmt: skip
        with skewed, pytest.raises(Decided):
            skewed.positions(wallet.address, observe=recorder)
    assert recorder.statuses == [429]
    assert 0 < slept[0] <= HONEST
