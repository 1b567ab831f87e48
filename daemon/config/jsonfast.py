"""A file of JSON (which is YAML: what programs that write plans write) read by
Python's C scanner, 10x faster than libyaml composes it (`from_json`), for
`jupcron.config.yamlfile.load`: the positions of its first levels (a plan's keys)
noted as it goes, the rest found in libyaml's nodes when asked (`JsonPositions`).
It is taken only where libyaml would read the same values at the same places
(`jupcron.config.yamlfast.plain`'s); anything else is left to the composer.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from jupcron.config.yamlfast import (
    GiveUp,
    Loc,
    NodePositions,
    Positions,
    collector_paused,
    nodes_of,
)

# paths this long have their positions noted as read (("plans", 7)); of the next level,
# a mapping's first key (("plans", 7, "name"))
_MANUAL = 2
# a key longer than libyaml takes for one (it looks 1,024 characters back for the key of a
# ':'; an escape like \u00e9 is six of them for one character)
_KEY_MOST = 100
_JSON_SPACE = re.compile(r"[ \t\n]*")
_SPACE = " \t\n"
# what libyaml reads otherwise than JSON: a character YAML does not print (or takes for a
# line break, as a lone '\r': json takes it for a space, and the lines counted here from
# the '\n's would be off), an escaped surrogate, a ':' on a later line than its
# key or far from it (each looked for only if its first character is there: a regular
# expression over a megabyte costs more than reading it)
_NOT_PRINTED = re.compile(
    "[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_COLON_BELOW = re.compile(r"\n[ \t]*:")
_FAR = 100  # spaces before a ':' (with a key of at most `_KEY_MOST`: within libyaml's reach)
_COLON_FAR = re.compile(rf"[ \t]{{{_FAR}}}")


def _alike(text: str) -> bool:
    """Would libyaml read this JSON text as json does (if it is JSON)?"""
    if not text.isascii():
        if _NOT_PRINTED.search(text) is not None:
            return False
    elif "\x7f" in text or "\r" in text:
        return False
    if "\\u" in text and _SURROGATE.search(text) is not None:
        return False
    if "\n" in text and _COLON_BELOW.search(text) is not None:
        return False
    if "\t" in text:
        return _COLON_FAR.search(text) is None
    return " " * _FAR not in text


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise GiveUp  # a duplicate key (ruamel says so)
    for key in out:
        if len(key) > _KEY_MOST:
            raise GiveUp  # too long a key for libyaml
    return out


def _refuse(constant: str) -> Any:
    raise GiveUp  # NaN, Infinity: strings to YAML


def _scanner(exact: bool) -> Callable[[str, int], tuple[Any, int]]:
    decoder = json.JSONDecoder(
        object_pairs_hook=_json_pairs,
        parse_float=Decimal if exact else float,
        parse_constant=_refuse,
    )
    return decoder.scan_once  # type: ignore[attr-defined,no-any-return]


_SCAN = {True: _scanner(True), False: _scanner(False)}
_STRING: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def from_json(text: str, budget: int, exact: bool) -> tuple[Any, JsonPositions] | None:
    """A document of JSON as `plain` would read it from libyaml's nodes, with where each
    value stands; None when it is not JSON, or not surely read alike (then compose it).
    Floats are `Decimal` with `exact`, as `plain` reads them."""
    stripped = text.strip(" \n")
    if not stripped.startswith("{") or not stripped.endswith("}"):
        return None
    if not _alike(text):
        return None
    # every value but the document is a container's first or follows a ','
    if 1 + text.count(",") + text.count("{") + text.count("[") > budget:
        return None  # (perhaps too many values: `plain` says)
    noted: dict[Loc, int] = {}
    try:
        start = _JSON_SPACE.match(text).end()  # type: ignore[union-attr]
        data, end = _json_value(text, start, (), noted, _SCAN[exact])
    except (GiveUp, ValueError, IndexError, StopIteration, RecursionError):
        return None  # (json's errors are ValueErrors)
    if _JSON_SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        return None
    return data, JsonPositions(text, noted)


def _json_value(s: str, i: int, path: Loc, noted: dict[Loc, int],
                scan: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:  # fmt: skip
    """The value at `s[i]` and where it ends: a mapping or list of the first levels read
    here, noting where each key or item starts; deeper ones by json's scanner, with
    where a mapping's first key starts (a plan's ``name``, as a rule) noted."""
    if len(path) < _MANUAL:
        if s[i] == "{":
            return _json_object(s, i, path, noted, scan)
        if s[i] == "[":
            return _json_array(s, i, path, noted, scan)
    elif s[i] == "{":
        j = i + 1
        if s[j] in _SPACE:
            j = _JSON_SPACE.match(s, j).end()  # type: ignore[union-attr]
        if s[j] == '"':
            noted[(*path, _STRING(s, j + 1)[0])] = j
    return scan(s, i)


def _json_object(s: str, i: int, path: Loc, noted: dict[Loc, int],
                 scan: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:  # fmt: skip
    space = _JSON_SPACE.match
    out: dict[str, Any] = {}
    i, closed = _next_item(s, i + 1, "}", first=True)
    while not closed:
        if s[i] != '"':
            raise GiveUp
        start = i
        key, i = _STRING(s, i + 1)
        if key in out or len(key) > _KEY_MOST:
            raise GiveUp
        if s[i] in _SPACE:
            i = space(s, i).end()  # type: ignore[union-attr]
        if s[i] != ":":
            raise GiveUp
        i += 1
        if s[i] in _SPACE:
            i = space(s, i).end()  # type: ignore[union-attr]
        sub = (*path, key)
        noted[sub] = start
        out[key], i = _json_value(s, i, sub, noted, scan)
        i, closed = _next_item(s, i, "}", first=False)
    return out, i


def _json_array(s: str, i: int, path: Loc, noted: dict[Loc, int],
                scan: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:  # fmt: skip
    out: list[Any] = []
    i, closed = _next_item(s, i + 1, "]", first=True)
    while not closed:
        sub = (*path, len(out))
        noted[sub] = i
        item, i = _json_value(s, i, sub, noted, scan)
        out.append(item)
        i, closed = _next_item(s, i, "]", first=False)
    return out, i


def _next_item(s: str, i: int, close: str, *, first: bool) -> tuple[int, bool]:
    """Past the space at `s[i]` in a mapping or list: where `close` ends it, just past
    that and True; else where its next item starts, past a ``,`` unless `first` (just
    inside its opening bracket), and False."""
    space = _JSON_SPACE.match
    if s[i] in _SPACE:
        i = space(s, i).end()  # type: ignore[union-attr]
    if s[i] == close:
        return i + 1, True
    if not first:
        if s[i] != ",":
            raise GiveUp
        i += 1
        if s[i] in _SPACE:
            i = space(s, i).end()  # type: ignore[union-attr]
    return i, False


class JsonPositions(Positions):
    """The positions of a document `from_json` read: those noted from where they were
    seen in the text, any other from libyaml's nodes, composed when first asked for
    (a problem in a request's field, say): the same answers either way."""

    def __init__(self, text: str, noted: dict[Loc, int]) -> None:
        super().__init__()
        self.text = text
        self.noted = noted
        self._breaks: list[int] | None = None
        self._nodes: NodePositions | None = None

    def _at(self, offset: int) -> tuple[int, int]:
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect_left(self._breaks, offset)
        column = offset - (self._breaks[line - 1] + 1) if line else offset
        return line + 1, column + 1

    def nodes(self) -> NodePositions:
        if self._nodes is None:
            with collector_paused():
                docs = nodes_of(self.text)  # (JSON: no directive, tabs in flow alone)
            self._nodes = NodePositions(docs[0] if docs else None)
        return self._nodes

    def _find(self, loc: Loc) -> tuple[int, int] | None:
        if loc in self.noted:
            return self._at(self.noted[loc])
        if len(loc) <= _MANUAL:  # (every one of these levels is noted)
            return None
        return self.nodes()._find(loc)

    def _all(self) -> Iterator[Loc]:
        return iter(self.nodes())
