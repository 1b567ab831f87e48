"""`jupcron fire NAME`: run one plan now, recorded like any run."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

import click
from sqlalchemy.exc import SQLAlchemyError

from jupcron.app import build_runtime
from jupcron.cli import interrupt
from jupcron.cli.main import Context, foreign_error, login_name, pass_ctx
from jupcron.config import Config, load_config
from jupcron.domain import RunStatus
from jupcron.errors import ConfigError, JupcronError
from jupcron.runner.core import RunOptions
from jupcron.runner.manual import withdraw_interrupted
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.recovery import recover
from jupcron.service.alerts import AlertEvent, Alerts, alerts_from_config
from jupcron.store import control
from jupcron.store.engine import begin
from jupcron.store.plans import get_plan
from jupcron.store.port import RunStore, UnendedRunError
from jupcron.store.records import PlanRecord, RunRecord


def _not_beside(plan: PlanRecord, run: RunRecord) -> str:
    """Why a fire of `plan` is refused beside its unended run `run`, and what to do."""
    head = (
        f"plan {plan.name!r} is not fired: its run {run.id} ({run.trigger}, for "
        f"{run.scheduled_for.isoformat()}) is {run.status}"
    )
    if run.status is RunStatus.IN_DOUBT:
        what = (
            f" with signature {run.signature}: it may have landed; look it up and settle "
            f"it first ('jupcron settle {run.id} --landed|--not-landed --reason ...')"
        )
    elif run.signature:
        what = (
            f" with signature {run.signature}: it may still land, and recovery settles it "
            "with the same signed transaction; fire once it has ended ('jupcron status')"
        )
    else:
        what = (
            ", nothing signed yet: it is being run (or recovery carries it on, or skips "
            "it past its grace); fire once it has ended ('jupcron status')"
        )
    return f"{head}{what}; --force fires beside it anyway (a second purchase)"


def _config_now(ctx: Context) -> Config | None:
    """The config file as it is now, read again before the run orders and before it
    signs: a kill switch or `safety.dry_run` turned on in it while this fire's order
    call is under way stops it, as a reload stops a daemon's runs. None (the config the
    fire started with stays) when it does not load."""
    try:
        return load_config(ctx.config_path)
    except JupcronError as exc:
        first = str(exc).splitlines()[0]
        click.echo(f"warning: the config does not load now ({first}); this fire keeps the "
                   "config it started with", err=True)  # fmt: skip
        return None


@click.command()
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Everything up to txguard; nothing signed or sent.")
@click.option(
    "--force",
    is_flag=True,
    help="Fire even though the plan has a run in flight or in_doubt (a second purchase).",
)
@pass_ctx
def fire(ctx: Context, name: str, dry_run: bool, force: bool) -> None:
    """Run plan NAME now. Exit 0 if it succeeded (or dry-ran), 1 otherwise.

    A paused plan (`jupcron pause`) is not fired: resume it first. Nor is a plan with
    a run that has not ended (in flight, a daemon's or another fire's, or in_doubt):
    each fire is a slot of its own, so a second one beside it buys again; --force
    fires anyway (--dry-run is never refused for it: it signs nothing)."""
    # made before anything is ordered: a notify URL it refuses stops the fire here, not
    # after a landed run (an exit 1 then reads as a failed fire, and a retry buys twice)
    alerts = alerts_from_config(ctx.config.notify, immediate=True)
    runtime = build_runtime(ctx.config)
    runtime.runner.config_source = partial(_config_now, ctx)
    try:
        with runtime.store.factory() as session:
            plan = get_plan(session, name)
        if plan is None:
            raise ConfigError(f"no plan named {name!r} in the store (run 'jupcron plans apply')")
        if not plan.enabled:
            raise ConfigError(f"plan {name!r} is disabled")
        with begin(runtime.store.engine) as conn:
            pause = control.pause_in_effect(control.pauses(conn), name)
        if pause is not None:
            raise ConfigError(f"plan {name!r} is not fired: {pause.skip_reason()}")
        now = datetime.now(UTC)
        options = RunOptions(dry_run=dry_run, trigger="manual")
        try:
            # looked for in the claim's own transaction (`alone`), not before it: a look
            # of its own missed a run claimed meanwhile (two fires at once, or the
            # daemon's slot due now), and both bought. A dry run signs nothing: it buys
            # nothing beside the plan's run either
            outcome = runtime.runner.fire(plan, now, options, alone=not (force or dry_run))
            if outcome is not None and outcome.status.in_flight and not outcome.taken_over:
                # its own run only (a daemon's runs are the daemon's, however stale they look)
                again = recover(runtime.runner, runs={outcome.run_id})
                outcome = again[0] if again else outcome
        except UnendedRunError as beside:
            raise ConfigError(_not_beside(plan, beside.run)) from None
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (`jupcron.cli.interrupt`)
            click.echo(_interrupted(runtime.runs, plan, now), err=True)
            raise SystemExit(interrupt.said(stop)[1]) from None
    finally:
        runtime.close()
    if outcome is None:
        raise ConfigError(f"plan {name!r} already has a run for {now.isoformat()}")
    parts = [f"run {outcome.run_id}", outcome.plan_name, str(outcome.status)]
    if outcome.request_id:
        parts.append(f"requestId={outcome.request_id}")
    if outcome.signature:
        parts.append(f"signature={outcome.signature}")
    if outcome.error:
        parts.append(f"error={outcome.error}")
    click.echo("  ".join(parts))
    _notify(alerts, outcome, dry_run)
    if not outcome.ok:
        raise SystemExit(1)


def _interrupted(store: RunStore, plan: PlanRecord, slot: datetime) -> str:
    """Ctrl-C: the fire's run withdrawn if nothing was signed, else named for recovery."""
    try:
        run = withdraw_interrupted(store, plan.id, slot, now=datetime.now(UTC), by=login_name())
    except (JupcronError, SQLAlchemyError) as exc:  # the store, say, is down too
        return (
            f"interrupted: what became of the run of plan {plan.name} for {slot.isoformat()} "
            f"is not known ({exc}); see 'jupcron status'"
        )
    if run is None:
        return f"interrupted: plan {plan.name} has no run of this fire in flight"
    if run.status is RunStatus.SKIPPED:
        return f"interrupted: run {run.id} {plan.name} skipped: nothing was signed"
    if run.status.in_flight:
        return (
            f"interrupted: run {run.id} {plan.name} left {run.status} with signature "
            f"{run.signature}: it may still land; recovery settles it with the same "
            "signed transaction (a running daemon's once the run has gone stale, else a "
            "daemon's at its start); do not fire again before it is settled ('jupcron status')"
        )
    return f"interrupted: run {run.id} {plan.name} is {run.status}"


def _notify(alerts: Alerts | None, outcome: RunOutcome, dry_run: bool) -> None:
    """A manual fire is said (``manual_fire``), with its outcome as the daemon says a
    run's; one message, sent before the command ends. The run is over and its line
    printed: whatever goes wrong here is a warning, never the exit status, which is
    the run's (a landed run reported as failed is fired again)."""
    if alerts is None:
        return
    what = "dry run" if dry_run else "fire"
    error = f": {outcome.error}" if outcome.error else ""
    try:
        alerts.note(
            AlertEvent.MANUAL_FIRE,
            f"manual {what} of plan {outcome.plan_name} by {login_name()}: run "
            f"{outcome.run_id} {outcome.status}{error}",
        )
        alerts.note_run(outcome)
        alerts.start().stop()
    except Exception as exc:  # noqa: BLE001 - after the run: said, never the exit status
        click.echo(f"warning: the notification of run {outcome.run_id} was not sent: "
                   f"{foreign_error(exc)}", err=True)  # fmt: skip
