"""Requests, schedules and mints checked once per distinct value (a large apply's plans
repeat a few) are shared only between values that are the same: the same types and
digits; an invalid one is refused every time, with the same message."""

from __future__ import annotations

from pathlib import Path

from jupcron.plans.load import load_plans

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def _swap(name: str, amount: str, schedule: str = "cron: '0 3 * * *'",
          output: str = SOL) -> str:  # fmt: skip
    return (
        f"  - name: {name}\n    kind: swap\n    schedule: {{{schedule}}}\n"
        f"    request: {{inputMint: {USDC}, outputMint: {output}, amount: {amount}}}\n"
    )


def _recurring(name: str, min_price: str) -> str:
    return (
        f"  - name: {name}\n    kind: recurring\n    schedule: {{every: 1d}}\n"
        f"    request:\n      inputMint: {USDC}\n      outputMint: {SOL}\n"
        f"      params: {{time: {{inAmount: 200000000, numberOfOrders: 2, interval: 86400,"
        f" minPrice: {min_price}, maxPrice: 500}}}}\n"
    )


def _load(tmp_path: Path, name: str, *plans: str) -> list[str]:
    file = tmp_path / f"{name}.yaml"
    file.write_text("plans:\n" + "".join(plans))
    result = load_plans([file])
    return [p.message for p in result.problems] + [str(p.spec.request_dict()) for p in result.plans]


def test_a_value_like_a_checked_one_is_checked_again(tmp_path: Path) -> None:
    alone = _load(tmp_path, "alone", _swap("b", "true"))
    assert len(alone) == 1
    assert alone[0].startswith("request.amount: must be a whole number of base units")
    both = _load(tmp_path, "both", _swap("a", "1"), _swap("b", "true"), _swap("c", "1"))
    assert both[0] == alone[0]
    assert len(both) == 3  # a's and c's requests


def test_a_schedule_like_a_checked_one_is_checked_again(tmp_path: Path) -> None:
    ok, bad = "every: 60", "every: true"
    alone = _load(tmp_path, "alone", _swap("b", "1", bad))
    assert len(alone) == 1
    assert alone[0].startswith("schedule.every: ")
    both = _load(tmp_path, "both", _swap("a", "1", ok), _swap("b", "1", bad),
                 _swap("c", "1", ok))  # fmt: skip
    assert both[0] == alone[0]
    assert len(both) == 3


def test_prices_keep_their_own_digits(tmp_path: Path) -> None:
    shown = _load(tmp_path, "p", _recurring("a", "1.0"), _recurring("b", "1.00"),
                  _recurring("c", "1.0"))  # fmt: skip
    assert [("'1.0'" in s, "'1.00'" in s) for s in shown] == [
        (True, False), (False, True), (True, False)
    ]  # fmt: skip


def test_a_near_miss_of_a_mint_is_refused_each_time(tmp_path: Path) -> None:
    near = SOL[:-1] + "3"
    shown = _load(tmp_path, "m", _swap("a", "1"), _swap("b", "1", output=near),
                  _swap("c", "1"), _swap("d", "1", output=near))  # fmt: skip
    assert shown[0] == shown[1]
    assert "mistyped or truncated copy" in shown[0]
    assert len(shown) == 4
