"""One error tree: every error jupcron raises is exactly one of Fatal, Retryable or
Rejected (daemon/errors.py), so a caller knows what to do from the branch alone."""

from __future__ import annotations

import inspect

import pytest

from jupcron import errors
from jupcron.errors import (
    ApiAuthError,
    ApiError,
    FatalError,
    JupcronError,
    Problem,
    RejectedError,
    RetryableError,
    YamlLoadError,
)

BRANCHES = (FatalError, RetryableError, RejectedError)
CLASSES = [
    c
    for _, c in inspect.getmembers(errors, inspect.isclass)
    if issubclass(c, JupcronError) and c not in (JupcronError, *BRANCHES)
]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_error_sits_on_exactly_one_branch(cls: type[JupcronError]) -> None:
    assert [b.__name__ for b in BRANCHES if issubclass(cls, b)] != []
    assert sum(issubclass(cls, b) for b in BRANCHES) == 1


def test_the_api_mixin_is_no_error_of_its_own() -> None:
    assert not issubclass(ApiError, BaseException)
    api_errors = [c for c in CLASSES if issubclass(c, ApiError)]
    assert len(api_errors) >= 6
    assert issubclass(ApiAuthError, FatalError)


def test_a_yaml_load_error_is_fatal_and_carries_its_problem() -> None:
    problem = Problem("plans/a.yaml", 3, 1, "invalid YAML: oops")
    exc = YamlLoadError(problem)
    assert isinstance(exc, FatalError)
    assert exc.problem is problem
    assert str(exc) == "plans/a.yaml:3:1: invalid YAML: oops"
