"""Hostile Trigger V2 answers end with nothing signed: a login challenge that is
a transaction (or hides one), a deposit that pays a stranger, a withdrawal that
does. Each run is `rejected` with txguard's reasons; no signature leaves."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from jupcron.store.types import RunStatus
from tests.fixtures.runner import USDC, Rig, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, cancel_plan, dca_plan, open_dca, requests, v2_orders

SIGNING = ("tx_signed", "message_signed", "challenge_signed")


def _signed(logs: list[dict[str, object]]) -> list[object]:
    return [e["event"] for e in logs if e["event"] in SIGNING]


def _reasons(rig: Rig, run_id: int) -> list[str]:
    (detail,) = [d for _, s, d in rig.events(run_id) if s == "guard_refused"]
    return list(detail["reasons"])


@pytest.mark.parametrize(
    ("variant", "why"),
    [
        ("transaction", "never a transaction"),
        ("disguised", "decoded from base64 parses as a Solana"),
        ("prefixed", "the nonce decoded from base58 parses as a Solana"),
        ("foreign", "does not start with the documented text"),
    ],
)
def test_a_challenge_that_is_or_hides_a_transaction_is_never_signed(
    make_rig: RigFactory, db_url: str, variant: str, why: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    rig.emulator.faults.add("hostile", operation="trigger_v2_challenge", variant=variant)
    with capture_logs() as logs:
        outcome = outcome_of(rig.runner().fire(dca_plan(rig), SLOT))
    assert outcome.status is RunStatus.REJECTED
    assert any(why in r for r in _reasons(rig, outcome.run_id)), _reasons(rig, outcome.run_id)
    assert _signed(logs) == []
    assert requests(rig, "trigger_v2_verify") == 0  # no signature ever left
    assert requests(rig, "trigger_v2_deposit") == 0
    run = rig.run(outcome.run_id)
    assert (run.signature, run.signed_tx) == (None, None)


@pytest.mark.parametrize(
    ("variant", "why"),
    [
        ("stranger", "which is not ours"),
        ("receiver", "is not our vault"),
        ("more", "into the vault; the plan: 40000000"),
        ("drain", "moves 9223372036854775808 lamports from our wallet"),
    ],
)
def test_a_deposit_that_pays_a_stranger_is_never_signed(
    make_rig: RigFactory, db_url: str, variant: str, why: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    before = rig.emulator.ledger.balance(rig.wallet.address, USDC)
    rig.emulator.faults.add("hostile", operation="trigger_v2_deposit", variant=variant)
    with capture_logs() as logs:
        outcome = outcome_of(rig.runner().fire(dca_plan(rig), SLOT))
    assert outcome.status is RunStatus.REJECTED
    reasons = _reasons(rig, outcome.run_id)
    assert any(why in r for r in reasons), reasons
    assert [e for e in _signed(logs) if e == "tx_signed"] == []
    assert requests(rig, "trigger_v2_create_dca") == 0
    assert rig.landed() == []
    assert v2_orders(rig) == []
    assert rig.emulator.ledger.balance(rig.wallet.address, USDC) == before
    assert rig.run(outcome.run_id).signed_tx is None


def test_a_withdrawal_to_a_stranger_is_never_signed(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = open_dca(rig)
    rig.emulator.faults.add("hostile", operation="trigger_v2_cancel")
    with capture_logs() as logs:
        outcome = outcome_of(rig.runner().fire(cancel_plan(rig, order_id), SLOT))
    assert outcome.status is RunStatus.REJECTED
    reasons = _reasons(rig, outcome.run_id)
    assert any("which is not ours" in r for r in reasons), reasons
    assert [e for e in _signed(logs) if e == "tx_signed"] == []
    assert requests(rig, "trigger_v2_confirm_cancel") == 0
    (order,) = v2_orders(rig)
    assert order.state == "withdrawing"  # stopped, its funds still in the vault
    assert rig.emulator.ledger.balance(order.vault, USDC) > 0
