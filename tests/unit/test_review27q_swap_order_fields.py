"""The emulator's Ultra / Swap V2 ``/order`` answers carry the fields Jupiter's real
answers carry, as the fixtures show them:

- a JupiterZ (RFQ) quote's ``routePlan`` steps have ``bps`` (the docs' newest RFQ
  example, ultra/response.mdx "JupiterZ (RFQ)" tab, ``"percent": 100, "bps": 10000``;
  both specs' RoutePlanStep require it);
- an aggregator order built for a taker who pays its own fees names that taker as
  ``signatureFeePayer`` / ``prioritizationFeePayer`` / ``rentFeePayer`` (the Get
  Started page's iris example and the genuine Swap V2 okx answer; swap.yaml: "For a
  deterministic opt-out, check ``signatureFeePayer == taker`` on every response"),
  not ``null``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from tests.fixtures.openapi_spec import validator
from tests.fixtures.real import HERE as REAL

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
PREFIX = {"ultra": "/ultra/v1", "swap": "/swap/v2"}
OPERATION = {"ultra": "ultra_order", "swap": "swap_order"}


def order(emu: Emulator, spec: str, **query: str) -> dict[str, Any]:
    answer = emu.handle("GET", f"{PREFIX[spec]}/order", query, {}, b"")
    assert answer.status == 200
    return answer.json()  # type: ignore[no-any-return]


def real_answer(name: str) -> dict[str, Any]:
    return json.loads((REAL / f"{name}.json").read_text())["answer"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("spec", ["ultra", "swap"])
def test_rfq_route_steps_have_bps(spec: str) -> None:
    emu = Emulator(seed=3)
    emu.faults.add("rfq", operation=OPERATION[spec])
    data = order(emu, spec, inputMint=USDC, outputMint=SOL, amount="100000000")
    assert data["router"] == "jupiterz"
    documented = real_answer("ultra-order-usdc-sol-jupiterz-rfq-2")["routePlan"]
    assert [set(step) for step in data["routePlan"]] == [set(step) for step in documented]
    assert data["routePlan"][0]["bps"] == documented[0]["bps"] == 10_000
    validator(spec, "/order", "get", "200").validate(data)


@pytest.mark.parametrize("spec", ["ultra", "swap"])
def test_taker_who_pays_is_named_as_payer(spec: str) -> None:
    emu = Emulator(seed=3)
    wallet = Wallet.generate()
    emu.ledger.set_balance(wallet.address, USDC, 50_000_000)
    emu.ledger.set_balance(wallet.address, SOL, 1_000_000_000)
    data = order(emu, spec, inputMint=USDC, outputMint=SOL, amount="5000000",
                 taker=wallet.address)  # fmt: skip
    assert data["transaction"], data
    assert data["gasless"] is False
    # the genuine answers: a taker who pays is every payer field
    for name in ("ultra-order-sol-usdc-shared-route_v2-iris", "swapv2-order-usdc-jlp-okx"):
        real = real_answer(name)
        assert {real[f] for f in ("signatureFeePayer", "prioritizationFeePayer",
                                  "rentFeePayer")} == {real["taker"]}  # fmt: skip
    payers = {f: data[f] for f in ("signatureFeePayer", "prioritizationFeePayer", "rentFeePayer")}
    assert payers == dict.fromkeys(payers, wallet.address)
    validator(spec, "/order", "get", "200").validate(data)


def test_swap_v2_sizes_its_priority_fee_to_the_plans_priority_fee_lamports() -> None:
    """Swap V2's ``priorityFeeLamports`` (maxCap or exactFee: at most that many
    lamports): the emulator used its own 50,000 micro-lamports a unit whatever the
    order asked, 15,000 lamports, which the guard now refuses against a plan's 1,000."""
    from jupcron.txguard.decode import read, summarize

    emu = Emulator(seed=3)
    wallet = Wallet.generate()
    emu.ledger.set_balance(wallet.address, USDC, 50_000_000)
    emu.ledger.set_balance(wallet.address, SOL, 1_000_000_000)
    data = order(emu, "swap", inputMint=USDC, outputMint=SOL, amount="5000000",
                 taker=wallet.address, priorityFeeLamports="1000")  # fmt: skip
    unsigned = read(data["transaction"])
    paid = summarize(unsigned.tx, {}, len(unsigned.raw)).compute_budget.priority_fee_lamports
    assert 0 < paid <= 1000
    assert data["prioritizationFeeLamports"] == paid
