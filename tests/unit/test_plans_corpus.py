"""A corpus of broken plan files, each with every message it must produce.

Each message is ``line:col: text`` (or just ``text`` for file-level problems);
the loader must report exactly these, nothing more, and never raise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.plans.load import load_plans

CORPUS = Path(__file__).parent / "plan_corpus"

EXPECTED: dict[str, list[str]] = {
    "01-empty.yaml": ["1:1: empty file: expected a plan, or 'plans:' with a list of plans"],
    "02-binary.yaml": ["not a text file (it holds NUL bytes)"],
    "03-not-utf8.yaml": ["not UTF-8 text (bad byte at offset 9)"],
    "04-list-at-top.yaml": [
        "1:1: expected a plan (a mapping) or 'plans:' with a list of plans, not a list",
    ],
    "05-scalar.yaml": [
        "1:1: expected a plan (a mapping) or 'plans:' with a list of plans, not a single value",
    ],
    "06-bad-yaml.yaml": [
        "4:1: invalid YAML: while parsing a flow mapping expected ',' or '}', but got '<stream end>'",
    ],
    "07-duplicate-key.yaml": [
        '2:1: invalid YAML: while constructing a mapping found duplicate key "name" with value "b" (original value: "a")',
    ],
    "08-alias-bomb.yaml": ["too large once aliases are expanded (over 100000 values)"],
    "09-plans-not-a-list.yaml": ["1:1: 'plans' must be a list of plans"],
    "10-plan-not-a-mapping.yaml": [
        "2:5: a plan must be a mapping with name, kind, schedule, request",
    ],
    "11-unknown-top-key.yaml": [
        "1:1: schedule: missing required key",
        "3:1: unknown key 'schedul' (did you mean 'schedule'?)",
    ],
    "12-unknown-kind.yaml": [
        "2:1: kind: Input should be 'recurring', 'trigger-cancel', 'swap', 'trigger-v2-dca', "
        "'trigger-v2-order' or 'trigger-v2-cancel'",
    ],
    "13-bad-mint.yaml": [
        "6:3: request.outputMint: 'So1111111111111111111111111111111111111111O' is not a valid base58 public key",
    ],
    "14-wallet-field.yaml": [
        "8:3: request.taker: remove it; the daemon fills in 'taker' with its wallet",
    ],
    "15-negative-amount.yaml": ["4:125: request.amount: must be greater than 0"],
    "16-huge-amount.yaml": ["4:125: request.amount: is too large (must fit in 64 bits)"],
    "17-float-amount.yaml": [
        "4:125: request.amount: must be a whole number of base units, got '1.5E+6'",
    ],
    "18-one-order.yaml": [
        "8:33: request.params.time.numberOfOrders: must be between 2 and 1000000",
    ],
    "19-short-interval.yaml": [
        "8:52: request.params.time.interval: must be between 60 and 316224000 seconds",
    ],
    "20-below-usdc-minimum.yaml": [
        "9:7: inAmount is 99.00 USDC; a recurring order needs at least 100 USDC in total",
        "9:7: each order would be 49.50 USDC (inAmount / numberOfOrders); the minimum is 50 USDC per order",
    ],
    "21-usdt-per-order-minimum.yaml": [
        "9:7: each order would be 40.00 USDT (inAmount / numberOfOrders); the minimum is 50 USDT per order",
    ],
    "22-bad-cron.yaml": ["4:3: schedule.cron: hour: 25 is outside 0-23"],
    "23-bad-timezone.yaml": [
        "5:3: schedule.timezone: unknown timezone 'Europe/Berlln' (use an IANA name like Europe/Berlin)",
    ],
    "24-two-schedules.yaml": [
        "3:1: schedule: give exactly one of cron, every, at (found: cron, every)",
    ],
    "25-every-zero.yaml": ["3:1: schedule: every must be greater than 0"],
    "26-at-without-offset.yaml": [
        "3:12: schedule.at: time '2026-12-01T00:00:00' needs an offset, like Z or +01:00",
    ],
    "27-bad-compute-unit-price.yaml": [
        "4:63: request.computeUnitPrice: must be 'auto' or a positive integer (micro-lamports)",
    ],
    "28-duplicate-names.yaml": [
        "6:1: name 'same' is already used by the plan at 28-duplicate-names.yaml:2",
    ],
    "29-typo-in-params.yaml": [
        "8:5: request.params.time.numberOfOrders: missing required key",
        "8:33: unknown key 'request.params.time.numberOfOrder' (did you mean 'numberOfOrders'?)",
    ],
    "30-missing-request.yaml": ["1:1: request: missing required key"],
    "31-bad-name.yaml": [
        "1:1: name: must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit",
    ],
    "32-enabled-not-bool.yaml": ["3:1: enabled: Input should be a valid boolean"],
    "33-same-mints.yaml": ["4:67: outputMint is the same as inputMint"],
    "34-over-max-in-amount.yaml": [
        "5:125: amount 1000000 is above this plan's max_in_amount 500000",
    ],
    "35-end-before-start.yaml": ["3:1: schedule: end must be after start"],
    "36-bad-misfire.yaml": ["3:23: schedule.misfire: Input should be 'skip' or 'run-once'"],
    "37-time-and-price.yaml": ["7:3: request.params: give exactly one of 'time' or 'price'"],
    "38-request-for-other-kind.yaml": [
        "4:1: request.order: missing required key",
        "4:11: unknown key 'request.inputMint' (allowed: computeUnitPrice, order)",
        "4:68: unknown key 'request.outputMint' (allowed: computeUnitPrice, order)",
        "4:125: unknown key 'request.amount' (allowed: computeUnitPrice, order)",
    ],
    "39-huge-number-of-digits.yaml": [
        "invalid YAML: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit",
    ],
    "40-plans-and-extra-key.yaml": [
        "1:1: unknown key 'defaults' next to 'plans' (put plan settings inside each plan)",
    ],
    "41-far-future-start.yaml": [
        "3:23: schedule.start: time '9999-12-31T23:59:59+00:00' must be between 1970 and 2200",
    ],
    "42-wrong-types.yaml": [
        "3:12: schedule.every: must be a duration like 90s, 15m, 6h or 1d",
        "3:24: schedule.grace: must be a duration like 90s, 15m, 6h or 1d",
        "4:11: request.inputMint: must be a base58 public key (a string)",
        "4:85: request.amount: must be a whole number of base units, got 'inf'",
    ],
}


def messages(path: Path) -> list[str]:
    result = load_plans([path])
    assert not result.ok
    out = []
    for problem in result.problems:
        text = str(problem)
        assert text.startswith(str(path))
        out.append(text[len(str(path)) :].lstrip(":").lstrip().replace(f"{CORPUS}/", ""))
    return out


def test_corpus_is_big_enough_and_fully_described() -> None:
    files = sorted(p.name for p in CORPUS.iterdir())
    assert len(files) >= 25
    assert files == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_plan_file(name: str) -> None:
    assert messages(CORPUS / name) == EXPECTED[name]


def test_all_problems_of_many_files_at_once() -> None:
    result = load_plans([CORPUS])
    assert [p.spec.name for p in result.plans] == ["same"]  # the first of the duplicates
    expected = sum(len(v) for v in EXPECTED.values())
    assert len(result.problems) == expected
