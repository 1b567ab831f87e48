"""txguard's entry points: inspect (a verdict), check (raise on refusal) and
check-then-sign, the only way the runner should sign a transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypedDict, Unpack

import structlog
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey

from jupcron.chain.wallet import SignedTransaction, Wallet, sign_transaction
from jupcron.errors import GuardRejectedError, RejectedError, RetryableError
from jupcron.txguard import ours, rules, simulate, vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import read, summarize
from jupcron.txguard.expect import Expectation
from jupcron.txguard.policy import GuardPolicy, Verdict

log = structlog.get_logger(__name__)


class Facts(TypedDict, total=False):
    """What the caller knows besides the transaction, all optional.

    ``gasless``: the API marked this Ultra order gasless/RFQ (someone else pays
    the fee and co-signs); honoured only when ``policy.allow_gasless``.
    ``mints``: mints known from the order, whose token accounts of ours count as ours.
    ``expect``: what the plan asked for (kind, mints, amount, order, receiver).
    ``mint_programs``: mint -> token program, as the chain reports it (rpc.url).
    ``simulator``: the RPC node; when given, a transaction the rules accept is also
    simulated and refused if it would cost the wallet more than the order.
    """

    gasless: bool
    mints: Iterable[str]
    expect: Expectation | None
    mint_programs: Mapping[str, str] | None
    simulator: simulate.Simulator | None


def inspect(tx_b64: str, wallet: Pubkey, policy: GuardPolicy, **facts: Unpack[Facts]) -> Verdict:
    """Decode and judge a transaction (with the caller's `Facts`). A hostile one gets
    reasons, never an exception; input that is not a transaction raises
    `NotATransactionError` (far too large: `OversizeError`)."""
    expect, simulator = facts.get("expect"), facts.get("simulator")
    unsigned = read(tx_b64)
    tx = unsigned.tx
    summary = summarize(tx, policy.names, len(unsigned.raw))
    known = {*facts.get("mints", ()), *(expect.mints if expect else ())}
    receiver = expect.receiver if expect else None
    ctx = Context(
        wallet=str(wallet),
        ours=vault.extend(
            ours.find(wallet, summary, known, facts.get("mint_programs"), receiver),
            summary,
            expect,
        ),
        policy=policy,
        gasless=facts.get("gasless", False),
        expect=expect,
    )
    reasons = tuple(rules.evaluate(summary, ctx))
    balance = None
    if simulator is not None and not reasons and isinstance(tx.message, (Message, MessageV0)):
        try:
            balance = simulate.check(
                simulator, tx_b64, tx.message, summary, ctx.ours, expect,
                policy.order_rent_allowance_lamports,
            )  # fmt: skip
            reasons = balance.reasons
        except (RetryableError, RejectedError) as exc:
            reasons = (f"simulation unavailable, so nothing is signed: {exc}",)
    return Verdict(not reasons, reasons, summary, unsigned, simulation=balance, ours=ctx.ours)


def check(tx_b64: str, wallet: Pubkey, policy: GuardPolicy, **facts: Unpack[Facts]) -> Verdict:
    """The verdict on an accepted transaction; `GuardRejectedError` when refused."""
    return held(inspect(tx_b64, wallet, policy, **facts))


def held(verdict: Verdict) -> Verdict:
    """`verdict` when it accepts; `GuardRejectedError` (with its reasons) when it refuses."""
    if not verdict.accepted:
        log.warning("tx_rejected", reasons=list(verdict.reasons))
        raise GuardRejectedError(list(verdict.reasons), verdict.simulation)
    log.debug("tx_accepted", instructions=len(verdict.summary.instructions))
    return verdict


def check_and_sign(
    wallet: Wallet,
    tx_b64: str,
    policy: GuardPolicy,
    **facts: Unpack[Facts],
) -> SignedTransaction:
    """Sign only what txguard accepts; `GuardRejectedError` (nothing signed) otherwise."""
    verdict = check(tx_b64, wallet.pubkey, policy, **facts)
    return sign_transaction(wallet, verdict.transaction)  # the bytes just judged
