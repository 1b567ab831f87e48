"""Trigger V2 answers that do not say whether our signed transaction landed: a price
order's ``depositConfirmed: false``, a ``txSignature`` that is not ours, a refusal of a
post that reached the API (with an RPC node to ask). Each raises `LandingUnknown`, so
the run is settled from the chain by our signature (`jupcron.runner.settle`), as a
post left unanswered is, never recorded done (or failed) on the API's word."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NoReturn

import structlog

from jupcron.api.trigger_v2_models import Created
from jupcron.domain import RunStatus
from jupcron.errors import ApiError, ApiErrorInfo, RetryableError

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.store.records import RunRecord

log = structlog.get_logger(__name__)


class LandingUnknown(ApiError, RetryableError):
    """The API answered the post of our signed transaction, but not whether it landed: a
    price order's ``depositConfirmed: false``, a ``txSignature`` not ours, or a refusal
    (4xx) while an RPC node can tell (the API was handed the signed bytes: a refusal
    does not prove they never landed). Like a post left unanswered, the run is settled
    from the chain (`jupcron.runner.settle`), never as done, or as failed, on the API's
    word."""


def unconfirmed(ports: Ports, run: RunRecord, operation: str, created: Created) -> NoReturn:
    """A create answered ``depositConfirmed: false`` ("whether the deposit has landed and
    the order is active", the spec): the order's id is kept on the run (so a deposit the
    chain shows landed is an order the follower follows), the outcome left open."""
    answer = created.model_dump(by_alias=True, exclude_none=True)
    ports.book.advance(
        run, RunStatus.SUBMITTED, expect=[RunStatus.SUBMITTED], step="deposit_unconfirmed",
        detail={"order": created.id, "answer": answer}, order_account=created.id,
    )  # fmt: skip
    info = ApiErrorInfo(operation=operation, http_status=200, error="depositConfirmed: false",
                        body=json.dumps(answer))  # fmt: skip
    raise LandingUnknown(
        f"{operation}: order {created.id} answered depositConfirmed: false (the deposit "
        "has not been seen landing)", info,
    )  # fmt: skip


def misreported(
    ports: Ports,
    run: RunRecord,
    operation: str,
    created: Created,
    signature: str,
    order_id: str | None,
) -> NoReturn:
    """A ``200`` whose ``txSignature`` is not our signed transaction's. The spec's
    ``txSignature`` is the on-chain signature of the deposit (create) or withdrawal
    (confirm-cancel) we signed, and its id is our wallet's signature (txguard holds
    the wallet to be the fee payer): an answer naming another says nothing of ours
    landing. So the run is settled from the chain by OUR signature, as an unanswered
    post is, never succeeded on that word; a create's order id is kept on the run (the
    follower follows it if the chain shows the deposit landed)."""
    answer = created.model_dump(by_alias=True, exclude_none=True)
    detail = {"ours": signature, "api": created.tx_signature, "answer": answer}
    log.warning("trigger_v2_signature_mismatch", ours=signature, api=created.tx_signature)
    ports.book.advance(
        run, RunStatus.SUBMITTED, expect=[RunStatus.SUBMITTED], step="signature_mismatch",
        detail=detail, order_account=order_id or created.id,
    )  # fmt: skip
    info = ApiErrorInfo(operation=operation, http_status=200, error="txSignature mismatch",
                        body=json.dumps(answer))  # fmt: skip
    raise LandingUnknown(
        f"{operation}: order {created.id} answered txSignature {created.tx_signature}, not "
        f"our signed transaction's {signature}: whether ours landed is not known", info,
    )  # fmt: skip
