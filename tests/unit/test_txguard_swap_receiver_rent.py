"""Our rent creates token accounts for the plan's ``receiver`` itself, not for the
receiver's token accounts (review 17e).

docs/txguard.md: the ATA program is refused when "our wallet pays the rent of a token
account for any owner but the wallet or the plan's receiver". The rule read "the
receiver" as the receiver *and every token account of it* (`Ours.receiver`, the
set a swap's output may go to), so a swap to a receiver could also have our wallet
fund nested accounts (owned by the receiver's token accounts) of the plan's mints:
2,039,280 lamports each that only the receiver can ever recover (``recover_nested``),
never our wallet; no output goes there and no genuine answer makes one.
"""

from __future__ import annotations

from solders.instruction import Instruction
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jix
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures import hostile as h
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key

POLICY = GuardPolicy()


def _swap_to(me: Pubkey, receiver: Pubkey, *extra: Instruction) -> str:
    route = jix.route_instruction(
        "route_v2", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(receiver, WSOL),
        in_amount=1_000_000, quoted_out_amount=500_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    return build(me, [*budget(), h.ata_create(me, receiver, WSOL), *extra, route])


def test_rent_for_accounts_nested_under_the_receivers_accounts_is_refused() -> None:
    me, receiver = Wallet.generate().pubkey, new_key()
    expect = Expectation("swap", str(USDC), str(WSOL), 1_000_000, receiver=str(receiver))
    assert inspect(_swap_to(me, receiver), me, POLICY, expect=expect).accepted

    owners = [get_associated_token_address(receiver, m) for m in (USDC, WSOL)]
    nested = [h.ata_create(me, owner, mint) for owner in owners for mint in (USDC, WSOL)]
    verdict = inspect(_swap_to(me, receiver, *nested), me, POLICY, expect=expect)
    assert not verdict.accepted
    for owner in owners:
        assert any(
            "pay the rent of a token account for" in r and str(owner) in r for r in verdict.reasons
        ), verdict.reasons
