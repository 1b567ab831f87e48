"""The guard's hostile corpus: each transaction breaks the principle "nothing of
value leaves our accounts for an account that is not ours" in its own way, and
each is refused and never signed. Where the runtime can run it, the test then
signs it anyway (with our own signer, bypassing the guard) and executes it on
LiteSVM with the real token programs, to show the refusal saved real value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.token.associated import get_associated_token_address
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.errors import GuardRejectedError
from jupcron.txguard import GuardPolicy, check_and_sign, inspect
from tests.fixtures import hostile as h
from tests.fixtures.chain import START_TOKENS, Chain
from tests.fixtures.wallet import TOKEN, TOKEN_2022, USDC, WSOL, budget, to_b64

POLICY = GuardPolicy()
T22 = TOKEN_2022


def stranger() -> Pubkey:
    return Keypair().pubkey()


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Chain], str]
    reason: str  # a part of the refusal's wording
    proof: Callable[[Chain, str], None] | None = None  # runs it; asserts value moved


def _tx(make: Callable[[Chain], list[Instruction]]) -> Callable[[Chain], str]:
    return lambda c: c.tx([*budget(), *make(c)])


def _me(c: Chain) -> Pubkey:
    return c.wallet.pubkey


# --- proofs -------------------------------------------------------------------


def _lost_tokens(program: Pubkey, at_least: int = 1) -> Callable[[Chain, str], None]:
    def prove(c: Chain, b64: str) -> None:
        ours = c.ata(_me(c), program)
        before = c.tokens(ours)
        c.execute(b64)
        assert before - c.tokens(ours) >= at_least

    return prove


def _lost_lamports(at_least: int) -> Callable[[Chain, str], None]:
    def prove(c: Chain, b64: str) -> None:
        before = c.lamports(_me(c))
        c.execute(b64)
        assert before - c.lamports(_me(c)) >= at_least

    return prove


def _field_changed(program: Pubkey, offset: int) -> Callable[[Chain, str], None]:
    """The token account's owner (32) or delegate (76) is no longer what it was."""

    def prove(c: Chain, b64: str) -> None:
        ours = c.ata(_me(c), program)
        before = c.token_field(ours, offset)
        c.execute(b64)
        assert c.token_field(ours, offset) != before

    return prove


# --- the other party's accounts -------------------------------------------------


def _their_ata(c: Chain, program: Pubkey = TOKEN) -> Pubkey:
    """A stranger's token account for our mint (it exists on the chain)."""
    other = stranger()
    address = get_associated_token_address(other, c.mints[program], program)
    return c.put_token_account(address, c.mints[program], other, program, amount=0)


def _own_extra_account(c: Chain) -> Pubkey:
    """A token account the wallet owns that is not its associated one."""
    address = Keypair().pubkey()
    return c.put_token_account(address, c.mints[TOKEN], _me(c), TOKEN)


def _multisig_transfer(c: Chain) -> list[Instruction]:
    """From an account owned by a 1-of-1 multisig whose one signer is our wallet."""
    multisig = Keypair().pubkey()
    c.put(multisig, bytes([1, 1, 1]) + bytes(_me(c)) + bytes(32 * 10), TOKEN)  # m, n, init
    account = c.put_token_account(Keypair().pubkey(), c.mints[TOKEN], multisig, TOKEN)
    return [h.tok_transfer(account, _their_ata(c), multisig, 13, cosigners=(_me(c),))]


def _prove_multisig(c: Chain, b64: str) -> None:
    c.execute(b64)  # it runs: our signature alone moves the multisig's tokens


def _ata_of_nothing(c: Chain, mint: Pubkey, program: Pubkey) -> Pubkey:
    return get_associated_token_address(_me(c), mint, program)


CASES: list[Case] = [
    # --- SPL Token and Token-2022: every form that moves our tokens out -------
    Case(
        "spl transfer to a stranger",
        _tx(lambda c: [h.tok_transfer(c.ata(_me(c)), _their_ata(c), _me(c), START_TOKENS)]),
        "SPL Token transfer moves 1000000000000 of our tokens",
        _lost_tokens(TOKEN, START_TOKENS),
    ),
    Case(
        "spl transfer_checked to a stranger",
        _tx(
            lambda c: [
                h.tok_transfer_checked(c.ata(_me(c)), c.mints[TOKEN], _their_ata(c), _me(c), 5)
            ]
        ),
        "SPL Token transfer_checked moves 5 of our tokens",
        _lost_tokens(TOKEN, 5),
    ),
    Case(
        "token-2022 transfer_checked to a stranger",
        _tx(
            lambda c: [
                h.tok_transfer_checked(
                    c.ata(_me(c), T22), c.mints[T22], _their_ata(c, T22), _me(c), 7, T22
                )
            ]
        ),
        "Token-2022 transfer_checked moves 7 of our tokens",
        _lost_tokens(T22, 7),
    ),
    Case(
        "token-2022 transfer_checked_with_fee to a stranger",
        _tx(
            lambda c: [
                h.tok_transfer_checked_with_fee(
                    c.ata(_me(c), T22), c.mints[T22], _their_ata(c, T22), _me(c), 9, T22
                )
            ]
        ),
        "Token-2022 transfer_checked_with_fee moves 9 of our tokens",
    ),
    Case(
        "transfer from a non-associated account the wallet owns",
        _tx(lambda c: [h.tok_transfer(_own_extra_account(c), _their_ata(c), _me(c), 11)]),
        "moves 11 of our tokens",
    ),
    Case(
        "transfer authorised by a multisig our wallet signs for",
        _tx(_multisig_transfer),
        "moves 13 of our tokens",
        _prove_multisig,
    ),
    Case(
        "spl burn of our tokens",
        _tx(lambda c: [h.tok_burn(c.ata(_me(c)), c.mints[TOKEN], _me(c), 10**6)]),
        "SPL Token burn burns 1000000 of our tokens",
        _lost_tokens(TOKEN, 10**6),
    ),
    Case(
        "spl burn_checked of our tokens",
        _tx(lambda c: [h.tok_burn(c.ata(_me(c)), c.mints[TOKEN], _me(c), 10**6, checked=True)]),
        "SPL Token burn_checked burns",
        _lost_tokens(TOKEN, 10**6),
    ),
    Case(
        "token-2022 burn_checked of our tokens",
        _tx(
            lambda c: [
                h.tok_burn(c.ata(_me(c), T22), c.mints[T22], _me(c), 10**6, T22, checked=True)
            ]
        ),
        "Token-2022 burn_checked burns",
        _lost_tokens(T22, 10**6),
    ),
    Case(
        "spl approve to a stranger",
        _tx(lambda c: [h.tok_approve(c.ata(_me(c)), stranger(), _me(c), START_TOKENS)]),
        "SPL Token approve delegates",
        _field_changed(TOKEN, 76),
    ),
    Case(
        "token-2022 approve_checked to a stranger",
        _tx(
            lambda c: [
                h.tok_approve(c.ata(_me(c), T22), stranger(), _me(c), 1, T22, mint=c.mints[T22])
            ]
        ),
        "Token-2022 approve_checked delegates",
        _field_changed(T22, 76),
    ),
    Case(
        "spl set_authority: the account's owner to a stranger",
        _tx(lambda c: [h.tok_set_owner(c.ata(_me(c)), _me(c), stranger())]),
        "set_authority hands the account_owner authority",
        _field_changed(TOKEN, 32),
    ),
    Case(
        "token-2022 set_authority",
        _tx(lambda c: [h.tok_set_owner(c.ata(_me(c), T22), _me(c), stranger(), T22)]),
        "Token-2022 set_authority hands",
    ),
    Case(
        "close our empty account, rent to a stranger",
        _tx(
            lambda c: [
                h.tok_close(
                    c.put_token_account(Keypair().pubkey(), c.mints[TOKEN], _me(c), TOKEN, 0),
                    stranger(),
                    _me(c),
                )
            ]
        ),
        "close_account sends the closed account's lamports",
    ),
    Case(
        "token-2022 withdraw_excess_lamports to a stranger",
        _tx(
            lambda c: [h.tok_withdraw_excess_lamports(c.ata(_me(c), T22), stranger(), _me(c), T22)]
        ),
        "withdraw_excess_lamports sends lamports",
    ),
    Case(
        "token-2022 reallocate paid by us for a stranger's account",
        _tx(lambda c: [h.tok_reallocate(_their_ata(c, T22), _me(c), stranger(), T22)]),
        "has our wallet pay rent",
    ),
    Case(
        "token-2022 cpi guard disable on our account",
        _tx(lambda c: [h.tok_raw(T22, bytes([34, 1]), c.ata(_me(c), T22), signer=_me(c))]),
        "disable_cpi_guard is a Token-2022 extension instruction on our accounts",
    ),
    Case(
        "token-2022 confidential transfer on our account",
        _tx(
            lambda c: [
                h.tok_raw(T22, bytes([27, 7]) + bytes(64), c.ata(_me(c), T22), signer=_me(c))
            ]
        ),
        "Token-2022 confidential_transfer is a Token-2022 extension instruction",
    ),
    Case(
        "an unknown token tag on our account",
        _tx(lambda c: [h.tok_raw(TOKEN, bytes([200]) + bytes(8), c.ata(_me(c)), signer=_me(c))]),
        "malformed or of an unknown kind",
    ),
    Case(
        "mint_to with our wallet as the mint authority",
        _tx(lambda c: [h.tok_mint_to(c.mints[TOKEN], _their_ata(c), _me(c), 10**9)]),
        "uses our wallet as a mint's authority",
    ),
    Case(
        "freeze with our wallet as the freeze authority",
        _tx(lambda c: [h.tok_freeze(c.ata(_me(c)), c.mints[TOKEN], _me(c))]),
        "uses our wallet as a mint's authority",
    ),
    # --- System: lamports out, rent for others, accounts that cannot exist ----
    Case(
        "lamports to a stranger",
        _tx(lambda c: [h.lamports_to(_me(c), stranger(), 5 * 10**9)]),
        "moves 5000000000 lamports from our wallet",
        _lost_lamports(5 * 10**9),
    ),
    Case(
        "10 SOL to our wSOL account under Token-2022, which can never exist",
        _tx(lambda c: [h.lamports_to(_me(c), _ata_of_nothing(c, WSOL, T22), 10**9)]),
        "moves 1000000000 lamports from our wallet",
        _lost_lamports(10**9),
    ),
    Case(
        "lamports to our USDC account under Token-2022, which can never exist",
        _tx(lambda c: [h.lamports_to(_me(c), _ata_of_nothing(c, USDC, T22), 10**6)]),
        "moves 1000000 lamports from our wallet",
    ),
    Case(
        "a seeded account paid by us, initialised for a stranger",
        _tx(
            lambda c: (lambda a: [a[1], h.tok_init_account3(a[0], c.mints[TOKEN], stranger())])(
                h.seeded_account(_me(c), "x1")
            )
        ),
        "pays 2039280 lamports of rent from our wallet",
        _lost_lamports(2_039_280),
    ),
    # --- the ATA program: rent for accounts that are not ours -----------------
    Case(
        "an associated token account created for a stranger at our cost",
        _tx(lambda c: [h.ata_create(_me(c), stranger(), c.mints[TOKEN])]),
        "has our wallet pay the rent of a token account for",
        _lost_lamports(2_039_280),
    ),
    Case(
        "six of them",
        _tx(lambda c: [h.ata_create(_me(c), stranger(), c.mints[TOKEN]) for _ in range(6)]),
        "has our wallet pay the rent of a token account for",
        _lost_lamports(6 * 2_039_280),
    ),
    Case(
        "an ATA created for a stranger under Token-2022",
        _tx(lambda c: [h.ata_create(_me(c), stranger(), c.mints[T22], T22, idempotent=False)]),
        "has our wallet pay the rent",
    ),
]


def _lookup_destination(c: Chain) -> str:
    """Our tokens to an account loaded from an address lookup table (unresolvable
    without an RPC node, so it cannot be shown to be ours)."""
    target = _their_ata(c)
    table = AddressLookupTableAccount(Keypair().pubkey(), [target])
    ix = h.tok_transfer(c.ata(_me(c)), target, _me(c), 3)
    message = MessageV0.try_compile(_me(c), [*budget(), ix], [table], c.blockhash)
    return to_b64(VersionedTransaction.populate(message, [Signature.default()]))


def _lookup_lamports(c: Chain) -> str:
    target = _ata_of_nothing(c, WSOL, TOKEN)  # even our own wSOL account, via a table
    table = AddressLookupTableAccount(Keypair().pubkey(), [target])
    ix = h.lamports_to(_me(c), target, 3)
    message = MessageV0.try_compile(_me(c), [*budget(), ix], [table], Hash.new_unique())
    return to_b64(VersionedTransaction.populate(message, [Signature.default()]))


CASES += [
    Case("tokens to a lookup-table account", _lookup_destination, "to lookup:"),
    Case("lamports to a lookup-table account", _lookup_lamports, "to lookup:"),
]


@pytest.fixture
def chain() -> Chain:
    return Chain(Wallet.generate())


def test_the_corpus_is_large_and_every_case_differs() -> None:
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_hostile_transaction_is_refused_and_never_signed(chain: Chain, case: Case) -> None:
    b64 = case.build(chain)
    verdict = inspect(b64, chain.wallet.pubkey, POLICY)
    assert not verdict.accepted
    assert any(case.reason in r for r in verdict.reasons), verdict.reasons
    with pytest.raises(GuardRejectedError):
        check_and_sign(chain.wallet, b64, POLICY)


PROVEN = [c for c in CASES if c.proof is not None]


@pytest.mark.parametrize("case", PROVEN, ids=[c.name for c in PROVEN])
def test_the_runtime_shows_what_each_refusal_saved(chain: Chain, case: Case) -> None:
    assert case.proof is not None
    case.proof(chain, case.build(chain))


def test_our_wsol_account_under_token_2022_can_never_be_created(chain: Chain) -> None:
    """Why those lamports are lost: no one can create that account to recover them."""
    me = chain.wallet.pubkey
    chain.execute(chain.tx([h.ata_create(me, me, WSOL, TOKEN)]))  # the real one: fine
    with pytest.raises(AssertionError, match="the runtime refused it"):
        chain.execute(chain.tx([h.ata_create(me, me, WSOL, TOKEN_2022)]))


# --- and what must still pass: the same instructions, kept within our accounts ----

LEGIT: list[tuple[str, Callable[[Chain], str]]] = [
    (
        "tokens from our Token-2022 account to itself",
        _tx(
            lambda c: [
                h.tok_transfer_checked(
                    c.ata(_me(c), T22), c.mints[T22], c.ata(_me(c), T22), _me(c), 1, T22
                )
            ]
        ),
    ),
    (
        "our associated token accounts created for ourselves, both programs",
        _tx(
            lambda c: [
                h.ata_create(_me(c), _me(c), WSOL),
                h.ata_create(_me(c), _me(c), c.mints[T22], T22),
            ]
        ),
    ),
    (
        "wrap SOL into our wSOL account and close it back to the wallet",
        _tx(
            lambda c: [
                h.ata_create(_me(c), _me(c), WSOL),
                h.lamports_to(_me(c), get_associated_token_address(_me(c), WSOL), 10**9),
                h.tok_raw(TOKEN, bytes([17]), get_associated_token_address(_me(c), WSOL)),
                h.tok_close(get_associated_token_address(_me(c), WSOL), _me(c), _me(c)),
            ]
        ),
    ),
    (
        "a temporary seeded wSOL account of ours, paid by us and closed to us",
        _tx(
            lambda c: (
                lambda a: [
                    a[1],
                    h.tok_init_account3(a[0], WSOL, _me(c)),
                    h.tok_close(a[0], _me(c), _me(c)),
                ]
            )(h.seeded_account(_me(c), "wsol-tmp"))
        ),
    ),
    (
        "approve our own wallet as delegate",
        _tx(lambda c: [h.tok_approve(c.ata(_me(c)), _me(c), _me(c), 1)]),
    ),
]


@pytest.mark.parametrize(("name", "build"), LEGIT, ids=[n for n, _ in LEGIT])
def test_value_kept_within_our_accounts_is_accepted_and_runs(
    chain: Chain, name: str, build: Callable[[Chain], str]
) -> None:
    b64 = build(chain)
    verdict = inspect(b64, chain.wallet.pubkey, POLICY)
    assert verdict.accepted, verdict.reasons
    signed = check_and_sign(chain.wallet, b64, POLICY)
    assert signed.signature
    chain.execute(b64)  # and the runtime agrees it is a valid transaction
