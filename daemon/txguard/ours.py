"""Which accounts are ours: only those that are ours and can exist.

An account counts as ours if it is the wallet, an account the transaction
itself creates for the wallet, or the wallet's associated token account for a
(mint, token program) pair that can exist. Created for the wallet means:
- an associated token account made by the ATA program for the wallet (the
  program checks the derivation on chain, so it is the wallet's whatever mint a
  lookup table names: a wrong one fails the whole transaction);
- Jupiter's aggregator's temporary token account (`create_token_account`): a
  token account owned by the wallet at the aggregator's address derived from
  ("token_account", wallet, mint). Jupiter uses it for SOL in or out and closes
  it back to the wallet at the end. It counts as ours only where the derivation
  proves it, for a mint we can name;
- a token account initialised in the transaction with the wallet as owner.

A mint lives under exactly one token program: wrapped SOL, USDC, USDT and the
other mints of `KNOWN_MINT_PROGRAMS` under the program named there; other mints
under the program `rpc.url` reports, when it is set.

Two sets, because the risks differ:
- `tokens`: where our tokens may go. For a mint whose program is unknown, the
  wallet's token account under either program: a token transfer into an account
  that does not exist fails, so the wrong guess cannot lose anything.
- `lamports`: where our lamports may go and stay ours: the wallet and its
  wrapped-SOL accounts (the native mint has no freeze authority, and closing the
  account returns every lamport). Lamports parked in a token account of any
  other mint can be locked by that mint's freeze authority, so such an account
  takes only the exact rent of its creation (the rules check that).

`mint_of` names the mint of each of our token accounts where the derivation
proves it: the rules hold a swap's source to the plan's input mint with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.instructions import (
    ASSOCIATED_TOKEN,
    TOKEN,
    TOKEN_2022,
    TOKEN_PROGRAMS,
    WRAPPED_SOL,
)

AGGREGATOR = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"
_AGGREGATOR = Pubkey.from_string(AGGREGATOR)

# Mints whose token program is a fact of the chain, so no RPC is needed for them.
KNOWN_MINT_PROGRAMS: dict[str, str] = {
    WRAPPED_SOL: TOKEN,
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v": TOKEN,  # USDC
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB": TOKEN,  # USDT
    "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN": TOKEN,  # JUP
    "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263": TOKEN,  # BONK
    "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So": TOKEN,  # mSOL
    "J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn": TOKEN,  # JitoSOL
    "jupSoLaHXQiZZTSfEWMTRRgpnyFm8f6sZdosWBjx93v": TOKEN,  # jupSOL
    "27G8MtK7VtTcCHkpASjSDdkWWYfoqT6ggEuKidVJidD4": TOKEN,  # JLP
    "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo": TOKEN_2022,  # PYUSD
}
TOKEN_ACCOUNT_RENT = 2_039_280  # rent-exempt minimum of a 165-byte token account
TOKEN_ACCOUNT_SPACE = 165  # bytes of an SPL Token account: never more, never less
# A Token-2022 account: the 165 bytes, the account-type byte, then the extensions it
# can be created with, each behind a 4-byte type-and-length header: the ones a mint
# requires of its accounts at initialisation (TransferFeeAmount 8 bytes,
# NonTransferableAccount 0, TransferHookAccount 1, ConfidentialTransferFeeAmount 64,
# PausableAccount 0) and ImmutableOwner (0, every associated token account's).
TOKEN_2022_ACCOUNT_MAX_SPACE = TOKEN_ACCOUNT_SPACE + 1 + 4 * 6 + 8 + 1 + 64  # 263


def rent_exempt(space: int) -> int:
    """The rent-exempt minimum of an account of `space` bytes: (128 + space) bytes
    at 3,480 lamports per byte-year, for two years (the runtime's default rent)."""
    return (128 + space) * 3_480 * 2


def token_account_space(program: str) -> int | None:
    """The most bytes a token account of `program` is created with (None: `program`
    is not a token program). Rent is held to it: the rent of a larger account is
    lamports parked where a mint's freeze authority can lock them."""
    if program == TOKEN:
        return TOKEN_ACCOUNT_SPACE
    return TOKEN_2022_ACCOUNT_MAX_SPACE if program == TOKEN_2022 else None


@lru_cache(maxsize=16384)
def ata(owner: str, mint: str, program: str) -> str | None:
    """The associated token account of (owner, mint, program); None when a key is
    not a public key. A pure derivation, cached: the same keys recur run after run."""
    try:
        keys = [Pubkey.from_string(k) for k in (owner, mint, program)]
    except ValueError:
        return None
    return str(get_associated_token_address(keys[0], keys[1], keys[2]))


@lru_cache(maxsize=4096)
def aggregator_token_account(owner: str, mint: str) -> str | None:
    """The aggregator's temporary token account of (owner, mint): its address
    derived from ("token_account", owner, mint) under Jupiter's aggregator (as
    every genuine answer in tests/fixtures/real shows)."""
    try:
        keys = [bytes(Pubkey.from_string(owner)), bytes(Pubkey.from_string(mint))]
    except ValueError:
        return None
    return str(Pubkey.find_program_address([b"token_account", *keys], _AGGREGATOR)[0])


@dataclass(frozen=True)
class Ours:
    wallet: str
    tokens: frozenset[str]  # may receive our tokens
    lamports: frozenset[str]  # may receive our lamports (the wallet, our wrapped-SOL accounts)
    receiver: frozenset[str]  # the plan's named receiver and its token accounts
    created: frozenset[str]  # created for the wallet by this transaction
    mint_of: Mapping[str, str] = field(default_factory=dict, compare=False)

    def has(self, address: str) -> bool:
        """Ours in any sense: a rule that protects our value applies to it."""
        return address == self.wallet or address in self.tokens or address in self.lamports

    def takes_lamports(self, address: str) -> bool:
        return address == self.wallet or address in self.lamports

    def holds(self, address: str, mint: str) -> bool:
        """`address` is our token account of `mint`, as far as the transaction proves."""
        return self.mint_of.get(address) == mint


def _aggregator_account(
    ix: Instruction, wallet: str, mints: Iterable[str]
) -> tuple[str, str] | None:
    """(account, mint) of an aggregator `create_token_account` for our wallet whose
    address the derivation proves for one of `mints`."""
    role = ix.role
    account = role.get("account", "")
    if role.get("owner") != wallet or role.get("token_program") not in TOKEN_PROGRAMS:
        return None
    named = role.get("mint", "")
    candidates = [named] if not named.startswith(("lookup:", "invalid-index:")) else list(mints)
    for mint in candidates:
        if aggregator_token_account(wallet, mint) == account:
            return account, mint
    return None


def _created_for(
    wallet: str, summary: TxSummary, mints: Iterable[str]
) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Accounts this transaction creates for the wallet (account -> its mint, or ""
    when a lookup table names it), and the (mint, program) pairs it thereby proves."""
    created: dict[str, str] = {}
    pairs: dict[str, set[str]] = {}
    candidates = list(dict.fromkeys(mints))
    for ix in summary.instructions:
        role = ix.role
        if ix.program == ASSOCIATED_TOKEN and ix.name in ("create", "create_idempotent"):
            mint, program = role.get("mint", ""), role.get("token_program", "")
            account = role.get("account")
            if role.get("wallet") != wallet or program not in TOKEN_PROGRAMS or not account:
                continue
            if mint.startswith(("lookup:", "invalid-index:")):
                # the ATA program checks the derivation on chain: ours, of the mint that
                # is ATA(wallet, mint, program) among the ones we can name
                named = next((m for m in candidates if ata(wallet, m, program) == account), "")
                created[account] = named
                if named:
                    pairs.setdefault(named, set()).add(program)
            elif ata(wallet, mint, program) == account:
                created[account] = mint
                pairs.setdefault(mint, set()).add(program)
        elif ix.program == AGGREGATOR and ix.name == "create_token_account":
            found = _aggregator_account(ix, wallet, candidates)
            if found is not None:
                created[found[0]] = found[1]
        elif (
            ix.program in TOKEN_PROGRAMS
            and ix.name.startswith("initialize_account")
            and wallet in (dict(ix.fields).get("owner"), role.get("owner"))
            and "account" in role
        ):
            mint = role.get("mint", "")
            created[role["account"]] = "" if mint.startswith("lookup:") else mint
    return created, pairs


def find(
    wallet: Pubkey,
    summary: TxSummary,
    mints: Iterable[str] = (),
    mint_programs: Mapping[str, str] | None = None,
    receiver: str | None = None,
) -> Ours:
    """Our accounts for this transaction. `mints`: mints known from the plan or order;
    `mint_programs`: mint -> owner program, as the chain reports it (rpc.url)."""
    me = str(wallet)
    known = {**KNOWN_MINT_PROGRAMS, **(mint_programs or {})}
    plain = [m for m in summary.static_keys if not m.startswith(("lookup:", "invalid-index:"))]
    candidates = list(dict.fromkeys([*mints, WRAPPED_SOL, *KNOWN_MINT_PROGRAMS, *plain]))
    created, proven = _created_for(me, summary, candidates)
    mint_of: dict[str, str] = {a: m for a, m in created.items() if m}
    tokens: set[str] = set(created)
    lamports: set[str] = {a for a, m in created.items() if m == WRAPPED_SOL}
    for mint in candidates:
        exists = set(proven.get(mint, ()))
        if mint in known:
            exists.add(known[mint])
        for program in exists:
            if (address := ata(me, mint, program)) is not None:
                tokens.add(address)
                mint_of[address] = mint
                if mint == WRAPPED_SOL and program == TOKEN:
                    lamports.add(address)
        if not exists:  # unknown program: either could hold our tokens, neither our lamports
            for program in TOKEN_PROGRAMS:
                if (address := ata(me, mint, program)) is not None:
                    tokens.add(address)
                    mint_of[address] = mint
    theirs: set[str] = set()
    if receiver:
        theirs.add(receiver)
        for mint in candidates:
            programs = [known[mint]] if mint in known else list(TOKEN_PROGRAMS)
            theirs.update(a for p in programs if (a := ata(receiver, mint, p)) is not None)
    return Ours(
        me, frozenset(tokens), frozenset(lamports), frozenset(theirs), frozenset(created),
        mint_of,
    )  # fmt: skip


__all__ = [
    "AGGREGATOR",
    "KNOWN_MINT_PROGRAMS",
    "TOKEN_2022",
    "Ours",
    "aggregator_token_account",
    "ata",
    "find",
    "rent_exempt",
    "token_account_space",
]
