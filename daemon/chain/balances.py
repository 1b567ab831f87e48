"""What a landed swap gave and got, read from the chain: the wallet's balance changes
in a ``getTransaction`` answer, for a swap whose execute answers were all lost.

A node's ``getTransaction`` (Solana RPC docs, "JSON structures": transaction status
meta) gives, per account of the transaction, its lamports before and after
(``meta.preBalances`` / ``meta.postBalances``, in the order of the account keys: the
message's ``accountKeys``, then ``meta.loadedAddresses.writable``, then
``.readonly``), and per token account its token balance before and after
(``meta.preTokenBalances`` / ``meta.postTokenBalances``: ``accountIndex`` into those
keys, ``mint``, ``owner``, ``uiTokenAmount.amount`` in base units). A token account
created in the transaction has no "pre" entry, one closed in it no "post" entry;
either list is omitted by a node that did not record token balances then.

The wallet's change in a token: its one token account of that mint (owner = the
wallet), post minus pre. In SOL: the wallet's lamports, plus the lamports of every
token account it owns (wrapped SOL is the lamports of a wSOL account; a token
account's rent is the wallet's, whoever holds it: a wSOL account opened and closed
in the swap, an output account created by it, nets out), plus the network fee when
the wallet paid it (the fee is a fee, as in an execute answer's amounts: not what
the swap gave). A tip or a platform fee paid in SOL is part of what the wallet gave.

Never a guess: an answer without the balance lists, a wallet or a mint the
transaction does not show, more than one account of the wallet for a token, or
changes a swap cannot make (nothing given, nothing got) measure nothing; the reason
says which (`Measured.reason`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jupcron.errors import ApiErrorInfo, ApiGarbageError

SOL_MINT = "So11111111111111111111111111111111111111112"  # native SOL and wrapped SOL


@dataclass(frozen=True)
class TokenBalance:
    """One entry of ``pre``/``postTokenBalances``: a token account's balance."""

    account_index: int
    mint: str
    owner: str | None  # None: a node too old to say
    amount: int  # base units


@dataclass(frozen=True)
class TransactionBalances:
    """The balances a ``getTransaction`` answer reports (parsed at the RPC adapter)."""

    account_keys: tuple[str, ...]  # static keys, then loaded writable, then readonly
    fee: int
    pre_lamports: tuple[int, ...]
    post_lamports: tuple[int, ...]
    pre_tokens: tuple[TokenBalance, ...]
    post_tokens: tuple[TokenBalance, ...]


@dataclass(frozen=True)
class Measured:
    """The wallet's swap, as the chain shows it: what it gave (`in_amount`, of the
    input mint) and got (`out_amount`); both None with the `reason` when the answer
    cannot say it unambiguously."""

    in_amount: int | None = None
    out_amount: int | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.in_amount is not None and self.out_amount is not None


def _unreadable(reason: str) -> ApiGarbageError:
    """A ``getTransaction`` answer whose balances cannot be read: the RPC adapter
    keeps the reason on the transaction (`jupcron.chain.rpc.LandedTransaction`), so a
    search that reads it for its signatures is not stopped by it."""
    return ApiGarbageError(reason, ApiErrorInfo("rpc_transaction"))


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _unreadable(f"{what} is not an integer")
    if isinstance(value, str) and not value.isdigit():
        raise _unreadable(f"{what} is not an integer")
    number = int(value)
    if number < 0:
        raise _unreadable(f"{what} is negative")
    return number


def _ints(raw: Any, what: str) -> tuple[int, ...]:
    if not isinstance(raw, list):
        raise _unreadable(f"meta.{what} is missing")
    return tuple(_int(v, what) for v in raw)


def _keys(result: dict[str, Any], meta: dict[str, Any]) -> tuple[str, ...]:
    try:
        static = result["transaction"]["message"]["accountKeys"]
    except (KeyError, TypeError) as exc:
        raise _unreadable("transaction.message.accountKeys is missing") from exc
    loaded = meta.get("loadedAddresses") or {}
    if not isinstance(static, list) or not isinstance(loaded, dict):
        raise _unreadable("the account keys are not lists")
    keys = [*static, *(loaded.get("writable") or []), *(loaded.get("readonly") or [])]
    if not all(isinstance(k, str) for k in keys):  # encoding json: base-58 strings
        raise _unreadable("an account key is not a string")
    return tuple(keys)


def _tokens(raw: Any, what: str, count: int) -> tuple[TokenBalance, ...]:
    if not isinstance(raw, list):  # omitted: the node did not record token balances
        raise _unreadable(f"meta.{what} is missing")
    found = []
    for item in raw:
        try:
            index = _int(item["accountIndex"], f"{what} accountIndex")
            mint, owner = item["mint"], item.get("owner")
            amount = _int(item["uiTokenAmount"]["amount"], f"{what} amount")
        except (KeyError, TypeError) as exc:
            raise _unreadable(f"an entry of meta.{what} is incomplete") from exc
        if index >= count or not isinstance(mint, str):
            raise _unreadable(f"an entry of meta.{what} names no account of the transaction")
        found.append(TokenBalance(index, mint, owner if isinstance(owner, str) else None, amount))
    return tuple(found)


def parse_balances(result: Any) -> TransactionBalances:
    """The balances of a ``getTransaction`` result (encoding ``json``); `ApiGarbageError`
    when it lacks them or they do not add up (lists of another length than the keys)."""
    if not isinstance(result, dict) or not isinstance(result.get("meta"), dict):
        raise _unreadable("the answer has no meta")
    meta = result["meta"]
    keys = _keys(result, meta)
    pre, post = (
        _ints(meta.get("preBalances"), "preBalances"),
        _ints(meta.get("postBalances"), "postBalances"),
    )
    if len(pre) != len(keys) or len(post) != len(keys):
        raise _unreadable("meta.pre/postBalances do not match the account keys")
    return TransactionBalances(
        account_keys=keys,
        fee=_int(meta.get("fee"), "meta.fee"),
        pre_lamports=pre,
        post_lamports=post,
        pre_tokens=_tokens(meta.get("preTokenBalances"), "preTokenBalances", len(keys)),
        post_tokens=_tokens(meta.get("postTokenBalances"), "postTokenBalances", len(keys)),
    )


def _token_change(b: TransactionBalances, owner: str, mint: str) -> int | str:
    """The wallet's change in `mint` (a token, not SOL), or why it cannot be told."""
    accounts = {t.account_index for t in (*b.pre_tokens, *b.post_tokens)
                if t.owner == owner and t.mint == mint}  # fmt: skip
    if not accounts:
        return f"no token account of the wallet for {mint} in the transaction"
    if len(accounts) > 1:
        return f"the wallet has {len(accounts)} token accounts for {mint} in the transaction"
    (index,) = accounts
    pre = sum(t.amount for t in b.pre_tokens if t.account_index == index)
    post = sum(t.amount for t in b.post_tokens if t.account_index == index)
    return post - pre


def _sol_change(b: TransactionBalances, owner: str) -> int | str:
    """The wallet's change in SOL: native, wrapped, and its token accounts' rent."""
    if owner not in b.account_keys:
        return "the wallet is not among the transaction's accounts"
    wsol = {t.account_index for t in (*b.pre_tokens, *b.post_tokens)
            if t.owner == owner and t.mint == SOL_MINT}  # fmt: skip
    if len(wsol) > 1:
        return f"the wallet has {len(wsol)} wrapped SOL accounts in the transaction"
    held = {b.account_keys.index(owner)}
    held |= {t.account_index for t in (*b.pre_tokens, *b.post_tokens) if t.owner == owner}
    change = sum(b.post_lamports[i] - b.pre_lamports[i] for i in held)
    return change + (b.fee if b.account_keys[0] == owner else 0)


def _change(b: TransactionBalances, owner: str, mint: str) -> int | str:
    return _sol_change(b, owner) if mint == SOL_MINT else _token_change(b, owner, mint)


def wallet_swap(
    b: TransactionBalances | None, owner: str, input_mint: str, output_mint: str
) -> Measured:
    """What `owner` gave of `input_mint` and got of `output_mint` in the transaction
    whose balances are `b` (None: the answer carried none readable)."""
    if b is None:
        return Measured(reason="the node's answer carries no balances")
    if input_mint == output_mint:
        return Measured(reason="the input and output mints are the same")
    gave = _change(b, owner, input_mint)
    if isinstance(gave, str):
        return Measured(reason=gave)
    got = _change(b, owner, output_mint)
    if isinstance(got, str):
        return Measured(reason=got)
    if gave >= 0 or got <= 0:
        return Measured(reason=f"not a swap of the wallet: input {gave:+d}, output {got:+d}")
    return Measured(in_amount=-gave, out_amount=got)
