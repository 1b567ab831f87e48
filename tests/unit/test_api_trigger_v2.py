"""The Trigger V2 client: the JWT kept in memory only and never shown; the
Trigger API's own 401/403 are a run's failure, the gateway's stay fatal."""

from __future__ import annotations

import io

import pytest
import structlog

from jupcron.api.client import JupiterClient
from jupcron.api.trigger_v2 import TriggerV2Api
from jupcron.api.trigger_v2_models import HistoryOrder
from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.errors import ApiAuthError, ApiGarbageError, ApiRejectedError, GuardRejectedError
from jupcron.logs import configure_logging
from jupcron.txguard.challenge import login_signer
from tests.fixtures.emulator import ClientFactory, FakeTime, Recorder


def _session(client: JupiterClient, wallet: Wallet, time: FakeTime) -> TriggerV2Api:
    return TriggerV2Api(client, wallet.address, login_signer(wallet, "emu"), wall=time.wall)


def test_the_jwt_is_in_no_attempt_no_repr_and_no_log_line(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall)
    recorder = Recorder()
    stream = io.StringIO()
    configure_logging("debug", "json", stream)
    try:
        api = _session(make_client(emu), wallet, fake_time)
        api.vault(recorder)
        (token,) = emu.state.v2.tokens
        structlog.get_logger("test").info("token_seen", text=f"got {token} back", raw=token)
    finally:
        configure_logging("info", "json", io.StringIO())
    assert token not in stream.getvalue()
    assert '"raw": "***"' in stream.getvalue()
    assert token not in repr(api)
    assert all(token not in repr(a) for a in recorder.attempts)
    assert [a.operation for a in recorder.attempts] == [
        "trigger_v2_challenge", "trigger_v2_verify", "trigger_v2_vault",
        "trigger_v2_register_vault",
    ]  # fmt: skip


def test_the_jwt_is_reused_then_fetched_again_when_it_runs_out(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall, jwt_ttl=3600)
    api = _session(make_client(emu), wallet, fake_time)
    api.vault()
    api.vault()
    assert api.logins == 1
    fake_time.now += 3600 - 59  # a minute early: the client fetches a new one first
    api.vault()
    assert api.logins == 2
    assert emu.ledger.requests.get("trigger_v2_vault") == 3  # 404 once (then register), two reads


def test_a_refused_jwt_is_fetched_again_once(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall)
    api = _session(make_client(emu), wallet, fake_time)
    api.vault()
    emu.faults.add("jwt_expired", operation="trigger_v2_vault")
    api.vault()
    assert api.logins == 2
    emu.faults.add("jwt_expired", operation="trigger_v2_vault", count=2)
    with pytest.raises(ApiRejectedError, match="refused a JWT it had just issued"):
        api.vault()


def test_the_trigger_apis_403_fails_the_call_not_the_daemon(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    api = _session(make_client(Emulator(seed=1, clock=fake_time.wall)), wallet, fake_time)
    body = {"inputMint": "So11111111111111111111111111111111111111112", "amount": "1",
            "outputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "orderType": "dca"}  # fmt: skip
    with pytest.raises(ApiRejectedError) as refused:
        api.craft_deposit(body)  # no vault registered yet
    assert refused.value.info.http_status == 403
    assert not isinstance(refused.value, ApiAuthError)


def test_the_gateways_401_stays_fatal(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall, api_key="right-key")
    api = _session(make_client(emu, api_key="wrong-key"), wallet, fake_time)
    with pytest.raises(ApiAuthError):
        api.vault()


def test_a_hostile_challenge_stops_the_login_before_anything_is_signed(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall)
    emu.faults.add("hostile", operation="trigger_v2_challenge", variant="transaction")
    api = _session(make_client(emu), wallet, fake_time)
    with pytest.raises(GuardRejectedError, match="never a transaction"):
        api.vault()
    assert "trigger_v2_verify" not in emu.ledger.requests
    assert api.logins == 0


def test_a_verify_answer_without_a_jwt_is_refused(
    make_client: ClientFactory, fake_time: FakeTime, wallet: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall)
    emu.faults.add("drop_field", operation="trigger_v2_verify", field="token")
    api = _session(make_client(emu, max_attempts=1), wallet, fake_time)
    with pytest.raises(ApiGarbageError, match="unexpected fields"):
        api.vault()
    assert api.logins == 0


def test_an_answer_echoing_a_jwt_is_stored_without_it() -> None:
    from jupcron.errors import ApiErrorInfo
    from jupcron.logs import forget_value, mask_value
    from jupcron.runner.book import api_detail

    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    opaque = "an-opaque-session-value-1234"
    mask_value(opaque)
    try:
        info = ApiErrorInfo(operation="trigger_v2_vault", http_status=400,
                            error=f"bad token {opaque}", cause=f"got {token}",
                            body=f'{{"error": "Bearer {token} refused", "s": "{opaque}"}}')  # fmt: skip
        detail = api_detail(ApiRejectedError(f"trigger_v2_vault: {opaque}", info))
    finally:
        forget_value(opaque)
    assert token not in repr(detail)
    assert opaque not in repr(detail)
    assert "***" in detail["body"]


@pytest.mark.parametrize(("state", "proves"), [
    ("success", True), (None, True), ("failed", False), ("pending", False),
])  # fmt: skip
def test_only_a_deposit_that_did_not_fail_proves_the_run_landed(
    state: str | None, proves: bool
) -> None:
    """A history event carrying our signature settles an unanswered create only if it
    did not fail (the spec's event states: success, failed, pending): a failed deposit
    read as landed would record a run as succeeded that moved nothing."""
    event = {"type": "deposit", "txSignature": "sig1", **({"state": state} if state else {})}
    usdc, sol = (
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "So11111111111111111111111111111111111111112",
    )
    order = HistoryOrder.model_validate(
        {"id": "o1", "inputMint": usdc, "outputMint": sol, "events": [event]}
    )
    assert (order.event_with("deposit", "sig1") is not None) is proves
    assert order.event_with("deposit", "other") is None
