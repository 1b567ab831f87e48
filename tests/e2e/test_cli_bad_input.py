"""Every command, given bad input, ends with one clear `error:` line and a non-zero
exit, never a traceback (issue 28: "no traceback for any CLI input")."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from jupcron.chain.wallet import write_keypair_file
from tests.e2e.cli import jupcron
from tests.fixtures.receivers import send_json

# (what is wrong, arguments after `--config CONFIG`; CONFIG names a good config whose
# SQLite database is at head unless the arguments give their own --config)
CASES: list[tuple[str, list[str]]] = [
    ("unknown revision", ["db", "upgrade", "--revision", "0002_x"]),
    ("empty revision", ["db", "upgrade", "--revision", ""]),
    ("not a database: current", ["--config", "{notdb}", "db", "current"]),
    ("not a database: upgrade", ["--config", "{notdb}", "db", "upgrade"]),
    ("not a database: status", ["--config", "{notdb}", "status"]),
    ("not a database: audit", ["--config", "{notdb}", "audit"]),
    ("not a database: report", ["--config", "{notdb}", "report"]),
    ("not a database: plans list", ["--config", "{notdb}", "plans", "list"]),
    ("not a database: pause", ["--config", "{notdb}", "pause", "--all"]),
    ("not a database: resume", ["--config", "{notdb}", "resume", "--all"]),
    ("not a database: settle", ["--config", "{notdb}", "settle", "1", "--landed", "--reason", "x"]),
    ("a folder as config", ["--config", "{dir}", "status"]),
    ("binary config", ["--config", "{binary}", "status"]),
    ("missing plan file", ["plans", "validate", "{dir}/nope.yaml"]),
    ("binary plan file", ["plans", "validate", "{binary}"]),
    ("binary plan apply", ["plans", "apply", "{binary}"]),
    ("unknown plan: fire", ["fire", "nope"]),
    ("unknown plan: pause", ["pause", "nope"]),
    ("unknown plan: resume", ["resume", "nope"]),
    ("unknown run: settle", ["settle", "999", "--landed", "--reason", "x"]),
    ("not base64: tx inspect", ["tx", "inspect", "garbage!"]),
    ("bad wallet: tx inspect", ["tx", "inspect", "--wallet", "bad", "AAAA"]),
    ("bad ordered JSON", ["tx", "inspect", "--ordered", "[1", "AAAA"]),
    ("existing keypair", ["wallet", "new", "{dir}/kp.json"]),
    ("no such folder: wallet new", ["wallet", "new", "/nonexistent/dir/x.json"]),
    ("bad date: audit", ["audit", "--since", "garbage"]),
    ("bad address: portfolio", ["portfolio", "bad-address"]),
    ("bad date: report", ["report", "--since", "garbage"]),
    ("chart in no folder", ["report", "--chart", "/proc/nope/x.png"]),
    ("chart of unknown type", ["report", "--chart", "{dir}/x.txt"]),
    ("bad listen: emulator", ["emulator", "--listen", "1.2.3.4:99999"]),
    ("bad faults: emulator", ["emulator", "--faults", "{dir}/nope.json"]),
    ("demo in no folder", ["demo", "--dir", "/proc/nope"]),
    ("bad status format", ["status", "--format", "xml"]),
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad-input")
    write_keypair_file(root / "kp.json")
    (root / "jupcron.yaml").write_text(
        "wallet:\n  keypair: kp.json\ndatabase:\n  url: sqlite:///jupcron.db\n"
        "plans:\n  dir: plans\n"
    )
    (root / "notdb.db").write_text("not a database\n")
    (root / "notdb.yaml").write_text(
        "wallet:\n  keypair: kp.json\ndatabase:\n  url: sqlite:///notdb.db\n"
    )
    (root / "binary.yaml").write_bytes(bytes(range(256)))
    done = jupcron("--config", str(root / "jupcron.yaml"), "db", "upgrade")
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize(("what", "args"), CASES, ids=[case[0] for case in CASES])
def test_bad_input_is_one_clear_line(workdir: Path, what: str, args: list[str]) -> None:
    names = {
        "dir": str(workdir), "notdb": str(workdir / "notdb.yaml"),
        "binary": str(workdir / "binary.yaml"),
    }  # fmt: skip
    argv = [arg.format(**names) for arg in args]
    if "--config" not in argv:
        argv = ["--config", str(workdir / "jupcron.yaml"), *argv]
    done = jupcron(*argv, timeout=30)
    assert done.returncode != 0, (what, done.stdout)
    assert "Traceback" not in done.stderr + done.stdout, (what, done.stderr)
    assert done.stderr.strip(), what
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(("error:", "Error:")) or ":" in last, (what, done.stderr)


def test_an_unknown_revision_names_the_known_ones(workdir: Path) -> None:
    done = jupcron(
        "--config", str(workdir / "jupcron.yaml"), "db", "upgrade", "--revision", "0002_x"
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: cannot migrate to revision '0002_x'")
    assert "0004_control" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


WALLET = "So11111111111111111111111111111111111111112"
ASSET = {"data": {"address": WALLET, "amount": 1.5}}


@pytest.mark.parametrize(
    ("token_info", "asset", "where"),
    [
        ({"solana": []}, ASSET, "tokenInfo.solana"),  # was: unexpected AttributeError
        ({"solana": {WALLET: {"decimals": "nine"}}}, ASSET, f"tokenInfo.solana.{WALLET}.decimals"),
        ({}, {"data": {"address": WALLET, "amount": "lots"}}, "elements.0.data.assets.0.data.amount"),
    ],
)  # fmt: skip
def test_a_garbled_positions_answer_is_one_clear_line(
    tmp_path: Path, token_info: dict[str, Any], asset: dict[str, Any], where: str
) -> None:
    """Before: the answer parsed, then drawing the table met its garbage as a foreign
    exception (``error: unexpected AttributeError``), or showed it as if it were a value."""
    answer = {"owner": WALLET, "tokenInfo": token_info,
              "elements": [{"type": "multiple", "platformId": "wallet-tokens", "label": "Wallet",
                            "data": {"assets": [asset]}}]}  # fmt: skip

    class Positions(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            send_json(self, json.dumps(answer).encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Positions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        config = tmp_path / "jupcron.yaml"
        config.write_text(
            f"api:\n  base_url: http://127.0.0.1:{server.server_address[1]}\n"
            "  max_attempts: 1\n"
            f"database:\n  url: sqlite:///{tmp_path / 'j.db'}\n"
        )
        done = jupcron("--config", str(config), "portfolio", WALLET, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]  # after the attempt's log line
    assert last == f"error: positions: unreadable answer (unexpected fields: {where})", last
