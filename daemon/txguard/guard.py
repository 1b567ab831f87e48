"""txguard's entry points: inspect (a verdict), check (raise on refusal) and
check-then-sign, the only way the runner should sign a transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import structlog
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey

from jupcron.errors import GuardRejectedError, RejectedError, RetryableError
from jupcron.txguard import ours, rules, simulate, vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import load, summarize
from jupcron.txguard.expect import Expectation
from jupcron.txguard.policy import GuardPolicy, Verdict
from jupcron.wallet import SignedTransaction, Wallet, sign_transaction

log = structlog.get_logger(__name__)


def inspect(
    tx_b64: str,
    wallet: Pubkey,
    policy: GuardPolicy,
    *,
    gasless: bool = False,
    mints: Iterable[str] = (),
    expect: Expectation | None = None,
    mint_programs: Mapping[str, str] | None = None,
    simulator: simulate.Simulator | None = None,
) -> Verdict:
    """Decode and judge a transaction. A hostile one gets reasons, never an
    exception; input that is not a transaction raises `NotATransactionError`
    (far too large: `OversizeError`).

    ``gasless``: the API marked this Ultra order gasless/RFQ (someone else pays
    the fee and co-signs); honoured only when ``policy.allow_gasless``.
    ``mints``: mints known from the order, whose token accounts of ours count as ours.
    ``expect``: what the plan asked for (kind, mints, amount, order, receiver).
    ``mint_programs``: mint -> token program, as the chain reports it (rpc.url).
    ``simulator``: the RPC node; when given, a transaction the rules accept is also
    simulated and refused if it would cost the wallet more than the order.
    """
    tx, size = load(tx_b64)
    summary = summarize(tx, policy.names, size)
    known = {*mints, *(expect.mints if expect else ())}
    ctx = Context(
        wallet=str(wallet),
        ours=vault.extend(
            ours.find(wallet, summary, known, mint_programs, expect.receiver if expect else None),
            summary,
            expect,
        ),
        policy=policy,
        gasless=gasless,
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
    return Verdict(not reasons, reasons, summary, simulation=balance, ours=ctx.ours)


def check(
    tx_b64: str,
    wallet: Pubkey,
    policy: GuardPolicy,
    *,
    gasless: bool = False,
    mints: Iterable[str] = (),
    expect: Expectation | None = None,
    mint_programs: Mapping[str, str] | None = None,
    simulator: simulate.Simulator | None = None,
) -> Verdict:
    """The verdict on an accepted transaction; `GuardRejectedError` when refused."""
    verdict = inspect(
        tx_b64, wallet, policy, gasless=gasless, mints=mints, expect=expect,
        mint_programs=mint_programs, simulator=simulator,
    )  # fmt: skip
    if not verdict.accepted:
        log.warning("tx_rejected", reasons=list(verdict.reasons))
        raise GuardRejectedError(list(verdict.reasons), verdict.simulation)
    log.debug("tx_accepted", instructions=len(verdict.summary.instructions))
    return verdict


def check_and_sign(
    wallet: Wallet,
    tx_b64: str,
    policy: GuardPolicy,
    *,
    gasless: bool = False,
    mints: Iterable[str] = (),
    expect: Expectation | None = None,
    mint_programs: Mapping[str, str] | None = None,
    simulator: simulate.Simulator | None = None,
) -> SignedTransaction:
    """Sign only what txguard accepts; `GuardRejectedError` (nothing signed) otherwise."""
    check(
        tx_b64, wallet.pubkey, policy, gasless=gasless, mints=mints, expect=expect,
        mint_programs=mint_programs, simulator=simulator,
    )  # fmt: skip
    return sign_transaction(wallet, tx_b64)
