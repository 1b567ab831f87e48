"""Since the 2026 Developer Platform, a request to api.jup.ag WITHOUT an
``x-api-key`` header is served keyless (0.5 requests/s); 401 is only for an
invalid or unknown key (docs/jupiter-api-notes.md §5.5, from portal/responses.mdx
and portal/migration.mdx; /work/shared/API.md "Keyless use of api.jup.ag is
allowed"). The emulator answers 401 to a request without the header whenever it
was given a key. Not changed here: tests/integration/test_swap_v2_runs.py
(``..._needs_the_api_key``) relies on that 401, and modelling the keyless bucket
(its own 0.5/s window beside the keyed one) is a decision for the emulator's owner."""

from __future__ import annotations

import pytest

from jupcron.emulator import Emulator

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def test_a_wrong_key_is_refused() -> None:
    emu = Emulator(seed=1, api_key="right")
    query = {"inputMint": USDC, "outputMint": SOL, "amount": "5000000"}
    answer = emu.handle("GET", "/swap/v2/order", query, {"x-api-key": "wrong"}, b"")
    assert answer.status == 401


@pytest.mark.xfail(strict=True, reason="the emulator refuses keyless requests (401)")
def test_no_key_is_served_keyless() -> None:
    emu = Emulator(seed=1, api_key="right")
    query = {"inputMint": USDC, "outputMint": SOL, "amount": "5000000"}
    answer = emu.handle("GET", "/swap/v2/order", query, {}, b"")
    assert answer.status == 200, answer.body
