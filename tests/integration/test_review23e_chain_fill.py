"""A swap whose execute answers were all lost, settled `succeeded` from the chain
(``settled_by_rpc``): what it gave and got is read from the node's ``getTransaction``
(the wallet's balance changes) and kept as the run's fill, so the report's spent and
received, the ``fills`` view and the audit show the true amounts; before, nothing
recorded them and the report could only say "landed, amounts unknown".

An answer that cannot tell (no balances, garbage, no such transaction at the node)
records nothing: the run stays unmeasured and an event says why. On SQLite and
PostgreSQL; the emulator over loopback (its ledger is what the swap truly moved),
the real runner, store, wallet and guard."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.report.build import build
from tests.fixtures.runner import ONE_ATTEMPT, SOL, USDC, Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PLAN = "chainfill"
RPC = Path(__file__).resolve().parents[1] / "fixtures" / "rpc"

Mangle = Callable[[Any], Any]


class NodeAnswers(httpx.HTTPTransport):
    """A real HTTP transport to the emulator's node whose ``getTransaction`` results
    pass through `mangle` (a node that answers with partial or garbage meta)."""

    def __init__(self, mangle: Mangle) -> None:
        super().__init__()
        self.mangle = mangle

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if json.loads(request.content).get("method") != "getTransaction":
            return response
        body = json.loads(response.read())
        body["result"] = self.mangle(body.get("result"))
        return httpx.Response(response.status_code, json=body)


def _rig(make_rig: RigFactory, db_url: str, swap_api: str, rfq: bool = False) -> tuple[Rig, Clock]:
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, db_url=db_url, api=ONE_ATTEMPT, swap_api=swap_api,
                   emulator=Emulator(seed=23, clock=clock.wall))  # fmt: skip
    api = "swap" if swap_api == "swap-v2" else "ultra"
    if rfq:  # a JupiterZ fill: the market maker pays the fee, its signature the id
        rig.emulator.faults.add("rfq", operation=f"{api}_order")
    rig.emulator.faults.add("lost_answer", count=0, operation=f"execute_{api}")
    return rig, clock


def _fire_lost(rig: Rig, rpc: SolanaRpc) -> int:
    """Fire the swap with every execute answer lost; the run's id once settled."""
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(rig.plan("swap", name=PLAN), SLOT))
    finally:
        rpc.close()
    assert outcome.status is RunStatus.SUCCEEDED, (outcome.error, rig.steps(outcome.run_id))
    assert "settled_by_rpc" in rig.steps(outcome.run_id)
    return outcome.run_id


def _fills(rig: Rig, run_id: int) -> list[tuple[str, str, str]]:
    with rig.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT in_amount, out_amount, source FROM fills WHERE run_id = :r"),
            {"r": run_id},
        )
        return [tuple(str(v) for v in row) for row in rows]  # type: ignore[misc]


def _shown(rig: Rig) -> dict[str, Any]:
    with rig.engine.connect() as conn:
        (report,), _ = build(conn, plan=PLAN)
    return report.as_dict({})


@pytest.mark.parametrize(
    ("swap_api", "rfq"), [("swap-v2", False), ("ultra-v1", False), ("ultra-v1", True)]
)
def test_a_swap_settled_from_the_chain_gets_its_true_amounts(
    make_rig: RigFactory, db_url: str, swap_api: str, rfq: bool
) -> None:
    rig, _ = _rig(make_rig, db_url, swap_api, rfq)
    ledger, wallet = rig.emulator.ledger, rig.wallet.address
    start = (ledger.balance(wallet, USDC), ledger.balance(wallet, SOL))

    run_id = _fire_lost(rig, rig.rpc())

    (landed,) = rig.landed()
    assert (len(landed.all_signatures) == 2) is rfq  # a fill: the maker's id, ours second
    gave = start[0] - ledger.balance(wallet, USDC)  # what the swap truly moved
    got = ledger.balance(wallet, SOL) - start[1]
    assert gave == 5_000_000
    assert got > 0
    assert _fills(rig, run_id) == [(str(gave), str(got), "execute")]
    (settled,) = [d for _, step, d in rig.events(run_id) if step == "settled_by_rpc"]
    assert (settled["fill"], settled["in_amount"], settled["out_amount"]) == (
        "chain", str(gave), str(got))  # fmt: skip
    with rig.engine.connect() as conn:
        (operation, answer) = conn.execute(
            text("SELECT operation, answer FROM execute_results WHERE run_id = :r"),
            {"r": run_id},
        ).one()
        audit = conn.execute(
            text("SELECT spent, received, fills, out_amount FROM audit WHERE run_id = :r"),
            {"r": run_id},
        ).one()
    answer = answer if isinstance(answer, dict) else json.loads(answer)
    assert (operation, answer["source"]) == ("chain", "chain")  # never Jupiter's word
    assert tuple(str(v) for v in audit) == (str(gave), str(got), "1", str(got))
    shown = _shown(rig)
    assert (shown["spent"], shown["received"], shown["fills"]) == (str(gave), str(got), 1)
    assert shown.get("unmeasured_runs", 0) == 0


def _no_token_balances(result: Any) -> Any:
    result["meta"].pop("preTokenBalances")  # a node that did not record them
    return result


def _garbage_amount(result: Any) -> Any:
    result["meta"]["postTokenBalances"][0]["uiTokenAmount"]["amount"] = "1.5e3"
    return result


def _short_balances(result: Any) -> Any:
    result["meta"]["postBalances"] = result["meta"]["postBalances"][:1]
    return result


def _other_owner(result: Any) -> Any:
    for entry in result["meta"]["preTokenBalances"] + result["meta"]["postTokenBalances"]:
        entry["owner"] = "11111111111111111111111111111111"
    return result


def _no_transaction(result: Any) -> Any:
    return None  # the status says landed, the node has no transaction for it


def _no_meta(result: Any) -> Any:
    result["meta"] = None
    return result


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (_no_token_balances, "preTokenBalances is missing"),
        (_garbage_amount, "is not an integer"),
        (_short_balances, "do not match the account keys"),
        (_other_owner, "no token account of the wallet"),
        (_no_transaction, "has no transaction"),
        (_no_meta, "no meta"),
    ],
    ids=lambda v: v.__name__ if callable(v) else "",
)
def test_a_node_answer_that_cannot_tell_records_nothing_and_says_why(
    make_rig: RigFactory, db_url: str, mangle: Mangle, reason: str
) -> None:
    rig, _ = _rig(make_rig, db_url, "swap-v2")
    rpc = SolanaRpc(rig.url + "/rpc", transport=NodeAnswers(mangle))

    run_id = _fire_lost(rig, rpc)

    assert _fills(rig, run_id) == []
    (why,) = [d for _, step, d in rig.events(run_id) if step == "chain_fill_unmeasured"]
    assert reason in why["reason"], why
    shown = _shown(rig)
    assert (shown["fills"], shown.get("unmeasured_runs")) == (0, 1)
    assert shown.get("unmeasured_spent") == "5000000"


def test_the_emulators_transaction_has_the_real_answers_shape(
    make_rig: RigFactory, sqlite_url: str
) -> None:
    """The emulator's ``getTransaction`` of a landed swap carries the balance fields a
    real node's answer of a Jupiter swap does (tests/fixtures/rpc/), entry for entry."""
    rig, _ = _rig(make_rig, sqlite_url, "swap-v2")
    run_id = _fire_lost(rig, rig.rpc())
    body = {"jsonrpc": "2.0", "id": 1, "method": "getTransaction",
            "params": [rig.run(run_id).signature, {"encoding": "json",
                                                   "maxSupportedTransactionVersion": 0}]}  # fmt: skip
    ours = httpx.post(rig.url + "/rpc", json=body).json()["result"]["meta"]
    real = json.loads((RPC / "get-transaction-jupiter-usdc-jup.json").read_text())["meta"]
    balance_fields = {"fee", "preBalances", "postBalances", "preTokenBalances",
                      "postTokenBalances", "loadedAddresses"}  # fmt: skip
    assert balance_fields <= set(real) & set(ours)
    for side in ("preTokenBalances", "postTokenBalances"):
        assert {frozenset(e) for e in ours[side]} == {frozenset(real[side][0])}
        assert {frozenset(e["uiTokenAmount"]) for e in ours[side]} == {
            frozenset(real[side][0]["uiTokenAmount"])
        }
    assert set(ours["loadedAddresses"]) == set(real["loadedAddresses"])
