"""Several wallets in one runner, over loopback HTTP to the emulator, on SQLite and
PostgreSQL: each plan's runs are signed by its own wallet's key and judged for that
wallet alone; caps, the balance pre-flight, the audit trail and the report are per
wallet; a run whose wallet is gone signs nothing."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from solders.message import to_bytes_versioned
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address
from solders.transaction import VersionedTransaction

from jupcron.app import build_runtime
from jupcron.chain.wallet import Wallet, write_keypair_file
from jupcron.config import NamedWalletConfig, WalletConfig
from jupcron.domain import RunStatus
from jupcron.report.build import build
from jupcron.runner.recovery import recover
from jupcron.store.audit import AuditFilter, audit_rows
from tests.fixtures.runner import SOL, USDC, Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def two_wallets(rig: Rig) -> tuple[Wallet, Wallet, dict[str, Wallet]]:
    savings = Wallet.generate()
    return rig.wallet, savings, {"default": rig.wallet, "savings": savings}


def signer_of(signed_b64: str) -> tuple[Pubkey, bool, VersionedTransaction]:
    """The fee payer of a signed transaction and whether its signature verifies."""
    tx = VersionedTransaction.from_bytes(base64.b64decode(signed_b64))
    payer = tx.message.account_keys[0]
    message = to_bytes_versioned(tx.message)
    return payer, tx.signatures[0].verify(payer, message), tx


def test_each_plan_is_signed_by_its_own_wallet(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    main, savings, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)
    plans = {
        "main-swap": rig.plan("swap", name="main-swap"),
        "savings-swap": rig.plan("swap", name="savings-swap", wallet="savings"),
        "savings-dca": rig.plan("recurring", name="savings-dca", wallet="savings"),
    }
    outcomes = {name: outcome_of(runner.fire(plan, SLOT)) for name, plan in plans.items()}
    assert {n: o.status for n, o in outcomes.items()} == dict.fromkeys(plans, RunStatus.SUCCEEDED)
    expected = {"main-swap": main, "savings-swap": savings, "savings-dca": savings}
    landed = {e.signature: e for e in rig.landed()}
    for name, outcome in outcomes.items():
        run = rig.run(outcome.run_id)
        own, other = expected[name], (savings if expected[name] is main else main)
        assert run.wallet == plans[name].wallet
        assert run.signed_tx is not None
        payer, verifies, tx = signer_of(run.signed_tx)
        assert payer == own.pubkey
        assert verifies
        message = to_bytes_versioned(tx.message)
        assert not tx.signatures[0].verify(other.pubkey, message)
        # the emulator checked the same: the transaction it landed is that wallet's
        assert landed[run.signature].owner == own.address

    with rig.factory() as session:
        by_wallet = {
            name: sorted(r["plan_name"] for r in audit_rows(session, AuditFilter(wallet=name)))
            for name in ("default", "savings")
        }
        every = audit_rows(session, AuditFilter())
    assert by_wallet == {"default": ["main-swap"], "savings": ["savings-dca", "savings-swap"]}
    assert {r["plan_name"]: r["wallet"] for r in every} == {
        "main-swap": "default", "savings-swap": "savings", "savings-dca": "savings",
    }  # fmt: skip
    with rig.engine.connect() as conn:
        reports, _ = build(conn, wallet="savings")
    assert sorted(r.plan_name for r in reports) == ["savings-dca", "savings-swap"]
    assert {r.as_dict({})["wallet"] for r in reports} == {"savings"}


@pytest.mark.parametrize("hostile", ["receiver", "to"])
def test_a_transaction_for_one_wallet_that_pays_another_is_refused(
    make_rig: RigFactory, hostile: str
) -> None:
    """The other wallet is ours too, but not this plan's: a swap of the default wallet
    whose output goes to the savings wallet's account (or that sends it lamports) is
    refused, and nothing is signed."""
    rig = make_rig()
    _, savings, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)
    rig.emulator.faults.add("hostile", **{hostile: savings.address})
    outcome = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.REJECTED
    run = rig.run(outcome.run_id)
    assert run.signed_tx is None
    assert run.error is not None
    assert "txguard refused" in run.error
    if hostile == "receiver":
        theirs = get_associated_token_address(savings.pubkey, Pubkey.from_string(SOL))
        assert str(theirs) in run.error or savings.address in run.error
    assert rig.landed() == []


def test_config_caps_are_each_wallets_own_budget(make_rig: RigFactory) -> None:
    caps = [{"mint": USDC, "per_week": 12_000_000},  # 5 USDC a run: two runs a wallet
            {"mint": USDC, "per_day": 7_000_000, "wallet": "savings"}]  # fmt: skip
    # (the runner is given the wallets; the config names them for the cap to refer to)
    rig = make_rig(safety={"caps": caps}, wallets={"savings": {"keypair": "/k/savings.json"}})
    _, _, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)

    def fire(wallet: str) -> RunStatus:
        return outcome_of(runner.fire(rig.plan("swap", wallet=wallet), SLOT)).status

    ok, skipped = RunStatus.SUCCEEDED, RunStatus.SKIPPED
    # the savings wallet's own cap: one run a day; the default wallet's runs do not count
    assert [fire("default"), fire("savings"), fire("savings")] == [ok, ok, skipped]
    # the cap every wallet has: the default wallet's second run fits, its third does not
    assert [fire("default"), fire("default")] == [ok, skipped]
    with rig.factory() as session:
        errors = [r["error"] for r in audit_rows(session, AuditFilter(status="skipped"))]
    assert sorted(e.split(" would")[0] for e in errors) == [
        f"cap on {USDC} per_day=7000000 (wallet savings)",
        f"cap on {USDC} per_week=12000000 (wallet default)",
    ]
    assert len(rig.landed()) == 3


def test_the_balance_pre_flight_reads_the_plans_wallet(make_rig: RigFactory) -> None:
    rig = make_rig(safety={"balance_check": True})
    main, savings, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)
    rig.emulator.ledger.set_balance(main.address, USDC, 1_000_000)  # 1 USDC < 5 USDC
    rig.emulator.ledger.set_balance(savings.address, USDC, 50_000_000)
    short = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    funded = outcome_of(runner.fire(rig.plan("swap", wallet="savings"), SLOT))
    assert short.status is RunStatus.SKIPPED
    assert short.error is not None
    assert "insufficient balance" in short.error
    assert funded.status is RunStatus.SUCCEEDED


def test_a_run_whose_wallet_is_not_configured_signs_nothing(make_rig: RigFactory) -> None:
    rig = make_rig()
    runner = rig.runner()  # the default wallet only
    outcome = outcome_of(runner.fire(rig.plan("swap", wallet="gone"), SLOT))
    assert outcome.status is RunStatus.REJECTED
    assert outcome.error is not None
    assert "wallet 'gone' is not configured" in outcome.error
    assert rig.emulator.ledger.requests == {}  # not even an order was asked for
    assert rig.steps(outcome.run_id) == ["claimed", "wallet_unknown"]


def test_the_runway_watch_reads_each_wallets_balance_for_its_own_plans(
    make_rig: RigFactory,
) -> None:
    from jupcron.api.client import JupiterClient
    from jupcron.service.runway import RunwayWatch

    rig = make_rig()
    main, savings, _ = two_wallets(rig)
    hourly = {"every": "1h"}
    swap = {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000}
    rig.plan("swap", swap, name="main-hourly", schedule=hourly)
    rig.plan("swap", swap, name="savings-hourly", schedule=hourly, wallet="savings")
    rig.emulator.ledger.set_balance(main.address, USDC, 10_000_000)  # two runs
    rig.emulator.ledger.set_balance(savings.address, USDC, 1_000_000_000)  # 200 runs
    api = JupiterClient(rig.url, api_key=None, transport=rig.transport, rate_limit=1000,
                        sleep=lambda s: None)  # fmt: skip
    try:
        watch = RunwayWatch(rig.engine, api, {"default": main.address,
                            "savings": savings.address}, config=lambda: rig.config)  # fmt: skip
        states = watch.check()
    finally:
        api.close()
    by_wallet = {s.runway.wallet: s.runway for s in states}
    assert set(by_wallet) == {main.address, savings.address}
    assert by_wallet[main.address].plans == ("main-hourly",)
    assert by_wallet[main.address].runs == 2
    assert by_wallet[savings.address].plans == ("savings-hourly",)
    assert by_wallet[savings.address].runs == 200  # its plan's alone: 1000 USDC at 5 a run


def test_the_runtime_built_from_the_config_signs_with_each_wallets_file(
    make_rig: RigFactory, db_url: str, tmp_path: Path
) -> None:
    """From the config file to the signature: `build_runtime` loads every keypair the
    config names, and a fire of each plan lands signed by its wallet's file's key."""
    rig = make_rig(db_url=db_url)
    main = write_keypair_file(tmp_path / "main.json")
    savings = write_keypair_file(tmp_path / "savings.json")
    config = rig.config.model_copy(update={
        "wallet": WalletConfig(keypair=tmp_path / "main.json"),
        "wallets": {"savings": NamedWalletConfig(keypair=tmp_path / "savings.json")},
    })  # fmt: skip
    runtime = build_runtime(config, transport=rig.transport)
    try:
        assert runtime.addresses() == {"default": main.address, "savings": savings.address}
        for wallet, key in (("default", main), ("savings", savings)):
            plan = rig.plan("swap", wallet=wallet)
            outcome = outcome_of(runtime.runner.fire(plan, SLOT))
            assert outcome.status is RunStatus.SUCCEEDED, outcome.error
            signed = rig.run(outcome.run_id).signed_tx
            assert signed is not None
            payer, verifies, _ = signer_of(signed)
            assert (payer, verifies) == (key.pubkey, True)
        assert runtime.warn_unknown_wallets() == []
        rig.plan("swap", wallet="gone")  # a plan of a wallet the config no longer names
        assert runtime.warn_unknown_wallets() == ["gone"]
    finally:
        runtime.close()


def test_the_rpc_probe_reports_each_wallets_sol(make_rig: RigFactory) -> None:
    from jupcron.config import RpcConfig
    from jupcron.service.probe import check_rpc

    rig = make_rig(loopback=True)
    main, savings, _ = two_wallets(rig)
    rig.emulator.ledger.set_balance(main.address, SOL, 2 * 10**9)
    rig.emulator.ledger.set_balance(savings.address, SOL, 0)
    config = rig.config.model_copy(update={"rpc": RpcConfig(url=rig.url + "/rpc")})
    wallets = {"default": main.address, "savings": savings.address}
    empty = check_rpc(config, wallets)
    assert (empty.verdict, empty.fix) == ("warn", "fund the wallet")
    assert f"wallet savings ({savings.address}) holds no SOL" in empty.detail
    rig.emulator.ledger.set_balance(savings.address, SOL, 5 * 10**8)
    funded = check_rpc(config, wallets)
    assert funded.verdict == "ok"
    assert funded.detail.endswith("SOL held: default 2.0000, savings 0.5000")


def test_a_signed_run_of_a_wallet_renamed_since_is_settled_with_its_keypair(
    make_rig: RigFactory, db_url: str
) -> None:
    """The wallet renamed in the config (the same keypair, another name) while a run it
    signed was in flight: recovery settles it by its keypair (`runs.owner`) with the
    same signed bytes. Before, no wallet of its name: it was logged at every recovery
    pass and never settled. An unsigned run of that name still signs nothing."""
    rig = make_rig(db_url=db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra")
    before = rig.runner()  # the keypair as `default`
    outcome = outcome_of(before.fire(rig.plan("swap", name="renamed"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SUBMITTED
    assert run.owner == rig.wallet.address
    rig.emulator.faults.clear()
    after = rig.runner(wallets={"main": rig.wallet}, wallet=None)  # renamed: no `default`
    (settled,) = recover(after, startup=True)
    assert settled.status is RunStatus.SUCCEEDED
    assert rig.run(run.id).signature == run.signature  # the same bytes
    assert len(rig.landed()) == 1
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 1  # never ordered again
    unsigned = outcome_of(after.fire(rig.plan("swap", name="old-name"), SLOT))
    assert unsigned.status is RunStatus.REJECTED  # the plan still names `default`
