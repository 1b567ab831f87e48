"""Operators' commands given input that cannot mean what they typed: one clear line,
a non-zero exit, never a traceback, nothing changed; and two commands that take the
same option read it alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.support import clifork


@pytest.mark.parametrize("command", ["audit", "report"])
@pytest.mark.parametrize(
    "span",
    [("2026-02-01", "2026-01-01"), ("2026-01-01T00:00:00+00:00", "2026-01-01T01:00:00+02:00")],
    ids=["later", "same-instant"],
)
def test_a_span_that_ends_before_it_starts_is_refused_alike(
    daemon_env: DaemonEnvFactory, command: str, span: tuple[str, str]
) -> None:
    """`audit` listed nothing for it, with exit 0: an operator read "no such runs"."""
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    since, until = span
    done = env.jupcron(command, "--since", since, "--until", until)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--since must be before --until" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [["wallet", "show", "--name", ""], ["audit", "--wallet", ""], ["report", "--wallet", ""],
     ["audit", "--wallet", "no such/name"]],
    ids=["wallet-show", "audit", "report", "audit-not-a-name"],
)  # fmt: skip
def test_a_wallet_name_no_wallet_can_have_is_refused(
    daemon_env: DaemonEnvFactory, args: list[str]
) -> None:
    """``--name "$W"`` with W unset printed the default wallet's address (a script then
    funds or watches the wrong wallet); ``--wallet ""`` listed nothing, exit 0."""
    env = daemon_env()
    done = env.jupcron(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "wallet name" in done.stderr, done.stderr
    assert done.stdout == ""


def test_an_offset_past_any_plan_lists_none(daemon_env: DaemonEnvFactory) -> None:
    """An offset SQLite cannot hold was "unexpected OverflowError" (PostgreSQL: the
    database's own error); past the last plan it is simply none."""
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    done = env.jupcron("plans", "list", "--offset", str(10**20))
    assert done.returncode == 0, done.stderr
    assert "(none)" in done.stdout
    assert "tick" not in done.stdout


@pytest.mark.parametrize(
    "mint", ["USDC", "not-a-key", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1"]
)
def test_tx_inspect_refuses_a_mint_that_is_no_mint_address(
    daemon_env: DaemonEnvFactory, mint: str
) -> None:
    """``--mint`` names a mint whose token accounts of ours count as ours: a symbol, a
    typo or a truncated address matched nothing, and the verdict was the one without
    it (a transfer to our own account read as money leaving), with no word of why."""
    env = daemon_env()
    done = env.jupcron("tx", "inspect", "--mint", mint, "AAAA")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--mint" in done.stderr, done.stderr
    assert "not a transaction" not in done.stderr, done.stderr


def test_an_empty_plan_path_is_refused_never_the_current_folder(
    daemon_env: DaemonEnvFactory, tmp_path: Path
) -> None:
    """`plans apply "$FILE"` with FILE unset applied every plan file in the folder the
    command ran in (``""`` is ``.``): plans nobody meant, stored and scheduled."""
    env = daemon_env()
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "p.yaml").write_text(json.dumps(swap_plan("stray", {"every": "1h"})))
    for args in (["plans", "apply", "--offline", ""], ["plans", "validate", "--offline", ""]):
        done = clifork.run(["--config", str(env.config), *args], env=env._env({}), cwd=stray)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "empty" in done.stderr, done.stderr
    assert env.rows() == []
    assert "stray" not in env.jupcron("plans", "list").stdout


@pytest.mark.parametrize(
    "args",
    [["tx", "inspect", "--plan", "", "AAAA"], ["wallet", "new", ""], ["report", "--chart", ""]],
    ids=["tx-inspect-plan", "wallet-new", "report-chart"],
)
def test_an_empty_file_or_plan_argument_is_refused(
    daemon_env: DaemonEnvFactory, args: list[str]
) -> None:
    """``--plan ""`` judged the transaction without any plan's terms (an ACCEPTED a run of
    the plan would not get); ``wallet new ""`` and ``--chart ""`` named ``.``."""
    env = daemon_env()
    done = env.jupcron(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "empty" in done.stderr, done.stderr


def test_an_empty_reason_keeps_the_reason_a_pause_has(daemon_env: DaemonEnvFactory) -> None:
    """Pausing again keeps the reason unless --reason gives a new one; ``--reason
    "$WHY"`` with WHY unset gave ``""``, which replaced (wiped) the reason recorded."""
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    assert env.jupcron("pause", "tick", "--reason", "incident 42: ask ann").returncode == 0
    done = env.jupcron("pause", "tick", "--reason", "")
    assert done.returncode == 0, done.stderr
    assert "paused tick: incident 42: ask ann" in done.stdout, done.stdout
    assert "reason kept" in done.stdout, done.stdout
