"""The rent our wallet pays for a token account the transaction makes ours (System
``create_account*`` + ``initialize_account*``): a token account's size at most, and
with a plan only of the plan's mints (review 2026-11-27). "Exact rent" had no size
bound: a swap could add a 1 MiB account of a stranger's mint, initialised for our
wallet, parking ~7.3 SOL where the mint's freeze authority can lock it (shown on the
real Token-2022 program below)."""

from __future__ import annotations

import struct

import pytest
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountWithSeedParams, create_account_with_seed
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.config import GuardConfig
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.expect import Expectation
from jupcron.txguard.ours import TOKEN_2022_ACCOUNT_MAX_SPACE, rent_exempt
from tests.fixtures import hostile as h
from tests.fixtures.chain import Chain
from tests.fixtures.wallet import TOKEN, TOKEN_2022, USDC, WSOL, budget, build, route

POLICY = GuardPolicy.from_config(GuardConfig())
MIB = 1024 * 1024
SWAP = Expectation("swap", str(USDC), str(WSOL), 5_000_000)


def parked(me: Pubkey, mint: Pubkey, space: int, program: Pubkey = TOKEN_2022,
           lamports: int | None = None) -> tuple[Pubkey, list[Instruction]]:  # fmt: skip
    """A seeded account of `space` bytes, its rent paid by our wallet, initialised as
    our token account of `mint`."""
    address = Pubkey.create_with_seed(me, "p", program)
    create = create_account_with_seed(CreateAccountWithSeedParams(
        from_pubkey=me, to_pubkey=address, base=me, seed="p", space=space, owner=program,
        lamports=rent_exempt(space) if lamports is None else lamports,
    ))  # fmt: skip
    return address, [create, h.tok_init_account3(address, mint, me, program)]


def swap_plus(me: Pubkey, extra: list[Instruction]) -> str:
    return build(me, [*budget(), route(me, USDC, WSOL, 5_000_000), *extra])


@pytest.mark.parametrize("expect", [SWAP, None], ids=["plan", "no-plan"])
def test_a_swap_may_not_park_seven_sol_in_a_megabyte_token_account(
    expect: Expectation | None,
) -> None:
    me = Keypair().pubkey()
    _, extra = parked(me, Keypair().pubkey(), MIB)
    verdict = inspect(swap_plus(me, extra), me, POLICY, expect=expect)
    assert not verdict.accepted
    assert any(f"at {MIB} bytes; a token account takes at most" in r for r in verdict.reasons), (
        verdict.reasons
    )


@pytest.mark.parametrize(
    ("program", "space", "accepted"),
    [
        (TOKEN, 165, True),
        (TOKEN, 166, False),  # an SPL Token account is 165 bytes, never more
        (TOKEN_2022, 165, True),
        (TOKEN_2022, TOKEN_2022_ACCOUNT_MAX_SPACE, True),  # every extension it can be made with
        (TOKEN_2022, TOKEN_2022_ACCOUNT_MAX_SPACE + 1, False),
    ],
)
def test_rent_is_for_a_token_accounts_size(program: Pubkey, space: int, accepted: bool) -> None:
    """The plan's own mint: only the size decides."""
    me = Keypair().pubkey()
    _, extra = parked(me, USDC, space, program)
    verdict = inspect(swap_plus(me, extra), me, POLICY, expect=SWAP)
    assert verdict.accepted is accepted, verdict.reasons


def test_rent_for_an_account_of_a_mint_the_plan_never_names_is_refused() -> None:
    me, stranger_mint = Keypair().pubkey(), Keypair().pubkey()
    _, extra = parked(me, stranger_mint, 165, TOKEN)
    verdict = inspect(swap_plus(me, extra), me, POLICY, expect=SWAP)
    assert not verdict.accepted
    assert any(
        "our new token account" in r and f"of {stranger_mint}; the plan's mints are" in r
        for r in verdict.reasons
    ), verdict.reasons


def test_rent_for_an_account_that_is_not_a_token_account_is_refused() -> None:
    me, program = Keypair().pubkey(), Keypair().pubkey()
    address = Pubkey.create_with_seed(me, "p", program)
    create = create_account_with_seed(CreateAccountWithSeedParams(
        from_pubkey=me, to_pubkey=address, base=me, seed="p", space=165, owner=program,
        lamports=rent_exempt(165),
    ))  # fmt: skip
    extra = [create, h.tok_init_account3(address, USDC, me, TOKEN)]
    verdict = inspect(swap_plus(me, extra), me, POLICY, expect=SWAP)
    assert not verdict.accepted
    assert any("which is not a token program" in r for r in verdict.reasons), verdict.reasons


def _stranger_signs(chain: Chain, signer: Keypair, ixs: list[Instruction]) -> None:
    chain.svm.airdrop(signer.pubkey(), 10**9)
    msg = MessageV0.try_compile(signer.pubkey(), ixs, [], chain.blockhash)
    result = chain.svm.send_transaction(VersionedTransaction(msg, [signer]))
    assert not hasattr(result, "err"), result


def test_on_chain_the_parked_rent_is_locked_by_the_strangers_mint() -> None:
    """Run anyway on the real Token-2022 program: the megabyte account takes > 7 SOL of
    ours, the stranger alone mints one token into it and freezes it, and our wallet
    can never close it. The guard refuses it (no plan needed)."""
    chain = Chain(Wallet.generate())
    me = chain.wallet.pubkey
    chain.svm.airdrop(me, 20 * 10**9)
    stranger, mint = Keypair(), Keypair().pubkey()
    # a Token-2022 mint: mint and freeze authority both the stranger's
    data = (struct.pack("<I", 1) + bytes(stranger.pubkey()) + struct.pack("<QBB", 0, 6, 1)
            + struct.pack("<I", 1) + bytes(stranger.pubkey()))  # fmt: skip
    chain.put(mint, data, TOKEN_2022)
    account, extra = parked(me, mint, MIB)
    tx = chain.tx(extra)
    assert not inspect(tx, me, POLICY).accepted
    before = chain.lamports(me)
    chain.execute(tx)
    assert chain.lamports(account) > 7 * 10**9
    assert before - chain.lamports(me) > 7 * 10**9
    _stranger_signs(chain, stranger, [
        h._ix(TOKEN_2022, bytes([7]) + struct.pack("<Q", 1), (mint, False, True),
              (account, False, True), (stranger.pubkey(), True, False)),  # mint_to
        h._ix(TOKEN_2022, bytes([10]), (account, False, True), (mint, False, False),
              (stranger.pubkey(), True, False)),  # freeze_account
    ])  # fmt: skip
    with pytest.raises(AssertionError, match="refused"):
        chain.execute(chain.tx([h.tok_close(account, me, me, TOKEN_2022)]))
