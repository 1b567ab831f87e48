"""A bounded chaos run: `python -m tests.chaos.run [--seconds N] [--seed S] [--backend ...]`.

The daemon runs many fast plans (all three kinds) against the emulator while,
at random times drawn from the printed seed, the emulator injects faults, the
daemon is SIGKILLed (from outside, or at an exact step boundary through
JUPCRON_FAILPOINTS) and restarted, PostgreSQL is restarted, and the plans are
changed and re-applied. Then faults stop, recovery settles, the daemon is
stopped, and the invariants are checked (see `tests.chaos.check`). Prints one
summary line per backend; exits 1 if any invariant is broken.

`CHAOS_SECONDS` (default 280) bounds the whole run, split over the backends;
`CHAOS_SEED` replays a run.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jupcron import failpoints
from jupcron.emulator.ledger import Execution
from tests.chaos.check import Verdict, check
from tests.chaos.world import World
from tests.support.pgcluster import PgCluster

SETUP = 10.0  # seconds set aside per backend for start-up, stop and the final checks
# the quiet period at the end (faults off): at least SETTLE_MIN, and until nothing is in
# flight; an unanswerable execute needs the blockhash lifetime to become in_doubt
SETTLE_MIN = 6.0

# (kind, weight, extra params) of the faults drawn at random
FAULTS: list[tuple[str, int, dict[str, object]]] = [
    ("rate_limit", 3, {"retry_after": 1}),
    ("server_error", 3, {}),
    ("slow", 2, {}),
    ("drop", 2, {}),
    ("malformed", 2, {}),
    ("failed", 2, {}),
    ("lost_answer", 3, {}),
]
OPERATIONS = ["create_recurring_order", "cancel_trigger_order", "ultra_order",
              "execute_recurring", "execute_trigger", "execute_ultra", "execute_*", None]  # fmt: skip


@dataclass(frozen=True)
class Result:
    backend: str
    seed: int
    line: str
    ok: bool
    verdict: Verdict
    landed: list[Execution]  # what landed at the emulator
    stopped_at: datetime  # when the daemon was told to stop


def summary(verdict: Verdict, world: World) -> str:
    t = world.tally
    s = verdict.status
    return (
        f"fires={verdict.fires} runs={verdict.runs} succeeded={s['succeeded']} "
        f"failed={s['failed']} skipped={s['skipped']} in_doubt={s['in_doubt']} "
        f"kills={t.kills} pg_restarts={t.pg_restarts} faults={t.faults} "
        f"duplicates={verdict.duplicates} lost={verdict.lost} crashes={len(t.crashes)}"
    )


def inject_fault(world: World) -> None:
    rng = world.rng
    kind, _, params = rng.choices(FAULTS, weights=[w for _, w, _ in FAULTS])[0]
    extra: dict[str, object] = dict(params)
    count = rng.randint(3, 8) if kind == "rate_limit" else rng.randint(1, 3)  # 429: a burst
    if kind == "server_error":
        extra["status"] = rng.choice([500, 502, 503])
    if kind == "slow":
        extra["seconds"] = round(rng.uniform(0.5, 4.0), 1)
    operation = rng.choice(OPERATIONS)
    if kind in ("failed", "lost_answer") and (operation is None or "execute" not in operation):
        operation = "execute_*"
    world.emulator.faults.add(kind, count=count, operation=operation, **extra)


def timeline(world: World, seconds: float, with_pg: bool) -> list[tuple[float, str]]:
    """When each disturbance happens (seconds from the start), from the seed."""
    rng = world.rng
    events: list[tuple[float, str]] = []
    t = 1.0
    while t < seconds:
        events.append((t, "fault"))
        t += rng.uniform(0.5, 2.5)
    t = rng.uniform(4, 8)
    n = 0
    while t < seconds - 3:
        events.append((t, "failpoint" if n % 2 else "kill"))
        t += rng.uniform(7, 14)
        n += 1
    if with_pg:
        t = rng.uniform(6, 12)
        while t < seconds - 5:
            events.append((t, "pg_restart"))
            t += rng.uniform(15, 25)
    events.append((seconds * rng.uniform(0.3, 0.45), "apply"))
    events.append((seconds * rng.uniform(0.6, 0.75), "apply"))
    return sorted(events)


def disturb(world: World, what: str) -> None:
    if what == "fault":
        inject_fault(world)
    elif what == "kill":
        world.kill()
        time.sleep(world.rng.uniform(0.2, 2.0))  # down for a moment: slots pass
        world.start()
    elif what == "failpoint":
        point = world.rng.choice(failpoints.NAMES)
        world.kill()
        world.say(f"restart armed with failpoint {point}")
        world.start(failpoint=point)
    elif what == "pg_restart":
        assert world.pg is not None
        world.say("PostgreSQL restart (fast)")
        world.pg.restart()
        world.tally.pg_restarts += 1
    elif what == "apply":
        world.say("plans changed and re-applied")
        world.change_plans()


def count_faults(world: World) -> None:
    world.tally.faults += len(world.emulator.faults.history)


def chaos(root: Path, db_url: str, seed: int, seconds: float, pg: PgCluster | None) -> Result:
    """One chaos run on one store; `seconds` bounds it (setup and checks included)."""
    backend = "postgresql" if pg else "sqlite"
    budget_end = time.monotonic() + seconds
    world = World(root, db_url, seed, pg)
    try:
        settle_budget = min(30.0, max(16.0, seconds * 0.2))
        run_for = max(10.0, seconds - SETUP - settle_budget)
        world.make_plans(run_for)
        world.apply()
        world.start()
        world.say(f"{backend}: chaos for {run_for:.0f} s, seed {seed}")
        start = time.monotonic()
        for at, what in timeline(world, run_for, pg is not None):
            while time.monotonic() - start < at:
                world.watch()
                time.sleep(0.1)
            disturb(world, what)
        while time.monotonic() - start < run_for:
            world.watch()
            time.sleep(0.1)
        count_faults(world)
        world.emulator.faults.clear()
        if world.armed:  # a failpoint not yet reached: end it, settle unarmed
            world.kill()
            world.start()
        world.say("faults off, settling")
        settle_start = time.monotonic()
        settle_end = max(budget_end - SETUP / 2, settle_start + SETTLE_MIN)
        while time.monotonic() < settle_end:
            world.watch()
            time.sleep(0.5)
            if time.monotonic() - settle_start >= SETTLE_MIN and world.in_flight() == 0:
                break
        stopped_at = datetime.now(UTC)
        world.stop()
        landed = world.emulator.ledger.landed()
        verdict = check(db_url, landed, stopped_at)
        problems = world.tally.problems + world.tally.crashes + verdict.details
        ok = not problems and verdict.wrong == 0
        line = summary(verdict, world)
        for problem in problems:
            print(f"  {backend}: {problem}")
        if not ok:
            world.dump_logs()
        return Result(backend, seed, line, ok, verdict, landed, stopped_at)
    finally:
        world.close()


def run_backend(backend: str, seed: int, seconds: float) -> Result:
    """One backend; its folder (daemon logs) is kept when an invariant broke."""
    root = Path(tempfile.mkdtemp(prefix=f"jupcron-chaos-{backend}-"))
    result = None
    try:
        if backend == "sqlite":
            result = chaos(root, f"sqlite:///{root / 'jupcron.db'}", seed, seconds, None)
            return result
        pg = PgCluster()
        try:
            pg.init()
            pg.start()
            url = pg.create_database("chaos")
            result = chaos(root, url, seed, seconds, pg)
            return result
        finally:
            pg.destroy()
    finally:
        if result is not None and result.ok:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"  {backend}: daemon logs kept in {root}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.run", description=__doc__)
    parser.add_argument("--seconds", type=float,
                        default=float(os.environ.get("CHAOS_SECONDS", "280")))  # fmt: skip
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args(argv)
    seed = args.seed
    if seed is None:
        env_seed = os.environ.get("CHAOS_SEED")
        seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1, 10**6)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    print(f"chaos seed={seed} seconds={args.seconds:.0f} (replay: CHAOS_SEED={seed})", flush=True)
    results = []
    for backend in backends:
        results.append(run_backend(backend, seed, args.seconds / len(backends)))
    failed = False
    for result in results:
        print(f"{result.backend}: {result.line}")
        failed = failed or not result.ok
    if failed:
        print(f"CHAOS FAILED (seed {seed}; replay with CHAOS_SEED={seed})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
