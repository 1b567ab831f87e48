"""The wallet assignment maths (jupcron.service.assign): tables of cases."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from jupcron.service.assign import assign, plan_turn, ranking, score

NODES = ["host-a:101", "host-b:202", "host-c:303"]
WALLETS = ["alice", "bob", "carol"]


@pytest.mark.parametrize(
    ("shards", "nodes", "expected"),
    [
        ([], [], {}),
        (["alice"], [], {}),
        ([], ["n1"], {}),
        (["alice"], ["n1"], {"alice": "n1"}),
        (["alice", "bob", "carol"], ["n1"], {"alice": "n1", "bob": "n1", "carol": "n1"}),
        (["alice", "alice"], ["n1", "n1"], {"alice": "n1"}),
    ],
)
def test_small_cases(shards: list[str], nodes: list[str], expected: dict[str, str]) -> None:
    assert assign(shards, nodes) == expected


@pytest.mark.parametrize(
    ("n_shards", "n_nodes"),
    [(1, 1), (1, 3), (2, 3), (3, 3), (3, 2), (4, 3), (7, 3), (10, 4), (100, 7), (5, 5), (2, 5)],
)
def test_every_shard_once_and_loads_within_one(n_shards: int, n_nodes: int) -> None:
    shards = [f"wallet-{i}" for i in range(n_shards)]
    nodes = [f"node-{i}:{1000 + i}" for i in range(n_nodes)]
    owner = assign(shards, nodes)
    assert sorted(owner) == sorted(shards)
    assert set(owner.values()) <= set(nodes)
    loads = Counter(owner.values())
    counts = [loads.get(n, 0) for n in nodes]
    assert max(counts) - min(counts) <= 1


def test_three_wallets_on_three_nodes_one_each() -> None:
    owner = assign(WALLETS, NODES)
    assert sorted(owner.values()) == sorted(NODES)


def test_input_order_does_not_matter() -> None:
    first = assign(WALLETS, NODES)
    for shards, nodes in zip(
        itertools.permutations(WALLETS), itertools.permutations(NODES), strict=True
    ):
        assert assign(shards, nodes) == first


def test_ranking_is_by_score_and_stable() -> None:
    ranked = ranking("alice", NODES)
    assert sorted(ranked) == sorted(NODES)
    assert [score("alice", n) for n in ranked] == sorted(
        (score("alice", n) for n in NODES), reverse=True
    )
    assert score("alice", "n1") == score("alice", "n1")
    assert score("alice", "n1") != score("alice", "n2")


@pytest.mark.parametrize("n_shards", [3, 12, 60])
def test_a_node_leaving_moves_only_what_balance_needs(n_shards: int) -> None:
    shards = [f"w{i}" for i in range(n_shards)]
    before = assign(shards, NODES)
    gone = NODES[0]
    after = assign(shards, NODES[1:])
    assert gone not in after.values()
    moved = [s for s in shards if before[s] != gone and after[s] != before[s]]
    # the survivors each gain about a share; few of their own wallets change hands
    assert len(moved) <= n_shards // 3


@pytest.mark.parametrize("n_shards", [3, 12, 60])
def test_a_node_joining_takes_its_share(n_shards: int) -> None:
    shards = [f"w{i}" for i in range(n_shards)]
    before = assign(shards, NODES[:2])
    after = assign(shards, NODES)
    joined = [s for s in shards if after[s] == NODES[2]]
    assert len(joined) >= n_shards // 3
    moved_elsewhere = [s for s in shards if after[s] not in (before[s], NODES[2])]
    assert len(moved_elsewhere) <= n_shards // 3


ME = "me:1"
OTHER = "other:2"


def _mine_and_theirs() -> tuple[str, str]:
    owner = assign(["w1", "w2"], [ME, OTHER])
    mine = next(s for s, n in owner.items() if n == ME)
    theirs = next(s for s, n in owner.items() if n == OTHER)
    return mine, theirs


def test_a_holder_of_too_many_hands_the_excess_over() -> None:
    holders = {"w1": ME, "w2": ME}
    turn = plan_turn(ME, ["w1", "w2"], [OTHER], holders, {}, orphan_after=3.0)
    owner = assign(["w1", "w2"], [ME, OTHER], holders)
    assert turn.hand_over == {s for s, n in owner.items() if n == OTHER}
    assert len(turn.hand_over) == 1
    assert turn.take == set()


@pytest.mark.parametrize(
    ("case", "live", "holders", "free_for", "take", "hand_over", "orphans"),
    [
        # alone: take every free wallet
        ("alone", [], {}, {}, {"w1", "w2"}, set(), set()),
        # both live, nothing held: take only mine; theirs is not an orphan yet
        ("fresh", [OTHER], {}, {}, {"mine"}, set(), set()),
        # theirs free for long enough: adopt it as an orphan
        ("orphan", [OTHER], {}, {"theirs": 5.0}, {"mine", "theirs"}, set(), {"theirs"}),
        # theirs free but not long enough
        ("not yet", [OTHER], {}, {"theirs": 1.0}, {"mine"}, set(), set()),
        # they hold mine: wait for their hand-over, take nothing
        ("wait", [OTHER], {"mine": OTHER, "theirs": OTHER}, {}, set(), set(), set()),
        # an unknown session holds mine: not free, wait
        ("unknown holder", [OTHER], {"mine": "pid 77"}, {"mine": 9.0}, set(), set(), set()),
        # they left (not live): their wallet is mine by assignment, no orphan wait
        ("dead", [], {"mine": ME}, {}, {"theirs"}, set(), set()),
    ],
)
def test_plan_turn(
    case: str,
    live: list[str],
    holders: dict[str, str],
    free_for: dict[str, float],
    take: set[str],
    hand_over: set[str],
    orphans: set[str],
) -> None:
    mine, theirs = _mine_and_theirs()
    names = {"mine": mine, "theirs": theirs, "w1": "w1", "w2": "w2"}
    turn = plan_turn(
        ME, ["w1", "w2"], live,
        {names[s]: n for s, n in holders.items()},
        {names[s]: t for s, t in free_for.items()},
        orphan_after=3.0,
    )  # fmt: skip
    assert turn.take == {names[s] for s in take}, case
    assert turn.hand_over == {names[s] for s in hand_over}, case
    assert turn.orphans == {names[s] for s in orphans}, case


@pytest.mark.parametrize(
    ("case", "shards", "nodes", "holders", "expected_loads", "kept"),
    [
        # the only wallet stays with its holder when a second daemon joins
        ("one wallet", ["w"], ["a", "b"], {"w": "a"}, {"a": 1, "b": 0}, {"w": "a"}),
        # a holder of everything keeps two of three when a second joins, gives one
        ("join 2", ["w1", "w2", "w3"], ["a", "b"], {"w1": "a", "w2": "a", "w3": "a"},
         {"a": 2, "b": 1}, None),
        # three nodes: one each, whoever held what before
        ("join 3", ["w1", "w2", "w3"], ["a", "b", "c"], {"w1": "a", "w2": "a", "w3": "b"},
         {"a": 1, "b": 1, "c": 1}, {"w3": "b"}),
        # a holder that is not live keeps nothing
        ("dead holder", ["w1", "w2"], ["b"], {"w1": "a", "w2": "a"}, {"b": 2}, None),
        # an unknown session's wallet is placed as if free
        ("unknown", ["w1"], ["a"], {"w1": "pid 7"}, {"a": 1}, None),
    ],
)  # fmt: skip
def test_holders_keep_their_wallets_within_the_bound(
    case: str,
    shards: list[str],
    nodes: list[str],
    holders: dict[str, str],
    expected_loads: dict[str, int],
    kept: dict[str, str] | None,
) -> None:
    owner = assign(shards, nodes, holders)
    assert sorted(owner) == sorted(shards), case
    loads = Counter(owner.values())
    assert {n: loads.get(n, 0) for n in nodes} == expected_loads, case
    for shard, node in (kept or {}).items():
        assert owner[shard] == node, case
    # a holder within its bound keeps every wallet it may keep
    for shard, node in holders.items():
        if node in nodes and loads[node] < expected_loads[node]:
            assert owner[shard] == node, case


def test_with_holders_the_answer_is_still_the_same_for_everyone() -> None:
    holders = {"alice": NODES[0], "bob": NODES[0]}
    first = assign(WALLETS, NODES, holders)
    for nodes in itertools.permutations(NODES):
        assert assign(list(reversed(WALLETS)), nodes, dict(reversed(holders.items()))) == first
