"""Genuine transactions Jupiter's APIs issued (tests/fixtures/real, each with its
source) are judged exactly as a run of their plan is judged (`runner.judge`, the
function the sign step and `jupcron tx inspect --plan` call), under the default
config: every one a jupcron plan can produce is accepted."""

from __future__ import annotations

from typing import Any

import pytest
from solders.pubkey import Pubkey

from jupcron.config import Config, GuardConfig
from jupcron.runner.judge import judge, ordered_facts
from jupcron.runner.steps import swap_body
from jupcron.store.types import PlanKind
from jupcron.txguard import GuardPolicy, inspect
from tests.fixtures import real

POLICY = GuardPolicy.from_config(GuardConfig())
CORPUS = real.load_all()
KINDS = {str(k) for k in PlanKind}
PLANNED = [t for t in CORPUS if t.expect == "accept" and t.plan["kind"] in KINDS]
ACCEPTED = [t for t in CORPUS if t.expect == "accept"]


def ids(corpus: list[real.RealTx]) -> list[str]:
    return [t.name for t in corpus]


@pytest.mark.parametrize("tx", PLANNED, ids=ids(PLANNED))
def test_a_genuine_transaction_is_accepted_for_its_plan(tx: real.RealTx) -> None:
    ordered = ordered_facts(tx.ordered)
    verdict = judge(
        tx.transaction, real.plan_record(tx.plan), Pubkey.from_string(tx.wallet), POLICY,
        ordered=ordered, gasless=bool(ordered.get("gasless")),
    )  # fmt: skip
    assert verdict.accepted, f"{tx.source}: {verdict.reasons}"


@pytest.mark.parametrize("tx", ACCEPTED, ids=ids(ACCEPTED))
def test_a_genuine_transaction_is_accepted_without_a_plan(tx: real.RealTx) -> None:
    """`jupcron tx inspect` without --plan: only the wallet and the order's mints."""
    request = tx.plan["request"]
    mints = [m for m in (request.get("inputMint"), request.get("outputMint")) if m]
    gasless = bool(tx.ordered.get("gasless"))
    verdict = inspect(
        tx.transaction, Pubkey.from_string(tx.wallet), POLICY, gasless=gasless, mints=mints
    )
    assert verdict.accepted, f"{tx.source}: {verdict.reasons}"


def test_the_corpus_has_every_shape_the_guard_must_accept() -> None:
    swaps = [t for t in PLANNED if t.plan["kind"] == "swap"]
    assert len(swaps) >= 10
    names = {ix.name for t in swaps for ix in _summary(t).instructions}
    # the aggregator's own temporary account, both route generations, and JupiterZ fills
    assert {"create_token_account", "route", "route_v2", "shared_accounts_route_v2"} <= names
    assert "fill" in names
    assert {t.plan["kind"] for t in PLANNED} >= {"swap", "recurring", "trigger-cancel"}


def _summary(tx: real.RealTx) -> Any:
    return inspect(tx.transaction, Pubkey.from_string(tx.wallet), POLICY).summary


EXCLUDED = [t for t in CORPUS if t.expect == "excluded"]


@pytest.mark.parametrize("tx", EXCLUDED, ids=ids(EXCLUDED))
def test_a_third_party_router_is_excluded_at_order_time_and_refused_if_it_comes(
    tx: real.RealTx,
) -> None:
    """A third-party router's answer calls a program txguard cannot hold to the plan:
    the default order query excludes its router, and should one come it is refused."""
    plan = real.plan_record(tx.plan)
    query = swap_body(plan, Config().api.exclude_routers)
    assert str(tx.ordered["router"]) in query["excludeRouters"].split(",")
    verdict = judge(tx.transaction, plan, Pubkey.from_string(tx.wallet), POLICY, ordered={})
    assert not verdict.accepted
    assert any("not in the allow-list" in r for r in verdict.reasons), verdict.reasons


def test_a_plans_own_router_exclusions_are_kept() -> None:
    doc = {
        "name": "s", "kind": "swap",
        "request": {"inputMint": real_mint("USDC"), "outputMint": real_mint("SOL"),
                    "amount": 1_000_000, "excludeRouters": "jupiterz"},
    }  # fmt: skip
    query = swap_body(real.plan_record(doc), ["dflow", "okx"])
    assert query["excludeRouters"] == "jupiterz,dflow,okx"
    assert swap_body(real.plan_record(doc), [])["excludeRouters"] == "jupiterz"


def real_mint(symbol: str) -> str:
    return {
        "USDC": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "SOL": "So11111111111111111111111111111111111111112",
    }[symbol]
