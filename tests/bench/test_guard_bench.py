"""txguard on genuine transactions (tests/fixtures/real): how long judging one takes,
as a run of its plan is judged (`runner.judge`) and without a plan. Figures only:
`make bench`; nothing here asserts on time."""

from __future__ import annotations

import statistics
import time

from solders.pubkey import Pubkey

from jupcron.config import GuardConfig
from jupcron.runner.judge import judge, ordered_facts
from jupcron.store.types import PlanKind
from jupcron.txguard import GuardPolicy, inspect
from tests.bench.conftest import Figures
from tests.bench.report import NO_STORE
from tests.fixtures import real

ROUNDS = 200


def test_judging_genuine_transactions(figures: Figures) -> None:
    policy = GuardPolicy.from_config(GuardConfig())
    kinds = {str(k) for k in PlanKind}
    corpus = [t for t in real.load_all() if t.expect == "accept" and t.plan["kind"] in kinds]
    cases = [
        (t, real.plan_record(t.plan), ordered_facts(t.ordered), Pubkey.from_string(t.wallet))
        for t in corpus
    ]
    planned: list[float] = []
    planless: list[float] = []
    for _ in range(ROUNDS):
        for tx, plan, ordered, wallet in cases:
            started = time.perf_counter()
            verdict = judge(tx.transaction, plan, wallet, policy, ordered=ordered,
                            gasless=bool(ordered.get("gasless")))  # fmt: skip
            planned.append(time.perf_counter() - started)
            assert verdict.accepted, verdict.reasons
            started = time.perf_counter()
            inspect(tx.transaction, wallet, policy)
            planless.append(time.perf_counter() - started)
    figures.put(NO_STORE, "guard_cases", len(cases))
    figures.put(NO_STORE, "guard_plan_median_us", round(statistics.median(planned) * 1e6))
    figures.put(
        NO_STORE, "guard_plan_p99_us", round(sorted(planned)[int(len(planned) * 0.99)] * 1e6)
    )
    figures.put(NO_STORE, "guard_planless_median_us", round(statistics.median(planless) * 1e6))
