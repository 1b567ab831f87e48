"""The emulator as a process (`jupcron emulator`) and `jupcron portfolio`
against it; drops and timeouts of the in-process transport."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.transport import in_process_transport

CLI = [sys.executable, "-m", "jupcron.cli.main"]


@pytest.fixture
def emulator_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps([{"kind": "server_error", "operation": "positions"}]))
    proc = subprocess.Popen(
        [*CLI, "emulator", "--listen", "127.0.0.1:0", "--seed", "3", "--faults", str(faults)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    try:
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_emulator_command_serves_until_sigterm(
    emulator_process: tuple[subprocess.Popen[str], str],
) -> None:
    proc, url = emulator_process
    assert url.startswith("http://127.0.0.1:")
    ledger = httpx.get(f"{url}/_emulator/ledger").json()
    assert ledger["requests"] == {}
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0


def test_portfolio_command_table_and_json(
    emulator_process: tuple[subprocess.Popen[str], str], tmp_path: Path
) -> None:
    _, url = emulator_process
    owner = Wallet.generate().address
    httpx.post(f"{url}/_emulator/trigger-orders", json={"maker": owner}).raise_for_status()
    config = tmp_path / "jupcron.yaml"
    config.write_text(f"api:\n  base_url: {url}\n  rate_limit: 50\n")
    table = subprocess.run(
        [*CLI, "--config", str(config), "portfolio", owner],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert table.returncode == 0, table.stderr
    assert "jupiter-exchange" in table.stdout  # the start-up 500 fault was retried
    assert "wallet-tokens" in table.stdout
    as_json = subprocess.run(
        [*CLI, "--config", str(config), "portfolio", owner, "--platforms", "jupiter-exchange",
         "--format", "json"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["owner"] == owner
    assert [e["label"] for e in data["elements"]] == ["LimitOrder"]


def test_portfolio_bad_address_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "portfolio", "not/an/address"], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_in_process_drop_and_timeout() -> None:
    emu = Emulator()
    slept: list[float] = []
    transport = in_process_transport(emu, sleep=slept.append)
    with httpx.Client(transport=transport, base_url="http://emu", timeout=1.0) as client:
        emu.faults.add("drop")
        with pytest.raises(httpx.RemoteProtocolError):
            client.get(f"/portfolio/v1/positions/{Wallet.generate().address}")
        emu.faults.add("slow", seconds=5)
        with pytest.raises(httpx.ReadTimeout):
            client.get(f"/portfolio/v1/positions/{Wallet.generate().address}")
    assert slept == [1.0]
