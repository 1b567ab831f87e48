"""The demo's world: a temp folder with a throwaway keypair, a migrated SQLite
database, a daemon config and a handful of one-shot plans of all three kinds,
plus the emulator (served over loopback) primed to make the story happen:

    demo-swap-crash    swap            the daemon is SIGKILLed right after signing,
                                       restarted, and settles it with the same signed tx
    demo-weekly-dca    recurring       succeeds; the emulator's keeper fills its 2 rounds
                                       (a day apart, played 3 s apart) and the daemon's
                                       order follower records both fills
    demo-cancel-limit  trigger-cancel  succeeds (the emulator holds the open order, 40% filled);
                                       the follower records the fill and the refund
    demo-hourly-swap   swap            succeeds
    demo-swap-hostile  swap            the emulator returns a transaction that drains
                                       the wallet: txguard refuses, nothing is signed
    demo-dry-run       swap            dry_run: the order is built and checked, never signed
    demo-swap-limit    swap            limits: at most 100 USDC per SOL, the market is 150:
                                       the quote is beyond the limit, skipped, nothing signed

Every file the demo writes is 0600 and every folder 0700, whatever the umask:
the keypair, the config, the plans, the database (and its -wal and -shm files,
see `jupcron.store.engine`) and the daemons' logs.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from solders.keypair import Keypair

from jupcron.chain.wallet import Wallet, write_keypair_file
from jupcron.emulator import Emulator
from jupcron.emulator.keeper import fill_trigger
from jupcron.emulator.ledger import TriggerOrder
from jupcron.emulator.server import EmulatorServer
from jupcron.private import PRIVATE_DIR, write_private
from jupcron.store import migrate

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
HOSTILE_AMOUNT = 2_000_000  # the one swap amount the emulator answers with a hostile tx
CRASH_PLAN = "demo-swap-crash"
DCA_PLAN = "demo-weekly-dca"
KEEPER_SPEED = 86400 / 3  # a day of the keeper's time passes in 3 s
CHART = "fills.png"
LEAD = 6.0  # seconds from the set-up to the first plan's moment
FAILPOINT = f"after_sign@{CRASH_PLAN}"  # where the first daemon dies: that plan's signing


@dataclass(frozen=True)
class DemoPlan:
    name: str
    kind: str
    offset: float  # seconds after the start
    expect: str  # the final status the story needs
    request: dict[str, Any]
    description: str
    dry_run: bool = False
    limits: dict[str, Any] | None = None

    def to_yaml_dict(self, start: datetime) -> dict[str, Any]:
        moment = (start + timedelta(seconds=self.offset)).replace(microsecond=0)
        plan: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "schedule": {"at": moment.isoformat(), "misfire": "run-once", "grace": "2m"},
            "request": self.request,
        }
        if self.dry_run:
            plan["dry_run"] = True
        if self.limits is not None:
            plan["limits"] = self.limits
        return plan


def demo_plans(order_account: str) -> list[DemoPlan]:
    swap = {"inputMint": USDC, "outputMint": SOL}
    return [
        DemoPlan(CRASH_PLAN, "swap", 0, "succeeded", {**swap, "amount": 3_000_000},
                 "3 USDC to SOL; the daemon dies right after signing and recovers"),
        DemoPlan(DCA_PLAN, "recurring", 2, "succeeded",
                 {**swap, "params": {"time": {"inAmount": 100_000_000, "numberOfOrders": 2,
                                              "interval": 86400}}},
                 "DCA: 100 USDC into SOL, 2 orders a day apart"),
        DemoPlan("demo-cancel-limit", "trigger-cancel", 4, "succeeded",
                 {"order": order_account, "computeUnitPrice": "auto"},
                 "take a limit order off the book"),
        DemoPlan("demo-hourly-swap", "swap", 6, "succeeded", {**swap, "amount": 1_000_000},
                 "1 USDC to SOL"),
        DemoPlan("demo-swap-hostile", "swap", 8, "rejected",
                 {**swap, "amount": HOSTILE_AMOUNT},
                 "the emulator answers with a transaction that drains the wallet"),
        DemoPlan("demo-dry-run", "swap", 10, "dry_run", {**swap, "amount": 500_000},
                 "built and checked, never signed", dry_run=True),
        DemoPlan("demo-swap-limit", "swap", 12, "skipped", {**swap, "amount": 1_000_000},
                 "buy SOL at most 100 USDC each: the market's 150 is beyond the limit",
                 limits={"max_price": 100, "quote": "USDC"}),
    ]  # fmt: skip


@dataclass
class Workspace:
    root: Path
    start: datetime
    emulator: Emulator
    server: EmulatorServer
    wallet: Wallet
    plans: list[DemoPlan] = field(default_factory=list)
    web_port: int = 0  # the status page's, while the daemon runs

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/"

    @property
    def db_path(self) -> Path:
        return self.root / "jupcron.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.db_path}"

    @property
    def config(self) -> Path:
        return self.root / "jupcron.yaml"

    @property
    def plans_dir(self) -> Path:
        return self.root / "plans"

    @property
    def chart(self) -> Path:
        return self.root / CHART

    @property
    def keypair(self) -> Path:
        return self.root / "keypair.json"

    @property
    def last_offset(self) -> float:
        return max(p.offset for p in self.plans)

    def close(self) -> None:
        self.server.stop()


CONFIG = """\
# jupcron demo config: the emulator on loopback, SQLite, a throwaway keypair.
api:
  base_url: {base_url}     # the emulator, not Jupiter
  rate_limit: 50           # requests/s we allow ourselves (the emulator has no limit)
  read_timeout: 10
wallet:
  keypair: keypair.json    # relative to this file; mode 0600
database:
  url: {db_url}
plans:
  dir: plans
runner:
  recovery_interval: 2     # look for stuck runs every 2 s (default 30)
follow:
  interval: 2              # follow order fills every 2 s (default 300)
web:
  listen: 127.0.0.1:{web_port}  # the status page, while the demo runs (off by default)
  refresh: 1
logging:
  level: info
  format: json
"""


def write_plans(ws: Workspace) -> None:
    """The plan file, each plan due at its offset after `ws.start`."""
    body = {"plans": [p.to_yaml_dict(ws.start) for p in ws.plans]}
    header = "# the demo's plans, each due once, a couple of seconds apart (JSON is YAML)\n"
    write_private(ws.plans_dir / "demo.yaml", header + json.dumps(body, indent=2) + "\n")


def restart(ws: Workspace, lead: float, now: datetime | None = None) -> None:
    """Start the story again `lead` seconds from `now`: the plans due from then, on an
    empty database (only `plans apply` has written to it: no daemon has run yet).
    For a machine slow enough that a plan's moment passed before the apply stored it
    (an `at:` already past has no slot: the plan would never run)."""
    ws.start = (now or datetime.now(UTC)) + timedelta(seconds=lead)
    write_plans(ws)
    for suffix in ("", "-wal", "-shm"):
        ws.db_path.with_name(ws.db_path.name + suffix).unlink(missing_ok=True)
    migrate.upgrade(ws.db_url)


def free_port() -> int:
    """A loopback port free right now (the daemon binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def create(root: Path, *, lead: float = LEAD, now: datetime | None = None) -> Workspace:
    """Set everything up under `root` (an empty folder); the first plan fires `lead`
    seconds after `now`. The emulator is listening when this returns."""
    now = now or datetime.now(UTC)
    keypair = root / "keypair.json"
    wallet = write_keypair_file(keypair)  # mode 0600, never overwrites
    order_account = str(Keypair().pubkey())
    emulator = Emulator(
        seed=8,
        faults=[{"kind": "hostile", "match": {"amount": HOSTILE_AMOUNT}, "count": 0}],
        keeper_speed=KEEPER_SPEED,
    )
    limit = TriggerOrder(order=order_account, maker=wallet.address, input_mint=USDC,
                         output_mint=SOL, making_amount=5_000_000, taking_amount=30_000_000,
                         created_at=now.timestamp())  # fmt: skip
    emulator.ledger.add_trigger_order(limit)
    fill_trigger(emulator.state, limit, 2_000_000)  # 40% filled before the cancel
    server = EmulatorServer().start(emulator, host="127.0.0.1", port=0)
    ws = Workspace(root, now + timedelta(seconds=lead), emulator, server, wallet,
                   demo_plans(order_account))  # fmt: skip
    try:
        ws.web_port = free_port()
        config = CONFIG.format(base_url=server.url, db_url=ws.db_url, web_port=ws.web_port)
        write_private(ws.config, config)
        ws.plans_dir.mkdir(mode=PRIVATE_DIR)
        ws.plans_dir.chmod(PRIVATE_DIR)  # mkdir's mode goes through the umask
        write_plans(ws)
        migrate.upgrade(ws.db_url)
    except BaseException:
        server.stop()
        raise
    return ws
