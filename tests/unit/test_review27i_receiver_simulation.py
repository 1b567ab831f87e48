"""Simulation allows the rent of the receiver's token account the rules allow.

The rules let our wallet pay the rent of the plan's receiver's token account (of the
output mint: the swap pays it there, and Jupiter creates it "if needed"). Simulation
(`rpc.url` with `guard.simulate`, the default) counted those 2,039,280 lamports as a
loss beyond the order, since the account is not ours: every run of a swap plan with
a receiver whose account did not exist yet was rejected, with rules and simulation
disagreeing on the same transaction. More than that rent stays refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.chain.rpc import AccountState, Simulation
from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jix
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from tests.fixtures import hostile as h
from tests.fixtures.chain import account_data
from tests.fixtures.wallet import TOKEN, USDC, WSOL, budget, build, new_key

SYSTEM = "11111111111111111111111111111111"
SOL = 10**9
AMOUNT = 1_000_000
FEE = 5_000 + 15_000  # a signature, and 50,000 micro-lamports x 300,000 units
RENT = 2_039_280  # a 165-byte token account's


@dataclass
class FakeNode:
    """The Simulator port: accounts now, and the accounts after the transaction."""

    before: dict[str, AccountState]
    after: dict[str, AccountState] = field(default_factory=dict)

    def accounts(self, addresses: Sequence[str]) -> list[AccountState | None]:
        return [self.before.get(a) for a in addresses]

    def simulate(self, tx_b64: str, addresses: Sequence[str]) -> Simulation:
        states = tuple(self.after.get(a, self.before.get(a)) for a in addresses)
        return Simulation(None, states, ())


def _swap_to(me: Pubkey, receiver: Pubkey) -> str:
    route = jix.route_instruction(
        "route_v2", me, input_mint=USDC, output_mint=WSOL,
        source=get_associated_token_address(me, USDC),
        destination=get_associated_token_address(receiver, WSOL),
        in_amount=AMOUNT, quoted_out_amount=500_000, slippage_bps=50,
        pool_accounts=[new_key() for _ in range(7)],
    )  # fmt: skip
    return build(me, [*budget(), h.ata_create(me, receiver, WSOL), route])


def _node(me: Pubkey, lost: int) -> FakeNode:
    wallet, source = str(me), str(get_associated_token_address(me, USDC))
    usdc = str(TOKEN)
    return FakeNode(
        {
            wallet: AccountState(10 * SOL, SYSTEM, b""),
            source: AccountState(RENT, usdc, account_data(USDC, me, AMOUNT)),
        },
        {
            wallet: AccountState(10 * SOL - lost, SYSTEM, b""),
            source: AccountState(RENT, usdc, account_data(USDC, me, 0)),
        },
    )


def test_the_rent_of_the_receivers_new_account_is_not_a_loss() -> None:
    me, receiver = Wallet.generate().pubkey, new_key()
    expect = Expectation("swap", str(USDC), str(WSOL), AMOUNT, receiver=str(receiver))
    tx = _swap_to(me, receiver)
    assert inspect(tx, me, GuardPolicy(), expect=expect).accepted  # the rules allow it
    verdict = inspect(tx, me, GuardPolicy(), expect=expect, simulator=_node(me, FEE + RENT))
    assert verdict.accepted, verdict.reasons


def test_more_than_that_rent_is_still_a_loss() -> None:
    me, receiver = Wallet.generate().pubkey, new_key()
    expect = Expectation("swap", str(USDC), str(WSOL), AMOUNT, receiver=str(receiver))
    node = _node(me, FEE + RENT + 1)
    verdict = inspect(_swap_to(me, receiver), me, GuardPolicy(), expect=expect, simulator=node)
    assert not verdict.accepted
    assert any("would lose" in r for r in verdict.reasons), verdict.reasons


def test_no_rent_is_allowed_for_a_receivers_account_that_exists() -> None:
    """Creating it idempotently costs nothing: an allowance there would cover a loss."""
    me, receiver = Wallet.generate().pubkey, new_key()
    expect = Expectation("swap", str(USDC), str(WSOL), AMOUNT, receiver=str(receiver))
    node = _node(me, FEE + RENT)
    theirs = get_associated_token_address(receiver, WSOL)
    node.before[str(theirs)] = AccountState(RENT, str(TOKEN), account_data(WSOL, receiver, 0))
    verdict = inspect(_swap_to(me, receiver), me, GuardPolicy(), expect=expect, simulator=node)
    assert not verdict.accepted
    assert any("would lose 2059280 lamports" in r for r in verdict.reasons), verdict.reasons
