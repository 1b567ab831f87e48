"""`jupcron emulator`: the local Jupiter API stand-in as an HTTP server.

Needs no daemon config. Prints the URL (one line on stdout), then runs until
SIGTERM or Ctrl-C. Faults can be given at start (``--faults FILE``, a JSON
list) and at run time through ``POST /_emulator/faults``.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import click

from jupcron.emulator import Emulator
from jupcron.emulator.faults import fault_from_dict
from jupcron.emulator.server import EmulatorServer
from jupcron.errors import ConfigError
from jupcron.logs import configure_logging


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter("use HOST:PORT, e.g. 127.0.0.1:8899", param_hint="--listen")
    return host.strip("[]") or "127.0.0.1", int(port)


def _read_key(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        key = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the API key file: {exc.strerror}") from None
    if not key:
        raise ConfigError(f"{path}: the API key file is empty")
    return key


def _read_faults(path: Path | None) -> list[dict[str, object]]:
    if path is None:
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the faults file: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from None
    items = data if isinstance(data, list) else [data]
    try:
        for item in items:
            fault_from_dict(item)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return items


@click.command()
@click.option("--listen", default="127.0.0.1:8899", show_default=True, help="HOST:PORT (0 = any).")
@click.option(
    "--api-key-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Require this API key (x-api-key) on every API call.",
)
@click.option("--rate-limit", type=click.FloatRange(min=0, min_open=True), help="Requests/s.")
@click.option(
    "--execute-rate-limit",
    type=click.FloatRange(min=0, min_open=True),
    help="Requests/s of Swap V2 execute's own bucket (default with --rate-limit: 20, keyed 50).",
)
@click.option("--rate-window", type=click.FloatRange(min=1), default=60.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for ids and faults.")
@click.option("--blockhash-ttl", type=click.FloatRange(min=1), default=90.0, show_default=True)
@click.option(
    "--faults",
    "faults_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="JSON list of faults to inject from the start.",
)
def emulator(
    listen: str,
    api_key_file: Path | None,
    rate_limit: float | None,
    execute_rate_limit: float | None,
    rate_window: float,
    seed: int,
    blockhash_ttl: float,
    faults_file: Path | None,
) -> None:
    """Serve the local stand-in of the Jupiter API (no daemon config needed)."""
    host, port = _listen(listen)
    configure_logging("info", stream=sys.stderr)  # stdout carries only the URL
    emu = Emulator(
        api_key=_read_key(api_key_file),
        rate_limit=rate_limit,
        execute_rate_limit=execute_rate_limit,
        rate_window=rate_window,
        seed=seed,
        blockhash_ttl=blockhash_ttl,
        faults=_read_faults(faults_file),
    )
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    try:
        server = EmulatorServer().start(emu, host=host, port=port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc}") from None
    click.echo(server.url)
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
