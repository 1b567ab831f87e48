"""Reading YAML files for humans: positions for every key, no tracebacks.

`load` turns a file into plain Python values plus a `Locator` that maps a
path of keys/indexes (as pydantic reports it) back to a line and column.
`problems_from` turns a pydantic `ValidationError` into `Problem`s at those
positions, with a "did you mean" hint for unknown keys.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, CommentedSet, TaggedScalar
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from jupcron.config import jsonfast, yamlfast
from jupcron.errors import Problem, YamlLoadError

MAX_BYTES = 1024 * 1024
MAX_NODES = 100_000

Loc = tuple[str | int, ...]


@dataclass
class Locator:
    """Maps a path inside the document to a (line, column), both 1-based."""

    file: str
    # every key's and item's, or (libyaml's fast path) found in the nodes when asked
    positions: MutableMapping[Loc, tuple[int, int]] = field(default_factory=dict)

    def at(self, loc: Iterable[str | int]) -> tuple[int, int]:
        path = tuple(loc)
        while path:
            if path in self.positions:
                return self.positions[path]
            path = path[:-1]
        return self.positions.get((), (1, 1))

    def problem(self, loc: Iterable[str | int], message: str) -> Problem:
        line, column = self.at(loc)
        return Problem(self.file, line, column, message)


class _TooBig(Exception):
    pass


class _ExactConstructor(RoundTripConstructor):
    """Reads a YAML float as a `Decimal` from its own digits (``0.1`` stays 0.1, and
    a price with more digits than a float holds keeps them); ``.inf``/``.nan`` as floats."""


def _exact_float(constructor: RoundTripConstructor, node: Any) -> Any:
    text = str(node.value).replace("_", "")
    try:
        value = Decimal(text)
    except InvalidOperation:
        return constructor.construct_yaml_float(node)
    return value if value.is_finite() else constructor.construct_yaml_float(node)


_ExactConstructor.add_constructor("tag:yaml.org,2002:float", _exact_float)


def _plain(node: Any, loc: Loc, locator: Locator, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(node, CommentedMap | CommentedSeq) and node.tag.value is not None:
        raise _unsupported(node, loc, locator)  # `!custom {...}`, `!!python/object/apply:`
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            sub = (*loc, key) if isinstance(key, str | int) else (*loc, str(key))
            try:
                line, col = node.lc.key(key)
                locator.positions[sub] = (line + 1, col + 1)
            except (KeyError, TypeError):
                pass
            out[key] = _plain(value, sub, locator, budget)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            sub = (*loc, index)
            try:
                line, col = node.lc.item(index)
                locator.positions[sub] = (line + 1, col + 1)
            except (KeyError, TypeError, IndexError):
                pass
            items.append(_plain(value, sub, locator, budget))
        return items
    if isinstance(node, TaggedScalar) and node.tag.value in _TEXT_TAGS:
        return str(node.value)  # `!!str 12`; `=` (ruamel resolves it to YAML 1.1's `!!value`)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool | int | float) or node is None:
        return node.__class__(node) if node is not None else None
    if isinstance(node, Decimal):
        return node
    if isinstance(node, date):  # a timestamp: keep its text form
        return str(node)
    raise _unsupported(node, loc, locator)  # `!!binary`, `!!set`, `!!python/...`, `!tag x`


_TEXT_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:value")
_TAG_OF: dict[type, str] = {bytes: "!!binary", CommentedSet: "!!set", list: "!!pairs"}


def _unsupported(node: Any, loc: Loc, locator: Locator) -> YamlLoadError:
    """A value of a tag of its own (`!!python/object:...`, `!!binary`, `!custom`): never
    read as some other value (the tag dropped, bytes as their repr) but refused."""
    tag = getattr(getattr(node, "tag", None), "value", None) or _TAG_OF.get(type(node))
    if isinstance(tag, str) and tag.startswith("tag:yaml.org,2002:"):
        tag = "!!" + tag.removeprefix("tag:yaml.org,2002:")
    return YamlLoadError(
        locator.problem(
            loc,
            f"unsupported YAML tag {tag or type(node).__name__} (write a plain string, "
            "number, boolean, list or mapping)",
        )
    )


def read_checked(path: Path, check: Callable[[Path, os.stat_result], None] | None = None) -> bytes:
    """The file's bytes, if it is a readable file of text size (`YamlLoadError` if not).
    Only a regular file is read (a FIFO would block, a device never end), and never
    more than `MAX_BYTES` (and one) of it: a huge file is refused before it fills memory.
    `check` (who may change the file: `jupcron.config.trust`) sees the ``fstat`` of the
    file opened, so what it passed is what is read."""
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without a writer
    except FileNotFoundError:
        raise YamlLoadError(Problem(name, 0, 0, "no such file")) from None
    except IsADirectoryError:
        raise YamlLoadError(Problem(name, 0, 0, "is a directory, not a file")) from None
    except OSError as exc:
        raise YamlLoadError(Problem(name, 0, 0, f"cannot read: {exc.strerror}")) from None
    try:  # before `fdopen`, which refuses a folder with the descriptor's number as its name
        info = os.fstat(fd)
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise YamlLoadError(Problem(name, 0, 0, "is a directory, not a file"))
        if not stat.S_ISREG(mode):
            raise YamlLoadError(
                Problem(name, 0, 0, "not a regular file (a FIFO, socket or device)")
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as file:
        if check is not None:
            check(path, info)
        try:
            raw = file.read(MAX_BYTES + 1)
        except OSError as exc:
            raise YamlLoadError(Problem(name, 0, 0, f"cannot read: {exc.strerror}")) from None
    if len(raw) > MAX_BYTES:
        raise YamlLoadError(Problem(name, 0, 0, f"file is larger than {MAX_BYTES} bytes"))
    if b"\x00" in raw:
        raise YamlLoadError(Problem(name, 0, 0, "not a text file (it holds NUL bytes)"))
    return raw


def decode(path: Path, raw: bytes) -> str:
    """`raw` as UTF-8 text (`YamlLoadError` naming the first bad byte if it is not)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlLoadError(
            Problem(str(path), 0, 0, f"not UTF-8 text (bad byte at offset {exc.start})")
        ) from None


def load(path: Path, text: str | None = None, *, exact_floats: bool = False) -> tuple[Any, Locator]:
    """Load one YAML document. Raises `PlanLoadError` with a `Problem` on failure.
    With `exact_floats`, numbers with a fraction or exponent come back as `Decimal`."""
    name = str(path)
    locator = Locator(name)
    if text is None:
        text = decode(path, read_checked(path))
    fast = _load_fast(name, text, locator, exact_floats)
    if fast is not None:
        return fast
    locator = Locator(name)
    yaml = YAML(typ="rt")
    if exact_floats:
        yaml.Constructor = _ExactConstructor
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        col = mark.column + 1 if mark is not None else 0
        what = " ".join(s for s in (exc.context, exc.problem) if s) or "invalid YAML"
        raise YamlLoadError(Problem(name, line, col, f"invalid YAML: {what}")) from None
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise YamlLoadError(Problem(name, 0, 0, f"invalid YAML: {exc}")) from None
    except AssertionError as exc:  # ruamel's check of a ``%YAML 1.3`` directive
        raise YamlLoadError(Problem(name, 1, 1, f"invalid YAML: {exc}")) from None
    if len(docs) > 1:
        raise YamlLoadError(Problem(name, 0, 0, "holds more than one YAML document"))
    doc = docs[0] if docs else None
    try:
        data = _plain(doc, (), locator, [MAX_NODES])
    except (_TooBig, RecursionError):
        raise _too_big(name) from None
    locator.positions.setdefault((), (1, 1))
    return data, locator


def _too_big(name: str) -> YamlLoadError:
    return YamlLoadError(
        Problem(name, 0, 0, f"too large once aliases are expanded (over {MAX_NODES} values)")
    )


def _load_fast(name: str, text: str, locator: Locator, exact: bool) -> tuple[Any, Locator] | None:
    """libyaml's nodes made plain (`jupcron.config.yamlfast`), or a JSON document read
    by json's scanner (`jsonfast.from_json`: the same values and positions); None: load
    with ruamel. With the cycle collector paused (`yamlfast.collector_paused`)."""
    with yamlfast.collector_paused():
        read = jsonfast.from_json(text, MAX_NODES, exact)
        if read is not None:
            locator.positions = read[1]
            locator.positions.setdefault((), (1, 1))
            return read[0], locator
        docs = yamlfast.compose(text)
        if docs is None or len(docs) > 1:
            return None
        try:
            data = yamlfast.plain(docs[0], [MAX_NODES], exact) if docs else None
        except yamlfast.TooBig:
            raise _too_big(name) from None
        except (yamlfast.GiveUp, RecursionError):
            return None
    if docs:
        locator.positions = yamlfast.NodePositions(docs[0])
    locator.positions.setdefault((), (1, 1))
    return data, locator


def _allowed_fields(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The field names (aliases) a model accepts at `loc`, best effort, for hints."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        fields = getattr(current, "model_fields", None)
        if fields is None:
            return []
        match = None
        for fname, finfo in fields.items():
            if part in (fname, finfo.alias):
                match = finfo
                break
        if match is None:
            return []
        current = _model_in(match.annotation)
    fields = getattr(current, "model_fields", None)
    if not fields:
        return []
    return [finfo.alias or fname for fname, finfo in fields.items()]


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _describe(error: Mapping[str, Any]) -> str:
    kind = error.get("type", "")
    msg = str(error.get("msg", "invalid value"))
    if kind == "missing":
        return "missing required key"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if msg.startswith("Assertion failed, "):
        msg = msg[len("Assertion failed, ") :]
    return msg


def problems_from(
    exc: ValidationError,
    locator: Locator,
    model: type[BaseModel] | None = None,
    prefix: Loc = (),
) -> list[Problem]:
    """Turn a pydantic error into positioned problems (one per error)."""
    out: list[Problem] = []
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
        full = (*prefix, *loc)  # Locator.at falls back to the nearest ancestor it knows
        key = ".".join(str(p) for p in loc) or "(top level)"
        if error["type"] == "extra_forbidden":
            unknown = str(loc[-1]) if loc else ""
            hint = ""
            if model is not None:
                allowed = _allowed_fields(model, loc[:-1])
                close = difflib.get_close_matches(unknown, allowed, n=1)
                if close:
                    hint = f" (did you mean '{close[0]}'?)"
                elif allowed:
                    hint = f" (allowed: {', '.join(sorted(allowed))})"
            out.append(locator.problem(full, f"unknown key '{key}'{hint}"))
        elif error["type"] == "missing":
            out.append(locator.problem(full[:-1] or full, f"{key}: missing required key"))
        else:
            out.append(locator.problem(full, f"{key}: {_describe(error)}"))
    return out
