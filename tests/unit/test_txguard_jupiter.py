"""txguard reads what the Jupiter programs are told: every route form of
Aggregator v6, the DCA and Limit Order v2 instructions, their roles and
amounts; malformed data is `malformed`, an unknown layout says it cannot be
decoded, and nothing raises. Instructions are built by tests/fixtures/jupiter.py
from the published layouts, independently of the decoder."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

import pytest

from jupcron.txguard import jupiter
from jupcron.txguard.instructions import DECODERS, parse
from tests.fixtures.jupiter import (
    AGGREGATOR,
    DCA,
    LIMIT_ORDER,
    NONE,
    RICH_ROUTE,
    VALUE_AVERAGE,
    Built,
    i64,
    instruction,
    key,
    plan_v1,
    plan_v2,
    some,
    step_v1,
    swap,
    u8,
    u16,
    u64,
    vec,
)

IN, OUT, QIN = 1_000_000_007, 123_456_789, 1_000_000_000
SWAP_FIELDS = {"in_amount": str(IN), "out_amount": str(OUT), "slippage_bps": "50"}
EXACT_OUT_FIELDS = {"out_amount": str(OUT), "quoted_in_amount": str(QIN), "slippage_bps": "50"}
ROUTE_ROLES = {
    "owner": "user_transfer_authority",
    "source": "user_source_token_account",
    "user_destination": "user_destination_token_account",
    "destination": "destination_token_account",
    "output_mint": "destination_mint",
    "fee_account": "platform_fee_account",
}
SHARED_ROLES = {
    "owner": "user_transfer_authority",
    "source": "source_token_account",
    "destination": "destination_token_account",
    "input_mint": "source_mint",
    "output_mint": "destination_mint",
    "fee_account": "platform_fee_account",
    "program_authority": "program_authority",
}
V2_ROLES = {
    "owner": "user_transfer_authority",
    "source": "user_source_token_account",
    "user_destination": "user_destination_token_account",
    "destination": "destination_token_account",
    "input_mint": "source_mint",
    "output_mint": "destination_mint",
}
SHARED_V2_ROLES = {k: v for k, v in SHARED_ROLES.items() if k != "fee_account"}
TAIL_V1 = u16(50) + u8(20)  # slippage_bps, platform_fee_bps
TAIL_V2 = u16(50) + u16(20) + u16(10)  # slippage_bps, platform_fee_bps, positive_slippage_bps


@dataclass(frozen=True)
class Case:
    program: str
    name: str
    args: bytes
    roles: dict[str, str]  # role -> the IDL name of the account expected in it
    fields: dict[str, str]
    action: str
    absent: tuple[str, ...] = ()
    no_roles: tuple[str, ...] = field(default=())

    @property
    def id(self) -> str:
        return f"{self.name}{'-' + '-'.join(self.absent) if self.absent else ''}"

    def build(self) -> Built:
        return instruction(self.program, self.name, self.args, absent=self.absent)


CASES = [
    # --- Aggregator v6: v1 routes (the plan first) ----------------------------------
    Case(AGGREGATOR, "route", plan_v1() + u64(IN) + u64(OUT) + TAIL_V1, ROUTE_ROLES,
         {**SWAP_FIELDS, "platform_fee_bps": "20", "route": RICH_ROUTE, "route_steps": "9",
          "min_out_amount": str(OUT * 9950 // 10_000)}, "swap"),
    Case(AGGREGATOR, "route", plan_v1() + u64(IN) + u64(OUT) + TAIL_V1,
         {**ROUTE_ROLES, "destination": "user_destination_token_account"} | {"fee_account": ""},
         SWAP_FIELDS, "swap", absent=("destination_token_account", "platform_fee_account")),
    Case(AGGREGATOR, "route_with_token_ledger", plan_v1() + u64(OUT) + TAIL_V1,
         {**ROUTE_ROLES, "token_ledger": "token_ledger"},
         {"out_amount": str(OUT), "in_amount_source": "token_ledger"}, "swap"),
    Case(AGGREGATOR, "exact_out_route", plan_v1() + u64(OUT) + u64(QIN) + TAIL_V1,
         {**ROUTE_ROLES, "input_mint": "source_mint"},
         {**EXACT_OUT_FIELDS, "swap_mode": "ExactOut", "max_in_amount": "1005000000"}, "swap"),
    Case(AGGREGATOR, "shared_accounts_route",
         u8(3) + plan_v1() + u64(IN) + u64(OUT) + TAIL_V1, SHARED_ROLES,
         {**SWAP_FIELDS, "id": "3", "route": RICH_ROUTE}, "swap"),
    Case(AGGREGATOR, "shared_accounts_route_with_token_ledger",
         u8(3) + plan_v1() + u64(OUT) + TAIL_V1, {**SHARED_ROLES, "token_ledger": "token_ledger"},
         {"out_amount": str(OUT), "in_amount_source": "token_ledger"}, "swap"),
    Case(AGGREGATOR, "shared_accounts_exact_out_route",
         u8(3) + plan_v1() + u64(OUT) + u64(QIN) + TAIL_V1, SHARED_ROLES,
         {**EXACT_OUT_FIELDS, "swap_mode": "ExactOut"}, "swap"),
    # --- Aggregator v6: v2 routes (the amounts first) -------------------------------
    Case(AGGREGATOR, "route_v2", u64(IN) + u64(OUT) + TAIL_V2 + plan_v2(), V2_ROLES,
         {**SWAP_FIELDS, "platform_fee_bps": "20", "positive_slippage_bps": "10",
          "route": RICH_ROUTE, "swap_mode": "ExactIn"}, "swap"),
    Case(AGGREGATOR, "route_v2", u64(IN) + u64(OUT) + TAIL_V2 + plan_v2(),
         {**V2_ROLES, "destination": "user_destination_token_account"}, SWAP_FIELDS, "swap",
         absent=("destination_token_account",)),
    Case(AGGREGATOR, "exact_out_route_v2", u64(OUT) + u64(QIN) + TAIL_V2 + plan_v2(), V2_ROLES,
         {**EXACT_OUT_FIELDS, "swap_mode": "ExactOut"}, "swap"),
    Case(AGGREGATOR, "shared_accounts_route_v2",
         u8(0) + u64(IN) + u64(OUT) + TAIL_V2 + plan_v2(), SHARED_V2_ROLES,
         {**SWAP_FIELDS, "id": "0", "route": RICH_ROUTE}, "swap"),
    Case(AGGREGATOR, "shared_accounts_exact_out_route_v2",
         u8(0) + u64(OUT) + u64(QIN) + TAIL_V2 + plan_v2(), SHARED_V2_ROLES,
         EXACT_OUT_FIELDS, "swap"),
    # --- Aggregator v6: helpers and Jupiter's own operations ------------------------
    Case(AGGREGATOR, "create_token_account", u8(254),
         {"owner": "user", "payer": "user", "account": "token_account", "mint": "mint"},
         {"bump": "254"}, "helper"),
    Case(AGGREGATOR, "close_wsol_token_account", b"",
         {"owner": "user", "refund_to": "user", "account": "token_account"}, {}, "helper"),
    Case(AGGREGATOR, "set_token_ledger", b"", {"token_ledger": "token_ledger"}, {}, "helper"),
    Case(AGGREGATOR, "claim", u8(1), {"destination": "wallet"}, {"id": "1"}, "unknown"),
    # --- DCA ------------------------------------------------------------------------
    Case(DCA, "open_dca",
         u64(77) + u64(IN) + u64(IN // 4) + i64(3600) + some(u64(5)) + NONE + some(i64(-1))
         + some(u8(1)),
         {"owner": "user", "payer": "user", "order": "dca", "source": "user_ata",
          "vault": "in_ata", "input_mint": "input_mint", "output_mint": "output_mint"},
         {"application_idx": "77", "in_amount": str(IN), "in_amount_per_cycle": str(IN // 4),
          "cycle_frequency": "3600", "min_out_amount": "5", "max_out_amount": "none",
          "start_at": "-1", "close_wsol_in_ata": "true"}, "recurring_open"),
    Case(DCA, "open_dca_v2",
         u64(77) + u64(IN) + u64(IN // 4) + i64(86_400) + NONE + some(u64(9)) + NONE,
         {"owner": "user", "payer": "payer", "order": "dca", "source": "user_ata",
          "vault": "in_ata", "input_mint": "input_mint", "output_mint": "output_mint"},
         {"in_amount": str(IN), "in_amount_per_cycle": str(IN // 4), "cycle_frequency": "86400",
          "min_out_amount": "none", "max_out_amount": "9", "start_at": "none"}, "recurring_open"),
    Case(DCA, "close_dca", b"",
         {"owner": "user", "order": "dca", "refund_to": "user_in_ata",
          "destination": "user_out_ata", "vault": "in_ata"}, {}, "recurring_close"),
    Case(DCA, "withdraw", u64(500) + u8(0),
         {"owner": "user", "order": "dca", "destination": "user_in_ata", "vault": "dca_ata"},
         {"amount": "500", "withdrawal": "in"}, "recurring_close"),
    Case(DCA, "withdraw", u64(500) + u8(1), {"owner": "user", "destination": "user_out_ata"},
         {"withdrawal": "out"}, "recurring_close", absent=("user_in_ata",)),
    Case(DCA, "deposit", u64(IN),
         {"owner": "user", "order": "dca", "source": "user_in_ata", "vault": "in_ata"},
         {"in_amount": str(IN)}, "recurring_open"),
    # --- Limit Order v2 -------------------------------------------------------------
    Case(LIMIT_ORDER, "initialize_order",
         u64(42) + u64(IN) + u64(OUT) + some(i64(1_900_000_000)) + some(u16(10)),
         {"payer": "payer", "owner": "maker", "order": "order", "vault": "input_mint_reserve",
          "source": "maker_input_mint_account", "fee_account": "referral",
          "input_mint": "input_mint", "output_mint": "output_mint"},
         {"unique_id": "42", "in_amount": str(IN), "out_amount": str(OUT),
          "expired_at": "1900000000", "fee_bps": "10"}, "trigger_open"),
    Case(LIMIT_ORDER, "cancel_order", b"",
         {"owner": "maker", "signer": "signer", "order": "order", "vault": "input_mint_reserve",
          "refund_to": "maker_input_mint_account", "input_mint": "input_mint"},
         {}, "trigger_cancel"),
    Case(LIMIT_ORDER, "cancel_order", b"", {"owner": "maker", "refund_to": "maker"}, {},
         "trigger_cancel", absent=("maker_input_mint_account",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_decodes_name_roles_amounts_and_action(case: Case) -> None:
    built = case.build()
    parsed = parse(built.program, built.data, built.accounts)
    assert (parsed.name, parsed.malformed) == (case.name, False)
    assert "cannot_decode" not in parsed.fields
    assert "trailing_bytes" not in parsed.fields
    for role, idl_name in case.roles.items():
        assert parsed.roles.get(role) == (key(idl_name) if idl_name else None), role
    for name, value in case.fields.items():
        assert parsed.fields.get(name) == value, name
    assert jupiter.action_of(built.program, parsed.name) == case.action


def test_every_decoded_instruction_has_a_case_or_is_named_by_the_interface() -> None:
    covered = {(c.program, c.name) for c in CASES}
    routes = {n for n in jupiter.instruction_names(AGGREGATOR) if "route" in n}
    assert {(AGGREGATOR, n) for n in routes} <= covered
    assert len(routes) == 10


PUBLISHED = {  # discriminators as the IDLs print them
    "route": [229, 23, 203, 151, 122, 227, 173, 42],
    "shared_accounts_route": [193, 32, 155, 51, 65, 214, 156, 129],
    "exact_out_route": [208, 51, 239, 151, 123, 43, 237, 92],
    "route_v2": [187, 100, 250, 204, 49, 196, 175, 20],
    "shared_accounts_route_v2": [209, 152, 83, 147, 124, 254, 216, 233],
    "shared_accounts_exact_out_route_v2": [53, 96, 229, 202, 216, 187, 250, 24],
    "create_token_account": [147, 241, 123, 100, 244, 132, 174, 118],
    "open_dca_v2": list(bytes.fromhex("8e772b6da2340bb1")),
    "close_dca": list(bytes.fromhex("16072162a8b722f3")),
    "initialize_order": [133, 110, 74, 175, 112, 159, 245, 159],
    "cancel_order": [95, 129, 237, 240, 8, 49, 223, 132],
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_discriminators_are_sha256_of_global_name(name: str) -> None:
    digest = hashlib.sha256(f"global:{name}".encode()).digest()[:8]
    assert list(digest) == PUBLISHED[name]
    assert jupiter.discriminator(name) == digest


@pytest.mark.parametrize("program", [AGGREGATOR, DCA, LIMIT_ORDER])
def test_every_known_instruction_is_keyed_by_its_sha256_discriminator(program: str) -> None:
    names = jupiter.instruction_names(program)
    assert names
    for name in names:
        data = hashlib.sha256(f"global:{name}".encode()).digest()[:8] + bytes(400)
        assert parse(program, data, [key(str(i)) for i in range(20)]).name == name


def test_a_mainnet_open_dca_v2_decodes() -> None:
    """A real open_dca_v2 (public chain data, as recorded in sevenlabs-hq/carbon's
    test fixtures): the layout read from the interface matches the wire."""
    data = bytes.fromhex(
        "8e772b6da2340bb11eb2c6670000000015f902950000000000e1f50500000000805101000000"
        "00000197a801000000000001fa01020000000000010000000000000000"
    )
    user = "DdNbmJSE6EJsbXcHkZhfsyqhbLzGYaRpKa3nxufeURuu"
    accounts = [
        "4nsDuDcB47yRPBxtuhSNDxUynTXEqGWHG3tmY7H2tGVW", user, user,
        "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
        "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh",
        "FQtvkDXHNjsx2v9XYnTw9pASHJPqHycKd5cyds6h7NeM",
        "7raHTbUE3SnxmeXUcTzMqPjsBunz7VEDcc4cCagZ8njz",
        "5NKVYpXyAgPDRfBZSWXPG657UZvaQXY8n2pjBTF9L4Gq",
        "11111111111111111111111111111111", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
        "Cspp27eGUDMXxPEdhmEXFVRn6Lt1L7xJyALF3nmnWoBj", DCA,
    ]  # fmt: skip
    parsed = parse(DCA, data, accounts)
    assert (parsed.name, parsed.malformed) == ("open_dca_v2", False)
    assert parsed.fields["in_amount"] == "2500000021"
    assert parsed.fields["in_amount_per_cycle"] == "100000000"
    assert parsed.fields["cycle_frequency"] == "86400"
    assert parsed.roles["owner"] == parsed.roles["payer"] == user
    assert parsed.roles["source"] == "FQtvkDXHNjsx2v9XYnTw9pASHJPqHycKd5cyds6h7NeM"
    assert "trailing_bytes" not in parsed.fields


# --- bad input: malformed or undecodable, never an exception -------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_truncation_is_malformed(case: Case) -> None:
    built = case.build()
    for size in range(len(built.data)):
        parsed = parse(built.program, built.data[:size], built.accounts)
        assert parsed.malformed, (size, parsed)


@pytest.mark.parametrize("case", CASES[:12], ids=[c.id for c in CASES[:12]])
def test_too_few_accounts_is_malformed(case: Case) -> None:
    built = case.build()
    parsed = parse(built.program, built.data, built.accounts[:3])
    assert parsed.malformed
    assert "accounts" in parsed.fields["problem"]


BAD_ARGS = [
    # (program, name, args, what breaks)
    (DCA, "open_dca_v2", u64(1) + u64(2) + u64(3) + i64(4) + b"\x02" + bytes(18), "option tag"),
    (DCA, "open_dca", u64(1) * 3 + i64(4) + NONE * 3 + some(u8(2)), "bool"),
    (DCA, "withdraw", u64(5) + u8(2), "enum variant"),
    (AGGREGATOR, "route_v2", u64(1) + u64(2) + TAIL_V2 + b"\xff\xff\xff\xff", "list"),
    (AGGREGATOR, "route", vec(step_v1(swap("Whirlpool", u8(7)))) + u64(1) + u64(2) + TAIL_V1,
     "bool"),
    (AGGREGATOR, "route", vec(step_v1(swap("DynamicV1", vec(u8(12)) + NONE))) + bytes(19),
     "enum variant"),
]  # fmt: skip


@pytest.mark.parametrize(("program", "name", "args", "what"), BAD_ARGS)
def test_values_the_program_refuses_are_malformed(
    program: str, name: str, args: bytes, what: str
) -> None:
    built = instruction(program, name, args)
    parsed = parse(built.program, built.data, built.accounts)
    assert parsed.malformed
    assert what in parsed.fields["problem"]


def test_a_v1_route_step_of_an_unlisted_kind_cannot_be_decoded() -> None:
    plan = vec(step_v1(b"\xc8"))  # Swap variant #200: not in the interface, size unknown
    built = instruction(AGGREGATOR, "route", plan + u64(IN) + u64(OUT) + TAIL_V1)
    parsed = parse(built.program, built.data, built.accounts)
    assert (parsed.name, parsed.malformed) == ("route", False)
    assert "#200" in parsed.fields["cannot_decode"]
    assert "in_amount" not in parsed.fields  # not guessed
    assert parsed.roles["owner"] == key("user_transfer_authority")


def test_a_v2_route_step_of_an_unlisted_kind_leaves_the_amounts_read() -> None:
    plan = vec(b"\xc8" + u16(10_000) + u8(0) + u8(1))
    built = instruction(AGGREGATOR, "route_v2", u64(IN) + u64(OUT) + TAIL_V2 + plan)
    parsed = parse(built.program, built.data, built.accounts)
    assert (parsed.name, parsed.malformed) == ("route_v2", False)
    assert parsed.fields["in_amount"] == str(IN)
    assert parsed.fields["route"].startswith("cannot decode")
    assert "cannot_decode" not in parsed.fields


def test_trailing_bytes_are_reported() -> None:
    built = instruction(LIMIT_ORDER, "cancel_order", b"\x00\x01")
    parsed = parse(built.program, built.data, built.accounts)
    assert (parsed.name, parsed.fields["trailing_bytes"]) == ("cancel_order", "2")


@pytest.mark.parametrize("program", [AGGREGATOR, DCA, LIMIT_ORDER, VALUE_AVERAGE])
def test_an_unknown_discriminator_is_named_unknown_with_the_reason(program: str) -> None:
    data = hashlib.sha256(b"global:drain_everything").digest()[:8] + bytes(16)
    parsed = parse(program, data, [key("a"), key("b")])
    assert (parsed.name, parsed.malformed) == ("unknown", False)
    assert parsed.fields["cannot_decode"]
    assert parsed.fields["tag"] == data[:8].hex()
    assert jupiter.action_of(program, parsed.name) == "unknown"


def test_the_value_average_program_cannot_be_decoded() -> None:
    parsed = parse(VALUE_AVERAGE, jupiter.discriminator("open") + bytes(40), [key("user")])
    assert parsed.name == "unknown"
    assert "no public interface" in parsed.fields["cannot_decode"]


def test_random_data_never_raises() -> None:
    rng = random.Random(20)
    programs = (AGGREGATOR, DCA, LIMIT_ORDER, VALUE_AVERAGE)
    heads = [jupiter.discriminator(n) for p in programs for n in jupiter.instruction_names(p)]
    for _ in range(3000):
        head = rng.choice(heads) if rng.random() < 0.9 else rng.randbytes(8)
        data = head + rng.randbytes(rng.randrange(0, 120))
        accounts = [key(str(i)) for i in range(rng.randrange(0, 16))]
        program = rng.choice(programs)
        parsed = jupiter.decode(program, data, accounts)
        assert parsed.name
        assert jupiter.action_of(program, parsed.name) in jupiter.ACTIONS


def test_the_jupiter_programs_are_registered_with_the_decoders() -> None:
    assert set(jupiter.PROGRAMS) <= set(DECODERS)


@pytest.mark.parametrize(
    ("program", "name", "action"),
    [(AGGREGATOR, "route_v2", "swap"), (AGGREGATOR, "create_token_ledger", "helper"),
     (AGGREGATOR, "claim_token", "unknown"), (DCA, "open_dca_v2", "recurring_open"),
     (DCA, "close_dca", "recurring_close"), (DCA, "fulfill_flash_fill", "unknown"),
     (DCA, "route_v2", "unknown"), (LIMIT_ORDER, "initialize_order", "trigger_open"),
     (LIMIT_ORDER, "cancel_order", "trigger_cancel"), (LIMIT_ORDER, "flash_fill_order", "unknown"),
     (VALUE_AVERAGE, "unknown", "unknown"), ("11111111111111111111111111111111", "route", "unknown")],
)  # fmt: skip
def test_action_of(program: str, name: str, action: str) -> None:
    assert jupiter.action_of(program, name) == action
