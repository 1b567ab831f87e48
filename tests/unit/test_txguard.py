"""txguard: a corpus of hostile transactions, each refused and never signed;
Jupiter-shaped normal ones accepted and signed."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable

import pytest
from solders.hash import Hash
from solders.instruction import AccountMeta, CompiledInstruction, Instruction
from solders.keypair import Keypair
from solders.message import MessageHeader, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import (
    AdvanceNonceAccountParams,
    AllocateParams,
    AssignParams,
    CreateAccountParams,
    TransferParams,
    TransferWithSeedParams,
    WithdrawNonceAccountParams,
    advance_nonce_account,
    allocate,
    assign,
    create_account,
    transfer,
    transfer_with_seed,
    withdraw_nonce_account,
)
from solders.token.associated import get_associated_token_address
from solders.transaction import VersionedTransaction
from structlog.testing import capture_logs

from jupcron.chain.wallet import Wallet
from jupcron.config import GuardConfig
from jupcron.errors import GuardRejectedError, RejectedError
from jupcron.txguard import GuardPolicy, NotATransactionError, check, check_and_sign, inspect
from jupcron.txguard.instructions import WRAPPED_SOL
from tests.fixtures.wallet import (
    AGGREGATOR,
    DCA,
    TOKEN,
    TOKEN_2022,
    USDC,
    WSOL,
    approve,
    budget,
    build,
    close_account,
    jupiter_recurring,
    jupiter_swap,
    jupiter_trigger_cancel,
    new_key,
    program_call,
    set_authority,
    to_b64,
    token_ix,
)

POLICY = GuardPolicy()
Builder = Callable[[Pubkey], str]


def _swap_plus(*extra: Callable[[Pubkey], Instruction]) -> Builder:
    """A normal swap call with hostile instructions added."""

    def make(me: Pubkey) -> str:
        return build(me, [*budget(), program_call(AGGREGATOR, me), *(f(me) for f in extra)])

    return make


def _fee_payer_swap(me: Pubkey) -> str:
    return build(new_key(), [*budget(), program_call(AGGREGATOR, me)])


def _unknown_program(me: Pubkey) -> str:
    return build(
        me,
        [
            *budget(),
            program_call(Pubkey.from_string("Stake11111111111111111111111111111111111111"), me),
        ],
    )


def _drain(me: Pubkey) -> Instruction:
    return transfer(TransferParams(from_pubkey=me, to_pubkey=new_key(), lamports=2**64 - 1))


def _drain_with_seed(me: Pubkey) -> Instruction:
    source = Pubkey.create_with_seed(me, "vault", Pubkey.default())
    params = TransferWithSeedParams(
        from_pubkey=source,
        from_base=me,
        from_seed="vault",
        from_owner=Pubkey.default(),
        to_pubkey=new_key(),
        lamports=5_000_000_000,
    )
    return transfer_with_seed(params)


def _extra_signer(me: Pubkey) -> Instruction:
    return program_call(AGGREGATOR, new_key())  # another key must sign


def _create_account_funded_by_us(me: Pubkey) -> Instruction:
    params = CreateAccountParams(
        from_pubkey=me, to_pubkey=me, lamports=10**9, space=0, owner=AGGREGATOR
    )
    ix = create_account(params)
    metas = [AccountMeta(me, True, True), AccountMeta(new_key(), False, True)]
    return Instruction(ix.program_id, ix.data, metas)  # new account not signing: still a drain


def _nonce_tx(me: Pubkey) -> str:
    nonce = new_key()
    advance = advance_nonce_account(
        AdvanceNonceAccountParams(nonce_pubkey=nonce, authorized_pubkey=me)
    )
    return build(me, [advance, *budget(), program_call(AGGREGATOR, me)])


def _nonce_withdraw(me: Pubkey) -> Instruction:
    params = WithdrawNonceAccountParams(
        nonce_pubkey=new_key(), authorized_pubkey=me, to_pubkey=new_key(), lamports=1
    )
    return withdraw_nonce_account(params)


def _approve_foreign(me: Pubkey) -> Instruction:
    return approve(get_associated_token_address(me, USDC), new_key(), me)


def _approve_checked_foreign(me: Pubkey) -> Instruction:
    data = bytes([13]) + struct.pack("<QB", 10**9, 6)
    source = get_associated_token_address(me, USDC)
    return token_ix(
        data,
        (source, False, True),
        (USDC, False, False),
        (new_key(), False, False),
        (me, True, False),
    )


def _close_foreign(me: Pubkey) -> Instruction:
    return close_account(get_associated_token_address(me, WSOL), new_key(), me)


def _close_foreign_2022(me: Pubkey) -> Instruction:
    ata = get_associated_token_address(me, USDC, TOKEN_2022)
    return close_account(ata, new_key(), me, program=TOKEN_2022)


def _set_authority(me: Pubkey) -> Instruction:
    return set_authority(get_associated_token_address(me, USDC), me, new_key())


def _set_authority_2022(me: Pubkey) -> Instruction:
    return set_authority(
        get_associated_token_address(me, USDC, TOKEN_2022), me, new_key(), TOKEN_2022
    )


def _high_fee(me: Pubkey) -> str:
    # 1_400_000 units at 10_000_000 micro-lamports = 14_000_000 lamports > 0.01 SOL
    return build(me, [*budget(1_400_000, 10_000_000), program_call(AGGREGATOR, me)])


def _high_fee_default_limit(me: Pubkey) -> str:
    # no limit set: the runtime allows 200_000 units per other instruction (one here)
    return build(me, [budget(price=60_000_000)[1], program_call(AGGREGATOR, me)])


def _duplicate_price(me: Pubkey) -> str:
    return build(me, [*budget(), budget()[1], program_call(AGGREGATOR, me)])


def _unsanitizable(me: Pubkey) -> str:
    bad = CompiledInstruction(program_id_index=9, data=b"", accounts=bytes([0, 12]))
    message = MessageV0(MessageHeader(1, 0, 0), [me], Hash.default(), [bad], [])
    return to_b64(VersionedTransaction.populate(message, [Signature.default()]))


def _program_from_lookup_table(me: Pubkey) -> str:
    """Hand-made: a program index pointing into a lookup table (sanitize refuses)."""
    header = MessageHeader(1, 0, 0)
    from solders.message import MessageAddressTableLookup

    lookup = MessageAddressTableLookup(new_key(), bytes([0]), b"")
    ix = CompiledInstruction(program_id_index=1, data=b"", accounts=bytes([0]))
    message = MessageV0(header, [me], Hash.default(), [ix], [lookup])
    return to_b64(VersionedTransaction.populate(message, [Signature.default()]))


def _not_signer(me: Pubkey) -> str:
    stranger = new_key()
    return build(stranger, [*budget(), program_call(AGGREGATOR, stranger)])


HOSTILE: list[tuple[str, Builder, str]] = [
    ("fee payer swap", _fee_payer_swap, "the fee payer is "),
    ("not our transaction", _not_signer, "is not a required signer"),
    ("unknown program", _unknown_program, "which is not in the allow-list"),
    ("drain transfer", _swap_plus(_drain), "moves 18446744073709551615 lamports from our wallet"),
    ("transfer_with_seed", _swap_plus(_drain_with_seed), "System transfer_with_seed moves"),
    (
        "create_account funded by us",
        _swap_plus(_create_account_funded_by_us),
        "System create_account pays 1000000000 lamports of rent from our wallet",
    ),
    (
        "assign our wallet",
        _swap_plus(lambda me: assign(AssignParams(pubkey=me, owner=AGGREGATOR))),
        "System assign touches our wallet",
    ),
    (
        "allocate our wallet",
        _swap_plus(lambda me: allocate(AllocateParams(pubkey=me, space=100))),
        "System allocate touches our wallet",
    ),
    ("nonce advance", _nonce_tx, "advance_nonce_account touches our wallet"),
    ("nonce withdraw", _swap_plus(_nonce_withdraw), "withdraw_nonce_account touches our wallet"),
    ("extra signer", _swap_plus(_extra_signer), "another signer is required besides our wallet"),
    (
        "token SetAuthority",
        _swap_plus(_set_authority),
        "SPL Token set_authority hands the account_owner authority",
    ),
    ("token-2022 SetAuthority", _swap_plus(_set_authority_2022), "Token-2022 set_authority"),
    (
        "Approve to a foreign delegate",
        _swap_plus(_approve_foreign),
        "SPL Token approve delegates 1000000000 of our tokens",
    ),
    (
        "ApproveChecked to a foreign delegate",
        _swap_plus(_approve_checked_foreign),
        "approve_checked delegates",
    ),
    (
        "CloseAccount to a foreign destination",
        _swap_plus(_close_foreign),
        "close_account sends the closed account's lamports",
    ),
    (
        "Token-2022 CloseAccount foreign",
        _swap_plus(_close_foreign_2022),
        "Token-2022 close_account sends",
    ),
    ("oversized priority fee", _high_fee, "priority fee of 14000000 lamports"),
    (
        "oversized fee with default limit",
        _high_fee_default_limit,
        "priority fee of 12180000 lamports",  # (3,000 + 200,000 default units) x 60 µL
    ),
    ("duplicate compute price", _duplicate_price, "set_compute_unit_price appears twice"),
    ("unsanitizable message", _unsanitizable, "fails to sanitize"),
    ("program loaded from a lookup table", _program_from_lookup_table, "fails to sanitize"),
]


@pytest.mark.parametrize(
    ("builder", "expected"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_hostile_transactions_are_refused_and_never_signed(
    wallet: Wallet, builder: Builder, expected: str
) -> None:
    tx = builder(wallet.pubkey)
    verdict = inspect(tx, wallet.pubkey, POLICY)
    assert not verdict.accepted
    assert any(expected in reason for reason in verdict.reasons), verdict.reasons
    with capture_logs() as logs, pytest.raises(GuardRejectedError) as err:
        check_and_sign(wallet, tx, POLICY)
    assert isinstance(err.value, RejectedError)
    assert list(err.value.reasons) == list(verdict.reasons)
    events = [e["event"] for e in logs]
    assert "tx_signed" not in events
    assert "tx_rejected" in events


NORMAL: list[tuple[str, Builder]] = [
    ("ultra swap with lookup table", jupiter_swap),
    ("ultra swap without lookup table", lambda me: jupiter_swap(me, lookup=False)),
    ("recurring createOrder", jupiter_recurring),
    ("trigger cancelOrder", jupiter_trigger_cancel),
]


@pytest.mark.parametrize("builder", [c[1] for c in NORMAL], ids=[c[0] for c in NORMAL])
def test_normal_jupiter_transactions_are_accepted_and_signed(
    wallet: Wallet, builder: Builder
) -> None:
    tx = builder(wallet.pubkey)
    verdict = inspect(tx, wallet.pubkey, POLICY)
    assert verdict.reasons == ()
    assert verdict.accepted
    # the verdict holds the transaction judged, read once: its text and bytes are tx's
    assert (verdict.transaction.b64, verdict.transaction.raw) == (tx, base64.b64decode(tx))
    assert verdict.summary.size == len(verdict.transaction.raw)
    signed = check_and_sign(wallet, tx, POLICY)
    result = VersionedTransaction.from_bytes(base64.b64decode(signed.b64))
    assert result.verify_with_results() == [True]
    assert result.message == VersionedTransaction.from_bytes(base64.b64decode(tx)).message


def test_a_refusal_lists_every_reason(wallet: Wallet) -> None:
    tx = build(
        new_key(),
        [*budget(1_400_000, 10**8), program_call(AGGREGATOR, wallet.pubkey), _drain(wallet.pubkey)],
    )
    reasons = inspect(tx, wallet.pubkey, POLICY).reasons
    assert len(reasons) == 2  # the fee caps do not apply: our wallet does not pay the fee
    with pytest.raises(GuardRejectedError) as err:
        check(tx, wallet.pubkey, POLICY)
    assert str(err.value).startswith("txguard refused: the fee payer is ")


def test_wrapping_sol_into_our_own_token_account_is_allowed(wallet: Wallet) -> None:
    ata = get_associated_token_address(wallet.pubkey, WSOL)
    wrap = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=ata, lamports=10**9))
    tx = build(wallet.pubkey, [*budget(), wrap, program_call(AGGREGATOR, wallet.pubkey)])
    assert inspect(tx, wallet.pubkey, POLICY).accepted


def test_lamports_go_only_to_our_wrapped_sol_accounts(wallet: Wallet) -> None:
    """Lamports parked in our token account of any other mint can be frozen there by
    the mint's authority (or the account cannot exist): refused, whatever the chain
    says of the mint; our wrapped-SOL account takes them (closing it returns them)."""
    mint = new_key()  # not named in the message (it would be in a lookup table)
    ata = get_associated_token_address(wallet.pubkey, mint)
    wrap = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=ata, lamports=10))
    tx = build(wallet.pubkey, [*budget(), wrap, program_call(AGGREGATOR, wallet.pubkey)])
    assert not inspect(tx, wallet.pubkey, POLICY).accepted
    (reason,) = inspect(tx, wallet.pubkey, POLICY, mints=[str(mint)]).reasons
    assert "not a wrapped-SOL account" in reason
    known = {str(mint): str(TOKEN)}
    (reason,) = inspect(tx, wallet.pubkey, POLICY, mints=[str(mint)], mint_programs=known).reasons
    assert "not a wrapped-SOL account" in reason
    # the same mint's Token-2022 account cannot even exist: lamports sent there are lost
    ata_2022 = get_associated_token_address(wallet.pubkey, mint, TOKEN_2022)
    lost = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=ata_2022, lamports=10))
    tx = build(wallet.pubkey, [*budget(), lost, program_call(AGGREGATOR, wallet.pubkey)])
    assert not inspect(tx, wallet.pubkey, POLICY, mint_programs=known).accepted
    # our wrapped-SOL account takes them
    wsol = get_associated_token_address(wallet.pubkey, Pubkey.from_string(WRAPPED_SOL))
    ok = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=wsol, lamports=10))
    tx = build(wallet.pubkey, [*budget(), ok, program_call(AGGREGATOR, wallet.pubkey)])
    assert inspect(tx, wallet.pubkey, POLICY).accepted


def test_transfer_into_a_lookup_table_account_is_not_ours(wallet: Wallet) -> None:
    target = new_key()
    from solders.address_lookup_table_account import AddressLookupTableAccount

    pay = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=target, lamports=10))
    table = AddressLookupTableAccount(new_key(), [target])
    tx = build(wallet.pubkey, [*budget(), pay], lookups=[table])
    (reason,) = inspect(tx, wallet.pubkey, POLICY).reasons
    assert f"lookup:{table.key}[0]" in reason


def test_approve_and_close_to_our_own_accounts_are_allowed(wallet: Wallet) -> None:
    me = wallet.pubkey
    usdc = get_associated_token_address(me, USDC)
    wsol = get_associated_token_address(me, WSOL)
    tx = build(
        me, [*budget(), approve(usdc, wsol, me), close_account(wsol, me, me), program_call(DCA, me)]
    )
    assert inspect(tx, me, POLICY).accepted


def test_a_transfer_between_other_accounts_is_not_our_business(wallet: Wallet) -> None:
    # the other party signs it, so the extra-signer rule refuses; the System rule says nothing
    other = new_key()
    pay = transfer(TransferParams(from_pubkey=other, to_pubkey=new_key(), lamports=10))
    tx = build(wallet.pubkey, [*budget(), pay])
    reasons = inspect(tx, wallet.pubkey, POLICY).reasons
    assert reasons == (f"another signer is required besides our wallet: {other}",)


def test_priority_fee_exactly_at_the_cap_is_allowed(wallet: Wallet) -> None:
    tx = build(
        wallet.pubkey, [*budget(1_000_000, 10_000_000), program_call(AGGREGATOR, wallet.pubkey)]
    )
    room = GuardPolicy(max_fee_lamports=20_000_000)  # the whole fee has its own cap
    verdict = inspect(tx, wallet.pubkey, room)
    assert verdict.summary.compute_budget.priority_fee_lamports == 10_000_000
    assert verdict.accepted
    lower = GuardPolicy(max_priority_fee_lamports=9_999_999, max_fee_lamports=20_000_000)
    assert not inspect(tx, wallet.pubkey, lower).accepted


def _gasless(me: Pubkey) -> tuple[str, Pubkey]:
    jupiter_payer = Keypair().pubkey()
    call = program_call(AGGREGATOR, me)
    metas = [*call.accounts, AccountMeta(jupiter_payer, True, True)]
    return build(
        jupiter_payer, [*budget(), Instruction(AGGREGATOR, call.data, metas)]
    ), jupiter_payer


def test_gasless_swap_needs_both_the_api_flag_and_the_config(wallet: Wallet) -> None:
    tx, _payer = _gasless(wallet.pubkey)
    allow = GuardPolicy(allow_gasless=True)
    assert not inspect(tx, wallet.pubkey, POLICY).accepted
    assert not inspect(tx, wallet.pubkey, allow).accepted  # API did not mark it gasless
    refused = inspect(tx, wallet.pubkey, POLICY, gasless=True)
    assert any("guard.allow_gasless" in r for r in refused.reasons)
    assert inspect(tx, wallet.pubkey, allow, gasless=True).accepted
    signed = check_and_sign(wallet, tx, allow, gasless=True)
    result = VersionedTransaction.from_bytes(base64.b64decode(signed.b64))
    assert result.verify_with_results() == [False, True]  # Jupiter's slot left for Jupiter


def test_gasless_does_not_relax_the_other_rules(wallet: Wallet) -> None:
    _tx, payer = _gasless(wallet.pubkey)
    me = wallet.pubkey
    drain = build(payer, [*budget(), program_call(AGGREGATOR, me, payer), _drain(me)])
    allow = GuardPolicy(allow_gasless=True)
    reasons = inspect(drain, me, allow, gasless=True).reasons
    assert len(reasons) == 1
    assert "moves" in reasons[0]


def test_policy_from_config_adds_extra_programs() -> None:
    stake = "Stake11111111111111111111111111111111111111"
    policy = GuardPolicy.from_config(
        GuardConfig(extra_programs=[stake], max_priority_fee_lamports=5, allow_gasless=True)
    )
    assert stake in policy.programs
    assert str(AGGREGATOR) in policy.programs
    assert policy.max_priority_fee_lamports == 5
    assert policy.allow_gasless
    me = Wallet.generate().pubkey
    tx = _unknown_program(me)
    assert inspect(tx, me, GuardPolicy.from_config(GuardConfig(extra_programs=[stake]))).accepted


def test_a_shorter_allow_list_refuses_dropped_programs(wallet: Wallet) -> None:
    only_dca = GuardPolicy.from_config(GuardConfig(allowed_programs=[str(DCA)]))
    reasons = inspect(jupiter_trigger_cancel(wallet.pubkey), wallet.pubkey, only_dca).reasons
    assert len(reasons) == 3  # two Compute Budget instructions and the Limit Order call
    assert all("not in the allow-list" in r for r in reasons)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "not base64 at all!",
        base64.b64encode(b"hello world").decode(),
        base64.b64encode(bytes(300)).decode(),
    ],
    ids=["empty", "blank", "not base64", "short garbage", "zeros"],
)
def test_input_that_is_not_a_transaction(wallet: Wallet, text: str) -> None:
    with pytest.raises(NotATransactionError) as err:
        inspect(text, wallet.pubkey, POLICY)
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, GuardRejectedError)
    assert err.value.exit_code == 2
    assert "\n" not in str(err.value)


def test_trailing_bytes_are_not_a_transaction(wallet: Wallet) -> None:
    raw = base64.b64decode(jupiter_swap(wallet.pubkey)) + b"\x00"
    with pytest.raises(NotATransactionError, match="trailing"):
        inspect(base64.b64encode(raw).decode(), wallet.pubkey, POLICY)


def test_mangled_transactions_never_crash_the_guard(wallet: Wallet) -> None:
    """Random byte damage gives a verdict or NotATransactionError, nothing else."""
    import random

    rng = random.Random(4)
    raw = bytearray(base64.b64decode(jupiter_swap(wallet.pubkey)))
    outcomes = {"verdict": 0, "not a transaction": 0}
    for _ in range(400):
        damaged = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        text = base64.b64encode(bytes(damaged)).decode()
        try:
            inspect(text, wallet.pubkey, POLICY)
            outcomes["verdict"] += 1
        except NotATransactionError:
            outcomes["not a transaction"] += 1
    assert all(outcomes.values()), outcomes
