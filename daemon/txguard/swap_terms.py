"""A swap held to its terms: slippage, fees and where they go, and the order's quote.

- **Slippage**: at most the plan's ``slippageBps`` (else `guard.max_slippage_bps`);
  no share of positive slippage to anyone.
- **Platform fee**: at most the plan's ``referralFee`` when it names a referral,
  else the ``feeBps`` the order answer declared, within `guard.max_platform_fee_bps`.
- **Where the fee goes**: with a referral, an instruction that names its fee
  account (the v1 and shared-accounts v1 routes' optional ``platform_fee_account``)
  and takes a fee pays it only to the plan's ``referralAccount`` or to that
  account's referral token account for one of the plan's mints: the Referral
  program's (``REFER4Zgmy…``) address derived from ("referral_ata", referral
  account, mint), as Jupiter's referral SDK and its integrators derive it (e.g.
  gemwalletcom/core ``gemstone/src/swapper/jupiter/referral.rs``, whose published
  derivations the tests check); Ultra takes the fee in the input or the output
  mint, whichever it prefers (docs: ``ultra/add-fees-to-ultra``). An account
  from a lookup table cannot be shown to be that one: refused. Without a referral
  the fee is Jupiter's own, held only by its bps (Jupiter names its fee accounts,
  which jupcron cannot know). The v2 routes name no fee account at all.
- **The order's quote**: the transaction's own quoted output sets its guaranteed
  minimum, so it is held to what the order answered: all the swaps together must
  guarantee at least the answer's ``outAmount`` less the slippage the plan allows
  (its ``slippageBps``, else `guard.max_slippage_bps`), rounded down as the
  aggregator rounds its own minimum (``quoted * (10000 - slippage) // 10000``; the
  genuine 100-lamport swap's minimum of 59 from a quote of 60 at 57 bps needs the
  floor). Genuine answers quote in the transaction 0-0.01% above their
  ``outAmount``, with at most the answer's slippage. A route quoting far below the
  answer guarantees far less than the price the run was ordered at: refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from solders.pubkey import Pubkey

from jupcron.txguard.context import Context
from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.expect import Expectation
from jupcron.txguard.jupiter import PROGRAMS, action_of

BPS = 10_000
REFERRAL_PROGRAM = "REFER4ZgmyYx9c6He5XfaTMiGfdLwRnkV4RPp9t9iF3"
_REFERRAL_PROGRAM = Pubkey.from_string(REFERRAL_PROGRAM)


def number(ix: Instruction, key: str) -> int | None:
    value = dict(ix.fields).get(key, "")
    return int(value) if value.isdigit() else None


@lru_cache(maxsize=256)
def referral_token_account(referral: str, mint: str) -> str:
    """The referral token account of `referral` for `mint` (Jupiter's Referral program)."""
    seeds = [b"referral_ata", bytes(Pubkey.from_string(referral)), bytes(Pubkey.from_string(mint))]
    return str(Pubkey.find_program_address(seeds, _REFERRAL_PROGRAM)[0])


def _referral_accounts(expect: Expectation) -> frozenset[str]:
    referral = expect.referral_account
    if not referral:
        return frozenset()
    try:
        derived = {referral_token_account(referral, mint) for mint in expect.mints}
    except ValueError:  # not a public key: only the account itself
        derived = set()
    return frozenset({referral, *derived})


def _fee_account(ix: Instruction, where: str, expect: Expectation, fee: int) -> list[str]:
    account = ix.role.get("fee_account")
    if account is None or not expect.referral_account:
        return []
    if account in _referral_accounts(expect):
        return []
    mints = " or ".join(expect.mints)
    return [
        f"{where} pays its platform fee of {fee} bps to {account}, which is not the plan's "
        f"referralAccount {expect.referral_account} nor its referral token account for "
        f"{mints}"
    ]


def _fee(ix: Instruction, ctx: Context, where: str, expect: Expectation) -> list[str]:
    fee = number(ix, "platform_fee_bps")
    if not fee:
        return []
    if expect.referral_fee_bps is not None:
        cap, why = expect.referral_fee_bps, "the plan's referralFee"
    else:
        cap = ctx.policy.max_platform_fee_bps
        why = "guard.max_platform_fee_bps (the plan names no referral)"
        if expect.fee_bps is not None and expect.fee_bps < cap:
            cap, why = expect.fee_bps, "the feeBps the order answer declared"
    reasons = []
    if fee > cap:
        reasons.append(f"{where} takes a platform fee of {fee} bps; at most {cap} ({why})")
    return reasons + _fee_account(ix, where, expect, fee)


def allowed_slippage(ctx: Context, expect: Expectation) -> tuple[int, str]:
    """The most slippage a swap of this plan may allow, and where that limit comes from."""
    if expect.slippage_bps is not None:
        return expect.slippage_bps, "the plan's slippageBps"
    return ctx.policy.max_slippage_bps, "guard.max_slippage_bps (the plan sets no slippageBps)"


def terms(ix: Instruction, ctx: Context, where: str, expect: Expectation) -> list[str]:
    """One swap instruction's slippage and fees, held to the plan."""
    reasons: list[str] = []
    slippage = number(ix, "slippage_bps")
    allowed, source = allowed_slippage(ctx, expect)
    if slippage is not None and slippage > allowed:
        reasons.append(f"{where} allows {slippage} bps of slippage; at most {allowed} ({source})")
    positive = number(ix, "positive_slippage_bps")
    if positive:
        reasons.append(
            f"{where} gives {positive} bps of any positive slippage to a collector: by "
            "default (and in every plan) all of it is ours"
        )
    return reasons + _fee(ix, ctx, where, expect)


def least(ix: Instruction, action: str) -> int | None:
    """The least output one instruction guarantees for the whole run: a swap's
    minimum out (an exact-out route's exact output), a recurring order's per-cycle
    minimum times its cycles; None when it guarantees none (or cannot be read)."""
    if action == "recurring_open":
        per_cycle, total = number(ix, "min_out_amount"), number(ix, "in_amount")
        each = number(ix, "in_amount_per_cycle")
        if per_cycle is None or total is None or not each:
            return None
        return per_cycle * (total // each)
    smallest = number(ix, "min_out_amount")
    if smallest is None and dict(ix.fields).get("swap_mode") == "ExactOut":
        smallest = number(ix, "out_amount")
    return smallest


@dataclass(frozen=True)
class Guaranteed:
    """The least output a transaction's instructions of some actions guarantee together."""

    total: int
    seen: bool  # any instruction of those actions at all
    unreadable: Instruction | None = None  # the first whose least output cannot be read


def guaranteed(summary: TxSummary, actions: frozenset[str]) -> Guaranteed:
    """What the instructions of `actions` (``swap``, ``recurring_open``) guarantee at
    least, added up (a malformed one is refused by the Jupiter rule on its own)."""
    total, seen = 0, False
    for ix in summary.instructions:
        if ix.program not in PROGRAMS or ix.malformed:
            continue
        action = action_of(ix.program, ix.name)
        if action not in actions:
            continue
        smallest = least(ix, action)
        if smallest is None:
            return Guaranteed(total, True, ix)
        total, seen = total + smallest, True
    return Guaranteed(total, seen)


SWAPS = frozenset({"swap"})


def quote_held(summary: TxSummary, ctx: Context, expect: Expectation) -> list[str]:
    """The swaps' guaranteed minimum, held to the order answer's ``outAmount``."""
    if expect.kind != "swap" or expect.quoted_out is None:
        return []
    allowed, source = allowed_slippage(ctx, expect)
    floor = expect.quoted_out * max(BPS - allowed, 0) // BPS
    found = guaranteed(summary, SWAPS)
    if (ix := found.unreadable) is not None:
        return [
            f"instruction #{ix.index}: {ix.title} guarantees no least output that can be "
            f"read, so it cannot be held to the order's outAmount of {expect.quoted_out}"
        ]
    if not found.seen or found.total >= floor:  # no swap is refused as not the plan's kind
        return []
    return [
        f"the swap guarantees only {found.total} of {expect.output_mint}; the order answered "
        f"an outAmount of {expect.quoted_out}, so at least {floor} at {allowed} bps of "
        f"slippage ({source}): the transaction's own quote is not the order's"
    ]
