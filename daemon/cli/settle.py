"""`jupcron settle RUN_ID`: record an operator's verdict on an in_doubt run."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from jupcron.chain.rpc import rpc_from_config
from jupcron.cli.main import Context, login_name, pass_ctx
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.store.follow import landed_evidence
from jupcron.store.handle import open_store
from jupcron.store.runstore import SqlRunStore

RUN_ID_MAX = 2**31 - 1  # runs.id is an INTEGER: 32 bits on PostgreSQL


@click.command()
@click.argument("run_id", type=click.IntRange(max=RUN_ID_MAX))
@click.option(
    "--landed/--not-landed",
    "landed",
    default=None,
    help="What the chain shows: the transaction landed without error, or it did not "
    "(never landed, or failed on-chain).",
)
@click.option("--reason", required=True, help="Why: what you looked at (goes into the audit).")
@click.option("--by", default=None, help="Who decides (default: the login name).")
@click.option("--force", is_flag=True, help="Record the verdict even if the RPC node disagrees.")
@pass_ctx
def settle(
    ctx: Context, run_id: int, landed: bool | None, reason: str, by: str | None, force: bool
) -> None:
    """Settle in_doubt run RUN_ID as succeeded (--landed) or failed (--not-landed).

    Look the run's signature up on-chain first (`jupcron audit --status in_doubt
    --format json`). With `rpc.url` set, the RPC node is asked too, and a verdict
    it contradicts changes nothing unless --force; so does --not-landed for a run whose
    transaction the order follower found (it opened or closed one of the run's orders).
    """
    if landed is None:
        raise click.UsageError("say what the chain shows: --landed or --not-landed")
    config = ctx.config
    store = open_store(config)
    rpc = rpc_from_config(config.rpc)
    try:
        with store.engine.connect() as conn:
            seen = landed_evidence(conn, run_id)
        verdict = Verdict(landed=landed, reason=reason, by=by or login_name())
        run = settle_in_doubt(
            SqlRunStore(store.engine), run_id, verdict, now=datetime.now(UTC), rpc=rpc,
            force=force, seen=seen,
        )  # fmt: skip
    finally:
        if rpc is not None:
            rpc.close()
        store.close()
    click.echo(f"run {run.id}  {run.status}  signature={run.signature}  settled: {reason}")
