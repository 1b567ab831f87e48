"""The balances in the emulator's ``getTransaction`` of a landed swap, in a node's
shape (Solana RPC docs, "JSON structures"; a real answer of a Jupiter swap is in
tests/fixtures/rpc/): ``meta.fee``, lamports per account before and after
(``pre``/``postBalances``, in the order of the message's ``accountKeys`` then
``meta.loadedAddresses.writable`` then ``.readonly``) and token balances per token
account (``pre``/``postTokenBalances``: ``accountIndex``, ``mint``, ``owner``,
``programId``, ``uiTokenAmount``).

The amounts are what the swap moved in the ledger: the owner's balance of each of
its two mints before and after (`Execution.before` / ``after``; SOL is native, the
owner's lamports). As on the chain, the fee payer's lamports also pay the fee, and
the owner's lamports the rent of a token account the swap opens (an output mint it
held no account of: absent from the "pre" token balances): the ledger books
neither, and never has (its portfolio figures are the swap's alone). The pool's
vaults on the other side move the other way. The token accounts are the owner's
associated ones (the addresses `getMultipleAccounts` shows), given as loaded from a
lookup table, as a v0 swap's usually are.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.emulator.common import token
from jupcron.emulator.ledger import SOL_MINT, Execution

TOKEN_ACCOUNT_RENT = 2_039_280
RESERVE = 10**15  # each pool vault's balance before the swap
OTHER_LAMPORTS = 1_000_000_000  # an account the swap moves no lamports of
POOL = str(Pubkey.find_program_address([b"emulator-pool"], Pubkey.default())[0])


def _ata(owner: str, mint: str) -> str:
    program = Pubkey.from_string(token(mint).program)
    return str(get_associated_token_address(Pubkey.from_string(owner),
                                            Pubkey.from_string(mint), program))  # fmt: skip


def _ui(mint: str, amount: int, owner: str, index: int) -> dict[str, Any]:
    decimals = token(mint).decimals
    ui = Decimal(amount).scaleb(-decimals)
    text = format(ui.normalize(), "f") if amount else "0"
    return {
        "accountIndex": index,
        "mint": mint,
        "owner": owner,
        "programId": token(mint).program,
        "uiTokenAmount": {
            "amount": str(amount),
            "decimals": decimals,
            "uiAmount": float(ui) if amount else None,  # a node's: null when zero
            "uiAmountString": text,
        },
    }


def meta(e: Execution) -> dict[str, Any]:
    """A landed swap's balance fields, with its loaded addresses (empty for any other
    transaction: the emulator keeps balances of swaps only)."""
    if not e.before or not e.after:
        return {"loadedAddresses": {"writable": [], "readonly": []}}
    keys = list(e.all_accounts)
    lamports: dict[str, list[int]] = {k: [OTHER_LAMPORTS, OTHER_LAMPORTS] for k in keys}
    lamports[keys[0]][1] -= e.fee  # the fee payer's (the owner's, or a market maker's)
    pre_tokens: list[tuple[str, str, str, int]] = []  # (account, mint, owner, amount)
    post_tokens: list[tuple[str, str, str, int]] = []
    loaded: list[str] = []
    for mint, before in e.before.items():
        after = e.after[mint]
        moved = after - before
        if mint == SOL_MINT:  # native: the owner's lamports
            owner_lamports = lamports.setdefault(e.owner, [OTHER_LAMPORTS, OTHER_LAMPORTS])
            owner_lamports[0] += before - OTHER_LAMPORTS
            owner_lamports[1] += after - OTHER_LAMPORTS
        else:
            account = _ata(e.owner, mint)
            opened = mint in e.opened
            lamports[account] = [0 if opened else TOKEN_ACCOUNT_RENT, TOKEN_ACCOUNT_RENT]
            if opened:  # its rent is the owner's
                lamports.setdefault(e.owner, [OTHER_LAMPORTS, OTHER_LAMPORTS])[1] -= (
                    TOKEN_ACCOUNT_RENT
                )
            else:
                pre_tokens.append((account, mint, e.owner, before))
            post_tokens.append((account, mint, e.owner, after))
            loaded.append(account)
        vault = _ata(POOL, mint)  # the pool's side: what the owner gave, it got
        lamports[vault] = [TOKEN_ACCOUNT_RENT, TOKEN_ACCOUNT_RENT]
        pre_tokens.append((vault, mint, POOL, RESERVE))
        post_tokens.append((vault, mint, POOL, RESERVE - moved))
        loaded.append(vault)
    writable = [a for a in dict.fromkeys([*loaded, *lamports]) if a not in keys]
    order = [*keys, *writable]
    index = {k: n for n, k in enumerate(order)}
    return {
        "fee": e.fee,
        "preBalances": [lamports[k][0] for k in order],
        "postBalances": [lamports[k][1] for k in order],
        "preTokenBalances": [_ui(m, amt, o, index[a]) for a, m, o, amt in pre_tokens],
        "postTokenBalances": [_ui(m, amt, o, index[a]) for a, m, o, amt in post_tokens],
        "loadedAddresses": {"writable": writable, "readonly": []},
    }
