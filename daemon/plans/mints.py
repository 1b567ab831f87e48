"""Mints that do not exist: `plans validate` (and `apply`) refuse them when they can
know, through ``rpc.url``.

A typo'd mint passes the schema (any base58 key does), and then every slot
ends `skipped` or `failed` forever. Where the config has an RPC node, each
plan's ``inputMint`` and ``outputMint`` (other than the well-known ones) is
looked up: no account at that address, or an account no token program owns,
is a problem (nothing is applied). An RPC node that does not answer leaves a
note, never a refusal.
"""

from __future__ import annotations

from collections.abc import Iterable

from jupcron.chain.programs import TOKEN_PROGRAMS
from jupcron.errors import JupcronError, Problem
from jupcron.plans.load import LoadedPlan
from jupcron.products.recurring.minimums import SPL_TOKEN_MINTS, Findings, Lookups

KEYS = (("inputMint", "input_mint"), ("outputMint", "output_mint"))


def mints_of(plan: LoadedPlan) -> list[tuple[str, str]]:
    """(request key, mint) of the plan's mints that need asking."""
    request = plan.spec.request
    found = []
    for key, attr in KEYS:
        mint = getattr(request, attr, None)
        if mint is not None and str(mint) not in SPL_TOKEN_MINTS:
            found.append((key, str(mint)))
    return found


def check_mints(plans: Iterable[LoadedPlan], lookups: Lookups) -> Findings:
    """Problems for mints the RPC node says do not exist (or are not mints)."""
    findings = Findings()
    owner_of = lookups.owner
    if owner_of is None:
        return findings  # said where it matters (recurring notes); nothing to ask
    for plan in plans:
        for key, mint in mints_of(plan):
            where = Problem(plan.source, plan.line, plan.column, "")
            try:
                owner = owner_of(mint)
            except JupcronError as exc:
                findings.notes.append(_at(where, plan, (
                    f"note: request.{key} {mint} was not checked on-chain: rpc.url did not "
                    f"answer ({exc})"
                )))  # fmt: skip
                continue
            if owner is None:
                findings.problems.append(_at(where, plan, (
                    f"request.{key} {mint} does not exist: rpc.url knows no account at that "
                    "address (a typo, or a mint of another cluster?)"
                )))  # fmt: skip
            elif owner not in TOKEN_PROGRAMS:
                findings.problems.append(_at(where, plan, (
                    f"request.{key} {mint} is not a token mint: its account is owned by "
                    f"{owner}, not a token program"
                )))  # fmt: skip
    return findings


def _at(where: Problem, plan: LoadedPlan, message: str) -> Problem:
    return Problem(where.file, where.line, where.column, f"plan '{plan.spec.name}': {message}")
