"""Simulate before signing: what the transaction would do to our balances.

Static rules read what each instruction says; a program's inner calls (CPIs)
are invisible to them. When `rpc.url` is set, the node runs the transaction
(`simulateTransaction`, no signature needed) and reports the state it would
leave in our accounts; the guard compares that with the state now.

Our accounts here are found from the chain, not guessed: every writable
account the message can touch (static keys and those loaded from its lookup
tables, resolved through the node) whose current state is the wallet itself or
a token account (either program) the wallet owns, plus the wallet's associated
accounts for the plan's mints (which the transaction may create).

Lamports count as ours only where we can take them back. A token account of
ours can be closed to the wallet, unless a stranger can stop it: the mint's
freeze authority (a frozen account cannot be closed), or on Token-2022 the
mint's close authority or permanent delegate. In such an account only its
rent-exempt reserve counts as ours (every new token account parks that much,
USDC's included, whose mint has a freeze authority), and no more than a token
account's (`ours.TOKEN_2022_ACCOUNT_MAX_SPACE` bytes): lamports beyond it, the
"rent" of an oversized account included, count as lost. A wrapped-SOL account
is exempt: the native mint has no freeze authority. The mints are read through
the node.

The wallet may lose at most: the fees (as `decode.compute_budget` computes
them, when the wallet pays them), the ordered input (in lamports when the input is wrapped SOL),
rent for accounts that stay ours, and for a recurring order the rent of its
escrow accounts (`guard.order_rent_allowance_lamports`). Any other fall, in any
token or in SOL, refuses the run, and the diff is in the run's events.

What simulation cannot catch: a transaction whose effect depends on the slot it
lands in (a price, an oracle) may differ from its simulation; an account the
node reports wrongly (a lying node, so use one you trust); a loss that lands
outside the wallet's accounts (a delegate's later spend is caught statically).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from solders.message import Message, MessageV0
from solders.pubkey import Pubkey

from jupcron.chain.rpc import AccountState, Simulation
from jupcron.txguard.decode import TxSummary
from jupcron.txguard.expect import Expectation
from jupcron.txguard.instructions import ASSOCIATED_TOKEN, TOKEN_PROGRAMS, WRAPPED_SOL
from jupcron.txguard.ours import TOKEN_2022_ACCOUNT_MAX_SPACE, Ours, ata, token_account_space

LAMPORTS_PER_SIGNATURE = 5_000
MINT_SIZE = 82  # bytes of an SPL mint (Token-2022 extensions follow at 165 + 1)
MINT_FREEZE_AUTHORITY = 46  # COption<Pubkey>: a u32 tag, then the key
EXTENSION_MINT_CLOSE_AUTHORITY = 3  # Token-2022 ExtensionType values
EXTENSION_PERMANENT_DELEGATE = 12
RENT_LAMPORTS_PER_BYTE_YEAR, RENT_EXEMPT_YEARS, ACCOUNT_STORAGE_OVERHEAD = 3_480, 2, 128
TOKEN_ACCOUNT_MIN = 165  # bytes of an SPL token account (Token-2022 may add extensions)
LOOKUP_TABLE_HEADER = 56  # bytes before a lookup table's addresses
SOL = "SOL"


class Simulator(Protocol):
    """The part of `jupcron.chain.rpc.SolanaRpc` the balance check uses."""

    def accounts(self, addresses: Sequence[str]) -> list[AccountState | None]: ...
    def simulate(self, tx_b64: str, addresses: Sequence[str]) -> Simulation: ...


@dataclass(frozen=True)
class Holding:
    """What one of our accounts holds: lamports, or a token amount of a mint."""

    address: str
    asset: str  # "SOL" or a mint
    amount: int


@dataclass(frozen=True)
class Change:
    address: str
    asset: str
    before: int
    after: int

    def __str__(self) -> str:
        delta = self.after - self.before
        return f"{self.address} {self.asset}: {self.before} -> {self.after} ({delta:+d})"


@dataclass(frozen=True)
class BalanceCheck:
    reasons: tuple[str, ...]
    changes: tuple[Change, ...]

    @property
    def diff(self) -> list[str]:
        return [str(c) for c in self.changes]


def rent_exempt(size: int) -> int:
    """The rent-exempt minimum of an account of `size` bytes, at the current rent."""
    return (ACCOUNT_STORAGE_OVERHEAD + size) * RENT_LAMPORTS_PER_BYTE_YEAR * RENT_EXEMPT_YEARS


def _holdings(
    address: str, state: AccountState | None, wallet: str, locked: frozenset[str] = frozenset()
) -> list[Holding]:
    """What the account holds for us; `locked`: mints whose accounts a stranger can
    freeze (or close the mint, or spend as permanent delegate)."""
    if state is None:
        return []
    lamports = state.lamports
    if _token_mint(state) in locked:
        # a token account's rent at most: whatever an oversized account parks beyond it
        # (its own larger "rent" included) is as lockable as any other lamport there
        size = min(len(state.data), TOKEN_2022_ACCOUNT_MAX_SPACE)
        lamports = min(lamports, rent_exempt(size))
    held = [Holding(address, SOL, lamports)]
    if state.owner in TOKEN_PROGRAMS and len(state.data) >= TOKEN_ACCOUNT_MIN:
        mint = _key(state.data, 0)
        if _key(state.data, 32) == wallet and mint != WRAPPED_SOL:
            held.append(Holding(address, mint, struct.unpack_from("<Q", state.data, 64)[0]))
    return held


def _key(data: bytes, at: int) -> str:
    return str(Pubkey.from_bytes(data[at : at + 32]))


def _token_mint(state: AccountState | None) -> str | None:
    if state is None or state.owner not in TOKEN_PROGRAMS or len(state.data) < TOKEN_ACCOUNT_MIN:
        return None
    return _key(state.data, 0)


def _option_key(data: bytes, at: int) -> str | None:
    """A `COption<Pubkey>` (u32 tag) at `at`: the key, or None."""
    if len(data) < at + 36 or struct.unpack_from("<I", data, at)[0] != 1:
        return None
    return _key(data, at + 4)


def _extension_keys(data: bytes) -> dict[int, str]:
    """Token-2022 mint extensions holding one optional key (zero: none), by type."""
    found: dict[int, str] = {}
    at = TOKEN_ACCOUNT_MIN + 1  # after the padding and the account-type byte
    while at + 4 <= len(data):
        kind, size = struct.unpack_from("<HH", data, at)
        value = data[at + 4 : at + 4 + size]
        keyed = kind in (EXTENSION_MINT_CLOSE_AUTHORITY, EXTENSION_PERMANENT_DELEGATE)
        if keyed and size == 32 and any(value):
            found[kind] = str(Pubkey.from_bytes(value))
        at += 4 + size
    return found


def locked_mints(sim: Simulator, mints: Sequence[str], wallet: str) -> frozenset[str]:
    """The mints whose token accounts of ours a stranger can lock: a freeze authority
    (or, on Token-2022, a close authority or permanent delegate) that is not the wallet.
    A mint the node cannot show counts as locked. Wrapped SOL never is."""
    wanted = sorted({m for m in mints if m != WRAPPED_SOL})
    if not wanted:
        return frozenset()
    locked = set()
    for mint, state in zip(wanted, sim.accounts(wanted), strict=True):
        if state is None or state.owner not in TOKEN_PROGRAMS or len(state.data) < MINT_SIZE:
            locked.add(mint)
            continue
        strangers = {_option_key(state.data, MINT_FREEZE_AUTHORITY)}
        if len(state.data) > TOKEN_ACCOUNT_MIN:
            strangers |= set(_extension_keys(state.data).values())
        if strangers - {None, wallet}:
            locked.add(mint)
    return frozenset(locked)


def _is_ours(address: str, state: AccountState | None, wallet: str) -> bool:
    if address == wallet:
        return True
    return (
        state is not None
        and state.owner in TOKEN_PROGRAMS
        and len(state.data) >= TOKEN_ACCOUNT_MIN
        and _key(state.data, 32) == wallet
    )


def writable_keys(message: Message | MessageV0, sim: Simulator) -> tuple[list[str], list[str]]:
    """The message's writable accounts, lookup tables resolved through the node;
    and the problems met (an unresolvable table: then we cannot know what it touches)."""
    header = message.header
    static = [str(k) for k in message.account_keys]
    signed_writable = header.num_required_signatures - header.num_readonly_signed_accounts
    unsigned_end = len(static) - header.num_readonly_unsigned_accounts
    keys = static[:signed_writable] + static[header.num_required_signatures : unsigned_end]
    problems: list[str] = []
    lookups = list(message.address_table_lookups) if isinstance(message, MessageV0) else []
    if lookups:
        tables = sim.accounts([str(lu.account_key) for lu in lookups])
        for lookup, table in zip(lookups, tables, strict=True):
            if table is None or len(table.data) < LOOKUP_TABLE_HEADER:
                problems.append(f"lookup table {lookup.account_key} cannot be read from the RPC")
                continue
            body = table.data[LOOKUP_TABLE_HEADER:]
            count = len(body) // 32
            for index in bytes(lookup.writable_indexes):
                if index >= count:
                    problems.append(f"lookup table {lookup.account_key} has no entry {index}")
                else:
                    keys.append(_key(body, 32 * index))
    return list(dict.fromkeys(keys)), problems


def allowed_loss(
    summary: TxSummary,
    expect: Expectation | None,
    order_rent: int,
    wallet: str | None = None,
    new: frozenset[str] = frozenset(),
) -> dict[str, int]:
    """What the wallet may lose, per asset ("SOL" in lamports, else a mint). The fee
    counts only when the wallet pays it (`wallet` None: taken to be the fee payer);
    `new`: the accounts that do not exist before the transaction."""
    pays = wallet is None or summary.fee_payer == wallet
    allowed = {SOL: summary.compute_budget.total_fee_lamports if pays else 0}
    if expect is None:
        return allowed
    if expect.kind in ("recurring", "trigger-v2-dca", "trigger-v2-order"):
        allowed[SOL] += order_rent  # an escrow's or the vault's order account: back on close
    if expect.input_mint and expect.amount:
        asset = SOL if expect.input_mint == WRAPPED_SOL else expect.input_mint
        allowed[asset] = allowed.get(asset, 0) + expect.amount
    allowed[SOL] += receiver_rent(summary, expect, wallet or summary.fee_payer, new)
    return allowed


def receiver_rent(
    summary: TxSummary, expect: Expectation, wallet: str | None, new: frozenset[str]
) -> int:
    """The rent `wallet` pays for the plan's receiver's token accounts that the
    transaction creates (the rules allow it: `rent.plan_mints`, of the output mint):
    lamports that leave our accounts for good, at most a token account's rent each.
    Only for an account that does not exist yet (`new`), once: creating one that
    exists costs nothing, and its allowance would cover a loss nobody ordered."""
    if not expect.receiver or expect.receiver == wallet:
        return 0
    rents: dict[str, int] = {}
    for ix in summary.instructions:
        role = ix.role
        if ix.program != ASSOCIATED_TOKEN or ix.name not in ("create", "create_idempotent"):
            continue
        account, space = role.get("account", ""), token_account_space(role.get("token_program", ""))
        made = account in new and role.get("wallet") == expect.receiver
        if made and role.get("funder") == wallet and space:
            rents.setdefault(account, rent_exempt(space))
    return sum(rents.values())


def check(
    sim: Simulator,
    tx_b64: str,
    message: Message | MessageV0,
    summary: TxSummary,
    ours: Ours,
    expect: Expectation | None,
    order_rent: int,
) -> BalanceCheck:
    """Simulate, diff our holdings, and say what goes beyond what was ordered."""
    wallet = ours.wallet
    writable, problems = writable_keys(message, sim)
    if problems:
        return BalanceCheck(tuple(f"simulation: {p}" for p in problems), ())
    planned = [
        a
        for mint in (expect.mints if expect else ())
        for p in TOKEN_PROGRAMS
        if (a := ata(wallet, mint, p)) is not None
    ] + sorted(ours.created)
    candidates = list(dict.fromkeys([wallet, *writable, *planned]))
    before_states = sim.accounts(candidates)
    watched = [
        a for a, s in zip(candidates, before_states, strict=True) if _is_ours(a, s, wallet)
    ] + [a for a, s in zip(candidates, before_states, strict=True) if s is None and a in planned]
    before = dict(zip(candidates, before_states, strict=True))
    result = sim.simulate(tx_b64, watched)
    if result.err is not None:
        return BalanceCheck((f"simulation: the transaction would fail ({result.err})",), ())
    mints = [m for st in (*before_states, *result.accounts) if (m := _token_mint(st)) is not None]
    locked = locked_mints(sim, mints, wallet)
    changes: list[Change] = []
    net: dict[str, int] = {}
    for address, after_state in zip(watched, result.accounts, strict=True):
        old = {h.asset: h.amount for h in _holdings(address, before.get(address), wallet, locked)}
        new = {h.asset: h.amount for h in _holdings(address, after_state, wallet, locked)}
        for asset in sorted(old.keys() | new.keys()):
            was, will = old.get(asset, 0), new.get(asset, 0)
            if was != will:
                changes.append(Change(address, asset, was, will))
                net[asset] = net.get(asset, 0) + will - was
    absent = frozenset(a for a, state in before.items() if state is None)
    allowed = allowed_loss(summary, expect, order_rent, wallet, absent)
    reasons = []
    for asset, delta in sorted(net.items()):
        loss, limit = -delta, allowed.get(asset, 0)
        if loss > limit:
            what = "lamports" if asset == SOL else f"of mint {asset}"
            parked = " (counting lamports parked where a stranger can lock them as lost)"
            reasons.append(
                f"simulation: the wallet would lose {loss} {what}, more than the {limit} "
                f"this order allows{parked if asset == SOL and locked else ''}"
            )
    return BalanceCheck(tuple(reasons), tuple(changes))
