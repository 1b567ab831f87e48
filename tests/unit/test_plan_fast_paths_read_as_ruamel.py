"""The fast paths of a plan file's read (libyaml's nodes, `jupcron.config.yamlfast`;
json's scanner, `jupcron.config.jsonfast`) give the plans, or the refusal, that ruamel
(the reference, `jupcron.config.yamlfile`'s full path) gives for the same text.

Each case is read twice by `load_plans` from a real file: as it comes (the fast path
takes it) and with the fast path off (ruamel alone), and the two must agree; the
reference's own answer is asserted too, so a case cannot pass by both being wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupcron.config import jsonfast, yamlfast, yamlfile
from jupcron.plans.load import LoadResult, load_plans
from jupcron.products.swap.model import SwapRequest

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
OTHER = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"  # somebody else's wallet


def _swap(name: str = "buy", request: str = "", head: str = "") -> str:
    return (
        f"{head}name: {name}\nkind: swap\nschedule:\n  cron: '0 9 * * *'\n"
        f"request:\n  inputMint: {USDC}\n  outputMint: {SOL}\n{request}"
    )


def _read(tmp_path: Path, text: str, where: str) -> LoadResult:
    folder = tmp_path / where
    folder.mkdir()
    (folder / "plan.yaml").write_bytes(text.encode())
    return load_plans([folder])


def _shown(result: LoadResult, folder: str) -> tuple[Any, ...]:
    plans = [(p.spec.name, p.spec.content(), p.line, p.column) for p in result.plans]
    problems = [(p.line, p.column, p.message.replace(folder, "")) for p in result.problems]
    return json.dumps(plans, sort_keys=True, default=str), problems


def both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> LoadResult:
    """The text read as it comes and by ruamel alone: the same plans or problems."""
    fast = _read(tmp_path, text, "fast")
    with monkeypatch.context() as patch:
        patch.setattr(yamlfile, "_load_fast", lambda *a: None)
        full = _read(tmp_path, text, "full")
    assert _shown(fast, "/fast/") == _shown(full, "/full/")
    return full


# ----------------------------------------------------- a line break of YAML 1.1


@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\u2029"])
def test_a_yaml_1_1_line_break_hides_no_receiver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, brk: str
) -> None:
    """NEL, LS and PS break a line to libyaml, not to YAML 1.2 (ruamel): a receiver
    behind one, on what an editor shows as the amount's line, was read by libyaml as
    the request's ``receiver`` (the swap's output paid to somebody else) where ruamel
    refuses the file."""
    text = _swap(request=f"  amount: 1000000{brk}  receiver: {OTHER}\n")
    fast = _read(tmp_path, text, "as_is")
    assert [getattr(p.spec.request, "receiver", None) for p in fast.plans] != [OTHER]
    result = both(tmp_path, monkeypatch, text)
    assert not result.plans
    assert "invalid YAML" in result.problems[0].message


def test_a_byte_order_mark_inside_a_line_is_no_column_to_ruamel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A byte order mark past the file's start takes a column to libyaml, none to
    ruamel: a problem after it on its line was shown a column off."""
    text = (
        "name: buy\nkind: swap\nschedule: {cron: '0 9 * * *'}\nrequest: {inputMint: "
        f"{USDC}, outputMint: {SOL}, amount: 10, excludeDexes: '\ufeff', slippageBps: -1}}\n"
    )
    result = both(tmp_path, monkeypatch, text)
    after = text.splitlines()[3].index("slippageBps")  # (0-based: the mark takes none)
    assert [(p.line, p.column) for p in result.problems] == [(4, after)]


# ------------------------------------------------------------- a leading zero


@pytest.mark.parametrize("written", ["090", "09", "+090", "0800"])
def test_an_int_with_a_leading_zero_is_read_as_ruamel_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    """YAML 1.2 reads ``090`` as 90 (ruamel does); libyaml's nodes were made the text
    "090" (a leading zero and an 8 or 9 is no octal, which alone was left to ruamel):
    the plan's slippage refused by one path, taken by the other."""
    text = _swap(request=f"  amount: 1000000\n  slippageBps: {written}\n")
    result = both(tmp_path, monkeypatch, text)
    assert not result.problems
    request = result.plans[0].spec.request
    assert isinstance(request, SwapRequest)
    assert request.slippage_bps == int(written)


def test_a_name_with_a_leading_zero_is_a_number_as_to_ruamel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = both(tmp_path, monkeypatch, _swap(name="0800", request="  amount: 1000000\n"))
    assert not result.plans
    assert result.problems[0].message.startswith("name:")


def test_an_exponent_with_an_underscore_is_a_number_as_to_ruamel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``1_0e+5`` is a float to ruamel (refused as an amount for not being whole);
    libyaml's nodes had it as a string."""
    result = both(tmp_path, monkeypatch, _swap(request="  amount: 1_0e+5\n"))
    assert not result.plans
    assert "amount" in result.problems[0].message


# ------------------------------------------------------ a directive, a tab


@pytest.mark.parametrize(
    ("setting", "reference"),
    [
        ("dry_run: yes\n", True),  # a boolean in YAML 1.1
        ("description: on\n", None),  # (a boolean: no description)
    ],
)
def test_a_yaml_1_1_directive_is_read_by_its_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, reference: Any
) -> None:
    """``%YAML 1.1`` has ruamel read ``yes``/``on`` as booleans; libyaml's nodes were
    resolved by YAML 1.2's rules whatever the file said (the strings)."""
    text = _swap(head="%YAML 1.1\n---\n" + setting, request="  amount: 1000000\n")
    result = both(tmp_path, monkeypatch, text)
    if reference is None:
        assert not result.plans
    else:
        assert result.plans[0].spec.dry_run is reference


@pytest.mark.parametrize("request_text", ["  amount: 1000000\t\n", "  amount:\t1000000\n"])
def test_a_tab_ruamel_refuses_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request_text: str
) -> None:
    """A tab after a value or a ':' of a block mapping: libyaml takes it, ruamel
    refuses the file (its message is the one shown)."""
    result = both(tmp_path, monkeypatch, _swap(request=request_text))
    assert not result.plans
    assert "'\\t'" in result.problems[0].message


def test_a_file_of_json_with_tabs_is_still_read_fast() -> None:
    text = json.dumps({"plans": [{"name": "a", "request": {"amount": 5}}]}, indent="\t")
    assert yamlfast.compose(text) is not None
    assert jsonfast.from_json(text, yamlfile.MAX_NODES, True) is not None


# ------------------------------------------------------------------ JSON


def test_a_lone_carriage_return_in_json_keeps_the_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone '\\r' is a line break to YAML and a space to json: the lines the JSON
    path counted from the '\\n's put a problem a line above where it is."""
    plans = [
        {"name": "a", "kind": "swap", "schedule": {"cron": "0 9 * * *"},
         "request": {"inputMint": USDC, "outputMint": SOL, "amount": 5}},
        {"name": "b", "kind": "swap", "schedule": {"cron": "0 9 * * *"},
         "request": {"inputMint": USDC, "outputMint": SOL, "amount": -5}},
    ]  # fmt: skip
    first, second = (json.dumps(p) for p in plans)
    first = first.replace('"kind":', '\r"kind":')  # inside a plan: json's own scan
    text = '{"plans": [' + first + ",\n" + second + ",\n" + first + "]}"
    result = both(tmp_path, monkeypatch, text)
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [
        (3, "request.amount"),
        (4, f"name 'a' is already used by the plan at {tmp_path}/full/plan.yaml"),
    ]


def test_an_explicit_nan_is_ruamels_float(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``!!float nan`` is ruamel's float NaN (exact floats or not); it was a Decimal
    NaN on the fast path, and the amount's refusal named another value."""
    result = both(tmp_path, monkeypatch, _swap(request="  amount: !!float nan\n"))
    assert not result.plans
    assert "nan" in result.problems[0].message


# ------------------------------------------------------------------ hooks


def test_positions_without_their_hooks_cannot_be_made() -> None:
    class Bare(yamlfast.Positions):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Bare()  # type: ignore[abstract]


def test_a_yaml_version_ruamel_does_not_know_is_a_problem_not_a_traceback(
    tmp_path: Path,
) -> None:
    """``%YAML 1.3``: ruamel's own check raised AssertionError, which escaped `plans
    validate`, `apply` and a reload as a traceback."""
    result = _read(tmp_path, "%YAML 1.3\n---\n" + _swap(request="  amount: 1000000\n"), "v13")
    assert not result.plans
    assert [(p.line, "invalid YAML" in p.message) for p in result.problems] == [(1, True)]
