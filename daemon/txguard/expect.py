"""What the plan asked for: the guard holds a transaction to it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Expectation:
    """The run's order, as the plan states it.

    ``amount``: the most of ``input_mint`` the order may spend, in base units (a
    swap's ``amount``, a recurring order's total ``inAmount``); ``order``: the
    order account a trigger cancel may close; ``receiver``: a swap's documented
    receiver of the output, the one owner besides our wallet whose token account
    our rent may create. Trigger V2 (`daemon.txguard.vault`): ``vault``, the
    wallet's vault as ``GET /vault`` named it; ``deposit``, what the deposit craft
    said it is: (receiverAddress, mint, amount).
    """

    kind: str  # "swap" | "recurring" | "trigger-cancel" | "trigger-v2-…"
    input_mint: str | None = None
    output_mint: str | None = None
    amount: int | None = None
    order: str | None = None
    receiver: str | None = None
    vault: str | None = None
    deposit: tuple[str, str, str] | None = None

    @property
    def mints(self) -> tuple[str, ...]:
        return tuple(m for m in (self.input_mint, self.output_mint) if m)
