"""Request checks and answer parsers of the API client: a plan's request body
checked against the model of its call, and JSON answers turned into typed
models (an unreadable answer is `ApiGarbageError`, which the client retries)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from jupcron.api import classify
from jupcron.api.orders import OrderPage, TokenFacts, parse_page, parse_tokens
from jupcron.errors import ApiErrorInfo, ApiRejectedError

M = TypeVar("M", bound=BaseModel)
Parser = Callable[[int, Any, httpx.Response], M]


def query_value(value: Any) -> str:
    """A request value as a query string value (``true``, ``a,b``, ``12``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def check_request(operation: str, model: type[Any], request: Mapping[str, Any]) -> Any:
    """`request` as `model`, or `ApiRejectedError` naming the first bad field."""
    try:
        return model.model_validate(dict(request))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "request"
        info = ApiErrorInfo(operation=operation, error=f"{where}: {first['msg']}")
        raise ApiRejectedError(f"{operation}: invalid request: {info.error}", info) from None


# query values a check may be remembered for: exactly these types (1, 1.0 and True
# are equal keys; with the type in the key they are not)
_SCALARS = frozenset({str, int, float, bool, type(None)})


def check_query(operation: str, model: type[Any], request: Mapping[str, Any]) -> None:
    """`check_request` for a query of scalars whose checked form is not needed: a query
    that passed once passes again without a second validation (the check is a pure
    function of it). A query that fails is checked, and refused, every time."""
    key = tuple((name, type(value), value) for name, value in request.items())
    if all(kind in _SCALARS for _, kind, _ in key):
        checked: Any = model  # a class: hashable (typeshed's type[Any] is not, to mypy)
        _passed(operation, checked, key)
    else:
        check_request(operation, model, request)


@lru_cache(maxsize=1024)
def _passed(operation: str, model: Any, key: tuple[tuple[str, type, Any], ...]) -> None:
    check_request(operation, model, {name: value for name, _, value in key})


def model_parser(model: type[M]) -> Callable[[int, Any, httpx.Response], M]:
    def parse(status: int, data: Any, response: httpx.Response) -> M:
        if not isinstance(data, dict):
            raise classify.garbage("", response, "not a JSON object")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:3])
            raise classify.garbage("", response, f"unexpected fields: {fields}") from None

    return parse


def listing_parser(array: str) -> Callable[[int, Any, httpx.Response], OrderPage]:
    def parse(status: int, data: Any, response: httpx.Response) -> OrderPage:
        try:
            return parse_page(data, array)
        except ValueError as exc:
            raise classify.garbage("", response, str(exc)) from None

    return parse


def tokens_parser(status: int, data: Any, response: httpx.Response) -> list[TokenFacts]:
    try:
        return parse_tokens(data)
    except ValueError as exc:
        raise classify.garbage("", response, str(exc)) from None
