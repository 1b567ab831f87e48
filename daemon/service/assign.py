"""Which live daemon leads which wallet (DESIGN §6): pure maths, no I/O.

Rendezvous (highest random weight) hashing with bounded loads: each wallet ranks
the live nodes by a hash of (wallet, node); wallets are placed in a fixed order,
each on the first node of its ranking that has room (``wallets // nodes``, one
more for ``wallets % nodes`` of them). A wallet stays with the live node holding
it while that node's load allows (no needless hand-over). So every node gets its
share (loads differ by at most one), every daemon computes the same answer from
the same view of who holds what, and a node joining or leaving moves few wallets.

    assign(["alice", "bob", "carol"], ["host-a:10", "host-b:11"])
    -> {"alice": "host-b:11", "bob": "host-a:10", "carol": "host-a:10"}

`plan_turn` is one daemon's decision on one rebalance turn, from what it sees
in PostgreSQL (who holds which wallet's lock): take the wallets assigned to it
whose lock is free, take an orphan (a free wallet its assignee has left free
for `orphan_after` seconds), hand over a wallet assigned to another live node.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


def score(shard: str, node: str) -> int:
    """The weight of ``node`` for ``shard`` (stable across processes and versions)."""
    digest = hashlib.sha256(f"{shard}\x00{node}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def ranking(shard: str, nodes: Iterable[str]) -> list[str]:
    """The nodes in the order ``shard`` prefers them (ties broken by name)."""
    return sorted(set(nodes), key=lambda n: (-score(shard, n), n))


def assign(
    shards: Iterable[str], nodes: Iterable[str], holders: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each shard's node: rendezvous hashing with loads that differ by at most one.
    ``holders`` (shard -> node holding it now): a live holder keeps its shard while
    its load allows (no needless hand-over: a second daemon does not take the only
    wallet from the first). No nodes: an empty map. The order of the arguments'
    items does not matter."""
    wanted = sorted(set(shards))
    live = sorted(set(nodes))
    if not live:
        return {}
    low, extra = divmod(len(wanted), len(live))  # `extra` nodes get one more than `low`
    load = dict.fromkeys(live, 0)
    out: dict[str, str] = {}

    def room(node: str) -> bool:
        full = sum(1 for n in live if load[n] > low)  # nodes already at low + 1
        return load[node] < (low + 1 if full < extra or load[node] > low else low)

    kept = [(s, holders[s]) for s in wanted if holders and holders.get(s) in load]
    for shard, node in sorted(kept, key=lambda sn: (-score(*sn), sn[0])):
        if room(node):
            out[shard] = node
            load[node] += 1
    # place the shards whose first choice is strongest first: their choice holds
    # under the bound more often, so fewer shards move when a node comes or goes
    rest = [s for s in wanted if s not in out]
    for shard in sorted(rest, key=lambda s: (-max(score(s, n) for n in live), s)):
        for node in ranking(shard, live):
            if room(node):
                out[shard] = node
                load[node] += 1
                break
    return out


@dataclass(frozen=True)
class Turn:
    """What one daemon does on one rebalance turn."""

    take: frozenset[str]  # try the lock of each (assigned to us, or orphaned)
    hand_over: frozenset[str]  # assigned to another live node: stop firing, then unlock
    orphans: frozenset[str]  # of `take`: not ours by assignment, free too long


def plan_turn(
    me: str,
    shards: Iterable[str],
    live: Iterable[str],
    holders: Mapping[str, str],
    free_for: Mapping[str, float],
    *,
    orphan_after: float,
) -> Turn:
    """One turn of `me`'s rebalance.

    ``holders``: shard -> node whose session holds its lock now (a free shard is absent);
    ``free_for``: shard -> seconds `me` has seen its lock free in a row.
    A shard held by nobody and assigned to another node is taken once it has been
    free for ``orphan_after`` seconds (its assignee does not come for it); a shard
    `me` holds that is assigned to another live node is handed over (the assignee
    takes it on its next turn). An assignee that is connected but never comes for
    its shard (a hung daemon) costs that shard `orphan_after` seconds per hand-over,
    never a second leader.
    """
    wanted = set(shards)
    nodes = set(live) | {me}
    owner = assign(wanted, nodes, holders)
    take: set[str] = set()
    orphans: set[str] = set()
    hand_over: set[str] = set()
    for shard in sorted(wanted):
        holder = holders.get(shard)
        if holder == me:
            if owner[shard] != me:
                hand_over.add(shard)
            continue
        if holder is not None:
            continue  # another session has it: wait for its hand-over or its end
        if owner[shard] == me:
            take.add(shard)
        elif free_for.get(shard, 0.0) >= orphan_after:
            take.add(shard)
            orphans.add(shard)
    return Turn(frozenset(take), frozenset(hand_over), frozenset(orphans))
