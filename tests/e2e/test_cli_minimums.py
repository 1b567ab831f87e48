"""Jupiter's recurring minimums beyond USDC/USDT inputs, through the CLI: a
Token-2022 mint (its owner, asked of rpc.url) and an input worth too little (a
quote from the API) are refused by `plans validate` and `plans apply`; where
jupcron cannot ask, it says so and leaves the check to the API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.store import migrate
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import SOL, USDC
from tests.support.pgcluster import free_port

PYUSD = (
    "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"  # Token-2022; the emulator prices it at 1 USD
)
SOL_UNITS = 10**9  # the emulator prices SOL at 150 USD


def dca(
    name: str, input_mint: str, in_amount: int, orders: int = 2, output: str = USDC
) -> dict[str, Any]:
    return {
        "name": name, "kind": "recurring", "schedule": {"every": "1d"},
        "request": {"inputMint": input_mint, "outputMint": output,
                    "params": {"time": {"inAmount": in_amount, "numberOfOrders": orders,
                                        "interval": 86400}}},
    }  # fmt: skip


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    srv = EmulatorServer().start(Emulator(seed=3))
    yield srv
    srv.stop()


def setup(tmp_path: Path, plans: list[dict[str, Any]], **config: Any) -> tuple[Path, Path]:
    db = tmp_path / "jupcron.db"
    migrate.upgrade(f"sqlite:///{db}")
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "dca.yaml").write_text(json.dumps({"plans": plans}))
    path = tmp_path / "jupcron.yaml"
    path.write_text(json.dumps({"database": {"url": f"sqlite:///{db}"},
                                "plans": {"dir": str(folder)}, **config}))  # fmt: skip
    return path, folder


def stored(config: Path) -> list[str]:
    listed = jupcron("--config", str(config), "plans", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    return [row["name"] for row in json.loads(listed.stdout)]


def test_token_2022_and_small_inputs_are_refused_with_the_reason(
    tmp_path: Path, server: EmulatorServer
) -> None:
    plans = [
        dca("pyusd", PYUSD, 500_000_000),  # 500 USD, but a Token-2022 mint
        dca("to-pyusd", SOL, 2 * SOL_UNITS, output=PYUSD),  # the output mint counts too
        dca("small", SOL, SOL_UNITS // 2),  # 75 USD in total
        dca("thin", SOL, SOL_UNITS, orders=4),  # 150 USD, 37.50 per order
        dca("fine", SOL, 2 * SOL_UNITS),  # 300 USD, 150 per order
    ]
    config, folder = setup(
        tmp_path,
        plans,
        api={"base_url": server.url, "rate_limit": 100},
        rpc={"url": f"{server.url}/rpc"},
    )
    for command in (["plans", "validate", str(folder)], ["plans", "apply"]):
        done = jupcron("--config", str(config), *command)
        assert done.returncode == 1, done.stdout
        lines = done.stderr.strip().splitlines()
        where = f"{folder / 'dca.yaml'}"
        assert all(line.startswith(where) for line in lines), lines
        text = done.stderr
        assert f"plan 'pyusd': request.inputMint {PYUSD} is a Token-2022 mint" in text
        assert f"plan 'to-pyusd': request.outputMint {PYUSD} is a Token-2022 mint" in text
        assert ("plan 'small': request.params.time.inAmount: 500000000 base units of "
                f"{SOL} are worth 74.92 USD now (an API quote); a recurring order needs at "
                "least 100 USD in total") in text  # fmt: skip
        assert "plan 'thin'" in text
        assert "37.46 USD per order" in text
        assert "'fine'" not in text
        assert "Traceback" not in text
    assert stored(config) == []  # apply changed nothing

    (folder / "dca.yaml").write_text(json.dumps({"plans": [plans[-1]]}))
    done = jupcron("--config", str(config), "plans", "apply")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert stored(config) == ["fine"]


def test_where_jupcron_cannot_ask_it_says_so(tmp_path: Path, server: EmulatorServer) -> None:
    plans = [dca("pyusd", PYUSD, 500_000_000), dca("sol", SOL, 2 * SOL_UNITS)]
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens: the quote cannot be had
    config, folder = setup(tmp_path, plans, api={"base_url": dead, "connect_timeout": 2})
    done = jupcron("--config", str(config), "plans", "apply")
    assert done.returncode == 0, done.stderr  # nothing known to be wrong: applied, with notes
    text = done.stderr
    assert (f"plan 'pyusd': note: request.inputMint {PYUSD} was not checked for Token-2022, "
            "which Recurring does not support (set rpc.url to check it)") in text  # fmt: skip
    assert "plan 'sol': note: request.params.time.inAmount could not be priced (" in text
    assert "are left to the API when the plan fires" in text
    assert stored(config) == ["pyusd", "sol"]

    # unchanged plans are not asked about again (the price-protection warning about a
    # plan with neither a limit nor a feed is a warning of the files, said each time)
    again = jupcron("--config", str(config), "plans", "apply")
    assert again.returncode == 0
    lines = again.stderr.splitlines()
    assert all("warning: neither a price limit" in line for line in lines), again.stderr

    offline = jupcron("plans", "validate", "--offline", str(folder))
    assert offline.returncode == 0
    assert offline.stderr.count("(--offline)") == 3  # two mints of pyusd's, sol's value

    no_config = jupcron("plans", "validate", str(folder))  # no --config, no JUPCRON_CONFIG
    assert no_config.returncode == 0
    assert "no daemon config: give --config PATH to use its rpc.url" in no_config.stderr


def test_a_mint_that_does_not_exist_is_refused_when_the_rpc_can_tell(
    tmp_path: Path, server: EmulatorServer
) -> None:
    # PYUSD's last letter changed (a well-known mint's near miss is refused before, offline)
    typo = PYUSD[:-1] + "p"
    swap = {"name": "typo", "kind": "swap", "schedule": {"every": "1d"},
            "request": {"inputMint": typo, "outputMint": SOL, "amount": 1_000_000}}  # fmt: skip
    fine = {"name": "fine", "kind": "swap", "schedule": {"every": "1d"},
            "request": {"inputMint": USDC, "outputMint": PYUSD, "amount": 1_000_000}}  # fmt: skip
    config, folder = setup(tmp_path, [swap, fine], api={"base_url": server.url},
                           rpc={"url": f"{server.url}/rpc"})  # fmt: skip
    for args in (["plans", "validate", str(folder)], ["plans", "apply"]):
        done = jupcron("--config", str(config), *args)
        assert done.returncode == 1, (args, done.stdout)
        assert f"plan 'typo': request.inputMint {typo} does not exist" in done.stderr, done.stderr
        assert "plan 'fine'" not in done.stderr  # a Token-2022 mint exists: fine for a swap
        assert "Traceback" not in done.stderr
    assert stored(config) == []  # nothing applied
    # without rpc.url it cannot know: the schema's word stands
    config.write_text(json.dumps({**json.loads(config.read_text()), "rpc": {}}))
    offline = jupcron("--config", str(config), "plans", "validate", str(folder))
    assert offline.returncode == 0, offline.stderr
