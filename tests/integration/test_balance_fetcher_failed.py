"""A positions answer whose fetcher of the wallet's own tokens failed: the service
answers 200 all the same, with a ``fetcherReports`` entry ``failed`` and no wallet
element. Before, that read as a balance of 0: every run with the balance check on was
skipped as "insufficient balance: 0", and the runway watch took 0 for the wallet's
balance (a false low_balance). Now the balance is unknown, and the run says why.
The emulator over loopback (`State.failed_fetchers`), SQLite, real transactions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.domain import RunStatus
from jupcron.service.runway import RunwayWatch
from tests.fixtures.runner import USDC, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def test_a_failed_wallet_fetcher_is_no_balance_of_zero(make_rig: RigFactory) -> None:
    rig = make_rig(loopback=True, safety={"balance_check": True})
    rig.emulator.ledger.set_balance(str(rig.wallet.address), USDC, 50_000_000)
    rig.emulator.state.failed_fetchers.add("wallet-tokens")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error == (
        "balance check failed: the wallet's tokens were not read (wallet-tokens failed)"
    ), outcome.error
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 0
    assert rig.landed() == []


def test_once_the_fetcher_answers_again_the_run_fires(make_rig: RigFactory) -> None:
    rig = make_rig(loopback=True, safety={"balance_check": True})
    rig.emulator.ledger.set_balance(str(rig.wallet.address), USDC, 50_000_000)
    rig.emulator.state.failed_fetchers.add("wallet-tokens")
    plan = rig.plan("swap")
    first = outcome_of(rig.runner().fire(plan, SLOT))
    assert first.status is RunStatus.SKIPPED
    rig.emulator.state.failed_fetchers.clear()
    second = outcome_of(rig.runner().fire(plan, SLOT + timedelta(hours=1)))
    assert second.status is RunStatus.SUCCEEDED, second.error
    assert len(rig.landed()) == 1


def test_the_runway_watch_takes_it_for_unknown_not_for_zero(make_rig: RigFactory) -> None:
    rig = make_rig(loopback=True)
    rig.emulator.ledger.set_balance(str(rig.wallet.address), USDC, 50_000_000)
    rig.emulator.state.failed_fetchers.add("wallet-tokens")
    rig.plan("swap")  # 5 USDC an hour
    watch = RunwayWatch(rig.engine, rig.api, str(rig.wallet.address),
                        config=lambda: rig.config, spare=None)  # fmt: skip
    (usdc,) = [s.runway for s in watch.check() if s.runway.mint == USDC]
    assert usdc.balance is None
    assert usdc.problem is not None
