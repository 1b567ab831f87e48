"""The API key never appears in logs, exceptions, attempts or reprs."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.errors import ApiAuthError, JupcronError
from tests.fixtures.emulator import SWAP_REQUEST, ClientFactory, Recorder, sign

KEY = "jup_SECRET-7f3a9c1e55"


def test_key_is_never_logged_raised_or_shown(make_client: ClientFactory) -> None:
    payer = Wallet.generate()
    emu = Emulator(api_key=KEY)
    seen: list[str] = []
    recorder = Recorder()
    with capture_logs() as logs:
        good = make_client(emu, api_key=KEY)
        seen.append(repr(good))
        for kind in ("server_error", "drop", "malformed", "rate_limit", "wrong_types"):
            emu.faults.add(kind)
            quote = good.ultra_order(payer.address, SWAP_REQUEST, recorder)
        assert quote.transaction is not None
        emu.faults.add("lost_answer")
        seen.append(repr(good.execute_ultra(sign(payer, quote.transaction), quote.request_id)))
        emu.faults.add("server_error", count=0)
        with pytest.raises(JupcronError) as failed:
            good.positions(payer.address, observe=recorder)
        seen += [str(failed.value), repr(failed.value), repr(failed.value.__dict__)]
        emu.faults.clear()
        bad = make_client(emu, api_key=KEY[::-1])
        with pytest.raises(ApiAuthError) as refused:
            bad.positions(payer.address)
        seen += [str(refused.value), repr(refused.value.info), repr(bad), repr(emu)]
    seen += [repr(event) for event in logs]
    seen += [repr(attempt) for attempt in recorder.attempts]
    assert len(logs) > 5  # the failures were logged
    assert len(recorder.attempts) > 10
    for text in seen:
        assert KEY not in text
        assert KEY[::-1] not in text
