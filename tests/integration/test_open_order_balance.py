"""A wallet with an open Jupiter limit order, against the emulator over loopback
(its positions answer in the spec's shape: the order a ``trade`` element whose
``data.assets`` is ``{input, output}``). Before: that answer was refused whole
("Input should be a valid list"), so with ``safety.balance_check`` on every run of
the wallet was skipped ("balance check failed"), the runway watch said the balance
unknown and ``jupcron portfolio`` failed. The USDC locked in the order is still no
balance: only the wallet's own tokens count."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner

from jupcron.cli.main import cli
from jupcron.domain import RunStatus
from jupcron.service.runway import RunwayWatch
from tests.fixtures.runner import USDC, Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
LOCKED = 40_000_000  # 40 USDC in the limit order


def with_open_order(rig: Rig, usdc: int) -> None:
    owner = str(rig.wallet.address)
    rig.emulator.ledger.set_balance(owner, USDC, usdc)
    seeded = rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {}, json.dumps(
        {"maker": owner, "makingAmount": LOCKED, "takingAmount": 250_000_000}).encode())  # fmt: skip
    assert seeded.status == 200


def test_a_wallet_with_an_open_order_has_its_balance_checked_and_its_run_fired(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(loopback=True, safety={"balance_check": True})
    with_open_order(rig, 50_000_000)  # 50 USDC in the wallet, 5 needed
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert len(rig.landed()) == 1


def test_usdc_locked_in_the_order_is_no_balance(make_rig: RigFactory) -> None:
    rig = make_rig(loopback=True, safety={"balance_check": True})
    with_open_order(rig, 1_000_000)  # 1 USDC in the wallet (40 more in the order), 5 needed
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error is not None
    assert outcome.error.startswith("insufficient balance: 1000000 of"), outcome.error
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 0
    assert rig.landed() == []


def test_the_runway_watch_and_jupcron_portfolio_read_it(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    rig = make_rig(loopback=True)
    with_open_order(rig, 50_000_000)
    rig.plan("swap")  # 5 USDC an hour
    watch = RunwayWatch(rig.engine, rig.api, str(rig.wallet.address),
                        config=lambda: rig.config, spare=None)  # fmt: skip
    (usdc,) = [s.runway for s in watch.check() if s.runway.mint == USDC]
    assert usdc.problem is None
    assert usdc.balance == 50_000_000  # the wallet's; not the 40 in the order
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"api": {"base_url": rig.url, "rate_limit": 50}}))
    shown = CliRunner().invoke(cli, ["--config", str(config), "portfolio", rig.wallet.address])
    assert shown.exit_code == 0, shown.output
    assert "LimitOrder" in shown.output
    assert "USDC→SOL 40" in shown.output
