"""Simulation in the guard: legacy messages too, and lamports parked where a
stranger can lock them count as lost. A plain fake stands in for the node."""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from solders.hash import Hash
from solders.message import Message
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.token.associated import get_associated_token_address
from solders.transaction import VersionedTransaction

from jupcron.chain.rpc import AccountState, Simulation
from jupcron.chain.wallet import Wallet
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.simulate import rent_exempt
from tests.fixtures.chain import account_data
from tests.fixtures.wallet import (
    AGGREGATOR,
    TOKEN,
    WSOL,
    budget,
    build,
    create_ata_idempotent,
    new_key,
    program_call,
)

SYSTEM = "11111111111111111111111111111111"
SOL = 10**9


@dataclass
class FakeNode:
    """The Simulator port: accounts now, and the accounts after the transaction."""

    before: dict[str, AccountState]
    after: dict[str, AccountState] = field(default_factory=dict)
    simulated: int = 0

    def accounts(self, addresses: Sequence[str]) -> list[AccountState | None]:
        return [self.before.get(a) for a in addresses]

    def simulate(self, tx_b64: str, addresses: Sequence[str]) -> Simulation:
        self.simulated += 1
        states = tuple(self.after.get(a, self.before.get(a)) for a in addresses)
        return Simulation(None, states, ())


def _legacy(payer: Pubkey, *extra: Pubkey) -> str:
    message = Message.new_with_blockhash(
        [*budget(), program_call(AGGREGATOR, payer, *extra)], payer, Hash.new_unique()
    )
    slots = message.header.num_required_signatures
    tx = VersionedTransaction.populate(message, [Signature.default()] * slots)
    return base64.b64encode(bytes(tx)).decode("ascii")


def _wallet_state(lamports: int) -> AccountState:
    return AccountState(lamports, SYSTEM, b"")


def test_a_legacy_message_is_simulated(wallet: Wallet) -> None:
    me = str(wallet.pubkey)
    tx = _legacy(wallet.pubkey)
    calm = FakeNode({me: _wallet_state(10 * SOL)})
    assert inspect(tx, wallet.pubkey, GuardPolicy(), simulator=calm).accepted
    assert calm.simulated == 1
    drained = FakeNode({me: _wallet_state(10 * SOL)}, {me: _wallet_state(9 * SOL)})
    verdict = inspect(tx, wallet.pubkey, GuardPolicy(), simulator=drained)
    assert not verdict.accepted
    assert verdict.reasons[0].startswith("simulation: the wallet would lose 1000000000 lamports")


def _mint(freeze_authority: Pubkey | None) -> AccountState:
    freeze = struct.pack("<I", 1) + bytes(freeze_authority) if freeze_authority else bytes(36)
    data = bytes(36) + struct.pack("<QBB", 10**15, 6, 1) + freeze
    return AccountState(rent_exempt(len(data)), str(TOKEN), data)


@pytest.mark.parametrize(
    ("freeze", "accepted"),
    [("stranger", False), ("none", True), ("ours", True)],
)
def test_lamports_parked_in_our_account_of_a_freezable_mint_count_as_lost(
    wallet: Wallet, freeze: str, accepted: bool
) -> None:
    me, mint = wallet.pubkey, new_key()
    authority = {"stranger": new_key(), "none": None, "ours": me}[freeze]
    ata = get_associated_token_address(me, mint, TOKEN)
    data = account_data(mint, me, 0)
    rent = rent_exempt(len(data))
    node = FakeNode(
        before={
            str(me): _wallet_state(10 * SOL),
            str(ata): AccountState(rent, str(TOKEN), data),
            str(mint): _mint(authority),
        },
        after={
            str(me): _wallet_state(5 * SOL),  # 5 SOL moved into our token account
            str(ata): AccountState(rent + 5 * SOL, str(TOKEN), data),
        },
    )
    tx = build(me, [*budget(), program_call(AGGREGATOR, me, ata)])
    verdict = inspect(tx, me, GuardPolicy(), simulator=node)
    assert verdict.accepted is accepted, verdict.reasons
    if not accepted:
        assert "parked where a stranger can lock them" in verdict.reasons[0]


def test_a_new_token_account_of_a_freezable_mint_keeps_its_rent(wallet: Wallet) -> None:
    """USDC's mint has a freeze authority: the rent of a new account of ours still counts."""
    me, mint = wallet.pubkey, new_key()
    ata = get_associated_token_address(me, mint, TOKEN)
    data = account_data(mint, me, 0)
    rent = rent_exempt(len(data))
    assert rent == 2_039_280
    node = FakeNode(
        before={str(me): _wallet_state(10 * SOL), str(mint): _mint(new_key())},
        after={
            str(me): _wallet_state(10 * SOL - rent),
            str(ata): AccountState(rent, str(TOKEN), data),
        },
    )
    tx = build(me, [*budget(), create_ata_idempotent(me, mint), program_call(AGGREGATOR, me, ata)])
    assert inspect(tx, me, GuardPolicy(), simulator=node).accepted


def test_wrapped_sol_is_never_locked(wallet: Wallet) -> None:
    me = wallet.pubkey
    wsol = get_associated_token_address(me, WSOL, TOKEN)
    data = account_data(WSOL, me, 0)
    rent = rent_exempt(len(data))
    node = FakeNode(
        before={str(me): _wallet_state(10 * SOL), str(wsol): AccountState(rent, str(TOKEN), data)},
        after={
            str(me): _wallet_state(9 * SOL),
            str(wsol): AccountState(rent + SOL, str(TOKEN), account_data(WSOL, me, SOL)),
        },
    )
    tx = build(me, [*budget(), program_call(AGGREGATOR, me, wsol)])
    assert inspect(tx, me, GuardPolicy(), simulator=node).accepted


def test_an_oversized_account_of_a_freezable_mint_keeps_only_a_token_accounts_rent(
    wallet: Wallet,
) -> None:
    """A token account of ours grown to a megabyte, topped up to its rent-exempt minimum
    (~7.3 SOL) by a program call: that "rent" is as lockable as any lamport there, so only
    a token account's rent counts as ours (it once counted the megabyte's)."""
    me, mint = wallet.pubkey, new_key()
    account = get_associated_token_address(me, mint, TOKEN)
    data = account_data(mint, me, 0) + bytes(1024 * 1024 - 165)
    small = rent_exempt(165)
    node = FakeNode(
        before={
            str(me): _wallet_state(10 * SOL),
            str(account): AccountState(small, str(TOKEN), data),
            str(mint): _mint(new_key()),
        },
        after={
            str(me): _wallet_state(10 * SOL - rent_exempt(len(data)) + small),
            str(account): AccountState(rent_exempt(len(data)), str(TOKEN), data),
        },
    )
    tx = build(me, [*budget(), program_call(AGGREGATOR, me, account)])
    verdict = inspect(tx, me, GuardPolicy(), simulator=node)
    assert not verdict.accepted
    assert "parked where a stranger can lock them" in verdict.reasons[0]
