"""`jupcron wallet show --format json` is JSON whatever else is asked: with --name or
--keypair it printed the bare address, which a script parsing the output (``| jq``)
fails on, or worse reads as something else."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import jupcron


def test_one_wallet_asked_for_is_json_too(tmp_path: Path) -> None:
    keypair = tmp_path / "id.json"
    address = jupcron("wallet", "new", str(keypair)).stdout.strip()
    config = tmp_path / "jupcron.yaml"
    config.write_text(f"wallet:\n  keypair: {keypair.name}\n")

    every = jupcron("--config", str(config), "wallet", "show", "--format", "json")
    assert json.loads(every.stdout) == [{"name": "default", "address": address}]

    named = jupcron("--config", str(config), "wallet", "show", "--name", "default",
                    "--format", "json")  # fmt: skip
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout) == [{"name": "default", "address": address}], named.stdout

    given = jupcron("wallet", "show", "--keypair", str(keypair), "--format", "json")
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout) == [{"name": None, "address": address}], given.stdout
