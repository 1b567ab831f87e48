"""Review 18b, lead 1: a dependency that stops answering while the daemon runs (and
no run is due) is seen before the next run fails, and told once; its return is told.

Against the emulator over loopback HTTP (its RPC endpoint and its portfolio call),
with the clock as a parameter: the daemon starts healthy, then the RPC node (or the
API) starts failing. Before the fix only what was degraded *at start* was ever
looked at again, so a node that died later was never noticed between runs
(`jupcron status`, the page and the STATUS= line said nothing), and a return was
only logged, never told."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from solders.keypair import Keypair

from jupcron.config import Config
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.errors import FatalError
from jupcron.service.dependencies import Dependencies

SOL = "So11111111111111111111111111111111111111112"
DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port
ADDRESS = str(Keypair().pubkey())
RECHECK = 60.0
WATCH = 600.0


@pytest.fixture
def emulator() -> Iterator[tuple[Emulator, str]]:
    emu = Emulator(seed=7, api_key="the-right-key")
    emu.ledger.set_balance(ADDRESS, SOL, 10**9)
    server = EmulatorServer().start(emu)
    yield emu, server.url
    server.stop()


@pytest.fixture(autouse=True)
def the_right_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPITER_API_KEY", "the-right-key")


def config(api: str, rpc: str | None) -> Config:
    data: dict[str, Any] = {"api": {"base_url": api, "connect_timeout": 2, "read_timeout": 5}}
    if rpc:
        data["rpc"] = {"url": rpc}
    return Config.model_validate(data)


class Watched:
    """Dependencies on a clock the test moves, telling into a list."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.now = 1000.0
        self.told: list[str] = []
        self.fatal: list[FatalError] = []
        self.deps = Dependencies(
            lambda: self.config, ADDRESS, on_fatal=self.fatal.append, recheck=RECHECK,
            watch=WATCH, tell=self.told.append, monotonic=lambda: self.now,
        )  # fmt: skip

    def look_after(self, seconds: float) -> None:
        """`seconds` pass; the loop turn then must look (and the look ends)."""
        self.now += seconds
        thread = self.deps.maybe_recheck()
        assert thread is not None, "nothing was looked at"
        thread.join(30)
        assert not thread.is_alive()


def test_an_rpc_node_that_dies_later_is_seen_told_once_and_its_return_told(
    emulator: tuple[Emulator, str],
) -> None:
    emu, url = emulator
    watched = Watched(config(url, url + "/rpc"))
    watched.deps.at_start()
    assert watched.deps.degraded() == []
    assert watched.deps.maybe_recheck() is None  # healthy: no look before `watch`

    emu.faults.add("server_error", count=0, operation="rpc")  # the node dies, no run due
    watched.look_after(WATCH)
    (said,) = watched.deps.degraded()  # `jupcron status`, the page, STATUS= see it now
    assert said.startswith("rpc: ")
    assert "did not answer" in said
    assert watched.told == []  # one failed look may be a blip: not told yet

    watched.look_after(RECHECK)  # still down at the next look: told
    (down,) = watched.told
    assert "rpc" in down
    assert "did not answer" in down

    watched.look_after(RECHECK)  # still down: not told again
    watched.look_after(RECHECK)
    assert len(watched.told) == 1

    emu.faults.clear()  # the node is back
    watched.look_after(RECHECK)
    assert watched.deps.degraded() == []
    assert len(watched.told) == 2
    assert "rpc" in watched.told[1]
    assert "again" in watched.told[1]


def test_an_api_that_stops_answering_later_is_seen(emulator: tuple[Emulator, str]) -> None:
    emu, url = emulator
    watched = Watched(config(url, url + "/rpc"))
    watched.deps.at_start()
    emu.faults.add("server_error", count=0, operation="positions", status=503)
    watched.look_after(WATCH)
    watched.look_after(RECHECK)
    (said,) = watched.deps.degraded()
    assert said.startswith("api key: ")
    (down,) = watched.told
    assert "api key" in down
    assert watched.fatal == []  # a silent API is not a refused key


def test_a_blip_of_one_look_is_not_told(emulator: tuple[Emulator, str]) -> None:
    emu, url = emulator
    watched = Watched(config(url, url + "/rpc"))
    watched.deps.at_start()
    emu.faults.add("server_error", count=1, operation="rpc")  # one failed answer
    watched.look_after(WATCH)
    assert len(watched.deps.degraded()) == 1
    watched.look_after(RECHECK)
    assert watched.deps.degraded() == []
    assert watched.told == []  # neither its fall nor its return


def test_the_return_of_what_was_degraded_at_start_is_told(emulator: tuple[Emulator, str]) -> None:
    _, url = emulator
    watched = Watched(config(url, DEAD + "/rpc"))
    watched.deps.at_start()  # said by the start alert (daemon/service/daemon.py)
    assert len(watched.deps.degraded()) == 1
    watched.look_after(RECHECK)
    assert watched.told == []  # the start alert said it already: not again
    watched.config = config(url, url + "/rpc")  # the node answers (a reload moved it)
    watched.look_after(RECHECK)
    assert watched.deps.degraded() == []
    (back,) = watched.told
    assert "rpc" in back
    assert "again" in back


def test_with_the_defaults_a_node_that_dies_later_shows_in_the_status_within_the_hour(
    emulator: tuple[Emulator, str],
) -> None:
    """As `Wiring.probe` builds it (no `watch`, no `tell`): what `jupcron status`, the
    page and the STATUS= line read (`degraded`) says a node that died after the start."""
    emu, url = emulator
    now = [1000.0]
    deps = Dependencies(lambda: config(url, url + "/rpc"), ADDRESS, on_fatal=lambda e: None,
                        monotonic=lambda: now[0])  # fmt: skip
    deps.at_start()
    emu.faults.add("server_error", count=0, operation="rpc")
    seen = []
    for _ in range(60):  # an hour of loop turns, a minute apart
        now[0] += 60.0
        thread = deps.maybe_recheck()
        if thread is not None:
            thread.join(30)
        seen = deps.degraded()
        if seen:
            break
    assert len(seen) == 1
    assert seen[0].startswith("rpc: ")
