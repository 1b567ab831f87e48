"""Our decoders against the programs' published interfaces.

tests/fixtures/interfaces/*.json record, per program and tag (and Token-2022
sub-instruction), the published name, accounts in order (writable, signer,
optional) and argument layout, with the repository and commit they come from
(the programs' Codama IDLs; the interface crates' enums agree). Every
instruction is built with its published layout and distinct accounts, decoded
with `instructions.parse`, and its name, fields and roles compared. A tag the
interface does not define must come out malformed.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from jupcron.chain.wallet import Wallet
from jupcron.txguard import GuardPolicy, inspect
from jupcron.txguard.instructions import parse
from jupcron.txguard.token import Effect
from tests.fixtures.wallet import budget, build, new_key

FIXTURES = Path(__file__).parent.parent / "fixtures" / "interfaces"
PROGRAMS = {name: json.loads((FIXTURES / f"{name}.json").read_text()) for name in (
    "system", "token", "token_2022", "associated_token")}  # fmt: skip

# System: the IDL's names where the interface crate's enum says otherwise
NAMES = {"transfer_sol": "transfer", "transfer_sol_with_seed": "transfer_with_seed"}
# published account name -> the role names txguard may give it (the rules' vocabulary)
ROLES: dict[str, set[str]] = {
    "payer": {"from", "payer"},
    "new_account": {"to", "account"},
    "source": {"from", "source"},
    "destination": {"to", "destination"},
    "recipient_account": {"to"},
    "base_account": {"base"},
    "nonce_account": {"nonce"},
    "recent_blockhashes_sysvar": {"recent_blockhashes"},
    "rent_sysvar": {"rent"},
    "owned": {"account"},
    "owner": {"authority", "owner"},
    "token": {"destination", "account"},
    "fee_receiver": {"destination"},
    "source_token": {"source"},
    "destination_token": {"destination"},
    "native_mint": {"mint"},
    "system_program": {"system"},
    "associated_token_account": {"account"},
    "nested_associated_token_account": {"nested"},
    "destination_associated_token_account": {"destination"},
    "owner_associated_token_account": {"owner_account"},
    "owner_token_program": {"token_program"},
}
# published argument name -> ours
FIELDS = {
    "program_address": "owner",
    "withdraw_amount": "lamports",
    "nonce_authority": "authority",
    "new_nonce_authority": "new_authority",
    "new_extension_types": "extension_types",
}


def _roles_for(published: str) -> set[str]:
    allowed = ROLES.get(published, {published})
    if published.endswith("authority") and published not in ("permissioned_burn_authority",):
        allowed = allowed | {"authority"}
    return allowed


def _arg(kind: str, n: int, enums: dict[str, list[str]]) -> tuple[bytes, str | None]:
    """Bytes of one argument in its published layout, and the text we expect back
    (None: a type txguard does not decode)."""
    pubkey = Keypair().pubkey()
    key, raw = str(pubkey), bytes(pubkey)
    if kind == "u8":
        return bytes([7 + n]), str(7 + n)
    if kind == "u16":
        return struct.pack("<H", 300 + n), str(300 + n)
    if kind == "u32":
        return struct.pack("<I", 70_000 + n), str(70_000 + n)
    if kind == "u64":
        value = 10**12 + 17 * n
        return struct.pack("<Q", value), str(value)
    if kind == "pubkey":
        return raw, key
    if kind == "option<pubkey>":
        return b"\x01" + raw, key
    if kind == "option<u64>":
        return b"\x01" + struct.pack("<Q", 4242), "4242"
    if kind == "string<u64>":
        return struct.pack("<Q", 6) + b"seed-x", "seed-x"
    if kind == "string<rest>":
        return b"1.25", "1.25"
    if kind == "defined:authorityType":
        return bytes([3]), enums["authority_type"][3]
    if kind == "defined:createMode":
        return bytes([1]), "idempotent"
    if kind == "array<defined:extensionType>":
        return struct.pack("<HH", 3, 12), "3,12"
    return bytes(40), None


def _cases() -> list[tuple[str, dict[str, Any]]]:
    return [(program, ix) for program, doc in PROGRAMS.items() for ix in doc["instructions"]]


def _id(case: tuple[str, dict[str, Any]]) -> str:
    program, ix = case
    return f"{program}-{ix['tag']}{'' if ix['sub'] is None else '.' + str(ix['sub'])}-{ix['name']}"


@pytest.mark.parametrize("case", _cases(), ids=_id)
def test_each_published_instruction_decodes_by_its_interface(
    case: tuple[str, dict[str, Any]],
) -> None:
    program, ix = case
    doc = PROGRAMS[program]
    tag = struct.pack("<I", ix["tag"]) if doc["tag"] == "u32" else bytes([ix["tag"]])
    data = tag + (b"" if ix["sub"] is None else bytes([ix["sub"]]))
    expected: dict[str, str] = {}
    for n, arg in enumerate(ix["args"]):
        raw, text = _arg(arg["type"], n, doc["enums"])
        data += raw
        if text is not None:
            name = FIELDS.get(arg["name"], arg["name"])
            expected["lamports" if (program, name) == ("system", "amount") else name] = text
    accounts = [str(Keypair().pubkey()) for _ in ix["accounts"]]
    parsed = parse(doc["program"], data, accounts)
    assert not parsed.malformed, parsed
    assert parsed.name == NAMES.get(ix["name"], ix["name"])
    fields = dict(parsed.fields)
    if parsed.effect == Effect.EXTENSION:
        # an extension instruction txguard judges as a unit (refused on our accounts):
        # named, and whatever arguments it reads are read right
        assert fields.pop("extension") == parsed.name
        assert {k: expected.get(k) for k in fields} == fields
    else:
        assert {k: v for k, v in fields.items() if k in expected} == expected
    role_of = {address: role for role, address in parsed.roles.items()}
    for account, address in zip(ix["accounts"], accounts, strict=True):
        role = role_of.get(address)
        assert role in _roles_for(account["name"]), (account["name"], role)
        if role == "authority":
            assert account["signer"] is not False, account  # it authorises: it signs
    # the account an instruction takes value from is a writable one
    for role in ("from", "source"):
        if role in parsed.roles:
            index = accounts.index(parsed.roles[role])
            assert ix["accounts"][index]["writable"], role


def _unknown_tags(program: str) -> list[bytes]:
    doc = PROGRAMS[program]
    tags = {ix["tag"] for ix in doc["instructions"]}
    subs = {(ix["tag"], ix["sub"]) for ix in doc["instructions"] if ix["sub"] is not None}
    if doc["tag"] == "u32":
        return [struct.pack("<I", t) + bytes(80) for t in (14, 15, 255, 2**32 - 1)]
    unknown = [bytes([t]) + bytes(80) for t in range(256) if t not in tags]
    families = {t for t, _ in subs}
    for family in families:
        unknown += [bytes([family, s]) + bytes(80) for s in range(256) if (family, s) not in subs]
    return unknown


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_tag_the_interface_does_not_define_is_malformed(program: str) -> None:
    accounts = [str(Keypair().pubkey()) for _ in range(8)]
    for data in _unknown_tags(program):
        parsed = parse(PROGRAMS[program]["program"], data, accounts)
        assert parsed.malformed, (program, data[:2].hex(), parsed.name)


def test_allow_prefund_funds_the_second_account() -> None:
    """The hole this suite was written for: in CreateAccountAllowPrefund account 0
    is the NEW account and account 1 the funder."""
    new, funder = str(Keypair().pubkey()), str(Keypair().pubkey())
    data = struct.pack("<IQQ", 13, 5 * 10**9, 0) + bytes(32)
    parsed = parse(PROGRAMS["system"]["program"], data, [new, funder])
    assert parsed.roles == {"to": new, "from": funder}
    assert parsed.fields["lamports"] == str(5 * 10**9)


@pytest.mark.parametrize(
    "data",
    [bytes([0, 0]), bytes([2, 9]), bytes([3, 2, 255, 0, 0, 0, 0]), bytes([3, 0, 255])],
    ids=["create with a trailing byte", "recover_nested with a trailing byte",
         "create_with_args with an unknown mode", "create_with_args too short"],
)  # fmt: skip
def test_associated_token_data_must_be_exact(data: bytes) -> None:
    accounts = [str(Keypair().pubkey()) for _ in range(7)]
    assert parse(PROGRAMS["associated_token"]["program"], data, accounts).malformed


def test_empty_associated_token_data_is_create() -> None:
    accounts = [str(Keypair().pubkey()) for _ in range(6)]
    parsed = parse(PROGRAMS["associated_token"]["program"], b"", accounts)
    assert (parsed.name, parsed.roles["funder"]) == ("create", accounts[0])


@pytest.mark.parametrize("data", [bytes([6, 2, 2]), bytes([0, 6]) + bytes(32) + b"\x02"])
def test_a_coption_tag_other_than_0_or_1_is_malformed(data: bytes) -> None:
    accounts = [str(Keypair().pubkey()) for _ in range(3)]
    assert parse(PROGRAMS["token"]["program"], data, accounts).malformed


def test_spl_token_refuses_token_2022_authority_types() -> None:
    accounts = [str(Keypair().pubkey()) for _ in range(2)]
    data = bytes([6, 8, 0])  # set_authority(permanent_delegate, none)
    assert parse(PROGRAMS["token"]["program"], data, accounts).malformed
    assert not parse(PROGRAMS["token_2022"]["program"], data, accounts).malformed


def _allow_prefund(new: Pubkey, funder: Pubkey, lamports: int) -> Instruction:
    data = struct.pack("<IQQ", 13, lamports, 0) + bytes(new_key())
    metas = [AccountMeta(new, True, True), AccountMeta(funder, True, True)]
    return Instruction(Pubkey.from_string(PROGRAMS["system"]["program"]), data, metas)


def test_our_lamports_for_a_strangers_prefunded_account_are_refused(wallet: Wallet) -> None:
    stranger = new_key()
    tx = build(wallet.pubkey, [*budget(), _allow_prefund(stranger, wallet.pubkey, 5 * 10**9)])
    reasons = inspect(tx, wallet.pubkey, GuardPolicy()).reasons
    assert (
        f"instruction #3: System create_account_allow_prefund pays 5000000000 lamports of rent "
        f"from our wallet for {stranger}, which is not ours"
    ) in reasons


def test_our_wallet_as_a_prefunded_new_account_is_refused(wallet: Wallet) -> None:
    tx = build(wallet.pubkey, [*budget(), _allow_prefund(wallet.pubkey, new_key(), 0)])
    reasons = inspect(tx, wallet.pubkey, GuardPolicy()).reasons
    assert any("would make our wallet a new account owned by" in r for r in reasons)
