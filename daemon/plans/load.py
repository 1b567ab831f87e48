"""Plan files and folders -> valid plans, or every problem with its position.

A file holds one plan (a mapping) or a list under ``plans:``; a folder holds
``*.yaml``/``*.yml`` files (recursively, hidden ones skipped). Nothing here
raises on bad input: problems are collected (``file:line:col: message``) so
the operator sees all of them at once.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jupcron.config.trust import PLANS, untrusted
from jupcron.config.wallets import unknown_wallet
from jupcron.config.yamlfast import collector_paused
from jupcron.config.yamlfile import Locator, decode, load, problems_from, read_checked
from jupcron.domain import PlanKind
from jupcron.errors import PlanError, Problem, YamlLoadError
from jupcron.plans import readers
from jupcron.plans.files import plan_files
from jupcron.plans.marks import FileMark, mark_of, stat_of
from jupcron.plans.rules import checks, price_notes
from jupcron.plans.schema import (
    WALLET_FIELD,
    Finding,
    PlanHead,
    PlanSpec,
    ScheduleSpec,
    Shared,
)
from jupcron.plans.sources import source_of
from jupcron.price.limits import quote_mint
from jupcron.products import kinds


@dataclass(frozen=True)
class LoadedPlan:
    spec: PlanSpec
    source: str  # the file it came from (absolute)
    line: int  # where its `name` is
    column: int = 1


@dataclass
class LoadResult:
    plans: list[LoadedPlan] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    # moves worth making (a plan on an unmaintained product): shown by `plans validate`
    suggestions: list[Problem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    # each file read whole, as it was read (`jupcron.plans.marks`)
    marks: list[FileMark] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def raise_for_problems(self) -> None:
        if self.problems:
            raise PlanError(self.problems)


def load_plans(paths: Sequence[Path], wallets: Collection[str] | None = None) -> LoadResult:
    """Read and check every plan under `paths`, collecting all problems. `wallets`: the
    daemon config's wallet names (`Config.wallet_names`), which a plan's ``wallet``
    must be one of; ``None``: not checked (no config to check against)."""
    result = LoadResult()
    for batch in stream_plans(paths, result, wallets):
        result.plans.extend(batch)
    return result


def stream_plans(
    paths: Sequence[Path],
    result: LoadResult,
    wallets: Collection[str] | None = None,
    workers: int = 0,
) -> Generator[list[LoadedPlan], None, None]:
    """Each file's valid plans, one file at a time (`plans apply` keeps no list of
    every plan); problems, warnings and suggestions are added to `result` as they
    are found, sorted by position once the last file is read. A name used twice is
    a problem at its second place (the names seen are kept, with where they were).
    `workers`: processes that read the files ahead (`jupcron.plans.readers`; 0: all
    read here)."""
    files, result.problems = plan_files(paths)
    result.files = files
    names: dict[str, tuple[int, int]] = {}  # name -> (file's index, line)
    known = None if wallets is None else tuple(wallets)
    # closed with this generator, not left to the collector: `plans apply -j` left early
    # (Ctrl-C) shuts its workers' pool down there, and may be interrupted again
    with closing(_read(files, result, known, workers)) as reads:
        for index, (file, read) in enumerate(zip(files, reads, strict=True)):
            fresh = []
            for loaded in read:
                earlier = names.get(loaded.spec.name)
                if earlier is not None:
                    where = f"{files[earlier[0]]}:{earlier[1]}"
                    result.problems.append(
                        Problem(
                            str(file),
                            loaded.line,
                            1,
                            f"name '{loaded.spec.name}' is already used by the plan at {where}",
                        )
                    )
                    continue
                names[loaded.spec.name] = (index, loaded.line)
                fresh.append(loaded)
            yield fresh
    order = {str(f): i for i, f in enumerate(files)}

    def position(problem: Problem) -> tuple[int, int, int]:
        # paths that are missing come first, then each file's problems by line and column
        return order.get(problem.file, -1), problem.line, problem.column

    result.problems.sort(key=position)
    result.warnings.sort(key=position)
    result.suggestions.sort(key=position)


def _read(
    files: Sequence[Path], result: LoadResult, wallets: tuple[str, ...] | None,
    workers: int,
) -> Generator[list[LoadedPlan], None, None]:  # fmt: skip
    """Each file's plans in order, read here or by worker processes (what they found
    is added to `result` as what is found here is)."""
    count = readers.workers_for(len(files), workers)
    if count == 0:
        for file in files:
            yield load_file(file, result, wallets)
        return
    with closing(readers.read_all(files, wallets, count)) as reads:  # (as stream_plans)
        for read in reads:
            result.problems += read.problems
            result.warnings += read.warnings
            result.suggestions += read.suggestions
            result.marks += read.marks
            yield read.plans


def load_file(file: Path, result: LoadResult, wallets: tuple[str, ...] | None) -> list[LoadedPlan]:
    """One file's valid plans (its problems, warnings and suggestions added to `result`),
    with Python's cycle collector off (`jupcron.config.yamlfast.collector_paused`): the
    file's nodes, values and models, hundreds of thousands of objects, are freed as it
    returns, never gone over by a collection."""
    with collector_paused():
        return _load_file(file, result, wallets)


def _trusted(file: Path, info: os.stat_result) -> None:
    """Only jupcron's user or root may change a plan file (`jupcron.config.trust`)."""
    problem = untrusted(file, info, PLANS)
    if problem is not None:
        raise YamlLoadError(Problem(str(file), 0, 0, problem.removeprefix(f"{file}: ")))


def _load_file(file: Path, result: LoadResult, wallets: tuple[str, ...] | None) -> list[LoadedPlan]:
    stat = stat_of(file)  # before the read: a change after it shows as a newer stat
    try:
        raw = read_checked(file, _trusted)
        text = decode(file, raw)
        data, locator = load(file, text, exact_floats=True)  # prices keep their digits
    except YamlLoadError as exc:
        result.problems.append(exc.problem)
        return []
    if stat is not None:
        result.marks.append(mark_of(file, stat, raw))
    if data is None:
        result.problems.append(
            locator.problem((), "empty file: expected a plan, or 'plans:' with a list of plans")
        )
        return []
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value"
        result.problems.append(
            locator.problem(
                (), f"expected a plan (a mapping) or 'plans:' with a list of plans, not {kind}"
            )
        )
        return []
    source = source_of(file)  # the entry as found, links kept (`jupcron.plans.sources`)
    if "plans" not in data:
        spec = _load_plan(data, locator, (), result, wallets)
        return [] if spec is None else [_loaded(spec, source, locator, ())]
    extra = [k for k in data if k != "plans"]
    for key in extra:
        result.problems.append(
            locator.problem(
                (key,), f"unknown key '{key}' next to 'plans' (put plan settings inside each plan)"
            )
        )
    items = data["plans"]
    if not isinstance(items, list):
        result.problems.append(locator.problem(("plans",), "'plans' must be a list of plans"))
        return []
    out = []
    for index, item in enumerate(items):
        spec = _load_plan(item, locator, ("plans", index), result, wallets)
        if spec is not None and not extra:
            out.append(_loaded(spec, source, locator, ("plans", index)))
    return out


def _loaded(
    spec: PlanSpec, source: str, locator: Locator, prefix: tuple[str | int, ...]
) -> LoadedPlan:
    line, column = locator.at((*prefix, "name"))
    return LoadedPlan(spec=spec, source=source, line=line, column=column)


def _load_plan(
    item: Any,
    locator: Locator,
    prefix: tuple[str | int, ...],
    result: LoadResult,
    wallets: tuple[str, ...] | None,
) -> PlanSpec | None:
    """One plan mapping -> PlanSpec, or None with its problems added to `result`."""
    if not isinstance(item, dict):
        result.problems.append(
            locator.problem(prefix, "a plan must be a mapping with name, kind, schedule, request")
        )
        return None
    before = len(result.problems)
    head: PlanHead | None = None
    schedule = _SCHEDULES.key(ScheduleSpec, item.get("schedule"))
    checked = _SCHEDULES.known.get(schedule) if schedule is not None else None
    try:  # (a schedule checked already is given as its model, which is taken as it is)
        head = PlanHead.model_validate(item if checked is None else {**item, "schedule": checked})
    except ValidationError as exc:
        result.problems.extend(problems_from(exc, locator, PlanHead, prefix))
    if head is not None and checked is None:
        _SCHEDULES.keep(schedule, head.schedule)
    if head is not None and wallets is not None and head.wallet not in wallets:
        message = f"wallet: {unknown_wallet(head.wallet, wallets)}"
        result.problems.append(locator.problem((*prefix, "wallet"), message))
    kind = _kind(item.get("kind"))
    request = item.get("request")
    typed = None
    if kind is not None and isinstance(request, dict):
        typed = _load_request(kind, request, locator, (*prefix, "request"), result)
    if typed is not None:
        limit = head.max_in_amount if head is not None else None
        caps = head.caps if head is not None else None
        swap_api = head.swap_api if head is not None else None
        limits = head.limits if head is not None else None
        findings = checks(typed, limit, caps, swap_api, limits=limits)
        if head is not None:  # (limits that did not parse are reported already)
            findings += price_notes(typed, limits)
            findings += quote_check(typed, head.price_quote)
        by_schedule = kinds.spec(kind).schedule_checks if kind is not None else None
        if head is not None and by_schedule is not None:
            findings += by_schedule(typed, head.schedule.parsed(), datetime.now(UTC))
        for finding in findings:
            problem = locator.problem((*prefix, *finding.loc), finding.message)
            if finding.warning:
                result.warnings.append(_prefixed(problem, "warning: "))
            else:
                result.problems.append(problem)
    suggestion = kinds.spec(kind).suggestion if kind is not None else None
    if suggestion is not None and typed is not None:
        problem = locator.problem((*prefix, "kind"), suggestion)
        result.suggestions.append(_prefixed(problem, "warning: "))
    if head is None or typed is None or len(result.problems) > before:
        return None
    return PlanSpec.of(head, typed)


def quote_check(request: Any, price_quote: str | None) -> list[Finding]:
    """``price_quote`` names one of the plan's two mints (its address, or SOL, USDC,
    USDT, JUP): anything else would be ignored by the report, silently."""
    if price_quote is None:
        return []
    pair = (getattr(request, "input_mint", None), getattr(request, "output_mint", None))
    if None in pair:
        return [Finding(("price_quote",), "price_quote applies to plans that trade a pair")]
    if quote_mint(price_quote) in pair:
        return []
    return [Finding(("price_quote",), f"price_quote {price_quote!r} is neither the plan's "
                    "inputMint nor its outputMint (give a mint address of the pair, or SOL, "
                    "USDC, USDT, JUP)")]  # fmt: skip


def _kind(value: Any) -> PlanKind | None:
    try:
        return PlanKind(value)
    except ValueError:
        return None


def _load_request(
    kind: PlanKind,
    request: dict[str, Any],
    locator: Locator,
    prefix: tuple[str | int, ...],
    result: LoadResult,
) -> Any:
    body = dict(request)
    wallet_problem = False
    for wallet in sorted(set(WALLET_FIELD.values())):
        if wallet in body:
            del body[wallet]
            wallet_problem = True
            own = WALLET_FIELD[kind]
            message = (
                f"request.{wallet}: remove it; the daemon fills in '{own}' with its wallet"
                if wallet == own
                else f"unknown key 'request.{wallet}' ({kind} requests take no wallet field; "
                f"the daemon fills in '{own}')"
            )
            result.problems.append(locator.problem((*prefix, wallet), message))
    model = kinds.spec(kind).model
    key = _REQUESTS.key(model, body)
    typed = _REQUESTS.known.get(key) if key is not None else None
    try:
        if typed is None:
            typed = model.model_validate(body)
            _REQUESTS.keep(key, typed)
    except ValidationError as exc:
        for problem in problems_from(exc, locator, model, prefix):
            result.problems.append(_prefixed(problem, "request."))
        return None
    return None if wallet_problem else typed


# requests and schedules checked once per distinct mapping (a large apply's plans
# repeat a few)
_REQUESTS = Shared()
_SCHEDULES = Shared()


def _prefixed(problem: Problem, prefix: str) -> Problem:
    """Name keys from the plan's root: 'params.time' -> 'request.params.time'."""
    message = problem.message
    if message.startswith("unknown key '"):
        message = "unknown key '" + prefix + message[len("unknown key '") :]
    elif not message.startswith(prefix):
        message = prefix + message
    return Problem(problem.file, problem.line, problem.column, message)
