"""Which accounts are ours: only those that are ours and can exist.

An account counts as ours if it is the wallet, an account the transaction
itself creates for the wallet (an associated token account, or a token account
initialised with the wallet as owner), or the wallet's associated token account
for a (mint, token program) pair that can exist. A mint lives under exactly one
token program: wrapped SOL, USDC and USDT under SPL Token (never Token-2022);
other mints under the program `rpc.url` reports, when it is set.

Two sets, because the risks differ:
- `tokens`: where our tokens may go. For a mint whose program is unknown, the
  wallet's token account under either program: a token transfer into an account
  that does not exist fails, so the wrong guess cannot lose anything.
- `lamports`: where our lamports may go. Only accounts that exist or are created
  here: lamports sent to an address that can never be created are lost for good
  (ATA(wallet, wSOL, Token-2022) is such an address).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from daemon.txguard.decode import TxSummary
from daemon.txguard.instructions import ASSOCIATED_TOKEN, TOKEN, TOKEN_PROGRAMS, WRAPPED_SOL

# Mints whose token program is a fact of the chain, so no RPC is needed for them.
KNOWN_MINT_PROGRAMS: dict[str, str] = {
    WRAPPED_SOL: TOKEN,
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v": TOKEN,  # USDC
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB": TOKEN,  # USDT
}


@lru_cache(maxsize=16384)
def ata(owner: str, mint: str, program: str) -> str | None:
    """The associated token account of (owner, mint, program); None when a key is
    not a public key. A pure derivation, cached: the same keys recur run after run."""
    try:
        keys = [Pubkey.from_string(k) for k in (owner, mint, program)]
    except ValueError:
        return None
    return str(get_associated_token_address(keys[0], keys[1], keys[2]))


@dataclass(frozen=True)
class Ours:
    wallet: str
    tokens: frozenset[str]  # may receive our tokens
    lamports: frozenset[str]  # may receive our lamports
    receiver: frozenset[str]  # the plan's named receiver and its token accounts
    created: frozenset[str]  # created for the wallet by this transaction

    def has(self, address: str) -> bool:
        """Ours in any sense: a rule that protects our value applies to it."""
        return address == self.wallet or address in self.tokens or address in self.lamports

    def takes_lamports(self, address: str) -> bool:
        return address == self.wallet or address in self.lamports


def _created_for(wallet: str, summary: TxSummary) -> tuple[set[str], dict[str, set[str]]]:
    """Accounts this transaction creates for the wallet, and the (mint, program)
    pairs it thereby proves: the ATA program refuses a pair that cannot exist, and
    then the whole transaction fails, so nothing is lost by believing it."""
    created: set[str] = set()
    pairs: dict[str, set[str]] = {}
    for ix in summary.instructions:
        role = ix.role
        if ix.program == ASSOCIATED_TOKEN and ix.name in ("create", "create_idempotent"):
            mint, program = role.get("mint", ""), role.get("token_program", "")
            if role.get("wallet") != wallet or program not in TOKEN_PROGRAMS:
                continue
            if ata(wallet, mint, program) == role.get("account"):
                created.add(role["account"])
                pairs.setdefault(mint, set()).add(program)
        elif (
            ix.program in TOKEN_PROGRAMS
            and ix.name.startswith("initialize_account")
            and dict(ix.fields).get("owner") == wallet
            and "account" in role
        ):
            created.add(role["account"])
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
    created, proven = _created_for(me, summary)
    tokens: set[str] = set(created)
    lamports: set[str] = set(created)
    for mint in {*summary.static_keys, WRAPPED_SOL, *mints}:
        if mint.startswith(("lookup:", "invalid-index:")):
            continue
        exists = set(proven.get(mint, ()))
        if mint in known:
            exists.add(known[mint])
        for program in exists:
            if (address := ata(me, mint, program)) is not None:
                tokens.add(address)
                lamports.add(address)
        if not exists:  # unknown program: either could hold our tokens, neither our lamports
            tokens.update(a for p in TOKEN_PROGRAMS if (a := ata(me, mint, p)) is not None)
    theirs: set[str] = set()
    if receiver:
        theirs.add(receiver)
        for mint in {*mints, *summary.static_keys}:
            if mint.startswith(("lookup:", "invalid-index:")):
                continue
            programs = [known[mint]] if mint in known else list(TOKEN_PROGRAMS)
            theirs.update(a for p in programs if (a := ata(receiver, mint, p)) is not None)
    return Ours(me, frozenset(tokens), frozenset(lamports), frozenset(theirs), frozenset(created))
