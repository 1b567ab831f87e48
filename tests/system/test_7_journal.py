"""The journal holds jupcron's JSON log lines with their event names, and no secret:
not the API key, not the keypair, not a signed transaction."""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
from pathlib import Path

from solders.keypair import Keypair

from tests.system.conftest import API_KEY, Install
from tests.system.machine import Machine, events
from tests.system.service import Service

EXPECTED = {
    "daemon_started", "became_leader", "scheduler_started", "reload_requested", "reloaded",
    "plans_applied", "reload_failed", "fire_dispatched", "tx_signed", "run_finished",
    "run_recovering", "stop_requested", "daemon_stopping", "daemon_stopped",
}  # fmt: skip


def signed_transactions(machine: Machine, tmp_path: Path) -> list[str]:
    """Every signed transaction in the service's database (a copy, read on the host)."""
    for name in ("jupcron.db", "jupcron.db-wal"):
        source = machine.path(f"/var/lib/private/jupcron/{name}")
        if source.exists():
            shutil.copyfile(source, tmp_path / name)
    with sqlite3.connect(tmp_path / "jupcron.db") as db:
        rows = db.execute("SELECT signed_tx FROM runs WHERE signed_tx IS NOT NULL").fetchall()
    return [row[0] for row in rows]


def test_json_lines_with_event_names_and_no_secrets(
    machine: Machine, service: Service, installed: Install, tmp_path: Path
) -> None:
    entries = machine.journal()  # the whole journal of the machine, every unit
    daemon = [e for e in entries if e.get("_SYSTEMD_UNIT") == "jupcron.service"
              and e.get("_PID") != "1" and e.get("_COMM") != "kill"]  # fmt: skip
    assert daemon
    for entry in daemon:  # every line the daemon wrote is one JSON object with an event
        data = json.loads(entry["MESSAGE"])
        assert isinstance(data.get("event"), str), entry["MESSAGE"]
        assert data.get("level"), entry["MESSAGE"]
    names = {e["event"] for e in events(daemon)}
    assert names >= EXPECTED, EXPECTED - names
    text = "\n".join(str(e.get("MESSAGE")) for e in entries)
    keypair_bytes = bytes(json.loads(installed.keypair_text))
    keypair = Keypair.from_bytes(keypair_bytes)
    secrets = {
        "API key": API_KEY,
        "keypair file": installed.keypair_text.strip(),
        "keypair numbers": ",".join(str(b) for b in keypair_bytes[:16]),
        "keypair numbers, spaced": ", ".join(str(b) for b in keypair_bytes[:16]),
        "keypair base58": str(keypair),
        "keypair base64": base64.b64encode(keypair_bytes).decode(),
        "secret seed hex": keypair_bytes[:32].hex(),
    }
    signed = signed_transactions(machine, tmp_path)
    assert len(signed) >= 8  # the runs of the checks before this one
    for i, tx in enumerate(signed):
        secrets[f"signed transaction {i}"] = tx
        secrets[f"signed transaction {i}, middle"] = tx[len(tx) // 3 : len(tx) // 3 + 40]
    leaked = [what for what, value in secrets.items() if value in text]
    assert leaked == []
