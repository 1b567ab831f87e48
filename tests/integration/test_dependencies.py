"""Issue 28 item 3: the daemon's own look at its dependencies (daemon/service/
dependencies.py) against the emulator over loopback HTTP: a key the API refuses is
fatal with the fix; an API or RPC node that does not answer, or a wallet without
SOL, is degraded (with the fix) and cleared once it works again; a key refused at a
later look is fatal as at start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from solders.keypair import Keypair
from structlog.testing import capture_logs

from jupcron.config import Config
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.errors import FatalError
from jupcron.service.dependencies import Dependencies

SOL = "So11111111111111111111111111111111111111112"
DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port
ADDRESS = str(Keypair().pubkey())


@pytest.fixture
def emulator() -> Iterator[tuple[Emulator, str]]:
    emu = Emulator(seed=5, api_key="the-right-key")
    server = EmulatorServer().start(emu)
    yield emu, server.url
    server.stop()


def config(api: str, rpc: str | None = None, **extra: Any) -> Config:
    data: dict[str, Any] = {"api": {"base_url": api, "connect_timeout": 2, "read_timeout": 5}}
    if rpc:
        data["rpc"] = {"url": rpc}
    return Config.model_validate(data)


class Deps:
    """Dependencies over a config the test swaps (as a reload would)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.fatal: list[FatalError] = []
        self.deps = Dependencies(lambda: self.config, ADDRESS, on_fatal=self.fatal.append,
                                 recheck=0)  # fmt: skip

    def again(self) -> None:
        thread = self.deps.maybe_recheck()
        assert thread is not None
        thread.join(30)


@pytest.fixture(autouse=True)
def the_right_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPITER_API_KEY", "the-right-key")


def test_a_refused_key_is_fatal_at_start_with_the_fix(
    emulator: tuple[Emulator, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPITER_API_KEY", "a-wrong-key")
    with pytest.raises(FatalError, match="refused it") as caught:
        Deps(config(emulator[1])).deps.at_start()
    assert "portal.jup.ag" in str(caught.value)
    assert "a-wrong-key" not in str(caught.value)


def test_a_silent_rpc_node_is_degraded_until_it_answers(emulator: tuple[Emulator, str]) -> None:
    emu, url = emulator
    emu.ledger.set_balance(ADDRESS, SOL, 10**9)
    deps = Deps(config(url, DEAD + "/rpc"))
    with capture_logs() as logs:
        deps.deps.at_start()
    (said,) = deps.deps.degraded()
    assert said.startswith("rpc: http://127.0.0.1:9/*** did not answer")  # the path masked
    assert said.endswith("(fix: check rpc.url)")
    assert deps.deps.text() == said
    assert [e["dependency"] for e in logs if e["event"] == "dependency_degraded"] == ["rpc"]
    assert [e["dependency"] for e in logs if e["event"] == "dependency_ok"] == ["api key"]
    deps.again()  # still silent: still degraded
    assert deps.deps.degraded() == [said]
    deps.config = config(url, url + "/rpc")  # the node answers (here: a reload moved it)
    with capture_logs() as logs:
        deps.again()
    assert deps.deps.degraded() == []
    assert [e["event"] for e in logs] == ["dependency_recovered"]
    assert deps.deps.maybe_recheck() is None  # nothing degraded: nothing asked


def test_a_wallet_without_sol_is_degraded_until_funded(emulator: tuple[Emulator, str]) -> None:
    emu, url = emulator
    emu.ledger.set_balance(ADDRESS, SOL, 0)
    deps = Deps(config(url, url + "/rpc"))
    deps.deps.at_start()
    (said,) = deps.deps.degraded()
    assert f"wallet {ADDRESS} holds no SOL" in said
    assert said.endswith("(fix: fund the wallet)")
    emu.ledger.set_balance(ADDRESS, SOL, 10**9)
    deps.again()
    assert deps.deps.degraded() == []


def test_a_silent_api_is_degraded_and_a_key_refused_later_is_fatal(
    emulator: tuple[Emulator, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = Deps(config(DEAD))
    deps.deps.at_start()
    (said,) = deps.deps.degraded()
    assert said.startswith("api key: http://127.0.0.1:9 did not answer")
    assert "the daemon starts degraded" in said
    monkeypatch.setenv("JUPITER_API_KEY", "a-wrong-key")  # the API is back; the key is not
    deps.config = config(emulator[1])
    deps.again()
    (fatal,) = deps.fatal
    assert "refused it" in str(fatal)
    assert "portal.jup.ag" in str(fatal)
