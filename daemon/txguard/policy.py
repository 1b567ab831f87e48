"""What txguard allows: the policy (from the config) and the verdict it gives."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from jupcron.chain.wallet import Unsigned
from jupcron.config import DEFAULT_PROGRAMS, GuardConfig
from jupcron.txguard.decode import TxSummary
from jupcron.txguard.ours import Ours
from jupcron.txguard.simulate import BalanceCheck


@dataclass(frozen=True)
class GuardPolicy:
    """The allow-list and limits txguard applies before anything is signed."""

    programs: frozenset[str] = frozenset(DEFAULT_PROGRAMS)
    max_priority_fee_lamports: int = 10_000_000  # 0.01 SOL
    # the whole fee: base (5,000 a signature) plus priority, when our wallet pays it
    max_fee_lamports: int = 10_000_000  # 0.01 SOL
    allow_gasless: bool = False
    # a recurring order's escrow rent (simulation's allowance; returned when it closes)
    order_rent_allowance_lamports: int = 10_000_000
    # how far the Jupiter instructions' input may exceed the plan's amount, in bps
    amount_allowance_bps: int = 0
    # a swap's terms when the plan says nothing of them
    max_slippage_bps: int = 300
    max_platform_fee_bps: int = 20
    # program id -> human name, for messages and `jupcron tx inspect`
    names: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_PROGRAMS), compare=False)

    @classmethod
    def from_config(cls, guard: GuardConfig) -> GuardPolicy:
        return cls(
            programs=frozenset(guard.allowed_programs) | frozenset(guard.extra_programs),
            max_priority_fee_lamports=guard.max_priority_fee_lamports,
            max_fee_lamports=guard.max_fee_lamports,
            allow_gasless=guard.allow_gasless,
            order_rent_allowance_lamports=guard.order_rent_allowance_lamports,
            amount_allowance_bps=guard.amount_allowance_bps,
            max_slippage_bps=guard.max_slippage_bps,
            max_platform_fee_bps=guard.max_platform_fee_bps,
        )


@dataclass(frozen=True)
class Verdict:
    """txguard's answer: accepted, or refused with reasons a person can act on."""

    accepted: bool
    reasons: tuple[str, ...]
    summary: TxSummary
    # the transaction judged, as read once: what the runner signs when accepted
    transaction: Unsigned = field(compare=False, repr=False)
    simulation: BalanceCheck | None = None  # what simulating it showed, when it ran
    ours: Ours | None = None  # the accounts judged ours (for the net effect)
