"""`jupcron demo`: the whole product on SQLite, the emulator and a throwaway keypair.

Needs no daemon config. Sets up a temp folder, runs the real daemon as a
subprocess, shows each run moving through its states, and ends with the audit
table and the SQL to query it. Exit 0 when the story played out (or was cut
short by --duration or Ctrl-C), 1 when a run settled differently.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from jupcron.demo.driver import drive, print_summary
from jupcron.demo.watch import reporter_for
from jupcron.demo.workspace import create
from jupcron.errors import ConfigError
from jupcron.private import PRIVATE_DIR


@click.command()
@click.option(
    "--duration",
    type=click.FloatRange(5, 3600),
    default=60.0,
    show_default=True,
    help="Stop after this many seconds at most (sooner once every run is final).",
)
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Work in this new or empty folder (default: a new temp folder).",
)
@click.option("--plain", is_flag=True, help="Plain progress lines even on a terminal.")
def demo(duration: float, folder: Path | None, plain: bool) -> None:
    """Run the whole thing on SQLite + the emulator + a throwaway keypair."""  # fmt: skip
    root = _folder(folder)
    out = sys.stdout
    click.echo(f"jupcron demo in {root} (emulator, SQLite, throwaway keypair)")
    ws = create(root)
    try:
        click.echo(f"wallet {ws.wallet.address} (keypair {ws.keypair}, mode 0600)")
        click.echo(f"emulator {ws.server.url}, database {ws.db_path}")
        click.echo(f"status page {ws.web_url} (open it while the demo runs)")
        reporter = reporter_for(out, rich=False if plain else None)
        try:
            result = drive(ws, reporter, out, duration)
        finally:
            reporter.close()
    finally:
        ws.close()
    print_summary(ws, result, out)
    raise SystemExit(0 if result.ok else 1)


def _folder(folder: Path | None) -> Path:
    if folder is None:
        return Path(tempfile.mkdtemp(prefix="jupcron-demo-"))  # 0700
    if folder.exists() and any(folder.iterdir()):
        raise ConfigError(f"{folder}: not empty; give a new or empty folder for --dir")
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(PRIVATE_DIR)  # it holds a keypair and signed transactions
    return folder.resolve()
