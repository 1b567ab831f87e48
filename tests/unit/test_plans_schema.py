"""Plan format: valid plans, the stored form, warnings, and the shipped examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupcron.plans.load import load_plans
from jupcron.plans.schema import RecurringRequest
from tests.fixtures.plans import (
    CONFIG_DIR,
    SOL,
    USDC,
    cancel_plan,
    recurring_plan,
    swap_plan,
    write_plans,
)


def load_one(tmp_path: Path, plan: dict[str, Any]) -> Any:
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    assert result.problems == []
    (loaded,) = result.plans
    return loaded


def test_example_plans_in_config_validate() -> None:
    result = load_plans([CONFIG_DIR])
    assert result.problems == []
    assert result.warnings == []
    kinds = {p.spec.kind for p in result.plans}
    assert kinds == {"recurring", "trigger-cancel", "swap"}
    assert len(result.files) >= 3


def test_stored_form_of_a_recurring_plan(tmp_path: Path) -> None:
    loaded = load_one(
        tmp_path,
        recurring_plan("dca", dry_run=True, max_in_amount=100_000_000, caps={"per_week": 10**8}),
    )
    spec = loaded.spec
    assert isinstance(spec.request, RecurringRequest)
    assert spec.request_dict() == {
        "inputMint": USDC,
        "outputMint": SOL,
        "params": {"time": {"inAmount": 100_000_000, "numberOfOrders": 2, "interval": 86400}},
    }
    assert spec.schedule_dict() == {
        "cron": "0 9 * * MON",
        "timezone": "Europe/Berlin",
        "jitter": 0,
        "misfire": "run-once",
        "grace": 300,
    }
    assert spec.settings_dict() == {
        "dry_run": True,
        "max_in_amount": 100_000_000,
        "caps": {"per_day": None, "per_week": 100_000_000},
    }
    assert loaded.source == str((tmp_path / "p.yaml").resolve())
    assert loaded.line == 2  # JSON written with indent: "name" is on line 2


def test_content_hash_follows_content(tmp_path: Path) -> None:
    a = load_one(tmp_path, swap_plan("a")).spec
    same = load_one(tmp_path, swap_plan("a")).spec
    other = load_one(tmp_path, swap_plan("a", every="2h")).spec
    assert a.content_hash() == same.content_hash()
    assert a.content_hash() != other.content_hash()


def test_optional_swap_parameters_and_cancel_defaults(tmp_path: Path) -> None:
    swap = swap_plan("s")
    swap["request"].update(
        {"slippageBps": 50, "excludeRouters": "dflow,okx", "referralFee": 50, "receiver": SOL}
    )
    spec = load_one(tmp_path, swap).spec
    assert spec.request_dict()["excludeRouters"] == "dflow,okx"
    cancel = cancel_plan("c", request={"order": SOL})
    assert load_one(tmp_path, cancel).spec.request_dict() == {"order": SOL}


def test_deprecated_price_params_are_a_warning(tmp_path: Path) -> None:
    plan = recurring_plan("p")
    plan["request"]["params"] = {
        "price": {"depositAmount": 200_000_000, "incrementUsdcValue": 1_000_000, "interval": 86400}
    }
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    assert result.problems == []
    assert len(result.plans) == 1
    (warning,) = result.warnings
    assert "warning: params.price (price-based recurring) is deprecated" in warning.message


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"user": SOL}, "request.user: remove it; the daemon fills in 'user' with its wallet"),
        (
            {"maker": SOL},
            "unknown key 'request.maker' (recurring requests take no wallet field; "
            "the daemon fills in 'user')",
        ),
        (
            {
                "params": {
                    "time": {
                        "inAmount": 10**9,
                        "numberOfOrders": 2,
                        "interval": 60,
                        "minPrice": 5,
                        "maxPrice": "1.5",
                    }
                }
            },
            "minPrice is above maxPrice",
        ),
        ({"outputMint": 12345}, "request.outputMint: must be a base58 public key (a string)"),
    ],
)
def test_request_rules(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    plan = recurring_plan("r")
    plan["request"].update(change)
    result = load_plans([write_plans(tmp_path / "r.yaml", plan)])
    assert result.plans == []
    assert [p.message for p in result.problems] == [message]


def test_stablecoin_minimums_only_apply_to_known_stablecoins(tmp_path: Path) -> None:
    plan = recurring_plan("r")
    plan["request"]["inputMint"] = SOL
    plan["request"]["outputMint"] = USDC
    plan["request"]["params"]["time"]["inAmount"] = 1000  # tiny, but SOL: the API decides
    assert load_one(tmp_path, plan).spec.name == "r"


def test_plans_list_may_be_empty_but_a_folder_needs_files(tmp_path: Path) -> None:
    assert load_plans([write_plans(tmp_path / "e.yaml", "plans: []\n")]).ok
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden.yaml").write_text("not: a plan\n")
    (empty / "notes.txt").write_text("ignored\n")
    result = load_plans([empty, tmp_path / "missing.yaml"])
    assert [p.message for p in result.problems] == [
        "no plan files (*.yaml, *.yml) here",
        "no such file or directory",
    ]


def test_names_are_unique_across_files(tmp_path: Path) -> None:
    write_plans(tmp_path / "d" / "a.yaml", [swap_plan("x")])
    write_plans(tmp_path / "d" / "b.yml", [swap_plan("y"), swap_plan("x")])
    result = load_plans([tmp_path / "d"])
    assert [p.spec.name for p in result.plans] == ["x", "y"]
    (problem,) = result.problems
    assert problem.file.endswith("b.yml")
    assert "name 'x' is already used by the plan at" in problem.message
    assert "a.yaml:4" in problem.message
