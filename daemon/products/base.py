"""What every product gives the runner (`Product`), and the values its steps share:
an order's facts (`Ordered`) and, for execute, the terms of the order it posts
(`SwapTerms`). The steps call the API client itself (`Ports.api`, a
`jupcron.api.client.JupiterClient`): its seam is the HTTP transport."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jupcron.api.models import ExecuteResult
from jupcron.errors import ApiRejectedError
from jupcron.products.spec import RequestSpec
from jupcron.products.swap.model import SWAP_V2, ULTRA_V1

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord, RunRecord
    from jupcron.txguard.expect import Expectation

Observer = Callable[[Any], None]
__all__ = ["SWAP_V2", "ULTRA_V1", "Ordered", "Product", "SwapTerms", "refusal_saying"]


@dataclass(frozen=True)
class SwapTerms:
    """What execute needs to know of a swap's order: the API that issued it and,
    from Swap V2, the order's ``lastValidBlockHeight``."""

    api: str = ULTRA_V1
    last_valid_block_height: int | None = None

    @classmethod
    def of(cls, steps: Sequence[tuple[str, dict[str, Any]]]) -> SwapTerms:
        """From a run's events: its latest order's (a run ordered before Swap V2
        support recorded no ``api``: Ultra v1 is what it used)."""
        found = cls()
        for step, detail in steps:
            if step == "ordered":
                height = detail.get("last_valid_block_height")
                found = cls(
                    api=str(detail.get("api") or ULTRA_V1),
                    last_valid_block_height=height if isinstance(height, int) else None,
                )
        return found


@dataclass(frozen=True)
class Ordered:
    request_id: str | None
    transaction: str | None
    order_account: str | None = None
    in_amount: int | None = None
    out_amount: int | None = None  # a swap's quote (outAmount)
    gasless: bool = False
    skip_reason: str | None = None
    skip_code: str | None = None
    swap: SwapTerms | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # Trigger V2: vault, deposit

    def detail(self) -> dict[str, Any]:
        """The order's facts for its ``ordered`` event (read back by `SwapTerms.of`)."""
        found: dict[str, Any] = {"request_id": self.request_id, "gasless": self.gasless}
        if self.swap is not None:
            found["api"] = self.swap.api
            if self.swap.last_valid_block_height is not None:
                found["last_valid_block_height"] = self.swap.last_valid_block_height
        return {**found, **self.extra}


def refusal_saying(exc: Exception, texts: Sequence[str]) -> str | None:
    """The API's words when `exc` is its HTTP 400 refusal saying one of `texts`
    (lower case), else None: how a cancel's ``order_gone`` knows its order closed."""
    if not isinstance(exc, ApiRejectedError) or exc.info.http_status != 400:
        return None
    said = exc.info.error or ""
    return said if any(text in said.strip().lower() for text in texts) else None


OrderStep = Callable[["Ports", "PlanRecord", datetime, Observer], Ordered]
ExpectStep = Callable[["PlanRecord", "Spend", Mapping[str, Any]], "Expectation"]
ExecuteStep = Callable[
    ["Ports", "RunRecord", "PlanRecord", Observer, "SwapTerms | None"], ExecuteResult
]
TermsStep = Callable[["Ports", "RunRecord"], SwapTerms]
GoneStep = Callable[["PlanRecord", Exception], "str | None"]


@dataclass(frozen=True)
class Product:
    """A plan kind's run, step by step (the runner calls only these):

    order        ask the API for the unsigned transaction (`Ordered`)
    expectation  what txguard holds that transaction to, from the plan and the
                 ``ordered`` event's facts
    execute      post the signed transaction; its `ExecuteResult`
    terms        (swaps) the order's API and block height, read before execute
    order_gone   (cancels) the run's reason when the order was already closed
    gasless      the order may be gasless (txguard allows the API's fee payer)
    reorders     a failed execute may be ordered afresh, once, inside the grace
    executed_fills  its fills are its execute answers (a swap's; the other kinds'
                 come from the order follower): a landed run without one moved
                 money no stored answer measures (`jupcron.report.unmeasured`)
    """

    name: str
    request: RequestSpec
    order: OrderStep
    expectation: ExpectStep
    execute: ExecuteStep
    terms: TermsStep | None = None
    order_gone: GoneStep | None = None
    gasless: bool = False
    reorders: bool = False
    executed_fills: bool = False

    def output_mint(self, plan: PlanRecord) -> str | None:
        return self.request.output_mint(plan.request)
