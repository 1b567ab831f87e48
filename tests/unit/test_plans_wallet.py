"""A plan's ``wallet: NAME`` (DESIGN §3): its default, its stored form, and the check
against the daemon config's wallets."""

from __future__ import annotations

from pathlib import Path

from jupcron.plans.load import load_plans
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import swap_plan, write_plans

WALLETS = ("default", "savings", "trading")


def test_a_plan_without_wallet_is_the_default_wallets_and_keeps_its_hash(
    tmp_path: Path,
) -> None:
    path = write_plans(tmp_path / "p.yaml", [swap_plan("a"), swap_plan("b", wallet="default")])
    result = load_plans([path], WALLETS)
    assert result.problems == []
    a, b = (p.spec for p in result.plans)
    assert a.wallet == b.wallet == "default"
    # the default wallet is not in the stored content: every plan stored before there
    # were several wallets keeps its hash (no spurious change on the first apply)
    assert "wallet" not in a.content()
    assert a.content_hash() == b.content_hash()  # (a plan's name is not in its content)


def test_another_wallet_is_part_of_the_content(tmp_path: Path) -> None:
    path = write_plans(tmp_path / "p.yaml", [swap_plan("a"), swap_plan("b", wallet="savings")])
    plain, saving = (p.spec for p in load_plans([path], WALLETS).plans)
    assert saving.wallet == "savings"
    assert saving.content()["wallet"] == "savings"
    assert {k: v for k, v in saving.content().items() if k != "wallet"} == plain.content()
    assert saving.content_hash() != plain.content_hash()
    assert PlanRecord.from_spec(saving).wallet == "savings"
    assert PlanRecord.from_spec(plain).wallet == "default"


def test_a_wallet_the_config_does_not_have_is_a_positioned_problem(tmp_path: Path) -> None:
    path = write_plans(
        tmp_path / "p.yaml", [swap_plan("a", wallet="savings"), swap_plan("b", wallet="nope")]
    )
    result = load_plans([path], WALLETS)
    assert [str(p) for p in result.problems] == [
        f"{path}:27:7: wallet: unknown wallet 'nope': the config has default, savings, "
        "trading (add it under wallets:)"
    ]
    assert [p.spec.name for p in result.plans] == ["a"]


def test_without_a_default_wallet_every_plan_must_name_one(tmp_path: Path) -> None:
    path = write_plans(tmp_path / "p.yaml", [swap_plan("a"), swap_plan("b", wallet="x")])
    result = load_plans([path], ("x",))
    (problem,) = result.problems
    assert problem.line == 3  # the plan itself: it has no wallet key to point at
    assert "wallet: no default wallet: the config sets wallets: but not wallet.keypair" in (
        problem.message
    )


def test_without_a_config_the_wallet_is_not_checked(tmp_path: Path) -> None:
    path = write_plans(tmp_path / "p.yaml", swap_plan("a", wallet="whatever"))
    assert load_plans([path]).problems == []


def test_a_wallet_name_is_checked_like_a_config_key(tmp_path: Path) -> None:
    path = write_plans(tmp_path / "p.yaml", swap_plan("a", wallet="two words"))
    (problem,) = load_plans([path]).problems
    assert "wallet: must be 1-64 letters, digits" in problem.message
