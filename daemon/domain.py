"""The domain's words: a run's statuses and a plan's kinds.

A leaf: it imports nothing from the project, so the store, the plans, the
runner and the pages all speak it without depending on one another for it
(an import-layer test keeps it so).
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """The run state machine of DESIGN §2 (a contract)."""

    PENDING = "pending"
    REQUESTED = "requested"
    SIGNED = "signed"
    SUBMITTED = "submitted"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REJECTED = "rejected"
    SKIPPED = "skipped"
    DRY_RUN = "dry_run"
    IN_DOUBT = "in_doubt"

    @property
    def in_flight(self) -> bool:
        return self in IN_FLIGHT

    @property
    def final(self) -> bool:
        return self in FINAL


IN_FLIGHT = frozenset(
    {RunStatus.PENDING, RunStatus.REQUESTED, RunStatus.SIGNED, RunStatus.SUBMITTED}
)
FINAL = frozenset(
    {
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.REJECTED,
        RunStatus.SKIPPED,
        RunStatus.DRY_RUN,
    }
)


class PlanKind(StrEnum):
    RECURRING = "recurring"
    RECURRING_CANCEL = "recurring-cancel"
    TRIGGER_CANCEL = "trigger-cancel"
    TRIGGER_CANCEL_BATCH = "trigger-cancel-batch"
    SWAP = "swap"
    TRIGGER_V2_DCA = "trigger-v2-dca"
    TRIGGER_V2_ORDER = "trigger-v2-order"
    TRIGGER_V2_CANCEL = "trigger-v2-cancel"

    @property
    def trigger_v2(self) -> bool:
        """A Trigger V2 kind: vault, JWT login, deposit or withdrawal (docs/products.md)."""
        return self in TRIGGER_V2


TRIGGER_V2 = frozenset(
    {PlanKind.TRIGGER_V2_DCA, PlanKind.TRIGGER_V2_ORDER, PlanKind.TRIGGER_V2_CANCEL}
)


# the wallet of ``wallet.keypair`` in the daemon config: a plan without ``wallet:`` runs
# with it, and every run and plan stored before there were several wallets was its
DEFAULT_WALLET = "default"
