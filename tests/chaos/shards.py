"""Chaos for daemons that share the work: `python -m tests.chaos.shards [--seconds N] [--seed S]`.

Three daemons (`jupcron run` subprocesses) on one PostgreSQL lead three wallets
between them (fast swap and recurring plans on each wallet) while, at random
times drawn from the printed seed, one daemon at a time is SIGKILLed (and
started again a moment or a while later: its wallets are taken over, and it gets
its share back when it returns), the emulator injects faults and the plans are
re-applied. Then faults stop, the runs settle, every daemon is stopped, and the
invariants of `tests.chaos.check` are checked (duplicates, lost, wrong), plus:
at the end each wallet was led by exactly one daemon. Prints one summary line
with the takeover times (the seconds from a kill until every wallet of the
killed daemon was led by another); exits 1 if an invariant broke.

`CHAOS_SHARDS_SECONDS` (default 150) bounds the run; `CHAOS_SEED` replays one.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import Any

from jupcron.chain.wallet import write_keypair_file
from jupcron.store import control
from jupcron.store.engine import make_engine
from tests.chaos.check import Verdict, check
from tests.chaos.run import count_faults, inject_fault
from tests.chaos.world import BLOCKHASH_TTL, World, recurring_plan
from tests.fixtures.daemon import swap_plan
from tests.support.pgcluster import PgCluster

WALLETS = ["default", "w1", "w2"]
DAEMONS = 3
SETTLE_MIN = 6.0


def wallet_plans(wallet: str) -> list[dict[str, Any]]:
    swap = swap_plan(f"swap-{wallet}", {"every": "2s", "grace": 20, "misfire": "run-once"})
    slow = swap_plan(f"swap3-{wallet}", {"every": "3s", "grace": 20, "misfire": "skip"})
    dca = recurring_plan(f"dca-{wallet}", {"every": "4s", "grace": 20})
    plans = [swap, slow, dca]
    for plan in plans:
        plan["wallet"] = wallet
    return plans


@dataclass
class Fleet:
    """The three daemons of one chaos run, and what we did to them."""

    world: World
    procs: dict[int, subprocess.Popen[str]] = field(default_factory=dict)  # slot -> daemon
    down: dict[int, float] = field(default_factory=dict)  # slot -> when it may come back
    takeovers: list[float] = field(default_factory=list)
    waiting: list[tuple[float, str, frozenset[str]]] = field(default_factory=list)
    untaken: int = 0

    def start(self, slot: int) -> None:
        self.procs[slot] = self.world.env.start()
        self.down.pop(slot, None)

    def led(self) -> dict[str, list[str]]:
        """wallet -> the running daemons that say they lead it."""
        engine = make_engine(self.world.env.db_url)
        try:
            with engine.connect() as conn:
                nodes = control.nodes(conn)
        finally:
            engine.dispose()
        now = datetime.now(UTC)
        found: dict[str, list[str]] = {w: [] for w in WALLETS}
        for node in nodes:
            if node.running(now):
                for wallet in node.wallets or ():
                    found.setdefault(wallet, []).append(node.node)
        return found

    def kill_one(self, back_after: float) -> None:
        alive = [s for s, p in self.procs.items() if p.poll() is None and s not in self.down]
        if len(alive) < 2:
            return  # keep one daemon up at least
        slot = self.world.rng.choice(alive)
        proc = self.procs[slot]
        node_suffix = f":{proc.pid}"
        wallets = frozenset(w for w, nodes in self.led().items()
                            if any(n.endswith(node_suffix) for n in nodes))  # fmt: skip
        proc.kill()
        proc.wait(10)
        self.world.tally.kills += 1
        self.world.say(f"daemon {slot} (pid {proc.pid}) SIGKILLed, it led {sorted(wallets)}")
        if wallets:
            self.waiting.append((time.monotonic(), node_suffix, wallets))
        self.down[slot] = time.monotonic() + back_after

    def watch(self) -> None:
        """Restart daemons whose time down is over; note crashes; time the takeovers."""
        now = time.monotonic()
        for slot, proc in list(self.procs.items()):
            if slot in self.down:
                if now >= self.down[slot]:
                    self.world.say(f"daemon {slot} back")
                    self.start(slot)
                continue
            code = proc.poll()
            if code is not None:
                tail = self.world.env.log_of(proc).strip().splitlines()[-3:]
                self.world.tally.crashes.append(f"exit {code}: {' | '.join(tail)}")
                self.world.say(f"CRASH: daemon {slot} exited {code}")
                self.start(slot)
        if self.waiting:
            led = self.led()
            still = []
            for since, suffix, wallets in self.waiting:
                # another daemon says it leads each (the dead one's row lingers until stale)
                taken = all(any(not n.endswith(suffix) for n in led.get(w, [])) for w in wallets)
                if taken:
                    self.takeovers.append(now - since)
                    self.world.say(f"  taken over in {now - since:.1f} s: {sorted(wallets)}")
                else:
                    still.append((since, suffix, wallets))
            self.waiting = still

    def stop_all(self) -> None:
        for slot, proc in self.procs.items():
            if slot in self.down or proc.poll() is not None:
                continue
            code = self.world.env.stop(proc, timeout=60)
            if code != 0:
                tail = self.world.env.log_of(proc).strip().splitlines()[-3:]
                self.world.tally.crashes.append(f"stop exit {code}: {' | '.join(tail)}")


@dataclass(frozen=True)
class Outcome:
    seed: int
    line: str
    ok: bool
    verdict: Verdict
    takeovers: list[float]


def summary(verdict: Verdict, fleet: Fleet) -> str:
    t, s = fleet.world.tally, verdict.status
    times = fleet.takeovers
    took = (f"takeover_s median={median(times):.1f} max={max(times):.1f} n={len(times)}"
            if times else "takeover_s n=0")  # fmt: skip
    return (
        f"daemons={DAEMONS} wallets={len(WALLETS)} fires={verdict.fires} runs={verdict.runs} "
        f"succeeded={s['succeeded']} failed={s['failed']} skipped={s['skipped']} "
        f"in_doubt={s['in_doubt']} kills={t.kills} faults={t.faults} {took} "
        f"duplicates={verdict.duplicates} lost={verdict.lost} wrong={verdict.wrong} "
        f"crashes={len(t.crashes)}"
    )


def shards_chaos(root: Path, db_url: str, seed: int, seconds: float) -> Outcome:
    world = World(root, db_url, seed, None)
    fleet = Fleet(world)
    try:
        wallets = {}
        for name in WALLETS[1:]:
            keypair = root / f"{name}.json"
            write_keypair_file(keypair)
            wallets[name] = {"keypair": str(keypair)}
        world.env.write_config(  # World's own settings, and the wallets
            runner={"recovery_interval": 1, "shutdown_timeout": 15,
                    "blockhash_validity": BLOCKHASH_TTL},
            logging={"level": "info", "format": "json"},
            wallets=wallets,
        )  # fmt: skip
        world.plans = [p for w in WALLETS for p in wallet_plans(w)]
        world.env.write_plans(*world.plans)
        world.apply()
        for slot in range(DAEMONS):
            fleet.start(slot)
        run_for = max(20.0, seconds - 35.0)
        world.say(
            f"shards: {DAEMONS} daemons, {len(WALLETS)} wallets, {run_for:.0f} s, seed {seed}"
        )
        rng = world.rng
        events: list[tuple[float, str]] = []
        t = 1.0
        while t < run_for:
            events.append((t, "fault"))
            t += rng.uniform(0.8, 3.0)
        t = rng.uniform(8, 12)
        while t < run_for - 8:
            events.append((t, "kill"))
            t += rng.uniform(8, 14)
        events.append((run_for * rng.uniform(0.4, 0.6), "apply"))
        start = time.monotonic()
        for at, what in sorted(events):
            while time.monotonic() - start < at:
                fleet.watch()
                time.sleep(0.2)
            if what == "fault":
                inject_fault(world)
            elif what == "kill":
                fleet.kill_one(back_after=rng.choice([1.0, 3.0, 15.0]))
            else:
                world.say("plans changed and re-applied")
                world.change_plans()
        while time.monotonic() - start < run_for:
            fleet.watch()
            time.sleep(0.2)
        count_faults(world)
        world.emulator.faults.clear()
        for slot in list(fleet.down):
            fleet.start(slot)
        world.say("faults off, every daemon up, settling")
        settle_start = time.monotonic()
        while time.monotonic() - settle_start < 30:
            fleet.watch()
            time.sleep(0.5)
            led = fleet.led()
            one_each = all(len(led[w]) == 1 for w in WALLETS)
            if (
                time.monotonic() - settle_start >= SETTLE_MIN
                and world.in_flight() == 0
                and one_each
            ):
                break
        led = fleet.led()
        for wallet in WALLETS:
            if len(led[wallet]) != 1:
                world.tally.problems.append(f"wallet {wallet} led by {led[wallet]} at the end")
        for _since, _suffix, wallets in fleet.waiting:
            world.tally.problems.append(f"wallets {sorted(wallets)} never taken over")
        stopped_at = datetime.now(UTC)
        fleet.stop_all()
        verdict = check(db_url, world.emulator.ledger.landed(), stopped_at)
        problems = world.tally.problems + world.tally.crashes + verdict.details
        for problem in problems:
            print(f"  shards: {problem}")
        ok = not problems and verdict.wrong == 0
        if not ok:
            world.dump_logs()
        return Outcome(seed, summary(verdict, fleet), ok, verdict, fleet.takeovers)
    finally:
        for proc in fleet.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        world.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.shards", description=__doc__)
    parser.add_argument("--seconds", type=float,
                        default=float(os.environ.get("CHAOS_SHARDS_SECONDS", "150")))  # fmt: skip
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    seed = args.seed
    if seed is None:
        env_seed = os.environ.get("CHAOS_SEED")
        seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1, 10**6)
    print(f"chaos (shards) seed={seed} seconds={args.seconds:.0f} (replay: CHAOS_SEED={seed})",
          flush=True)  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="jupcron-chaos-shards-"))
    outcome = None
    pg = PgCluster()
    try:
        pg.init()
        pg.start()
        url = pg.create_database("chaos")
        outcome = shards_chaos(root, url, seed, args.seconds)
    finally:
        pg.destroy()
        if outcome is not None and outcome.ok:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"  shards: daemon logs kept in {root}")
    assert outcome is not None
    print(f"shards: {outcome.line}")
    if not outcome.ok:
        print(f"CHAOS FAILED (seed {seed}; replay with CHAOS_SEED={seed})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
