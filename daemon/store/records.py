"""Plain values handed out by the repository functions (no sessions attached)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jupcron.domain import DEFAULT_WALLET, PlanKind, RunStatus
from jupcron.plans.schema import (
    PlanSettings,
    PlanSpec,
    Request,
    request_body,
    stored_request,
    stored_settings,
)
from jupcron.scheduling.schedule import Schedule, parse_schedule

if TYPE_CHECKING:
    from jupcron.store.models import Plan, Run


def compact(value: Any) -> Any:
    """A copy of decoded JSON with its keys and short strings interned: ten
    thousand plans repeat the same keys, mints and time zones, and the daemon
    keeps every plan in memory."""
    kind = type(value)
    if kind is dict:
        return {
            (intern(k) if type(k) is str else k): (
                (intern(v) if len(v) <= INTERN_UP_TO else v)
                if type(v) is str
                else (compact(v) if type(v) in _NESTED else v)
            )
            for k, v in value.items()
        }
    if kind is list:
        return [compact(v) for v in value]
    if kind is str and len(value) <= INTERN_UP_TO:
        return intern(value)
    return value


_NESTED = (dict, list)
intern = sys.intern


INTERN_UP_TO = 64  # a base58 public key is at most 44 characters


@dataclass(frozen=True)
class PlanRecord:
    """A stored plan, parsed: its schedule and its typed request and settings."""

    id: int
    name: str
    kind: PlanKind
    version: int
    schedule: Schedule
    request: Request
    settings: PlanSettings
    enabled: bool
    description: str | None
    created_at: datetime
    updated_at: datetime
    wallet: str = DEFAULT_WALLET  # the configured wallet (by name) that signs its runs

    @classmethod
    def from_mapping(cls, row: Mapping[Any, Any]) -> PlanRecord:
        """A plan from its stored columns; ValueError (naming the plan) if they do not
        parse, which `plans apply` never lets happen."""
        kind = PlanKind(row["kind"])
        try:
            schedule = parse_schedule(row["schedule"])
            request = stored_request(kind, row["request"])
            settings = stored_settings(row["settings"] or {})
        except (ValueError, TypeError) as exc:
            raise ValueError(f"stored plan {row['name']!r} cannot be read: {exc}") from None
        return cls(
            id=row["id"],
            name=row["name"],
            kind=kind,
            version=row["version"],
            schedule=schedule,
            request=request,
            settings=settings,
            enabled=row["enabled"],
            description=row["description"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            wallet=row.get("wallet", DEFAULT_WALLET),
        )

    @classmethod
    def from_spec(cls, spec: PlanSpec) -> PlanRecord:
        """A plan as a file states it, not (yet) stored: what `jupcron tx inspect
        --plan FILE` judges a transaction for."""
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        stored = {"id": 0, "name": spec.name, "version": 0, **spec.content()}
        return cls.from_mapping({**stored, "created_at": epoch, "updated_at": epoch})

    @classmethod
    def from_row(cls, row: Plan) -> PlanRecord:
        return cls.from_mapping({f.name: getattr(row, f.name) for f in fields(cls)})

    @property
    def body(self) -> Mapping[str, Any]:
        """The request as the API takes it (without the wallet field); shared, read-only."""
        return request_body(self.request)


@dataclass(frozen=True)
class RunRecord:
    id: int
    plan_id: int
    plan_version: int
    scheduled_for: datetime
    status: RunStatus
    trigger: str
    request_id: str | None
    unsigned_tx: str | None
    signed_tx: str | None
    signature: str | None
    expires_at: datetime | None
    slot: int | None
    input_mint: str | None
    output_mint: str | None
    in_amount: str | None
    out_amount: str | None
    order_account: str | None
    error_code: str | None
    error: str | None
    attempts: int
    claimed_by: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    wallet: str = DEFAULT_WALLET  # the wallet (its configured name) the run is for
    owner: str | None = None  # that wallet's keypair (address) when the run was claimed

    @classmethod
    def from_mapping(cls, row: Mapping[Any, Any]) -> RunRecord:
        values = {f.name: row[f.name] for f in fields(cls)}
        values["status"] = RunStatus(values["status"])
        return cls(**values)

    @classmethod
    def from_row(cls, row: Run) -> RunRecord:
        return cls(
            id=row.id,
            plan_id=row.plan_id,
            plan_version=row.plan_version,
            scheduled_for=row.scheduled_for,
            status=RunStatus(row.status),
            trigger=row.trigger,
            request_id=row.request_id,
            unsigned_tx=row.unsigned_tx,
            signed_tx=row.signed_tx,
            signature=row.signature,
            expires_at=row.expires_at,
            slot=row.slot,
            input_mint=row.input_mint,
            output_mint=row.output_mint,
            in_amount=row.in_amount,
            out_amount=row.out_amount,
            order_account=row.order_account,
            error_code=row.error_code,
            error=row.error,
            attempts=row.attempts,
            claimed_by=row.claimed_by,
            created_at=row.created_at,
            updated_at=row.updated_at,
            finished_at=row.finished_at,
            wallet=row.wallet,
            owner=row.owner,
        )
