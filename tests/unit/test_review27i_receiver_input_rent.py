"""Our rent creates the plan's receiver's token account of the output mint only.

The receiver is paid the swap's output; nothing of the input mint ever goes to it.
The rent rule held the receiver's accounts to "the plan's mints", both of them, so a
hostile answer could have our wallet pay 2,039,280 lamports of rent, run after run,
for the receiver's account of the *input* mint: an account no output lands in and
whose rent only the receiver can ever recover.
"""

from __future__ import annotations

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jix
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures import hostile as h
from tests.fixtures.wallet import USDC, WSOL, budget, build, new_key

POLICY = GuardPolicy()


def _swap_to(me: Pubkey, receiver: Pubkey, *rent_for: Pubkey) -> str:
    route = jix.route_instruction(
        "route_v2", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(receiver, WSOL),
        in_amount=1_000_000, quoted_out_amount=500_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    creates = [h.ata_create(me, receiver, mint) for mint in rent_for]
    return build(me, [*budget(), *creates, route])


def test_rent_for_the_receivers_account_of_the_input_mint_is_refused() -> None:
    me, receiver = Wallet.generate().pubkey, new_key()
    expect = Expectation("swap", str(USDC), str(WSOL), 1_000_000, receiver=str(receiver))
    assert inspect(_swap_to(me, receiver, WSOL), me, POLICY, expect=expect).accepted

    verdict = inspect(_swap_to(me, receiver, WSOL, USDC), me, POLICY, expect=expect)
    assert not verdict.accepted, "our rent paid for the receiver's account of the input mint"
    input_account = str(get_associated_token_address(receiver, USDC))
    assert any(input_account in r and "rent" in r for r in verdict.reasons), verdict.reasons
