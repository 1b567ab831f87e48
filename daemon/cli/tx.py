"""`jupcron tx inspect`: what the daemon would (not) sign, and why.

Exit status: 0 the guard accepts, 3 it refuses, 2 the input is not a transaction.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from solders.pubkey import Pubkey

from jupcron.chain.rpc import rpc_from_config
from jupcron.cli import params
from jupcron.cli.main import Context, pass_ctx
from jupcron.cli.wallet import config_or_defaults, configured_wallet
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import ConfigError, PlanError
from jupcron.plans.load import load_plans
from jupcron.price.protection import pair_of, protection_for
from jupcron.products.facts import ordered_problems
from jupcron.runner.judge import judge, ordered_facts
from jupcron.runner.preflight import spend_of
from jupcron.store.engine import session_factory
from jupcron.store.handle import reading
from jupcron.store.plans import get_plan
from jupcron.store.records import PlanRecord
from jupcron.txguard import GuardPolicy, NotATransactionError, Verdict, flows, inspect
from jupcron.txguard.decode import MAX_INPUT_CHARS, OversizeError, TxSummary
from jupcron.txguard.instructions import DECODERS

EXIT_REFUSED = 3
EXIT_NOT_A_TRANSACTION = 2


@click.group()
def tx() -> None:
    """Look at transactions the way txguard does."""


@tx.command("inspect")
@click.argument("transaction", required=False, default="-", metavar="[BASE64|-]")
@click.option(
    "--wallet",
    "wallet_key",
    metavar="PUBKEY",
    callback=params.pubkey,
    help="Judge for this wallet (default: the plan's wallet with --plan, else the default "
    "wallet's public key).",
)
@click.option("--gasless", is_flag=True, help="Judge as a swap the API marked gasless/RFQ.")
@click.option("--mint", "mints", multiple=True, metavar="MINT", callback=params.mints,
              help="A mint of the order (its address).")  # fmt: skip
@click.option(
    "--plan",
    "plan_ref",
    metavar="FILE|NAME",
    callback=params.not_empty,
    help="Judge it as a run of this plan is judged: a plan file, or a plan in the store.",
)
@click.option("--name", "plan_name", metavar="NAME", help="With --plan FILE: which of its plans.")
@click.option(
    "--ordered",
    "ordered_json",
    metavar="JSON",
    help="With --plan: what the order call answered besides the transaction, as a JSON "
    "object (the run's 'ordered' event, or the API's answer: feeBps, gasless, vault ...).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@pass_ctx
def inspect_command(
    ctx: Context,
    transaction: str,
    wallet_key: Pubkey | None,
    gasless: bool,
    mints: tuple[str, ...],
    plan_ref: str | None,
    plan_name: str | None,
    ordered_json: str | None,
    fmt: str,
) -> None:
    """Decode a base64 transaction (argument, or stdin with '-') and show txguard's verdict.

    With --plan, the verdict is the one a run of that plan would get: the runner's
    own check, holding the transaction to the plan's whole terms.

    Exit status 0 when the guard accepts, 3 when it refuses, 2 when the input
    is not a transaction.
    """
    if (plan_name or ordered_json) and not plan_ref:
        raise click.UsageError("--name and --ordered go with --plan")
    config = config_or_defaults(ctx)
    plan = plan_of(ctx, config, plan_ref, plan_name) if plan_ref else None
    ordered = _ordered(ordered_json)
    own = plan.wallet if plan is not None else DEFAULT_WALLET
    owner = wallet_key or configured_wallet(ctx, name=own).pubkey
    policy = GuardPolicy.from_config(config.guard)
    try:
        text = _stdin() if transaction == "-" else transaction
        if plan is not None:
            gasless = gasless or bool(ordered.get("gasless"))
            rpc = rpc_from_config(config.rpc)
            try:
                if "price" not in ordered and pair_of(plan.request) is not None:
                    # as the run's order step would have recorded it, now
                    spend = spend_of(plan).amount
                    protection = protection_for(plan, spend, rpc, config, datetime.now(UTC))
                    ordered["price"] = protection.detail()
                verdict = judge(
                    text, plan, owner, policy, ordered=ordered, gasless=gasless, rpc=rpc,
                    simulate=rpc is not None and config.guard.simulate,
                )  # fmt: skip
            finally:
                if rpc is not None:
                    rpc.close()
        else:
            verdict = inspect(text, owner, policy, gasless=gasless, mints=mints)
    except OversizeError as exc:
        click.echo(f"REFUSED: {exc.reasons[0]}", err=True)
        sys.exit(EXIT_REFUSED)
    except NotATransactionError as exc:
        click.echo(clean(f"error: not a transaction: {exc.problem}"), err=True)
        sys.exit(EXIT_NOT_A_TRANSACTION)
    if fmt == "json":
        click.echo(_json(verdict, str(owner)))
    else:
        click.echo(render(verdict, str(owner), policy.programs))
    if not verdict.accepted:
        sys.exit(EXIT_REFUSED)


def _stdin() -> str:
    """Standard input, read no further than a transaction's text can reach: a stream
    without end (or a huge file) is refused there, never held in memory whole."""
    text = sys.stdin.read(MAX_INPUT_CHARS + 1)
    if len(text) > MAX_INPUT_CHARS:
        raise OversizeError(f"more than {MAX_INPUT_CHARS * 3 // 4} bytes")
    return text


def _ordered(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        given = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--ordered") from None
    if not isinstance(given, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--ordered")
    facts = ordered_facts(given)
    problems = ordered_problems(facts)  # else read as "not said": its check silently dropped
    if problems:
        raise click.BadParameter("; ".join(problems), param_hint="--ordered")
    return facts


def plan_of(ctx: Context, config: Config, ref: str, name: str | None) -> PlanRecord:
    """The plan `ref` names: a plan file (one plan, or the one called `name`), else a
    plan in the store (read only: no database file is created)."""
    path = Path(ref)
    if path.is_file():
        result = load_plans([path])  # its wallet: checked when its key is wanted
        if not result.ok:
            raise PlanError(result.problems)
        specs = [p.spec for p in result.plans if name is None or p.spec.name == name]
        if len(specs) != 1:
            names = ", ".join(p.spec.name for p in result.plans) or "none"
            which = f"no plan named {name!r}" if name else f"{len(specs)} plans"
            raise ConfigError(f"{ref} holds {which} (its plans: {names}); choose one with --name")
        return PlanRecord.from_spec(specs[0])
    if name is not None or path.suffix in (".yaml", ".yml") or "/" in ref:
        raise ConfigError(f"no plan file {ref}")
    return stored_plan(config, ref)


def stored_plan(config: Config, name: str) -> PlanRecord:
    with reading(config.database.url) as engine, session_factory(engine)() as session:
        plan = get_plan(session, name)
    if plan is None:
        raise ConfigError(f"no plan named {name!r} in the store, and no such file")
    return plan


# C0 and C1 controls, DEL, and the bidirectional overrides that can reorder a line
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(line: str) -> str:
    """A line safe for a terminal: text from the transaction (a memo, a seed) can
    carry newlines or escape sequences that would forge or hide lines."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)


def _opaque(verdict: Verdict, owner: str) -> tuple[int, ...]:
    """Program calls that name our wallet and whose moves are not decoded."""
    return tuple(
        ix.index
        for ix in verdict.summary.instructions
        if ix.program not in DECODERS and owner in ix.accounts
    )


def _net(verdict: Verdict, owner: str) -> flows.NetEffect | None:
    if verdict.ours is None:
        return None
    return flows.net_effect(verdict.summary, verdict.ours, _opaque(verdict, owner))


def _json(verdict: Verdict, owner: str) -> str:
    net = _net(verdict, owner)
    data = {
        "wallet": owner,
        "accepted": verdict.accepted,
        "reasons": list(verdict.reasons),
        "flows": [dataclasses.asdict(f) for ix in verdict.summary.instructions
                  if (f := flows.of(ix)) is not None],
        "net_effect": dataclasses.asdict(net) if net else None,
        "transaction": dataclasses.asdict(verdict.summary),
    }  # fmt: skip
    return json.dumps(data, indent=2)


def _who(address: str | None, owner: str) -> str:
    return f"{address} (our wallet)" if address == owner else f"{address}"


def render(verdict: Verdict, owner: str, allowed: frozenset[str] = frozenset()) -> str:
    """The decoded message and the verdict, for people."""
    s: TxSummary = verdict.summary
    lines = [
        f"{'transaction':<14}v{s.version}" if s.version != "legacy" else "transaction   legacy"
    ]
    lines.append(f"{'fee payer':<14}{_who(s.fee_payer, owner)}")
    lines.append(f"{'blockhash':<14}{s.recent_blockhash}")
    for n, signer in enumerate(s.signers):
        state = "signed" if signer.signed else "not signed"
        access = "writable" if signer.writable else "read-only"
        label = "signers" if n == 0 else ""
        lines.append(f"{label:<14}{_who(signer.address, owner)}, {access}, {state}")
    for n, (program, name) in enumerate(s.programs):
        label = "programs" if n == 0 else ""
        note = "" if program in allowed else "  (not in the allow-list)"
        lines.append(f"{label:<14}{program}  {name or '(no name)'}{note}")
    cb = s.compute_budget
    limit = f"{cb.unit_limit}" if cb.unit_limit is not None else f"default ({cb.effective_limit})"
    lines.append(
        f"{'compute':<14}limit {limit} units, price {cb.unit_price_micro_lamports or 0} "
        f"micro-lamports/unit, priority fee up to {cb.priority_fee_lamports} lamports"
    )
    for n, lookup in enumerate(s.lookups):
        label = "lookup tables" if n == 0 else ""
        lines.append(
            f"{label:<14}{lookup.table} ({lookup.writable} writable, {lookup.readonly} read-only)"
        )
    if s.uses_durable_nonce:
        lines.append(f"{'lifetime':<14}durable nonce")
    if s.sanitize_error:
        lines.append(f"{'malformed':<14}{s.sanitize_error}")
    lines.append("instructions")
    for ix in s.instructions:
        fields = " ".join(f"{k}={v}" for k, v in ix.fields)
        lines.append(f"  #{ix.index} {ix.title}{' ' + fields if fields else ''}")
        if ix.roles:
            lines.append("      " + ", ".join(f"{k}={v}" for k, v in ix.roles))
        elif ix.accounts:
            lines.append(f"      accounts: {', '.join(ix.accounts)}")
        if (flow := flows.of(ix)) is not None:
            lines.append(
                f"      {flow.what} {flow.amount}: {_who(flow.payer, owner)} pays, "
                f"{_who(flow.receiver, owner)} receives"
            )
        elif ix.program not in DECODERS and owner in ix.accounts:
            lines.append("      a program call with our wallet: what it moves is not decoded")
    if (net := _net(verdict, owner)) is not None:
        lines.append(
            f"{'net effect':<14}fee {net.fee_lamports} lamports; {net.lamports_out} lamports to "
            f"accounts not ours; {net.rent_to_our_accounts} lamports of rent into our own "
            "new accounts"
        )
        lines += [
            f"{'':<14}{amount} tokens out of {source}" for source, amount in net.tokens_out.items()
        ]
        lines += [f"{'':<14}not computable: {what}" for what in net.unknown]
    if verdict.accepted:
        lines.append(f"{'verdict':<14}ACCEPTED: txguard would sign this for {owner}")
    else:
        lines.append(f"{'verdict':<14}REFUSED: txguard would not sign this")
        lines += [f"  - {reason}" for reason in verdict.reasons]
    return "\n".join(clean(line) for line in lines)
