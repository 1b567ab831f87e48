"""The emulator hands out real Jupiter instructions: txguard's decoder (which
reads the published layouts) finds in them the accounts and amounts a real
answer carries, with associated token accounts derived under the right
program, and the helpers around them shaped like the real ones."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator, build_unsigned
from jupcron.emulator.txbuild import dca_address, from_b64, to_b64
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.decode import Instruction, TxSummary, summarize
from jupcron.txguard.jupiter import AGGREGATOR, DCA, LIMIT_ORDER, action_of

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
WSOL = "So11111111111111111111111111111111111111112"
TOKEN = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
MAX_TX_BYTES = 1232  # the network's limit
ROUTES = ["route", "shared_accounts_route", "route_v2", "shared_accounts_route_v2"]


def ata(owner: Pubkey, mint: str) -> str:
    return str(get_associated_token_address(owner, Pubkey.from_string(mint), TOKEN))


def decoded(tx_b64: str) -> TxSummary:
    return summarize(from_b64(tx_b64), GuardPolicy().names)


def only(summary: TxSummary, program: str) -> Instruction:
    found = [ix for ix in summary.instructions if ix.program == program]
    assert len(found) == 1
    return found[0]


def names(summary: TxSummary) -> list[str]:
    return [f"{ix.program_name}:{ix.name}" for ix in summary.instructions]


@pytest.mark.parametrize("route", ROUTES)
def test_a_swap_is_a_real_route_from_our_account_to_our_account(route: str) -> None:
    owner = Wallet.generate().pubkey
    tx = build_unsigned("swap", owner, rng=random.Random(3), amount=5_000_000,
                        out_amount=31_000, slippage_bps=30, route=route)  # fmt: skip
    assert len(bytes(tx)) <= MAX_TX_BYTES
    summary = decoded(to_b64(tx))
    ix = only(summary, AGGREGATOR)
    assert (ix.name, ix.malformed, action_of(AGGREGATOR, ix.name)) == (route, False, "swap")
    role, fields = ix.role, dict(ix.fields)
    assert role["owner"] == str(owner)
    assert role["source"] == ata(owner, USDC)
    assert role["destination"] == ata(owner, WSOL)
    assert (fields["in_amount"], fields["out_amount"]) == ("5000000", "31000")
    assert (fields["slippage_bps"], fields["route"]) == ("30", "Whirlpool")
    assert "cannot_decode" not in fields
    assert names(summary) == [
        "Compute Budget:set_compute_unit_limit", "Compute Budget:set_compute_unit_price",
        "Associated Token Account:create_idempotent", f"Jupiter Aggregator v6:{route}",
        "SPL Token:close_account",  # the wSOL output is unwrapped to the owner
    ]  # fmt: skip
    create = summary.instructions[2].role
    assert (create["funder"], create["account"], create["wallet"]) == (
        str(owner),
        ata(owner, WSOL),
        str(owner),
    )
    close = summary.instructions[4].role
    assert (close["account"], close["destination"]) == (ata(owner, WSOL), str(owner))
    assert inspect(to_b64(tx), owner, GuardPolicy()).accepted


def test_a_swap_from_sol_wraps_it_first_and_closes_the_wsol_account_after() -> None:
    owner = Wallet.generate().pubkey
    tx = build_unsigned("swap", owner, input_mint=WSOL, output_mint=USDC, amount=70_000)
    summary = decoded(to_b64(tx))
    assert names(summary)[2:] == [
        "Associated Token Account:create_idempotent", "System:transfer", "SPL Token:sync_native",
        "Associated Token Account:create_idempotent", "Jupiter Aggregator v6:route_v2",
        "SPL Token:close_account",
    ]  # fmt: skip
    wrap = summary.instructions[3]
    assert (wrap.role["from"], wrap.role["to"], dict(wrap.fields)["lamports"]) == (
        str(owner),
        ata(owner, WSOL),
        "70000",
    )
    assert only(summary, AGGREGATOR).role["source"] == ata(owner, WSOL)
    assert only(summary, AGGREGATOR).role["destination"] == ata(owner, USDC)


def test_a_swap_to_a_receiver_pays_into_the_receivers_account_without_unwrapping() -> None:
    owner, receiver = Wallet.generate().pubkey, Wallet.generate().pubkey
    summary = decoded(to_b64(build_unsigned("swap", owner, receiver=receiver, amount=9)))
    assert only(summary, AGGREGATOR).role["destination"] == ata(receiver, WSOL)
    assert summary.instructions[2].role["wallet"] == str(receiver)
    assert "SPL Token:close_account" not in names(summary)


def test_a_recurring_order_is_open_dca_v2_with_the_dcas_real_accounts() -> None:
    owner = Wallet.generate().pubkey
    tx = build_unsigned("recurring", owner, amount=300_000_000, cycles=3, interval=3600,
                        application_idx=1_700_000_000)  # fmt: skip
    ix = only(decoded(to_b64(tx)), DCA)
    assert (ix.name, action_of(DCA, ix.name)) == ("open_dca_v2", "recurring_open")
    dca = dca_address(owner, USDC, WSOL, 1_700_000_000)
    role, fields = ix.role, dict(ix.fields)
    assert role["order"] == str(dca)
    assert role["owner"] == role["payer"] == str(owner)
    assert role["source"] == ata(owner, USDC)
    assert role["vault"] == ata(dca, USDC)
    assert (role["input_mint"], role["output_mint"]) == (USDC, WSOL)
    assert fields["in_amount"] == "300000000"
    assert fields["in_amount_per_cycle"] == "100000000"
    assert fields["cycle_frequency"] == "3600"
    assert fields["application_idx"] == "1700000000"


def test_the_dca_address_is_the_programs_pda() -> None:
    user = Pubkey.from_string("DdNbmJSE6EJsbXcHkZhfsyqhbLzGYaRpKa3nxufeURuu")
    mint_in, mint_out = (
        "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
        ("3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh"),
    )
    # the DCA account of a mainnet open_dca_v2 (public chain data)
    assert str(dca_address(user, mint_in, mint_out, 1_741_074_974)) == (
        "4nsDuDcB47yRPBxtuhSNDxUynTXEqGWHG3tmY7H2tGVW"
    )


@pytest.mark.parametrize(("mint", "refund"), [(USDC, "ata"), (WSOL, "maker")])
def test_a_cancel_returns_the_input_to_the_maker(mint: str, refund: str) -> None:
    maker, order = Wallet.generate().pubkey, Wallet.generate().pubkey
    tx = build_unsigned("trigger_cancel", maker, order=order, input_mint=mint)
    ix = only(decoded(to_b64(tx)), LIMIT_ORDER)
    assert (ix.name, action_of(LIMIT_ORDER, ix.name)) == ("cancel_order", "trigger_cancel")
    assert (ix.role["owner"], ix.role["order"]) == (str(maker), str(order))
    assert ix.role["refund_to"] == (ata(maker, mint) if refund == "ata" else str(maker))


def test_a_cancel_can_be_built_refunding_someone_else_for_hostile_tests() -> None:
    maker, thief = Wallet.generate().pubkey, Wallet.generate().pubkey
    tx = build_unsigned("trigger_cancel", maker, refund_to=thief)
    assert only(decoded(to_b64(tx)), LIMIT_ORDER).role["refund_to"] == str(thief)


def test_a_trigger_order_is_initialize_order() -> None:
    maker = Wallet.generate().pubkey
    tx = build_unsigned("trigger", maker, amount=10, out_amount=20)
    ix = only(decoded(to_b64(tx)), LIMIT_ORDER)
    assert (ix.name, action_of(LIMIT_ORDER, ix.name)) == ("initialize_order", "trigger_open")
    assert (dict(ix.fields)["in_amount"], dict(ix.fields)["out_amount"]) == ("10", "20")
    assert ix.role["source"] == ata(maker, USDC)


def test_an_unknown_route_variant_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown route variant"):
        build_unsigned("swap", Wallet.generate().pubkey, route="teleport")


# --- through the emulator's HTTP handler (in process) ---------------------------------


def _call(emulator: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = json.dumps(body).encode() if body is not None else b""
    answer = emulator.handle(method, path, query, {"content-type": "application/json"}, raw)
    assert answer.status == 200, answer.body
    return json.loads(answer.body)


def test_the_recurring_order_the_emulator_reports_is_the_dca_in_the_transaction() -> None:
    emulator, wallet = Emulator(seed=11), Wallet.generate()
    body = {
        "user": wallet.address, "inputMint": USDC, "outputMint": WSOL,
        "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 4, "interval": 600}},
    }  # fmt: skip
    created = _call(emulator, "POST", "/recurring/v1/createOrder", body)
    ix = only(decoded(created["transaction"]), DCA)
    fields = dict(ix.fields)
    assert (fields["in_amount_per_cycle"], fields["cycle_frequency"]) == ("50000000", "600")
    idx = int(fields["application_idx"])
    assert ix.role["order"] == str(dca_address(wallet.pubkey, USDC, WSOL, idx))
    issued = emulator.state.ledger.issued[created["requestId"]]
    assert issued.order == ix.role["order"]


def test_the_ultra_order_carries_the_quote_and_slippage_asked_for() -> None:
    emulator, wallet = Emulator(seed=12), Wallet.generate()
    query = {"inputMint": USDC, "outputMint": WSOL, "amount": "2000000",
             "taker": wallet.address, "slippageBps": "75"}  # fmt: skip
    order = _call(emulator, "GET", "/ultra/v1/order", **query)
    fields = dict(only(decoded(order["transaction"]), AGGREGATOR).fields)
    assert (fields["in_amount"], fields["out_amount"]) == ("2000000", order["outAmount"])
    assert fields["slippage_bps"] == "75"
    assert from_b64(order["transaction"]).message.account_keys[0] == wallet.pubkey
