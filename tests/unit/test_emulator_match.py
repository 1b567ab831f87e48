"""Faults with ``match``: only the request whose fields match gets the fault
(the demo singles out one plan's order this way)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.faults import fault_from_dict, request_fields
from tests.fixtures.emulator import SWAP_REQUEST


def order(emu: Emulator, taker: str, amount: int) -> dict[str, Any]:
    query = {k: str(v) for k, v in SWAP_REQUEST.items()}
    query.update(taker=taker, amount=str(amount))
    answer = emu.handle("GET", "/ultra/v1/order", query, {}, b"")
    assert answer.status == 200
    data: dict[str, Any] = json.loads(answer.body)
    return data


def test_hostile_fault_hits_only_the_matching_order() -> None:
    emu = Emulator(seed=5, faults=[{"kind": "hostile", "match": {"amount": 2_000_000}}])
    taker = Wallet.generate().address
    plain = order(emu, taker, 1_000_000)
    hostile = order(emu, taker, 2_000_000)
    after = order(emu, taker, 2_000_000)  # count 1: spent
    flags = {rid: emu.ledger.get_issued(rid).hostile for rid in (plain["requestId"],
             hostile["requestId"], after["requestId"])}  # type: ignore[union-attr]  # fmt: skip
    assert flags == {plain["requestId"]: False, hostile["requestId"]: True,
                     after["requestId"]: False}  # fmt: skip


def test_match_reads_query_and_json_body_top_level_fields() -> None:
    body = json.dumps({"order": "abc", "n": 3, "flag": True, "nested": {"x": 1}}).encode()
    assert request_fields({"amount": "5"}, body) == {"amount": "5", "order": "abc", "n": "3"}
    assert request_fields({}, b"not json") == {}


def test_a_fault_without_request_fields_does_not_match() -> None:
    fault = fault_from_dict({"kind": "server_error", "match": {"amount": "1"}})
    assert not fault.applies_to("ultra_order")
    assert not fault.applies_to("ultra_order", {"amount": "2"})
    assert fault.applies_to("ultra_order", {"amount": "1", "taker": "x"})
    assert fault.summary()["match"] == {"amount": "1"}


@pytest.mark.parametrize("match", [["amount"], {"amount": 1.5}, {"amount": None}, "amount"])
def test_a_bad_match_is_refused_clearly(match: Any) -> None:
    with pytest.raises(ValueError, match="'match' must map request fields"):
        fault_from_dict({"kind": "hostile", "match": match})
