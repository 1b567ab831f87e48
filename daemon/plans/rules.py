"""Plan rules across fields (DESIGN §3): a plan's amount against its caps, the swap API
against its kind, price limits against its pair, and the notes a plan without price
protection gets. Locations are relative to the plan, so the loader points at the key.
Each kind's own rules are its product's (`jupcron.products`); these are the shared ones."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from jupcron.mints import KNOWN_MINTS
from jupcron.price.limits import PriceLimits, pair_problems
from jupcron.price.oracle import DEFAULT_FEEDS
from jupcron.products import kinds
from jupcron.products.findings import Finding
from jupcron.products.spec import CheckContext

if TYPE_CHECKING:
    from jupcron.plans.schema import Caps, Request


def in_amount_of(request: Request) -> tuple[str, int, tuple[str, ...]] | None:
    """(input mint, total input amount, where it is) for kinds that spend."""
    return kinds.spec_of(request).spend(request)


def checks(
    request: Request,
    max_in_amount: int | None = None,
    caps: Caps | None = None,
    swap_api: str | None = None,
    now: datetime | None = None,
    limits: PriceLimits | None = None,
) -> list[Finding]:
    """Rules across fields; locations are relative to the plan (`now`: for dates)."""
    spec = kinds.spec_of(request)
    out: list[Finding] = []
    out.extend(limit_checks(request, limits))
    if swap_api is not None and not spec.swap_api:
        out.append(Finding(("swap_api",), "swap_api applies to swap plans only"))
    context = CheckContext(now or datetime.now(UTC), limits, swap_api)
    out.extend(spec.checks(request, context))
    spent = spec.spend(request)
    if spent is not None:
        _, amount, where = spent
        if max_in_amount is not None and amount > max_in_amount:
            out.append(
                Finding(
                    ("request", *where),
                    f"{where[-1]} {amount} is above this plan's max_in_amount {max_in_amount}",
                )
            )
        out.extend(_caps_below(caps, amount, where[-1]))
    if caps is not None and caps.per_day and caps.per_week and caps.per_week < caps.per_day:
        out.append(Finding(("caps", "per_week"), "caps.per_week is smaller than caps.per_day"))
    return out


def _caps_below(caps: Caps | None, amount: int, field: str) -> list[Finding]:
    """A plan cap below what one run spends: the pre-flight skips a run that would take
    the plan past its cap (`runner.preflight.reserve`), so every run would be skipped."""
    if caps is None:
        return []
    return [
        Finding(
            ("caps", key),
            f"caps.{key} {limit} is below the {field} {amount} one run spends: every run "
            "would be skipped (caps are in base units of the input mint)",
        )
        for key, limit in (("per_day", caps.per_day), ("per_week", caps.per_week))
        if limit is not None and amount > limit
    ]


def limit_checks(request: Request, limits: PriceLimits | None) -> list[Finding]:
    """``limits`` against the plan's kind and pair (price forms need no chain here);
    a kind's own notes on them are in its `checks`."""
    if limits is None:
        return []
    spec = kinds.spec_of(request)
    pair = spec.pair(request)
    if not spec.priced or pair is None:
        return [Finding(("limits",), spec.not_priced)]
    return [
        Finding(("limits", key), f"limits.{key}: {message}")
        for key, message in pair_problems(limits, *pair)
    ]


def price_notes(
    request: Request, limits: PriceLimits | None, feeds: Collection[str] = DEFAULT_FEEDS
) -> list[Finding]:
    """Warnings: a trading plan with neither a price limit nor a reference price for its
    pair (`feeds`: mints with an oracle feed), and a price limit on a mint whose
    decimals only the chain can tell."""
    spec = kinds.spec_of(request)
    pair = spec.pair(request)
    if not spec.priced or pair is None:
        return []
    out: list[Finding] = []
    uncovered = [mint for mint in pair if mint not in feeds]
    if limits is None and uncovered:
        out.append(
            Finding(
                ("request", "outputMint" if uncovered[0] == pair[1] else "inputMint"),
                f"neither a price limit (limits:) nor a reference price (no oracle feed for "
                f"{uncovered[0]}; add one under price.feeds): only slippage bounds what this "
                "plan receives (docs/price-protection.md)",
                warning=True,
            )
        )
    if limits is not None and limits.has_price:
        for mint in pair:
            if mint not in KNOWN_MINTS:
                out.append(
                    Finding(
                        ("limits", "quote"),
                        f"the decimals of {mint} are not built in: runs read them through "
                        "rpc.url, and refuse to sign when they cannot",
                        warning=True,
                    )
                )
    return out
