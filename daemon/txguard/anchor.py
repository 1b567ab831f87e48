"""Reading Anchor instructions from a published interface (an IDL).

An Anchor instruction's data is an 8-byte discriminator, the first 8 bytes of
sha256("global:<snake_case_name>"), then the arguments in Borsh. Its accounts
are positional, in the order the interface lists them; an *optional* account
that is absent is passed as the program's own id. An `InstructionSpec` says,
per position, which role that account plays for txguard (see ROLES), and how
to read the arguments into fields (amounts as decimal strings of base units).

`decode_with` never raises: short or out-of-range data is `malformed`; a
layout the interface does not describe (an unknown discriminator, a route step
of an unlisted kind) comes back with a `cannot_decode` field saying why.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from jupcron.txguard.borsh import BorshError, CannotDecodeError, Reader

# The role vocabulary the rules use (a spec may add descriptive ones).
ROLES = (
    "owner",  # the wallet whose tokens or authority are used (user / maker / transfer authority)
    "payer",  # who pays rent for new accounts
    "source",  # token account the funds leave
    "destination",  # token account that receives the output or the proceeds
    "refund_to",  # where a cancel or close returns funds
    "order",  # the DCA or limit-order account
    "input_mint",
    "output_mint",
    "fee_account",  # a platform or referral fee account
    "vault",  # a program-owned account that holds the deposit (DCA in_ata, order reserve)
)

Fields = dict[str, str]
Roles = dict[str, str]
ArgsReader = Callable[[Reader, Fields], None]
Finisher = Callable[[Fields, Roles], None]


@dataclass(frozen=True)
class Decoded:
    """One instruction of a Jupiter program, as far as its interface says."""

    name: str
    fields: Fields = field(default_factory=dict)
    roles: Roles = field(default_factory=dict)
    malformed: bool = False


@dataclass(frozen=True)
class InstructionSpec:
    name: str
    accounts: tuple[
        str, ...
    ]  # role per position; "" none; a trailing "?" marks an optional account
    args: ArgsReader | None = None
    finish: Finisher | None = None


def accounts(text: str) -> tuple[str, ...]:
    """Roles by position from words; "-" for an account without a role."""
    return tuple("" if word == "-" else word for word in text.split())


def discriminator(name: str) -> bytes:
    """Anchor's instruction discriminator for `name` (snake_case)."""
    return hashlib.sha256(f"global:{name}".encode()).digest()[:8]


def by_discriminator(specs: Sequence[InstructionSpec]) -> dict[bytes, InstructionSpec]:
    return {discriminator(spec.name): spec for spec in specs}


def decode_with(
    program: str,
    specs: Mapping[bytes, InstructionSpec],
    data: bytes,
    accounts: Sequence[str],
    *,
    unknown: str,
) -> Decoded:
    """Decode one instruction of `program` by its discriminator in `specs`;
    `unknown` explains an instruction whose discriminator is not listed."""
    if len(data) < 8:
        problem = f"{len(data)} bytes of data, shorter than an 8-byte discriminator"
        return Decoded("malformed", {"problem": problem}, malformed=True)
    spec = specs.get(data[:8])
    if spec is None:
        return Decoded("unknown", {"cannot_decode": unknown, "tag": data[:8].hex()})
    roles, needed = _roles(program, spec.accounts, accounts)
    fields: Fields = {}
    malformed = False
    if needed > len(accounts):
        fields["problem"] = f"needs {needed} accounts, has {len(accounts)}"
        malformed = True
    reader = Reader(data, 8)
    try:
        if spec.args is not None:
            spec.args(reader, fields)
        if reader.left:
            fields["trailing_bytes"] = str(reader.left)  # the program ignores them
    except CannotDecodeError as exc:
        fields["cannot_decode"] = str(exc)
    except BorshError as exc:
        fields["problem"] = str(exc)
        malformed = True
    if spec.finish is not None:
        spec.finish(fields, roles)
    return Decoded(spec.name, fields, roles, malformed)


def _roles(program: str, names: Sequence[str], accounts: Sequence[str]) -> tuple[Roles, int]:
    """The roles of the accounts present, and how many accounts the spec needs."""
    roles: Roles = {}
    for name, account in zip(names, accounts, strict=False):
        role, optional = name.rstrip("?"), name.endswith("?")
        if not role or (optional and account == program):
            continue
        roles.setdefault(role, account)
    return roles, len(names)


def arg(name: str, read: Callable[[Reader], int] = Reader.u64) -> ArgsReader:
    """The reader of an instruction whose one argument (a u64 unless `read` says
    otherwise) becomes the field `name`."""

    def read_arg(r: Reader, f: Fields) -> None:
        f[name] = str(read(r))

    return read_arg


def amount(value: int) -> str:
    return str(value)


def optional(value: int | None) -> str:
    return "none" if value is None else str(value)
