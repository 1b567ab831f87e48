"""Caps under concurrency, on a real SQLite file and a real PostgreSQL: eight workers of
one runner (one group commit: their reservations share transactions), two daemons on
one database (two engines: the spend lock between them), several wallets at once,
and runs still in flight when the next one checks. A cap is never exceeded; the runs
past it are `skipped` with the cap's name and sign nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from jupcron.api.client import JupiterClient
from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.runner.core import Runner
from jupcron.runner.outcome import RunOutcome
from jupcron.store.engine import make_engine
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import USDC, Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
RUN = 5_000_000  # the rig's swap: 5 USDC a run


def race(jobs: list[tuple[Runner, PlanRecord]]) -> list[RunOutcome]:
    """Fire every (runner, plan) at one instant, each in a thread of its own."""
    barrier = threading.Barrier(len(jobs))
    outcomes: list[RunOutcome] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def fire(runner: Runner, plan: PlanRecord) -> None:
        barrier.wait()
        try:
            outcome = outcome_of(runner.fire(plan, SLOT))
        except BaseException as exc:  # a thread's failure fails the test, below
            with lock:
                errors.append(exc)
            return
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=fire, args=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert len(outcomes) == len(jobs)
    return outcomes


def counted(outcomes: list[RunOutcome]) -> dict[str, int]:
    out: dict[str, int] = {}
    for outcome in outcomes:
        out[str(outcome.status)] = out.get(str(outcome.status), 0) + 1
    return out


def test_eight_workers_of_one_runner_never_pass_a_cap_together(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, safety={"caps": [{"mint": USDC, "per_day": 3 * RUN}]})
    runner = rig.runner()  # one store, one group commit: the workers' writes share batches
    outcomes = race([(runner, rig.plan("swap")) for _ in range(8)])
    assert counted(outcomes) == {"succeeded": 3, "skipped": 5}
    assert len(rig.landed()) == 3
    for outcome in outcomes:
        if outcome.status is RunStatus.SKIPPED:
            assert outcome.error is not None
            assert f"per_day={3 * RUN}" in outcome.error
            assert rig.run(outcome.run_id).signed_tx is None


def test_a_plans_own_cap_holds_when_its_runs_of_many_slots_race(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    plan = rig.plan("swap", settings={"caps": {"per_day": 2 * RUN}})
    runner = rig.runner()
    barrier = threading.Barrier(6)
    outcomes: list[RunOutcome] = []

    def fire(hour: int) -> None:
        barrier.wait()
        outcomes.append(outcome_of(runner.fire(plan, SLOT + timedelta(minutes=hour))))

    threads = [threading.Thread(target=fire, args=(h,)) for h in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert counted(outcomes) == {"succeeded": 2, "skipped": 4}
    assert len(rig.landed()) == 2


def test_two_daemons_on_one_database_never_pass_a_cap_together(
    make_rig: RigFactory, pg_url: str
) -> None:
    rig = make_rig(db_url=pg_url, safety={"caps": [{"mint": USDC, "per_day": 3 * RUN}]})
    other = make_engine(pg_url)  # the second daemon: its own engine, its own pool
    try:
        first = rig.runner(node="daemon-a")
        second = rig.runner(node="daemon-b", store=SqlRunStore(other))
        jobs = [(first if n % 2 else second, rig.plan("swap")) for n in range(8)]
        outcomes = race(jobs)
    finally:
        other.dispose()
    assert counted(outcomes) == {"succeeded": 3, "skipped": 5}
    assert len(rig.landed()) == 3


def test_each_wallets_budget_holds_when_both_wallets_race(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(
        db_url=db_url, safety={"caps": [{"mint": USDC, "per_day": 2 * RUN}]},
        wallets={"savings": {"keypair": "/k/savings.json"}},
    )  # fmt: skip
    wallets = {"default": rig.wallet, "savings": Wallet.generate()}
    runner = rig.runner(wallets=wallets)
    jobs = [(runner, rig.plan("swap", wallet=("savings" if n % 2 else "default")))
            for n in range(8)]  # fmt: skip
    outcomes = race(jobs)
    assert counted(outcomes) == {"succeeded": 4, "skipped": 4}
    by_wallet: dict[str, int] = {}
    for outcome in outcomes:
        if outcome.status is RunStatus.SUCCEEDED:
            wallet = rig.run(outcome.run_id).wallet
            by_wallet[wallet] = by_wallet.get(wallet, 0) + 1
    assert by_wallet == {"default": 2, "savings": 2}


def unanswered_execute(inner: httpx.BaseTransport) -> httpx.BaseTransport:
    """The emulator, except that execute calls get no answer (the transaction may
    have landed: the run stays `submitted`, in flight)."""

    class Silent(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("/execute"):
                inner.handle_request(request)  # it went out: the emulator lands it
                raise httpx.ReadTimeout("no answer", request=request)
            return inner.handle_request(request)

    return Silent()


def api_over(rig: Rig, wrap: Callable[[httpx.BaseTransport], httpx.BaseTransport]) -> Any:
    assert rig.transport is not None
    return JupiterClient(rig.url, api_key=None, transport=wrap(rig.transport),
                         rate_limit=1000, sleep=lambda s: None)  # fmt: skip


def test_a_run_still_in_flight_counts_against_the_cap(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(db_url=db_url, safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})
    api = api_over(rig, unanswered_execute)
    try:
        first = outcome_of(rig.runner(api=api).fire(rig.plan("swap"), SLOT))
    finally:
        api.close()
    assert first.status is RunStatus.SUBMITTED  # in flight: not final
    second = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert second.status is RunStatus.SKIPPED
    assert second.error is not None
    assert "per_day=7000000" in second.error
    assert len(rig.landed()) == 1
